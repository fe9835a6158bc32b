// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_go_binary.c - ELF, build info, pclntab and DWARF of real Go binaries.
 *
 * Needs tests/go/build-workloads.sh to have built allocloop with Go
 * 1.21..1.27 into $TRACEAF_GOBIN_DIR (default build/go-bin); a missing
 * binary fails the test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "gobin.h"
#include "inspect/disasm.h"
#include "inspect/go_binary.h"
#include "inspect/go_dwarf.h"
#include "inspect/runtime_globals.h"

#define FIRST_MINOR 21
#define LAST_MINOR 27

static const char *const flavours[] = { "", "-stripped", "-pie",
					"-stripped-pie" };

/* --- refusing what is not a Go amd64 executable --------------------- */

static void test_open_rejects_a_text_file(void **state)
{
	struct go_binary *bin;
	char path[] = "/tmp/taf-not-elf-XXXXXX", err[256];
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "hello\n", 6), 6);
	close(fd);
	assert_int_equal(go_binary_open(path, &bin, err, sizeof(err)), -ENOEXEC);
	assert_non_null(strstr(err, "not an ELF file"));
	assert_null(bin);
	unlink(path);
}

static void test_open_rejects_an_elf_that_is_not_go(void **state)
{
	struct go_binary *bin;
	char err[256];

	/* The test binary itself is C. */
	assert_int_equal(go_binary_open("/proc/self/exe", &bin, err,
					sizeof(err)), -ENOEXEC);
	assert_non_null(strstr(err, "not a Go binary"));
}

/* Copies a workload to a temp file and patches bytes at offset. */
static void patched_copy(const char *src, char *dst, long off,
			 const void *bytes, size_t n)
{
	FILE *in = fopen(src, "rb"), *out;
	char buf[65536];
	size_t got;
	int fd;

	if (!in)
		fail_msg("missing %s", src);
	fd = mkstemp(dst);
	assert_true(fd >= 0);
	out = fdopen(fd, "wb");
	while ((got = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, got, out), got);
	fclose(in);
	if (bytes) {
		assert_int_equal(fseek(out, off, SEEK_SET), 0);
		assert_int_equal(fwrite(bytes, 1, n, out), n);
	}
	fclose(out);
}

static void test_open_rejects_an_arm64_elf(void **state)
{
	char src[512], dst[] = "/tmp/taf-arm64-XXXXXX", err[256];
	const uint8_t em_aarch64[2] = { 183, 0 }; /* e_machine at 18 */
	struct go_binary *bin;

	bin_path(src, sizeof(src), 23, "");
	patched_copy(src, dst, 18, em_aarch64, 2);
	assert_int_equal(go_binary_open(dst, &bin, err, sizeof(err)), -ENOEXEC);
	assert_non_null(strstr(err, "built for aarch64"));
	assert_non_null(strstr(err, "not x86-64"));
	assert_null(strchr(err, '\n'));
	unlink(dst);
}

/* --- refusals: one line naming the reason (issue 4 item 4) ----------- */

/* File offset and size of a section of a workload binary. */
static void section_in_file(const char *path, const char *name, long *off,
			    size_t *size)
{
	struct go_binary *b = NULL;
	char err[512];
	uint64_t addr, sz, o;

	if (go_binary_open(path, &b, err, sizeof(err)))
		fail_msg("%s", err);
	if (go_binary_section(b, name, &addr, &sz) ||
	    go_binary_vaddr_to_offset(b, addr, &o))
		fail_msg("%s: no section %s", path, name);
	*off = (long)o;
	*size = sz;
	go_binary_close(b);
}

/* File offset of the first `needle` in [off, off+size) of path, or -1. */
static long find_in_file(const char *path, long off, size_t size,
			 const void *needle, size_t n)
{
	FILE *f = fopen(path, "rb");
	char *buf = malloc(size);
	const char *hit;
	long at = -1;

	assert_non_null(f);
	assert_non_null(buf);
	assert_int_equal(fseek(f, off, SEEK_SET), 0);
	assert_int_equal(fread(buf, 1, size, f), size);
	hit = memmem(buf, size, needle, n);
	if (hit)
		at = off + (hit - buf);
	free(buf);
	fclose(f);
	return at;
}

/* Builds a C program from source into dst (a mkstemp template). */
static void build_c(char *dst, const char *source, const char *extra)
{
	char srcpath[] = "/tmp/taf-csrc-XXXXXX.c", cmd[1024];
	int fd = mkstemps(srcpath, 2), out = mkstemp(dst);

	assert_true(fd >= 0 && out >= 0);
	close(out);
	assert_int_equal(write(fd, source, strlen(source)), (ssize_t)strlen(source));
	close(fd);
	snprintf(cmd, sizeof(cmd), "cc -o %s %s %s 2>&1", dst, srcpath,
		 extra ? extra : "");
	if (system(cmd) != 0)
		fail_msg("cannot build a C program: %s", cmd);
	unlink(srcpath);
}

static const char tiny_c[] =
	"#include <unistd.h>\nint main(void) { pause(); return 0; }\n";

static void test_open_refuses_a_c_program(void **state)
{
	char prog[] = "/tmp/taf-cprog-XXXXXX", err[256];
	struct go_binary *bin;

	build_c(prog, tiny_c, NULL);
	assert_int_equal(go_binary_open(prog, &bin, err, sizeof(err)), -ENOEXEC);
	assert_non_null(strstr(err, "not a Go binary"));
	assert_non_null(strstr(err, prog));
	unlink(prog);
}

