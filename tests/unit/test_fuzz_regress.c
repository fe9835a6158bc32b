// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_fuzz_regress - one test per defect the fuzz harnesses (tests/fuzz)
 * found in the readers of untrusted input. Where the input is easy to
 * build it is built here; otherwise the fuzzer's input is kept in
 * tests/fuzz/regress/<harness>/ (also a seed of that harness).
 *
 * Some defects were undefined behaviour with no visible effect in a normal
 * build: those tests only fail in the sanitizer build (make unit-asan),
 * which `make test` runs too.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "inspect/go_binary.h"
#include "inspect/go_dwarf.h"
#include "inspect/go_layout.h"
#include "inspect/go_pclntab.h"
#include "inspect/runtime_globals.h"
#include "trace_decode.h"
#include "format/trace_writer.h"

/*
 * tests/fuzz/regress/<rel>, found from this file's path (the tests run
 * from the top of the tree, where make compiles them).
 */
static char *regress_path(const char *rel)
{
	static char path[512];
	const char *me = __FILE__, *slash = strrchr(me, '/');

	snprintf(path, sizeof(path), "%.*s/../fuzz/regress/%s",
		 slash ? (int)(slash - me) : 1, slash ? me : ".", rel);
	return path;
}

static uint8_t *slurp(const char *rel, size_t *len)
{
	const char *path = regress_path(rel);
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		fail_msg("%s: %s", path, strerror(errno));
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc(st.st_size ? st.st_size : 1);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

/*
 * go_pclntab.c pcsp_end: a Go 1.16 table holds 64-bit entry addresses, so
 * an entry near 2^64 plus the pc deltas of its SP table wrapped around and
 * passed the "not past the next function" check: the function's size came
 * out as nearly 2^64 (the planner would disassemble that many bytes).
 */
static void test_pclntab_size_never_exceeds_the_next_entry(void **state)
{
	struct go_pclntab t;
	struct go_func f;
	size_t len;
	uint8_t *tab = slurp("pclntab/pcsp-wraps-address-space", &len);
	uint64_t i, ok = 0;

	assert_int_equal(go_pclntab_init(&t, tab, len, 0x4c7ee0, 0x401000), 0);
	for (i = 0; i < t.nfunc; i++) {
		if (go_pclntab_func(&t, i, &f))
			continue;
		assert_true(f.entry <= f.next_entry);
		assert_true(f.size <= f.next_entry - f.entry);
		ok++;
	}
	assert_true(ok > 0);
	free(tab);
}

/*
 * The same wrap, built by hand: one function at 2^64 - 16 whose SP table
 * claims 32 bytes of code, the next entry 8 bytes later.
 */
static void test_pclntab_pcsp_wrapping_past_2_64_is_refused(void **state)
{
	uint8_t tab[256] = { 0 };
	struct go_pclntab t;
	struct go_func f;
	const uint64_t entry = UINT64_MAX - 15;
	uint64_t hdr[7] = { 1, 0, 72, 72, 72, 80, 96 };
	int i;

	/* pcHeader (1.16): magic, pad, pad, minLC 1, ptrSize 8, 7 words. */
	memcpy(tab, "\xfa\xff\xff\xff\x00\x00\x01\x08", 8);
	for (i = 0; i < 7; i++)
		memcpy(tab + 8 + 8 * i, &hdr[i], 8);
	memcpy(tab + 72, "f\0", 2);               /* funcnametab */
	memcpy(tab + 80 + 1, "\x02\x20\x00", 3);  /* pcsp at pctab+1: 32 bytes */
	/* functab at 96: {entry, funcoff 32}, {entry + 8, 0}; _func at 128. */
	memcpy(tab + 96, &entry, 8);
	tab[104] = 32;
	{
		uint64_t end = entry + 8;

		memcpy(tab + 112, &end, 8);
	}
	memcpy(tab + 128, &entry, 8);              /* _func.entry */
	tab[128 + 20] = 1;                         /* pcsp offset */

	assert_int_equal(go_pclntab_init(&t, tab, sizeof(tab), 0, 0), 0);
	assert_int_equal(go_pclntab_func(&t, 0, &f), 0);
	assert_string_equal(f.name, "f");
	assert_int_equal(f.entry, entry);
	/* The SP table is not believed: the size runs to the next entry. */
	assert_int_equal(f.size, 8);
}

/*
 * go_dwarf.c build_index: DWARF whose compile unit names nothing left the
 * index NULL, and qsort(NULL, 0, ...) is undefined (UBSan: nonnull).
 */
static void test_dwarf_without_any_names_is_indexed(void **state)
{
	struct go_binary *bin;
	char err[256];
	uint64_t off, sz, addr;

	assert_int_equal(go_binary_open(regress_path("elf/dwarf-without-names"),
					&bin, err, sizeof(err)), 0);
	assert_true(go_binary_has_dwarf(bin));
	assert_int_equal(go_dwarf_member(go_binary_dwarf(bin), "runtime.mspan", "npages", &off,
					 &sz), -ENOENT);
	assert_int_equal(go_dwarf_type_size(go_binary_dwarf(bin), "main.Node", &sz), -ENOENT);
	(void)go_runtime_global_addr(bin, "runtime.mheap_", &addr);
	go_binary_close(bin);
}

/*
 * go_binary.c scan_moduledata: a stripped binary's moduledata is searched
 * word by word in every writable PROGBITS section, over the size its
 * header claims; a section header claiming ~2^56 bytes kept go_binary_open
 * busy for hours (a hang at attach). Only file-backed ranges are scanned
 * now. The alarm turns a hang into a failure.
 */
static void test_huge_writable_section_does_not_hang_open(void **state)
{
	static const char *const inputs[] = { "elf/huge-writable-section",
					      "dwarf/huge-writable-section" };
	struct go_binary *bin;
	char err[256];
	size_t i;

	alarm(20);
	for (i = 0; i < 2; i++) {
		if (go_binary_open(regress_path(inputs[i]), &bin, err,
				   sizeof(err)) == 0)
			go_binary_close(bin);
	}
	alarm(0);
}

/*
 * go_binary.c load_pclntab: a .gopclntab shorter than 4 bytes still had its
 * "magic" read for the error message, past the section; here the section
 * ends the file at a page boundary, so those bytes are not the file's
 * (found by review; built by gen_seeds.py regress()). The message now says
 * magic 0.
 */
static void test_pclntab_shorter_than_its_magic_is_not_overread(void **state)
{
	struct go_binary *bin;
	char err[256];

	assert_int_equal(go_binary_open(regress_path("elf/pclntab-2-bytes-at-eof"),
					&bin, err, sizeof(err)), -ENOEXEC);
	assert_null(bin);
	assert_non_null(strstr(err, "is damaged (magic 0)"));
}

/*
 * go_layout.c go_layout_from_dwarf stored DWARF's 64-bit member offsets in
 * an int32: 2^31 became a negative offset that go_layout_resolve returned
 * as present, and 2^32 - 2 became GO_FIELD_ABSENT for a field every Go
 * has. Found by review of the DWARF harness' check; the input is built by
 * gen_seeds.py (regress()). Out-of-range members now count as not
 * described, and the table fills them in.
 */
static void test_dwarf_offsets_beyond_int32_are_not_used(void **state)
{
	struct go_binary *bin;
	struct go_layout l;
	const struct go_layout *t;
	char err[256];
	size_t i;

	assert_int_equal(go_binary_open(regress_path("dwarf/member-offset-2-31"),
					&bin, err, sizeof(err)), 0);
	assert_true(go_layout_resolve(bin, &l, NULL, NULL) >= 0);
	t = go_layout_lookup(1, 23);
	assert_non_null(t);
	assert_int_equal(l.mspan_npages.off, t->mspan_npages.off);
	assert_int_equal(l.g_goid.off, t->g_goid.off);
	for (i = 0; i < go_layout_nfields; i++) {
		const struct go_field *f = go_layout_field(&l, i);

		assert_true(f->off >= 0 || f->off == GO_FIELD_ABSENT);
	}
	go_binary_close(bin);
}

/*
 * trace_writer.c put_type_batches: while every type name so far was empty
 * the names buffer was never allocated, and memcpy(p, NULL + 0, 0) is
 * undefined (UBSan: null pointer arithmetic). Types made by reflect have
 * no name, so this happens in a real trace.
 */
static void test_types_with_only_empty_names_encode(void **state)
{
	struct tw_heap_info info = { 0xc000000000ull, 8192, 8, 2048 };
	struct tw_gen *g = tw_gen_new(1, 1000000000, &info, 0);
	const uint8_t *p, *end, *q;
	struct td_batch b;
	struct td_type ty;
	uint8_t *buf;
	size_t len, ntypes = 0;

	assert_non_null(g);
	assert_int_equal(tw_gen_define_type(g, 0x4a0000, 24, 8, NULL, 0), 1);
	assert_int_equal(tw_gen_define_type(g, 0x4a0040, 8, 0, "", 0), 2);
	assert_int_equal(tw_gen_event(g, 1, TW_EV_HEAP_OBJECT_ALLOC, 10, 7, 2,
				      0), 0);
	assert_int_equal(tw_gen_encode(g, &buf, &len), 0);
	p = buf;
	end = buf + len;
	while (td_next_batch(&p, end, &b) == 1) {
		if (b.exp != 1 || b.len == 0 || b.data[0] != 0)
			continue;
		q = b.data + 1;
		while (td_next_type(&q, b.data + b.len, &ty) == 1) {
			assert_int_equal(ty.name_len, 0);
			ntypes++;
		}
	}
	assert_int_equal(ntypes, 2);
	free(buf);
	tw_gen_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pclntab_size_never_exceeds_the_next_entry),
		cmocka_unit_test(test_pclntab_pcsp_wrapping_past_2_64_is_refused),
		cmocka_unit_test(test_dwarf_without_any_names_is_indexed),
		cmocka_unit_test(test_huge_writable_section_does_not_hang_open),
		cmocka_unit_test(test_dwarf_offsets_beyond_int32_are_not_used),
		cmocka_unit_test(test_pclntab_shorter_than_its_magic_is_not_overread),
		cmocka_unit_test(test_types_with_only_empty_names_encode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
