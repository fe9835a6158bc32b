// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_go_types.c - the per-version layout table against DWARF, and type
 * names read the way the runtime's trace names them.
 *
 * Binaries: $TRACEAF_GOBIN_DIR (default build/go-bin), built by
 * tests/go/build-workloads.sh for Go 1.21..1.27.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gobin.h"
#include "inspect/go_binary.h"
#include "inspect/go_dwarf.h"
#include "inspect/go_layout.h"
#include "inspect/go_types.h"

#define FIRST_MINOR 21
#define LAST_MINOR 27

/* --- the layout table ----------------------------------------------- */

static void test_table_has_every_installed_version(void **state)
{
	int m;

	for (m = FIRST_MINOR; m <= LAST_MINOR; m++) {
		const struct go_layout *l = go_layout_lookup(1, m);
		size_t i;

		if (!l)
			fail_msg("no table entry for go1.%d", m);
		for (i = 0; i < go_layout_nfields; i++) {
			const struct go_field *f = go_layout_field(l, i);

			/* Absent only before the version that added it
			 * (or, for a negative `since`, from the one that
			 * removed it). */
			if (go_layout_absent_in(go_layout_fields[i].since, m))
				assert_int_equal(f->off, GO_FIELD_ABSENT);
			else
				assert_true(go_field_present(f));
		}
	}
	assert_null(go_layout_lookup(1, 99));
}

/*
 * The check the table exists for: the offsets it gives stripped binaries
 * are the ones the DWARF of each toolchain's own binary states.
 */
static void test_table_agrees_with_dwarf_of_every_toolchain(void **state)
{
	int m, bad = 0;

	for (m = FIRST_MINOR; m <= LAST_MINOR; m++) {
		struct go_binary *b = open_bin(m, "");
		const struct go_layout *t = go_layout_lookup(1, m);
		struct go_layout d;
		size_t i;

		assert_non_null(t);
		assert_int_equal(go_layout_from_dwarf(b, &d), 0);
		for (i = 0; i < go_layout_nfields; i++) {
			const struct go_field *x = go_layout_field(&d, i);
			const struct go_field *y = go_layout_field(t, i);

			if (x->off == y->off && x->size == y->size)
				continue;
			print_message("go1.%d %s: DWARF {%d,%d} table {%d,%d}\n",
				      m, go_layout_fields[i].name, x->off,
				      x->size, y->off, y->size);
			bad++;
		}
		go_binary_close(b);
	}
	assert_int_equal(bad, 0);
}

/* The fields the issue names, spelled out against DWARF once more. */
static void test_named_fields_match_dwarf_on_123_and_127(void **state)
{
	static const struct {
		const char *type, *path;
		size_t off;
	} f[] = {
		{ "runtime.mspan", "startAddr",
		  offsetof(struct go_layout, mspan_start_addr) },
		{ "runtime.mspan", "npages", offsetof(struct go_layout, mspan_npages) },
		{ "runtime.mspan", "nelems", offsetof(struct go_layout, mspan_nelems) },
		{ "runtime.mspan", "freeindex",
		  offsetof(struct go_layout, mspan_freeindex) },
		{ "runtime.mspan", "allocBits",
		  offsetof(struct go_layout, mspan_alloc_bits) },
		{ "runtime.mspan", "gcmarkBits",
		  offsetof(struct go_layout, mspan_gcmark_bits) },
		{ "runtime.mspan", "spanclass",
		  offsetof(struct go_layout, mspan_spanclass) },
		{ "runtime.mspan", "elemsize",
		  offsetof(struct go_layout, mspan_elemsize) },
		{ "runtime.mspan", "state", offsetof(struct go_layout, mspan_state) },
		{ "runtime.g", "stack", offsetof(struct go_layout, g_stack) },
		{ "runtime.g", "m", offsetof(struct go_layout, g_m) },
		{ "runtime.m", "procid", offsetof(struct go_layout, m_procid) },
		{ "runtime.m", "curg", offsetof(struct go_layout, m_curg) },
		{ "runtime.mheap", "pages.inUse.ranges",
		  offsetof(struct go_layout, mheap_pages_inuse_ranges) },
		{ "runtime.mheap", "allspans",
		  offsetof(struct go_layout, mheap_allspans) },
		{ "runtime.mspan", "largeType",
		  offsetof(struct go_layout, mspan_large_type) },
		{ "runtime.addrRange", "base",
		  offsetof(struct go_layout, addr_range_base) },
		{ "runtime.moduledata", "types",
		  offsetof(struct go_layout, moduledata_types) },
		{ "runtime.moduledata", "etypes",
		  offsetof(struct go_layout, moduledata_etypes) },
	};
	const int minors[] = { 23, 27 };
	size_t k, i;

	for (k = 0; k < 2; k++) {
		struct go_binary *b = open_bin(minors[k], "-pie");
		const struct go_layout *t = go_layout_lookup(1, minors[k]);

		for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
			const struct go_field *tf =
				(const void *)((const char *)t + f[i].off);
			uint64_t off, size;

			assert_int_equal(go_dwarf_member(go_binary_dwarf(b), f[i].type, f[i].path,
							 &off, &size), 0);
			assert_int_equal(tf->off, off);
			assert_int_equal(tf->size, size);
		}
		go_binary_close(b);
	}
}