/*
 * gccgo's programs need libgo.so (DT_NEEDED) and carry .go_export: a
 * program linked against a stand-in libgo shows the first, a section
 * added with objcopy the second.
 */
static void test_open_refuses_gccgo_by_its_libgo(void **state)
{
	char dir[] = "/tmp/taf-gccgo-XXXXXX", lib[600], cmd[2048], err[512];
	char prog[] = "/tmp/taf-gccgo-prog-XXXXXX", extra[1024];
	struct go_binary *bin;

	assert_non_null(mkdtemp(dir));
	snprintf(lib, sizeof(lib), "%s/libgo.so.23", dir);
	snprintf(cmd, sizeof(cmd),
		 "echo 'int __go_stand_in;' | cc -x c -shared -fPIC "
		 "-Wl,-soname,libgo.so.23 -o %s - 2>&1", lib);
	assert_int_equal(system(cmd), 0);
	snprintf(extra, sizeof(extra), "-Wl,--no-as-needed %s", lib);
	build_c(prog, tiny_c, extra);
	assert_int_equal(go_binary_open(prog, &bin, err, sizeof(err)), -ENOTSUP);
	assert_non_null(strstr(err, "built by gccgo"));
	unlink(prog);
	unlink(lib);
	rmdir(dir);
}

static void test_open_refuses_gccgo_by_its_go_export_section(void **state)
{
	char prog[] = "/tmp/taf-gccgo-exp-XXXXXX", cmd[1024], err[512];
	struct go_binary *bin;

	build_c(prog, tiny_c, NULL);
	snprintf(cmd, sizeof(cmd),
		 "objcopy --add-section .go_export=/dev/null %s 2>&1", prog);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(go_binary_open(prog, &bin, err, sizeof(err)), -ENOTSUP);
	assert_non_null(strstr(err, "built by gccgo"));
	unlink(prog);
}

/*
 * A Go binary whose function table is damaged (here its magic): no
 * runtime function can be found, and the message says so rather than
 * guessing an old Go (the build info says which Go it is).
 */
static void test_open_refuses_a_go_binary_with_a_damaged_pclntab(void **state)
{
	char src[512], dst[] = "/tmp/taf-pcln-XXXXXX", err[512];
	const uint8_t zero[4] = { 0 };
	struct go_binary *bin;
	size_t size;
	long off;

	bin_path(src, sizeof(src), 23, "-stripped");
	section_in_file(src, ".gopclntab", &off, &size);
	patched_copy(src, dst, off, zero, sizeof(zero));
	assert_int_equal(go_binary_open(dst, &bin, err, sizeof(err)), -ENOEXEC);
	assert_non_null(strstr(err, "function table (pclntab)"));
	assert_non_null(strstr(err, "go1.23"));
	assert_non_null(strstr(err, "runtime functions cannot be found"));
	unlink(dst);
}

/*
 * The version the tracer reads is the build info's: a copy of a Go 1.21
 * binary whose build info says go1.20 (same length, the program still
 * runs) is refused, and the untouched one is not.
 */
static void test_a_go120_binary_is_refused_by_version(void **state)
{
	char src[512], dst[] = "/tmp/taf-go120-XXXXXX", err[512];
	struct go_binary *bin;
	char old[64];
	size_t size;
	long off, at;

	bin = open_bin(21, "-stripped");
	assert_int_equal(go_binary_check_version(bin, err, sizeof(err)), 0);
	snprintf(old, sizeof(old), "%s", go_binary_build_info(bin)->version);
	go_binary_close(bin);
	assert_int_equal(strncmp(old, "go1.21", 6), 0);

	bin_path(src, sizeof(src), 21, "-stripped");
	section_in_file(src, ".go.buildinfo", &off, &size);
	at = find_in_file(src, off, size, old, strlen(old));
	assert_true(at > 0);
	patched_copy(src, dst, at, "go1.20", 6);

	assert_int_equal(go_binary_open(dst, &bin, err, sizeof(err)), 0);
	assert_int_equal(go_binary_build_info(bin)->minor, 20);
	assert_int_equal(go_binary_check_version(bin, err, sizeof(err)),
			 -ENOTSUP);
	assert_non_null(strstr(err, "built with go1.20"));
	assert_non_null(strstr(err, "Go 1.21 or newer is required"));
	go_binary_close(bin);
	unlink(dst);
}

/*
 * A Go binary whose function table no longer names runtime.mallocgc (here
 * renamed in a stripped copy, as an obfuscator would; the program still
 * runs): refused when opened, whatever the probe planner would look for.
 */
static void test_open_refuses_a_go_binary_without_runtime_mallocgc(void **state)
{
	static const char name[] = "\0runtime.mallocgc\0";
	char src[512], dst[] = "/tmp/taf-noalloc-XXXXXX", err[512];
	struct go_binary *bin;
	size_t size;
	long off, at;

	bin_path(src, sizeof(src), 24, "-stripped");
	section_in_file(src, ".gopclntab", &off, &size);
	at = find_in_file(src, off, size, name, sizeof(name) - 1);
	assert_true(at > 0);
	/* "runtime.mallocgc" -> "runtime.mallocgX" */
	patched_copy(src, dst, at + sizeof(name) - 3, "X", 1);

	assert_int_equal(go_binary_open(dst, &bin, err, sizeof(err)), -ENOEXEC);
	assert_non_null(strstr(err, "names no runtime.mallocgc"));
	assert_non_null(strstr(err, "go1.24"));
	assert_non_null(strstr(err, "runtime functions cannot be found"));
	unlink(dst);
}

/* --- build info ------------------------------------------------------ */

/*
 * `go version -m FILE` of the toolchain that built FILE: the first line is
 * "FILE: go1.23.5", then "\tbuild\tKEY=VALUE" lines.
 */
