// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_stack_sidecar - the stack sidecar reader (stack_sidecar.c) on
 * arbitrary bytes: parse, then every stack and a few lookups.
 *
 * Input: a sidecar file.  Seeds: corpus/stack_sidecar, written by
 * gen_sidecar_seeds.py, an encoder made from the format description
 * apart from the C writer.
 */
#include "fuzz_common.h"
#include "format/stack_sidecar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stack_sidecar *s = (void *)1;
	const struct stack_frame *f;
	uint32_t id, sid;
	size_t n, i;
	int err;

	err = stack_sidecar_parse(data, size, &s);
	if (err) {
		FUZZ_CHECK(err < 0 && s == NULL);
		return 0;
	}
	FUZZ_CHECK(stack_sidecar_frames(s, 0, &f, &n) == -ENOENT);
	for (id = 1; stack_sidecar_frames(s, id, &f, &n) == 0; id++) {
		/* A stack is never empty nor deeper than the format allows. */
		FUZZ_CHECK(n >= 1 && n <= STACK_SIDECAR_MAX_FRAMES);
		for (i = 0; i < n; i++)
			FUZZ_CHECK(f[i].func && f[i].file &&
				   strlen(f[i].func) + strlen(f[i].file) <
					   2 * 4096 + 2);
	}
	if (stack_sidecar_lookup(s, 1, 100, 5000, &sid) == 0)
		FUZZ_CHECK(sid >= 1 && sid < id);
	(void)stack_sidecar_lookup(s, 0, 0, 0, &sid);
	(void)stack_sidecar_lookup(s, UINT64_MAX, UINT64_MAX, UINT64_MAX,
				   &sid);
	stack_sidecar_close(s);
	return 0;
}