static void test_mspan_counters_shrank_to_uint16_in_122(void **state)
{
	/* runtime/mheap.go: freeindex and nelems are uint16 since Go 1.22. */
	assert_int_equal(go_layout_lookup(1, 21)->mspan_nelems.size, 8);
	assert_int_equal(go_layout_lookup(1, 22)->mspan_nelems.size, 2);
	assert_int_equal(go_layout_lookup(1, 27)->mspan_freeindex.size, 2);
}

/* The heap snapshot's fields: mheap.allspans, and mspan.largeType (1.22+). */
static void test_large_type_is_absent_in_121_and_present_after(void **state)
{
	static const char *const flavours[] = { "", "-stripped" };
	int m;
	size_t k;

	for (m = FIRST_MINOR; m <= LAST_MINOR; m++) {
		for (k = 0; k < 2; k++) {
			struct go_binary *b = open_bin(m, flavours[k]);
			struct go_layout l;

			assert_true(go_layout_resolve(b, &l, NULL, NULL) >= 0);
			assert_int_equal(l.source, k ? GO_LAYOUT_TABLE :
						       GO_LAYOUT_DWARF);
			assert_true(go_field_present(&l.mheap_allspans));
			assert_int_equal(l.mheap_allspans.size, 24);
			assert_true(go_field_present(&l.addr_range_base));
			if (m == 21) {
				assert_int_equal(l.mspan_large_type.off,
						 GO_FIELD_ABSENT);
			} else {
				assert_true(go_field_present(&l.mspan_large_type));
				assert_int_equal(l.mspan_large_type.size, 8);
			}
			go_binary_close(b);
		}
	}
}

static void test_resolve_uses_table_for_stripped_binaries(void **state)
{
	struct go_binary *b = open_bin(24, "-stripped");
	struct go_layout l;

	assert_int_equal(go_layout_resolve(b, &l, NULL, NULL), 0);
	assert_int_equal(l.source, GO_LAYOUT_TABLE);
	assert_int_equal(l.m_curg.off, go_layout_lookup(1, 24)->m_curg.off);
	go_binary_close(b);
}

static int reports;

static void count_report(void *ctx, const char *field, struct go_field d,
			 struct go_field t)
{
	reports++;
}

static void test_resolve_prefers_dwarf_and_reports_nothing_when_equal(void **state)
{
	struct go_binary *b = open_bin(26, "-pie");
	struct go_layout l;

	reports = 0;
	assert_int_equal(go_layout_resolve(b, &l, count_report, NULL), 0);
	assert_int_equal(l.source, GO_LAYOUT_DWARF);
	assert_int_equal(reports, 0);
	go_binary_close(b);
}

/* --- type names ------------------------------------------------------- */

struct file_reader {
	struct go_binary *bin;
	uint64_t bias;
	int reads;
};

/* Serves runtime addresses from the file: what a process would map. */
static int file_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct file_reader *r = ctx;

	r->reads++;
	return go_binary_read(r->bin, addr - r->bias, buf, len);
}

/*
 * Address of a type's descriptor: DW_AT_go_runtime_type of the twin with
 * DWARF (stripping does not move loaded sections) + moduledata.types.
 */