static void check_against_go_version_m(int minor, const char *flavour)
{
	struct go_binary *bin = open_bin(minor, flavour);
	const struct go_build_info *bi = go_binary_build_info(bin);
	char path[512], cmd[1024], line[1024];
	int settings = 0;
	FILE *p;

	bin_path(path, sizeof(path), minor, flavour);
	snprintf(cmd, sizeof(cmd),
		 "GOTOOLCHAIN=local /usr/lib/go-1.%d/bin/go version -m '%s'",
		 minor, path);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(line, sizeof(line), p));
	line[strcspn(line, "\n")] = '\0';
	assert_string_equal(strrchr(line, ' ') + 1, bi->version);
	while (fgets(line, sizeof(line), p)) {
		char *kv, *eq;
		const char *v;

		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "\tbuild\t", 7))
			continue;
		kv = line + 7;
		eq = strchr(kv, '=');
		assert_non_null(eq);
		*eq = '\0';
		v = go_build_info_setting(bi, kv);
		if (!v)
			fail_msg("%s: setting %s missing", path, kv);
		/* go version -m prints quoted values as they are stored. */
		if (eq[1] != '"')
			assert_string_equal(v, eq + 1);
		settings++;
	}
	assert_int_equal(pclose(p), 0);
	assert_int_equal(settings, (int)bi->nsettings);
	assert_int_equal(bi->major, 1);
	assert_int_equal(bi->minor, minor);
	go_binary_close(bin);
}

static void test_version_and_settings_match_go_version_m(void **state)
{
	int m;
	size_t f;

	for (m = FIRST_MINOR; m <= LAST_MINOR; m++)
		for (f = 0; f < sizeof(flavours) / sizeof(flavours[0]); f++)
			check_against_go_version_m(m, flavours[f]);
}

static void test_version_patch_is_parsed(void **state)
{
	struct go_binary *bin = open_bin(23, "-stripped");
	const struct go_build_info *bi = go_binary_build_info(bin);
	char expect[32];

	snprintf(expect, sizeof(expect), "go%d.%d.%d", bi->major, bi->minor,
		 bi->patch);
	assert_string_equal(bi->version, expect);
	assert_true(bi->patch > 0);
	go_binary_close(bin);
}

static void test_well_known_settings_are_copied_out(void **state)
{
	struct go_binary *bin = open_bin(27, "-stripped-pie");
	const struct go_build_info *bi = go_binary_build_info(bin);

	assert_string_equal(bi->goarch, "amd64");
	assert_string_equal(bi->goamd64, "v1");
	assert_string_equal(bi->buildmode, "pie");
	assert_string_equal(bi->compiler, "gc");
	assert_int_equal(bi->cgo, 0); /* build-workloads.sh sets CGO_ENABLED=0 */
	assert_string_equal(bi->path, "command-line-arguments");
	assert_true(go_build_info_at_least(bi, 1, 27));
	assert_false(go_build_info_at_least(bi, 1, 28));
	go_binary_close(bin);
}

static void test_pie_flag_follows_buildmode(void **state)
{
	int m;
	size_t f;

	for (m = FIRST_MINOR; m <= LAST_MINOR; m++) {
		for (f = 0; f < sizeof(flavours) / sizeof(flavours[0]); f++) {
			struct go_binary *bin = open_bin(m, flavours[f]);
			bool pie = strstr(flavours[f], "pie") != NULL;

			assert_int_equal(go_binary_is_pie(bin), pie);
			assert_string_equal(go_binary_build_info(bin)->buildmode,
					    pie ? "pie" : "exe");
			go_binary_close(bin);
		}
	}
}

/* A fake address space for the decoder. */
struct fake_mem {
	uint64_t base;
	uint8_t bytes[512];
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake_mem *m = ctx;

	if (addr < m->base || addr + len > m->base + sizeof(m->bytes))
		return -EFAULT;
	memcpy(buf, m->bytes + (addr - m->base), len);
	return 0;
}

static void put64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void test_buildinfo_decodes_the_pre_118_pointer_layout(void **state)
{
	/* Go 1.17 and older: header points at two Go string headers. */
	static const char start[] = "0w\xaf\x0c\x92t\x08\x02" "A\xe1\xc1\x07\xe6\xd6\x18\xe6";
	static const char end[] = "\xf9" "2C1\x86\x18 r\x00\x82" "B\x10" "A\x16\xd8\xf2";
	static const char body[] = "path\texample.com/old\nbuild\tCGO_ENABLED=1\n";
	struct fake_mem m = { .base = 0x500000 };
	struct go_build_info bi;
	uint8_t *b = m.bytes;
	size_t blen = sizeof(body) - 1;

	memcpy(b, GO_BUILDINFO_MAGIC, GO_BUILDINFO_MAGIC_LEN);
	b[14] = 8;    /* pointer size */
	b[15] = 0;    /* little endian, pointer layout */
	put64(b + 16, m.base + 64);   /* -> version string header */
	put64(b + 24, m.base + 80);   /* -> modinfo string header */
	put64(b + 64, m.base + 128);
	put64(b + 72, 9);
	put64(b + 80, m.base + 160);
	put64(b + 88, 16 + blen + 16);
	memcpy(b + 128, "go1.17.13", 9);
	memcpy(b + 160, start, 16);
	memcpy(b + 176, body, blen);
	memcpy(b + 176 + blen, end, 16);

	assert_int_equal(go_build_info_decode(fake_read, &m, m.base, &bi), 0);
	assert_string_equal(bi.version, "go1.17.13");
	assert_int_equal(bi.minor, 17);
	assert_int_equal(bi.patch, 13);
	assert_string_equal(bi.path, "example.com/old");
	assert_int_equal(bi.cgo, 1);
	go_build_info_free(&bi);
}

