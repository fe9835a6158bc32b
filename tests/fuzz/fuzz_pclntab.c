// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_pclntab - the function table reader (go_pclntab.c) on arbitrary
 * bytes: init, every function, lookups by name and by pc, source
 * positions and inlined frames (the inline trees read from the input).
 *
 * Input: the table itself, starting at its pcHeader, as go_binary finds it
 * in .gopclntab. Seeds: tables of the Go 1.21-1.27 workloads cut down to a
 * few dozen functions (gen_seeds.py), in the 1.20+, 1.18 and 1.16 layouts.
 */
#include "fuzz_common.h"
#include "inspect/go_pclntab.h"

#define TABLE_ADDR 0x4c7ee0
#define TEXT_START 0x401000
#define MAX_FUNCS 4096

/* The inline trees live outside the table: here, in the input itself. */
static int read_input(void *ctx, uint64_t off, void *buf, size_t len)
{
	const struct fuzz_mem *m = ctx;

	return fuzz_mem_read(ctx, m->base + off, buf, len);
}

/* Positions and source frames of a few PCs of F: in range, or refused. */
static void check_lines(const struct go_pclntab *t, const struct go_func *f,
			struct fuzz_mem *mem)
{
	struct go_src_frame fr[8];
	const char *file;
	uint32_t line;
	uint64_t pc, off, len;
	int n, k;

	/* By offset: an entry near 2^64 (a made-up table) must not wrap
	 * the PC below it. */
	len = f->next_entry > f->entry ? f->next_entry - f->entry : 0;
	for (off = 0; off < len && off < 64; off += 7) {
		pc = f->entry + off;
		if (go_pclntab_line(t, f, pc, &file, &line) == 0)
			FUZZ_CHECK((const uint8_t *)file >= t->data &&
				   (const uint8_t *)file < t->data + t->len);
		n = go_pclntab_src_frames(t, f, pc, read_input, mem, fr, 8);
		FUZZ_CHECK(n >= 1 && n <= 8);
		for (k = 0; k < n; k++)
			FUZZ_CHECK(fr[k].func && fr[k].file);
	}
	FUZZ_CHECK(go_pclntab_line(t, f, f->next_entry, &file, &line) ==
		   -ENOENT);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_mem mem = { data, size, 0 };
	struct go_pclntab t;
	struct go_func f, g;
	uint64_t i, n;

	/* The header check alone reads at most its 72 bytes. */
	(void)go_pclntab_check_header(data, size);
	if (go_pclntab_init(&t, data, size, TABLE_ADDR, TEXT_START))
		return 0;
	FUZZ_CHECK(t.nfunc > 0);
	n = t.nfunc < MAX_FUNCS ? t.nfunc : MAX_FUNCS;
	for (i = 0; i < n; i++) {
		if (go_pclntab_func(&t, i, &f))
			continue;
		/* The name is NUL-terminated inside the table. */
		FUZZ_CHECK((const uint8_t *)f.name >= data &&
			   (const uint8_t *)f.name + strlen(f.name) <
				   data + size);
		FUZZ_CHECK(f.entry <= f.next_entry);
		FUZZ_CHECK(f.size <= f.next_entry - f.entry);
		if (i < 64) {
			FUZZ_CHECK(go_pclntab_find(&t, f.name, &g) == 0);
			FUZZ_CHECK(!strcmp(g.name, f.name));
			if (go_pclntab_find_pc(&t, f.entry, &g) == 0)
				FUZZ_CHECK(g.entry <= f.entry &&
					   f.entry < g.next_entry);
			check_lines(&t, &f, &mem);
		}
	}
	(void)go_pclntab_find(&t, "runtime.mallocgc", &f);
	(void)go_pclntab_find_pc(&t, 0, &f);
	(void)go_pclntab_find_pc(&t, UINT64_MAX, &f);
	return 0;
}