static uint64_t type_addr(int minor, const char *flavour, const char *type,
			  const struct go_type_reader *r)
{
	char twin[32];
	struct go_binary *t;
	uint64_t off;

	snprintf(twin, sizeof(twin), "%s", strstr(flavour, "pie") ? "-pie" : "");
	t = open_bin(minor, twin);
	if (go_dwarf_runtime_type_off(go_binary_dwarf(t), type, &off))
		fail_msg("go1.%d: no DW_AT_go_runtime_type for %s", minor, type);
	go_binary_close(t);
	return r->types + off;
}

static void describe(int minor, const char *flavour, uint64_t bias,
		     const char *type, struct go_type_desc *d)
{
	struct file_reader fr = { .bin = open_bin(minor, flavour), .bias = bias };
	struct go_type_reader r;
	int rc;

	rc = go_types_init(&r, fr.bin, bias, file_read, &fr);
	if (rc)
		fail_msg("go1.%d%s: go_types_init: %d", minor, flavour, rc);
	rc = go_type_describe(&r, type_addr(minor, flavour, type, &r), d);
	if (rc)
		fail_msg("go1.%d%s %s: go_type_describe: %d", minor, flavour,
			 type, rc);
	go_binary_close(fr.bin);
}

static void test_main_node_is_named_main_node_size_56(void **state)
{
	static const char *const flavours[] = { "", "-stripped", "-pie",
						"-stripped-pie" };
	int m;
	size_t f;

	for (m = FIRST_MINOR; m <= LAST_MINOR; m++) {
		for (f = 0; f < 4; f++) {
			struct go_type_desc d;

			describe(m, flavours[f], 0, "main.Node", &d);
			if (strcmp(d.name, "main.Node"))
				fail_msg("go1.%d%s: name \"%s\"", m, flavours[f],
					 d.name);
			assert_int_equal(d.name_len, 9);
			assert_int_equal(d.size, 56);
			assert_int_equal(d.ptr_bytes, 56); /* next is the last word */
			/* The linker stored "*main.Node" and marked it. */
			assert_true(d.tflag & GO_TFLAG_EXTRA_STAR);
		}
	}
}

static void test_byte_slice_element_is_uint8_size_1(void **state)
{
	int m;

	for (m = FIRST_MINOR; m <= LAST_MINOR; m++) {
		struct go_type_desc d;

		describe(m, "-stripped", 0, "uint8", &d);
		assert_string_equal(d.name, "uint8");
		assert_int_equal(d.size, 1);
		assert_int_equal(d.ptr_bytes, 0);
	}
}

static void test_pointer_type_keeps_its_star(void **state)
{
	struct go_type_desc d;

	describe(27, "-stripped", 0, "*main.Node", &d);
	assert_string_equal(d.name, "*main.Node");
	assert_int_equal(d.size, 8);
	assert_int_equal(d.ptr_bytes, 8);
}

static void test_pie_load_bias_is_applied(void **state)
{
	const uint64_t bias = 0x7f3a12340000ull;
	struct go_type_desc d;

	describe(27, "-stripped-pie", bias, "main.Node", &d);
	assert_string_equal(d.name, "main.Node");
	describe(21, "-pie", bias, "main.Node", &d);
	assert_string_equal(d.name, "main.Node");
}

static void test_address_outside_the_types_section_is_erange(void **state)
{
	struct file_reader fr = { .bin = open_bin(23, "-stripped") };
	struct go_type_reader r;
	struct go_type_desc d;

	assert_int_equal(go_types_init(&r, fr.bin, 0, file_read, &fr), 0);
	fr.reads = 0;
	assert_int_equal(go_type_describe(&r, r.etypes, &d), -ERANGE);
	assert_int_equal(go_type_describe(&r, 0xc000123450ull, &d), -ERANGE);
	assert_int_equal(fr.reads, 0);
	go_binary_close(fr.bin);
}

static int gone_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	int *reads = ctx;

	(*reads)++;
	return -EIO; /* what /proc/PID/mem gives once the process is gone */
}