static void test_buildinfo_rejects_a_blob_without_magic(void **state)
{
	struct fake_mem m = { .base = 0x500000 };
	struct go_build_info bi;

	assert_int_equal(go_build_info_decode(fake_read, &m, m.base, &bi),
			 -EINVAL);
}

static void test_modinfo_quoted_ldflags_are_unquoted(void **state)
{
	static const char text[] =
		"path\tcmd\nmod\texample.com/m\t(devel)\t\n"
		"build\t-ldflags=\"-s -w -X main.v=\\\"1\\\"\"\n"
		"build\tGOEXPERIMENT=nogreenteagc,arenas\n"
		"build\tvcs.revision=0123abc\n";
	struct go_build_info bi = { .cgo = -1 };

	assert_int_equal(go_build_info_parse_modinfo(text, sizeof(text) - 1,
						     &bi), 0);
	assert_string_equal(bi.ldflags, "-s -w -X main.v=\"1\"");
	assert_string_equal(bi.main_mod, "example.com/m");
	assert_string_equal(go_build_info_setting(&bi, "vcs.revision"),
			    "0123abc");
	go_build_info_free(&bi);
}

static void test_goexperiment_list_is_searched_by_name(void **state)
{
	static const char text[] = "build\tGOEXPERIMENT=nogreenteagc,arenas\n";
	struct go_build_info bi = { .cgo = -1 };

	assert_int_equal(go_build_info_parse_modinfo(text, sizeof(text) - 1,
						     &bi), 0);
	assert_true(go_build_info_has_experiment(&bi, "nogreenteagc"));
	assert_true(go_build_info_has_experiment(&bi, "arenas"));
	assert_false(go_build_info_has_experiment(&bi, "greenteagc"));
	assert_int_equal(bi.cgo, -1);
	go_build_info_free(&bi);
}

static void test_version_strings_of_every_shape_parse(void **state)
{
	int ma, mi, pa;
	bool devel;

	assert_int_equal(go_version_parse("go1.21rc2", &ma, &mi, &pa, &devel), 0);
	assert_int_equal(mi, 21);
	assert_int_equal(pa, 0);
	assert_int_equal(go_version_parse("go1.24.3 X:nodwarf5", &ma, &mi, &pa,
					  &devel), 0);
	assert_int_equal(mi, 24);
	assert_int_equal(pa, 3);
	assert_false(devel);
	assert_int_equal(go_version_parse("devel go1.26-1a2b3c Tue", &ma, &mi,
					  &pa, &devel), 0);
	assert_int_equal(mi, 26);
	assert_true(devel);
	assert_int_equal(go_version_parse("gccgo", &ma, &mi, &pa, &devel),
			 -EINVAL);
}

/* --- symbols, pclntab ---------------------------------------------- */

static void test_stripped_binaries_have_no_symtab_and_no_dwarf(void **state)
{
	int m;

	for (m = FIRST_MINOR; m <= LAST_MINOR; m++) {
		struct go_binary *a = open_bin(m, ""), *b = open_bin(m, "-stripped");

		assert_true(go_binary_has_symtab(a));
		assert_true(go_binary_has_dwarf(a));
		assert_false(go_binary_has_symtab(b));
		assert_false(go_binary_has_dwarf(b));
		go_binary_close(a);
		go_binary_close(b);
	}
}

/* The functions DESIGN.md section 2 hooks, present in every version. */
static const char *const hooked[] = {
	"runtime.mallocgc", "runtime.newobject", "runtime.(*mheap).initSpan",
	"runtime.stackalloc", "runtime.stackfree",
	"runtime.(*sweepLocked).sweep", "runtime.(*mheap).freeManual",
};

static void check_stripped_matches_symtab(int minor, const char *with,
					  const char *without,
					  const char *func)
{
	struct go_binary *a = open_bin(minor, with), *b = open_bin(minor, without);
	uint64_t sym_entry, sym_size, sym_addr, sym_sz, pc_entry, pc_size;

	/* The symtab itself, not find_func's choice, is the reference. */
	if (go_binary_find_symbol(a, func, &sym_addr, &sym_sz))
		fail_msg("go1.%d%s: no symbol %s", minor, with, func);
	assert_int_equal(go_binary_find_func(a, func, &sym_entry, &sym_size), 0);
	assert_int_equal(sym_entry, sym_addr);
	if (go_binary_find_func(b, func, &pc_entry, &pc_size))
		fail_msg("go1.%d%s: pclntab has no %s", minor, without, func);
	if (pc_entry != sym_addr || pc_size != sym_sz)
		fail_msg("go1.%d %s: pclntab %#lx+%lu, symtab %#lx+%lu", minor,
			 func, (unsigned long)pc_entry, (unsigned long)pc_size,
			 (unsigned long)sym_addr, (unsigned long)sym_sz);
	go_binary_close(a);
	go_binary_close(b);
}

static void test_pclntab_entries_equal_symtab_of_unstripped_twin(void **state)
{
	int m;
	size_t i;

	for (m = FIRST_MINOR; m <= LAST_MINOR; m++) {
		for (i = 0; i < sizeof(hooked) / sizeof(hooked[0]); i++) {
			check_stripped_matches_symtab(m, "", "-stripped", hooked[i]);
			check_stripped_matches_symtab(m, "-pie", "-stripped-pie",
						      hooked[i]);
		}
	}
	check_stripped_matches_symtab(27, "", "-stripped",
				      "runtime.mallocgcSmallNoScanSC2");
	check_stripped_matches_symtab(27, "-pie", "-stripped-pie",
				      "runtime.mallocgcSmallScanNoHeaderSC5");
}

