// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_elf - go_binary_open on arbitrary bytes, then what the tracer asks
 * of a binary before it attaches: version check, the probed functions by
 * name (symtab or pclntab) and their code (disassembled as the planner
 * does), the function walk, sections, symbols, segments, moduledata, the
 * type reader on the file, and runtime.mheap_/allgs found through the code
 * of a stripped binary.
 *
 * Input: an ELF file. Seeds (gen_seeds.py): small synthetic Go binaries
 * built around the real .go.buildinfo and a cut-down real .gopclntab of Go
 * 1.21-1.27 workloads: with and without symbols, DWARF, section headers;
 * PIE; the 1.16, 1.18 and 1.20 pclntab layouts; the pre-1.18 build info.
 */
#include "fuzz_file.h"
#include "inspect/disasm.h"
#include "inspect/go_binary.h"
#include "inspect/go_types.h"
#include "inspect/runtime_globals.h"

static const char *const probed[] = {
	"runtime.mallocgc", "runtime.(*mheap).initSpan",
	"runtime.(*sweepLocked).sweep", "runtime.(*mheap).freeSpanLocked",
	"runtime.stackalloc", "runtime.stackfree", "runtime.(*mheap).alloc",
	"runtime.allgadd", "runtime.forEachG", "main.main",
};

struct walk {
	size_t n;
	uint64_t last;
};

static int walk_cb(const char *name, uint64_t entry, uint64_t size,
		   void *arg)
{
	struct walk *w = arg;

	FUZZ_CHECK(name && strncmp(name, "runtime.", 8) == 0);
	w->last = entry;
	return ++w->n >= 2048; /* enough: stops the walk */
}

static int file_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return go_binary_read(ctx, addr, buf, len);
}

static void code_of(const struct go_binary *bin, uint64_t entry,
		    uint64_t size)
{
	const uint8_t *code;
	struct disasm d;
	struct go_entry_site site;
	uint64_t rets[16];
	size_t n;

	if (size > 64 * 1024)
		return;
	code = go_binary_bytes(bin, entry, size);
	if (!code || disasm_function(code, size, entry, &d, NULL, 0))
		return;
	(void)go_entry_probe_site(&d, &site);
	(void)go_ret_sites(&d, rets, 16, &n);
	(void)go_tail_jumps(&d, NULL);
	disasm_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct go_binary *bin;
	const struct go_build_info *bi;
	const struct go_pclntab *t;
	struct go_type_reader r;
	struct go_type_desc td;
	struct walk w = { 0 };
	char path[64], err[256];
	uint64_t a, b, v;
	size_t i;
	int rc;

	fuzz_file(data, size, path, sizeof(path));
	err[0] = '\0';
	rc = go_binary_open(path, &bin, err, sizeof(err));
	FUZZ_CHECK(memchr(err, 0, sizeof(err)));
	if (rc) {
		FUZZ_CHECK(rc < 0 && bin == NULL && err[0]);
		return 0;
	}
	bi = go_binary_build_info(bin);
	FUZZ_CHECK(memchr(bi->version, 0, sizeof(bi->version)));
	(void)go_binary_check_version(bin, err, sizeof(err));
	FUZZ_CHECK(!strcmp(go_binary_path(bin), path));
	(void)go_binary_is_pie(bin);
	(void)go_binary_has_symtab(bin);
	(void)go_binary_has_dwarf(bin);
	t = go_binary_pclntab(bin);
	FUZZ_CHECK(t && t->nfunc > 0);

	for (i = 0; i < sizeof(probed) / sizeof(probed[0]); i++) {
		if (go_binary_find_func(bin, probed[i], &a, &b))
			continue;
		if (go_binary_vaddr_to_offset(bin, a, &v) == 0)
			FUZZ_CHECK(v < size);
		code_of(bin, a, b);
	}
	(void)go_binary_foreach_func(bin, "runtime.", walk_cb, &w);
	(void)go_binary_find_symbol(bin, "runtime.mheap_", &a, &b);
	(void)go_binary_find_symbol(bin, "", &a, NULL);
	if (go_binary_section(bin, ".gopclntab", &a, &b) == 0 && b)
		(void)go_binary_bytes(bin, a, b);
	(void)go_binary_first_load(bin, &a, &b);
	(void)go_binary_text_start(bin);
	if (go_binary_moduledata(bin, &a) == 0)
		(void)go_binary_read_u64(bin, a, &v);
	(void)go_binary_read_u64(bin, UINT64_MAX - 3, &v);
	FUZZ_CHECK(go_binary_bytes(bin, 0, SIZE_MAX) == NULL);

	/* The type reader, on the file's own bytes: .typelink's types. */
	if (go_types_init(&r, bin, 0, file_read, bin) == 0) {
		if (go_binary_section(bin, ".typelink", &a, &b))
			b = 0;
		for (i = 0; i < 16 && 4 * i + 4 <= b; i++) {
			int32_t off;

			if (go_binary_read(bin, a + 4 * i, &off, 4))
				break;
			if (go_type_describe(&r, r.types + (uint64_t)off,
					     &td) == 0)
				FUZZ_CHECK(td.name[td.name_len] == '\0');
		}
		(void)go_type_describe(&r, r.types, &td);
	}
	/* Stripped: the globals are found in the code that uses them. */
	if (!go_binary_has_symtab(bin)) {
		(void)go_runtime_global_addr(bin, "runtime.mheap_", &a);
		(void)go_runtime_global_addr(bin, "runtime.allgs", &a);
	}
	go_binary_close(bin);
	return 0;
}
