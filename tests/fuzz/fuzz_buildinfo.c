// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_buildinfo - go_build_info_decode on a .go.buildinfo blob and
 * go_build_info_parse_modinfo on the same bytes as modinfo text.
 *
 * Input: the memory of a data segment at BASE; the blob starts there (both
 * layouts: 1.18+ inline strings, and the older header pointing at two Go
 * string headers, which may point anywhere in the input).
 * Seeds: the .go.buildinfo sections of the workloads built by Go 1.21-1.27,
 * and pre-1.18 blobs made by gen_seeds.py.
 */
#include "fuzz_common.h"
#include "inspect/go_buildinfo.h"

#define BASE 0x530000

static void check(const struct go_build_info *bi)
{
	size_t i;

	/* Every string is terminated within its array. */
	FUZZ_CHECK(memchr(bi->version, 0, sizeof(bi->version)));
	FUZZ_CHECK(memchr(bi->path, 0, sizeof(bi->path)));
	FUZZ_CHECK(memchr(bi->main_mod, 0, sizeof(bi->main_mod)));
	FUZZ_CHECK(memchr(bi->goexperiment, 0, sizeof(bi->goexperiment)));
	FUZZ_CHECK(memchr(bi->goarch, 0, sizeof(bi->goarch)));
	FUZZ_CHECK(memchr(bi->goamd64, 0, sizeof(bi->goamd64)));
	FUZZ_CHECK(memchr(bi->buildmode, 0, sizeof(bi->buildmode)));
	FUZZ_CHECK(memchr(bi->compiler, 0, sizeof(bi->compiler)));
	FUZZ_CHECK(memchr(bi->ldflags, 0, sizeof(bi->ldflags)));
	for (i = 0; i < bi->nsettings; i++) {
		FUZZ_CHECK(bi->settings[i].key && bi->settings[i].value);
		FUZZ_CHECK(go_build_info_setting(bi, bi->settings[i].key));
	}
	(void)go_build_info_has_experiment(bi, "nogreenteagc");
	(void)go_build_info_has_experiment(bi, "");
	(void)go_build_info_at_least(bi, 1, 21);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_mem m = { .data = data, .len = size, .base = BASE };
	struct go_build_info bi;
	int major, minor, patch;
	bool devel;
	char *s;

	if (go_build_info_decode(fuzz_mem_read, &m, BASE, &bi) == 0) {
		FUZZ_CHECK(bi.version[0] && bi.major == 1);
		FUZZ_CHECK(bi.modinfo);
		check(&bi);
		go_build_info_free(&bi);
		go_build_info_free(&bi); /* idempotent: binaries close twice */
	} else {
		/* A failed decode leaves nothing to free. */
		FUZZ_CHECK(bi.settings == NULL && bi.modinfo == NULL);
	}

	/* The same bytes as modinfo text, and as a version string. */
	memset(&bi, 0, sizeof(bi));
	bi.cgo = -1;
	(void)go_build_info_parse_modinfo((const char *)data, size, &bi);
	check(&bi);
	go_build_info_free(&bi);

	s = strndup((const char *)data, size < 128 ? size : 128);
	if (s) {
		if (go_version_parse(s, &major, &minor, &patch, &devel) == 0)
			FUZZ_CHECK(major == 1 && minor >= 0 && minor <= 1000);
		free(s);
	}
	return 0;
}