struct cmp_ctx {
	struct go_binary *with_symtab;
	int compared;
	int mismatched;
};

static int cmp_one(const char *name, uint64_t entry, uint64_t size, void *arg)
{
	struct cmp_ctx *c = arg;
	uint64_t addr = 0, sz = 0;
	char abi0[512];

	/*
	 * A name the pclntab lists twice is a function and its ABI wrapper;
	 * .symtab calls the ABI0 one NAME.abi0. One of the two must match.
	 */
	snprintf(abi0, sizeof(abi0), "%s.abi0", name);
	if (go_binary_find_symbol(c->with_symtab, name, &addr, &sz) == 0 &&
	    addr != entry)
		go_binary_find_symbol(c->with_symtab, abi0, &addr, &sz);
	else if (addr == 0)
		go_binary_find_symbol(c->with_symtab, abi0, &addr, &sz);
	if (addr == 0)
		return 0; /* no ELF symbol at all */
	/* Linker markers (go:textfipsstart, 1.24+) are 1-byte symbols. */
	if (!strncmp(name, "go:", 3))
		return 0;
	c->compared++;
	if (addr != entry || sz != size) {
		if (c->mismatched++ < 5)
			print_message("%s: pclntab %#lx+%lu symtab %#lx+%lu\n",
				      name, (unsigned long)entry,
				      (unsigned long)size, (unsigned long)addr,
				      (unsigned long)sz);
	}
	return 0;
}

static void test_every_pclntab_function_has_its_symtab_entry_and_size(void **state)
{
	int m;

	for (m = FIRST_MINOR; m <= LAST_MINOR; m++) {
		struct cmp_ctx c = { .with_symtab = open_bin(m, "") };
		struct go_binary *b = open_bin(m, "-stripped");

		assert_int_equal(go_binary_foreach_func(b, "", cmp_one, &c), 0);
		assert_true(c.compared > 1000);
		if (c.mismatched)
			fail_msg("go1.%d: %d of %d functions differ", m,
				 c.mismatched, c.compared);
		go_binary_close(c.with_symtab);
		go_binary_close(b);
	}
}

static int count_cb(const char *name, uint64_t entry, uint64_t size, void *arg)
{
	(*(int *)arg)++;
	return 0;
}

static int stop_cb(const char *name, uint64_t entry, uint64_t size, void *arg)
{
	(*(int *)arg)++;
	return 42;
}

static void test_foreach_func_filters_by_prefix_and_stops_on_request(void **state)
{
	struct go_binary *b = open_bin(27, "-stripped");
	int n = 0;

	/* 1.27: mallocgc, Tiny/Small/Large and the size-specialized SCs. */
	assert_int_equal(go_binary_foreach_func(b, "runtime.mallocgc", count_cb,
						&n), 0);
	assert_true(n >= 20);
	n = 0;
	assert_int_equal(go_binary_foreach_func(b, "runtime.", stop_cb, &n), 42);
	assert_int_equal(n, 1);
	go_binary_close(b);
}

static void test_find_func_unknown_name_is_enoent(void **state)
{
	struct go_binary *b = open_bin(23, "-stripped");
	uint64_t e, s;

	assert_int_equal(go_binary_find_func(b, "runtime.noSuchFunction", &e,
					     &s), -ENOENT);
	assert_int_equal(go_binary_find_func(b, "runtime.mallocgcSmallNoScanSC2",
					     &e, &s), -ENOENT); /* 1.26+ only */
	go_binary_close(b);
}

/* --- addresses and file offsets -------------------------------------- */

static void test_vaddr_to_offset_points_at_the_same_bytes(void **state)
{
	struct go_binary *b = open_bin(27, "-stripped-pie");
	char path[512];
	uint8_t via_read[32], via_file[32];
	uint64_t entry, size, off;
	int fd;

	bin_path(path, sizeof(path), 27, "-stripped-pie");
	assert_int_equal(go_binary_find_func(b, "runtime.mallocgc", &entry,
					     &size), 0);
	assert_int_equal(go_binary_vaddr_to_offset(b, entry, &off), 0);
	assert_int_equal(go_binary_read(b, entry, via_read, sizeof(via_read)), 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, via_file, sizeof(via_file), off),
			 sizeof(via_file));
	close(fd);
	assert_memory_equal(via_read, via_file, sizeof(via_file));
	/* Go links text at 0x401000, file offset 0x1000, PIE or not. */
	assert_int_equal(entry - off, 0x400000);
	go_binary_close(b);
}

static void test_read_of_bss_fails_with_efault(void **state)
{
	struct go_binary *b = open_bin(23, "");
	uint64_t mheap, v;

	assert_int_equal(go_binary_find_symbol(b, "runtime.mheap_", &mheap,
					       NULL), 0);
	assert_int_equal(go_binary_read_u64(b, mheap, &v), -EFAULT);
	go_binary_close(b);
}

static void test_first_load_segment_is_at_file_start(void **state)
{
	struct go_binary *b = open_bin(25, "-pie");
	uint64_t vaddr, off;

	assert_int_equal(go_binary_first_load(b, &vaddr, &off), 0);
	assert_int_equal(off, 0);
	assert_int_equal(vaddr, 0x400000);
	go_binary_close(b);
}