/* Records drained after the target exited still get their type names. */
static void test_types_of_an_exited_process_are_read_from_the_file(void **state)
{
	struct go_binary *b = open_bin(23, "-stripped-pie");
	const uint64_t bias = 0x7f3a12340000ull;
	struct go_type_reader r;
	struct go_type_desc d;
	int reads = 0;

	assert_int_equal(go_types_init(&r, b, bias, gone_read, &reads), 0);
	assert_int_equal(go_type_describe(&r, type_addr(23, "-stripped-pie",
							"main.Node", &r), &d), 0);
	assert_true(reads > 0);
	assert_string_equal(d.name, "main.Node");
	assert_int_equal(d.size, 56);
	/* Outside the types section the file is no substitute. */
	assert_int_equal(go_type_describe(&r, 0xc000123450ull, &d), -ERANGE);
	go_binary_close(b);
}

/* --- a live process ---------------------------------------------------- */

struct mem_reader {
	int fd;
};

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct mem_reader *m = ctx;

	return pread(m->fd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -EIO;
}

/*
 * Start of the mapping of `path` at file offset 0 in /proc/pid/maps, once
 * pid runs it: before the exec the child still has the parent's mappings,
 * which include the file libelf mapped to read it.
 */
static int first_mapping(pid_t pid, const char *path, uint64_t *start)
{
	char maps[64], line[1024], real[1024], exe[1024];
	FILE *f;
	ssize_t n;
	int found = -1;

	if (!realpath(path, real))
		return -1;
	snprintf(maps, sizeof(maps), "/proc/%d/exe", (int)pid);
	n = readlink(maps, exe, sizeof(exe) - 1);
	if (n < 0)
		return -1;
	exe[n] = '\0';
	if (strcmp(exe, real))
		return -1;
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, off;
		char *p = strchr(line, '/');

		if (!p || sscanf(line, "%lx-%*x %*s %lx", &lo, &off) != 2)
			continue;
		p[strcspn(p, "\n")] = '\0';
		if (off == 0 && !strcmp(p, real)) {
			*start = lo;
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}

static void test_names_read_from_a_running_pie_process(void **state)
{
	char path[512], mem[64];
	struct go_binary *b = open_bin(27, "-stripped-pie");
	struct mem_reader mr;
	struct go_type_reader r;
	struct go_type_desc d;
	uint64_t start = 0, vaddr, off, bias;
	pid_t pid;
	int i, status, rc_init, rc_desc = -1;

	bin_path(path, sizeof(path), 27, "-stripped-pie");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		execl(path, path, "-n", "0", "-sleep", "1ms", (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 200 && first_mapping(pid, path, &start); i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	if (!start) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		fail_msg("%s never showed up in /proc/%d/maps", path, (int)pid);
	}
	if (go_binary_first_load(b, &vaddr, &off))
		vaddr = off = 0;
	bias = start - (vaddr - off);

	snprintf(mem, sizeof(mem), "/proc/%d/mem", (int)pid);
	mr.fd = open(mem, O_RDONLY);
	rc_init = go_types_init(&r, b, bias, mem_read, &mr);
	if (!rc_init)
		rc_desc = go_type_describe(&r, type_addr(27, "-stripped-pie",
							 "main.Node", &r), &d);
	/* Stop the child before any assertion can leave the test. */
	close(mr.fd);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	go_binary_close(b);
	assert_true(bias != 0); /* a PIE really was moved */
	assert_int_equal(rc_init, 0);
	assert_int_equal(rc_desc, 0);
	assert_string_equal(d.name, "main.Node");
	assert_int_equal(d.size, 56);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_has_every_installed_version),
		cmocka_unit_test(test_table_agrees_with_dwarf_of_every_toolchain),
		cmocka_unit_test(test_named_fields_match_dwarf_on_123_and_127),
		cmocka_unit_test(test_mspan_counters_shrank_to_uint16_in_122),
		cmocka_unit_test(test_large_type_is_absent_in_121_and_present_after),
		cmocka_unit_test(test_resolve_uses_table_for_stripped_binaries),
		cmocka_unit_test(test_resolve_prefers_dwarf_and_reports_nothing_when_equal),
		cmocka_unit_test(test_main_node_is_named_main_node_size_56),
		cmocka_unit_test(test_byte_slice_element_is_uint8_size_1),
		cmocka_unit_test(test_pointer_type_keeps_its_star),
		cmocka_unit_test(test_pie_load_bias_is_applied),
		cmocka_unit_test(test_address_outside_the_types_section_is_erange),
		cmocka_unit_test(test_types_of_an_exited_process_are_read_from_the_file),
		cmocka_unit_test(test_names_read_from_a_running_pie_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