static void test_moduledata_scan_finds_firstmoduledata(void **state)
{
	int m;
	size_t f;

	for (m = FIRST_MINOR; m <= LAST_MINOR; m++) {
		for (f = 0; f < 2; f++) {
			const char *with = f ? "-pie" : "";
			const char *without = f ? "-stripped-pie" : "-stripped";
			struct go_binary *a = open_bin(m, with);
			struct go_binary *b = open_bin(m, without);
			uint64_t sym, found;

			assert_int_equal(go_binary_find_symbol(
				a, "runtime.firstmoduledata", &sym, NULL), 0);
			assert_int_equal(go_binary_moduledata(b, &found), 0);
			assert_int_equal(found, sym);
			go_binary_close(a);
			go_binary_close(b);
		}
	}
}

static void test_pclntab_is_found_without_section_headers(void **state)
{
	/* e_shoff (0x28, 8 bytes), e_shnum (0x3c), e_shstrndx (0x3e) = 0 */
	static const uint8_t zero8[8];
	char src[512], dst[] = "/tmp/taf-noshdr-XXXXXX", err[512];
	struct go_binary *orig, *bin;
	uint64_t e1, s1, e2, s2, md1, md2;
	int fd;

	bin_path(src, sizeof(src), 26, "-stripped-pie");
	patched_copy(src, dst, 0x28, zero8, 8);
	fd = open(dst, O_WRONLY);
	assert_int_equal(pwrite(fd, zero8, 4, 0x3c), 4);
	close(fd);

	orig = open_bin(26, "-stripped-pie");
	if (go_binary_open(dst, &bin, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(go_binary_section(bin, ".gopclntab", &e1, &s1), -ENOENT);
	assert_string_equal(go_binary_build_info(bin)->version,
			    go_binary_build_info(orig)->version);
	assert_int_equal(go_binary_find_func(orig, "runtime.mallocgc", &e1, &s1), 0);
	assert_int_equal(go_binary_find_func(bin, "runtime.mallocgc", &e2, &s2), 0);
	assert_int_equal(e1, e2);
	assert_int_equal(s1, s2);
	assert_int_equal(go_binary_moduledata(orig, &md1), 0);
	assert_int_equal(go_binary_moduledata(bin, &md2), 0);
	assert_int_equal(md1, md2);
	go_binary_close(orig);
	go_binary_close(bin);
	unlink(dst);
}

/* --- DWARF ------------------------------------------------------------ */

static void test_dwarf_nested_member_path_adds_offsets(void **state)
{
	struct go_binary *b = open_bin(27, "");
	uint64_t whole, pages, inuse, ranges, size;

	assert_int_equal(go_dwarf_member(go_binary_dwarf(b), "runtime.mheap", "pages.inUse.ranges",
					 &whole, &size), 0);
	assert_int_equal(go_dwarf_member_offset(go_binary_dwarf(b), "runtime.mheap", "pages",
						&pages), 0);
	assert_int_equal(go_dwarf_member_offset(go_binary_dwarf(b), "runtime.pageAlloc", "inUse",
						&inuse), 0);
	assert_int_equal(go_dwarf_member_offset(go_binary_dwarf(b), "runtime.addrRanges",
						"ranges", &ranges), 0);
	assert_int_equal(whole, pages + inuse + ranges);
	assert_int_equal(size, 24); /* a slice header */
	go_binary_close(b);
}

static void test_dwarf_unknown_member_or_type_is_enoent(void **state)
{
	struct go_binary *b = open_bin(23, "");
	uint64_t off;

	assert_int_equal(go_dwarf_member_offset(go_binary_dwarf(b), "runtime.mspan", "noSuchField",
						&off), -ENOENT);
	assert_int_equal(go_dwarf_member_offset(go_binary_dwarf(b), "runtime.noSuchType", "x",
						&off), -ENOENT);
	go_binary_close(b);
}

static void test_dwarf_type_size_of_main_node_is_56(void **state)
{
	struct go_binary *b = open_bin(21, "-pie");
	uint64_t size;

	assert_int_equal(go_dwarf_type_size(go_binary_dwarf(b), "main.Node", &size), 0);
	assert_int_equal(size, 56);
	go_binary_close(b);
}

static void test_dwarf_var_addr_equals_symtab(void **state)
{
	int m;

	for (m = FIRST_MINOR; m <= LAST_MINOR; m++) {
		struct go_binary *b = open_bin(m, "");
		uint64_t dw, sym;

		assert_int_equal(go_runtime_global_addr(b, "runtime.mheap_", &dw), 0);
		assert_int_equal(go_binary_find_symbol(b, "runtime.mheap_", &sym,
						       NULL), 0);
		assert_int_equal(dw, sym);
		go_binary_close(b);
	}
}

/*
 * A global found in the code of a stripped binary must be where the
 * symbol table of its unstripped twin (same version, same PIE-ness) puts
 * it; test_stripped_twin_has_the_same_layout checks the twins agree.
 */
static void check_global_in_stripped_twins(const char *var)
{
	static const char *const pie[] = { "", "-pie" };
	int m, bad = 0;
	size_t k;

	for (m = FIRST_MINOR; m <= LAST_MINOR; m++) {
		for (k = 0; k < 2; k++) {
			char stripped[32];
			struct go_binary *a, *b;
			uint64_t sym, found = 0;
			int rc;

			snprintf(stripped, sizeof(stripped), "-stripped%s", pie[k]);
			a = open_bin(m, pie[k]);
			b = open_bin(m, stripped);
			assert_int_equal(go_binary_find_symbol(a, var, &sym, NULL), 0);
			rc = go_runtime_global_addr(b, var, &found);
			if (rc || found != sym) {
				print_message("go1.%d%s: %s: rc %d, found %#lx, symtab %#lx\n",
					      m, stripped, var, rc,
					      (unsigned long)found,
					      (unsigned long)sym);
				bad++;
			}
			go_binary_close(a);
			go_binary_close(b);
		}
	}
	assert_int_equal(bad, 0);
}

static void test_mheap_address_is_found_in_stripped_binaries(void **state)
{
	check_global_in_stripped_twins("runtime.mheap_");
}

static void test_allgs_address_is_found_in_stripped_binaries(void **state)
{
	check_global_in_stripped_twins("runtime.allgs");
}

/* --memprofilerate writes these; stripped binaries show them in schedinit. */
static void test_profiling_vars_are_found_in_stripped_binaries(void **state)
{
	check_global_in_stripped_twins("runtime.MemProfileRate");
	check_global_in_stripped_twins("runtime.disableMemoryProfiling");
}

/* --memprofilerate's cross-check reads the buckets' counts and the
 * profile cycle: stripped binaries show them in mProf_Flush(Locked). */
static void test_profile_buckets_are_found_in_stripped_binaries(void **state)
{
	check_global_in_stripped_twins("runtime.mbuckets");
	check_global_in_stripped_twins("runtime.mProfCycle");
}

/* Type names of types made at run time (reflect): reflectOffs, shown in
 * reflect.addReflectOff. */
static void test_reflect_offs_is_found_in_stripped_binaries(void **state)
{
	check_global_in_stripped_twins("runtime.reflectOffs");
}

/* The code pattern alone, on binaries whose symbols say the answer. */
static void test_allgadd_appends_to_allgs_in_every_version(void **state)
{
	int m;

	for (m = FIRST_MINOR; m <= LAST_MINOR; m++) {
		struct go_binary *b = open_bin(m, "-pie");
		uint64_t sym, found, lock;

		assert_int_equal(go_binary_find_symbol(b, "runtime.allgs", &sym,
						       NULL), 0);
		assert_int_equal(go_find_appended_slice_global(
					 b, "runtime.allgadd", &found), 0);
		assert_int_equal(found, sym);
		assert_true(go_func_accesses(b, "runtime.forEachG", sym));
		assert_true(go_func_accesses(b, "runtime.forEachG", sym + 8));
		/* allglock's address is taken (LEAQ), never read as a word. */
		assert_int_equal(go_binary_find_symbol(b, "runtime.allglock",
						       &lock, NULL), 0);
		assert_false(go_func_accesses(b, "runtime.forEachG", lock));
		go_binary_close(b);
	}
}

static void test_rip_refs_of_unknown_function_is_enoent(void **state)
{
	struct go_binary *b = open_bin(23, "-stripped");
	struct go_rip_ref *r;
	uint64_t a;
	size_t n;

	assert_int_equal(go_func_rip_refs(b, "runtime.noSuchFunc", &r, &n),
			 -ENOENT);
	/* mallocgc appends to no package-level slice. */
	assert_int_equal(go_find_appended_slice_global(b, "runtime.mallocgc",
						       &a), -ENOENT);
	go_binary_close(b);
}

/*
 * What the tests above rely on: -ldflags='-s -w' drops .symtab and the
 * DWARF and moves nothing the tracer looks up. Every SHF_ALLOC section
 * keeps its size, and the read-only ones but the build ID note keep their
 * bytes (so the code, RIP-relative displacements included, is the same,
 * while .data may differ in pointers to what moved). Addresses match too,
 * with one exception, measured: Go 1.21's non-PIE link puts .shstrtab in
 * the read-only segment, before .typelink, so the shorter .shstrtab of
 * the stripped build moves .typelink, .itablink, .gosymtab and .gopclntab
 * down (by 0x80 here). .text, .rodata and the data sections, where the
 * functions, types and globals are, never move.
 */
static bool may_move(int minor, bool pie, const char *sec)
{
	static const char *const after_shstrtab[] = {
		".typelink", ".itablink", ".gosymtab", ".gopclntab",
	};
	size_t i;

	if (minor != 21 || pie)
		return false;
	for (i = 0; i < sizeof(after_shstrtab) / sizeof(after_shstrtab[0]); i++)
		if (!strcmp(sec, after_shstrtab[i]))
			return true;
	return false;
}

static void compare_alloc_sections(int minor, bool pie, const char *pa,
				   const char *pb)
{
	int fa = open(pa, O_RDONLY), fb = open(pb, O_RDONLY);
	Elf *ea, *eb;
	Elf_Scn *sa = NULL, *sb = NULL;
	size_t stra, strb;
	int compared = 0;

	assert_true(fa >= 0 && fb >= 0);
	elf_version(EV_CURRENT);
	ea = elf_begin(fa, ELF_C_READ, NULL);
	eb = elf_begin(fb, ELF_C_READ, NULL);
	assert_non_null(ea);
	assert_non_null(eb);
	assert_int_equal(elf_getshdrstrndx(ea, &stra), 0);
	assert_int_equal(elf_getshdrstrndx(eb, &strb), 0);
	for (;;) {
		GElf_Shdr ha, hb;
		Elf_Data *da, *db;
		const char *na, *nb;

		/* Next allocated section of each. */
		while ((sa = elf_nextscn(ea, sa)) &&
		       (!gelf_getshdr(sa, &ha) || !(ha.sh_flags & SHF_ALLOC)))
			;
		while ((sb = elf_nextscn(eb, sb)) &&
		       (!gelf_getshdr(sb, &hb) || !(hb.sh_flags & SHF_ALLOC)))
			;
		if (!sa || !sb)
			break;
		na = elf_strptr(ea, stra, ha.sh_name);
		nb = elf_strptr(eb, strb, hb.sh_name);
		if (strcmp(na, nb) || ha.sh_size != hb.sh_size ||
		    (ha.sh_addr != hb.sh_addr && !may_move(minor, pie, na)))
			fail_msg("%s %s %#lx+%lu vs %s %s %#lx+%lu", pa, na,
				 (unsigned long)ha.sh_addr,
				 (unsigned long)ha.sh_size, pb, nb,
				 (unsigned long)hb.sh_addr,
				 (unsigned long)hb.sh_size);
		/* The build ID hashes the link flags: it must differ. */
		if (ha.sh_type != SHT_NOBITS && ha.sh_type != SHT_NOTE &&
		    !(ha.sh_flags & SHF_WRITE)) {
			da = elf_getdata(sa, NULL);
			db = elf_getdata(sb, NULL);
			assert_non_null(da);
			assert_non_null(db);
			assert_int_equal(da->d_size, db->d_size);
			/* Empty sections (.gosymtab) have no buffer. */
			if (da->d_size &&
			    memcmp(da->d_buf, db->d_buf, da->d_size))
				fail_msg("%s: section %s differs from %s", pb,
					 na, pa);
		}
		compared++;
	}
	assert_null(sa);
	assert_null(sb);
	assert_true(compared > 8);
	elf_end(ea);
	elf_end(eb);
	close(fa);
	close(fb);
}

static void test_stripped_twin_has_the_same_layout(void **state)
{
	int m;

	for (m = FIRST_MINOR; m <= LAST_MINOR; m++) {
		char a[512], b[512];

		bin_path(a, sizeof(a), m, "");
		bin_path(b, sizeof(b), m, "-stripped");
		compare_alloc_sections(m, false, a, b);
		bin_path(a, sizeof(a), m, "-pie");
		bin_path(b, sizeof(b), m, "-stripped-pie");
		compare_alloc_sections(m, true, a, b);
	}
}

static void test_dwarf_absent_is_enodata(void **state)
{
	struct go_binary *b = open_bin(27, "-stripped");
	uint64_t off;

	assert_int_equal(go_dwarf_member_offset(go_binary_dwarf(b), "runtime.mspan", "npages",
						&off), -ENODATA);
	go_binary_close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_rejects_a_text_file),
		cmocka_unit_test(test_open_rejects_an_elf_that_is_not_go),
		cmocka_unit_test(test_open_rejects_an_arm64_elf),
		cmocka_unit_test(test_open_refuses_a_c_program),
		cmocka_unit_test(test_open_refuses_gccgo_by_its_libgo),
		cmocka_unit_test(test_open_refuses_gccgo_by_its_go_export_section),
		cmocka_unit_test(test_open_refuses_a_go_binary_with_a_damaged_pclntab),
		cmocka_unit_test(test_a_go120_binary_is_refused_by_version),
		cmocka_unit_test(test_open_refuses_a_go_binary_without_runtime_mallocgc),
		cmocka_unit_test(test_version_and_settings_match_go_version_m),
		cmocka_unit_test(test_version_patch_is_parsed),
		cmocka_unit_test(test_well_known_settings_are_copied_out),
		cmocka_unit_test(test_pie_flag_follows_buildmode),
		cmocka_unit_test(test_buildinfo_decodes_the_pre_118_pointer_layout),
		cmocka_unit_test(test_buildinfo_rejects_a_blob_without_magic),
		cmocka_unit_test(test_modinfo_quoted_ldflags_are_unquoted),
		cmocka_unit_test(test_goexperiment_list_is_searched_by_name),
		cmocka_unit_test(test_version_strings_of_every_shape_parse),
		cmocka_unit_test(test_stripped_binaries_have_no_symtab_and_no_dwarf),
		cmocka_unit_test(test_pclntab_entries_equal_symtab_of_unstripped_twin),
		cmocka_unit_test(test_every_pclntab_function_has_its_symtab_entry_and_size),
		cmocka_unit_test(test_foreach_func_filters_by_prefix_and_stops_on_request),
		cmocka_unit_test(test_find_func_unknown_name_is_enoent),
		cmocka_unit_test(test_vaddr_to_offset_points_at_the_same_bytes),
		cmocka_unit_test(test_read_of_bss_fails_with_efault),
		cmocka_unit_test(test_first_load_segment_is_at_file_start),
		cmocka_unit_test(test_moduledata_scan_finds_firstmoduledata),
		cmocka_unit_test(test_pclntab_is_found_without_section_headers),
		cmocka_unit_test(test_dwarf_nested_member_path_adds_offsets),
		cmocka_unit_test(test_dwarf_unknown_member_or_type_is_enoent),
		cmocka_unit_test(test_dwarf_type_size_of_main_node_is_56),
		cmocka_unit_test(test_dwarf_var_addr_equals_symtab),
		cmocka_unit_test(test_mheap_address_is_found_in_stripped_binaries),
		cmocka_unit_test(test_allgs_address_is_found_in_stripped_binaries),
		cmocka_unit_test(test_profiling_vars_are_found_in_stripped_binaries),
		cmocka_unit_test(test_profile_buckets_are_found_in_stripped_binaries),
		cmocka_unit_test(test_reflect_offs_is_found_in_stripped_binaries),
		cmocka_unit_test(test_allgadd_appends_to_allgs_in_every_version),
		cmocka_unit_test(test_rip_refs_of_unknown_function_is_enoent),
		cmocka_unit_test(test_stripped_twin_has_the_same_layout),
		cmocka_unit_test(test_dwarf_absent_is_enodata),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
