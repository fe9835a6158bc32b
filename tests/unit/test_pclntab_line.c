// SPDX-License-Identifier: BSD-3-Clause
/*
 * go_pclntab_line against Go's own `go tool addr2line` (which reads the
 * same tables through debug/gosym), on the knownalloc workload of two
 * toolchains, one of them stripped and PIE.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "gobin.h"
#include "inspect/go_binary.h"
#include "inspect/go_pclntab.h"

#define MAX_PCS 256

struct probe_pc {
	uint64_t pc;
	char func[256];
	char pos[512];     /* "file:line", ours */
};

/* PCs to compare: ends and middle of the allocating function, of
 * mallocgc, and the middle of every 50th function of the binary. */
static size_t pick_pcs(const struct go_pclntab *t, struct probe_pc *out)
{
	static const char *named[] = { "main.newNode", "runtime.mallocgc",
				       "main.main" };
	struct go_func f;
	size_t n = 0, i;
	uint64_t k;

	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		assert_int_equal(go_pclntab_find(t, named[i], &f), 0);
		out[n++].pc = f.entry;
		out[n++].pc = f.entry + f.size / 2;
		out[n++].pc = f.entry + f.size - 1;
	}
	for (k = 0; k < t->nfunc && n < MAX_PCS; k += 50) {
		if (go_pclntab_func(t, k, &f) || f.size == 0)
			continue;
		out[n++].pc = f.entry + f.size / 2;
	}
	return n;
}

static void compare_with_addr2line(int minor, const char *flavour)
{
	struct go_binary *bin = gobin_open("knownalloc", minor, flavour);
	const struct go_pclntab *t = go_binary_pclntab(bin);
	struct probe_pc *pcs = calloc(MAX_PCS, sizeof(*pcs));
	char path[512], in[] = "/tmp/test_pclntab_line.XXXXXX", cmd[1400];
	char fn[512], pos[1024];
	size_t n, i, known = 0;
	FILE *f, *p;
	int fd;

	gobin_path(path, sizeof(path), "knownalloc", minor, flavour);
	n = pick_pcs(t, pcs);
	assert_true(n > 20);
	fd = mkstemp(in);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	for (i = 0; i < n; i++) {
		struct go_func g;
		const char *file;
		uint32_t line;

		fprintf(f, "0x%llx\n", (unsigned long long)pcs[i].pc);
		assert_int_equal(go_pclntab_find_pc(t, pcs[i].pc, &g), 0);
		snprintf(pcs[i].func, sizeof(pcs[i].func), "%s", g.name);
		if (go_pclntab_line(t, &g, pcs[i].pc, &file, &line) == 0) {
			snprintf(pcs[i].pos, sizeof(pcs[i].pos), "%s:%u", file,
				 line);
			known++;
		} else {
			snprintf(pcs[i].pos, sizeof(pcs[i].pos), "?:0");
		}
	}
	fclose(f);
	/* Nearly every PC has a position (assembly without one is rare). */
	assert_true(known >= n - n / 10);

	snprintf(cmd, sizeof(cmd),
		 "GOTOOLCHAIN=local /usr/lib/go-1.%d/bin/go tool addr2line "
		 "'%s' < '%s'", minor, path, in);
	p = popen(cmd, "r");
	assert_non_null(p);
	for (i = 0; i < n; i++) {
		assert_non_null(fgets(fn, sizeof(fn), p));
		assert_non_null(fgets(pos, sizeof(pos), p));
		fn[strcspn(fn, "\n")] = '\0';
		pos[strcspn(pos, "\n")] = '\0';
		if (strcmp(fn, pcs[i].func) || strcmp(pos, pcs[i].pos))
			fail_msg("go1.%d%s pc 0x%llx: addr2line %s %s, ours %s %s",
				 minor, flavour,
				 (unsigned long long)pcs[i].pc, fn, pos,
				 pcs[i].func, pcs[i].pos);
	}
	assert_int_equal(pclose(p), 0);
	unlink(in);
	free(pcs);
	go_binary_close(bin);
}

static void test_lines_match_addr2line_go123(void **state)
{
	compare_with_addr2line(23, "");
}

static void test_lines_match_addr2line_go127_stripped_pie(void **state)
{
	compare_with_addr2line(27, "-stripped-pie");
}

/* The allocation in newNode is on the line knownalloc marks. */
static void test_newnode_alloc_line_is_marked_line(void **state)
{
	struct go_binary *bin = gobin_open("knownalloc", 27, "-stripped");
	const struct go_pclntab *t = go_binary_pclntab(bin);
	struct go_func f;
	const char *file;
	uint32_t line, marked = 0, n = 0;
	uint64_t pc;
	char buf[256];
	FILE *src;

	src = fopen("tests/go/knownalloc/main.go", "r");
	assert_non_null(src);
	while (fgets(buf, sizeof(buf), src)) {
		n++;
		if (strstr(buf, "stacks-e2e: newNode"))
			marked = n;
	}
	fclose(src);
	assert_int_not_equal(marked, 0);
	assert_int_equal(go_pclntab_find(t, "main.newNode", &f), 0);
	/* Some instruction of newNode is on the marked line (the call). */
	for (pc = f.entry; pc < f.entry + f.size; pc++)
		if (go_pclntab_line(t, &f, pc, &file, &line) == 0 &&
		    line == marked)
			break;
	assert_true(pc < f.entry + f.size);
	assert_non_null(strstr(file, "main.go"));
	/* Outside the function there is no position. */
	assert_int_equal(go_pclntab_line(t, &f, f.next_entry, &file, &line),
			 -ENOENT);
	go_binary_close(bin);
}

/* ---- inlined calls: go_pclntab_src_frames against the runtime ---- */

struct gofunc_ctx {
	struct go_binary *bin;
	uint64_t gofunc;
};

static int read_gofunc(void *ctx, uint64_t off, void *buf, size_t len)
{
	struct gofunc_ctx *c = ctx;

	return go_binary_read(c->bin, c->gofunc + off, buf, len);
}

#define MAX_SRC_PCS 300

/*
 * inlinecheck prints what runtime.CallersFrames says of each PC of its
 * own code: ours must say the same, frame for frame, for every PC of
 * main.build (newItem inlined into push inlined into it) and a sample of
 * runtime.mallocgc and main.main.
 */
static void compare_with_callersframes(int minor, const char *flavour)
{
	struct go_binary *bin = gobin_open("inlinecheck", minor, flavour);
	const struct go_pclntab *t = go_binary_pclntab(bin);
	struct gofunc_ctx ctx = { .bin = bin };
	static const struct { const char *name; unsigned step; } fns[] = {
		{ "main.build", 1 }, { "main.main", 7 },
		{ "runtime.mallocgc", 13 },
	};
	static uint64_t pcs[MAX_SRC_PCS];
	char path[512], *cmd, line[1024];
	size_t n = 0, i, len, deepest = 0, inlined_alloc = 0;
	FILE *p;

	assert_int_equal(go_binary_gofunc(bin, &ctx.gofunc), 0);
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		struct go_func f;
		uint64_t pc;

		assert_int_equal(go_pclntab_find(t, fns[i].name, &f), 0);
		for (pc = f.entry; pc < f.entry + f.size && n < MAX_SRC_PCS;
		     pc += fns[i].step)
			pcs[n++] = pc;
	}
	gobin_path(path, sizeof(path), "inlinecheck", minor, flavour);
	len = strlen(path) + 24 * n + 16;
	cmd = malloc(len);
	snprintf(cmd, len, "'%s'", path);
	for (i = 0; i < n; i++)
		snprintf(cmd + strlen(cmd), len - strlen(cmd), " 0x%llx",
			 (unsigned long long)pcs[i]);
	p = popen(cmd, "r");
	assert_non_null(p);
	for (i = 0; i < n; i++) {
		struct go_src_frame fr[16];
		struct go_func f;
		char ours[1024];
		int nf, k = 0;

		assert_int_equal(go_pclntab_find_pc(t, pcs[i], &f), 0);
		nf = go_pclntab_src_frames(t, &f, pcs[i], read_gofunc, &ctx,
					   fr, 16);
		assert_true(nf >= 1);
		if ((size_t)nf > deepest)
			deepest = (size_t)nf;
		if (nf >= 3 && !strcmp(fr[0].func, "main.newItem") &&
		    !strcmp(fr[2].func, "main.build"))
			inlined_alloc++;
		for (;;) {
			assert_non_null(fgets(line, sizeof(line), p));
			line[strcspn(line, "\n")] = '\0';
			if (!strcmp(line, "--"))
				break;
			assert_true(k < nf);
			snprintf(ours, sizeof(ours), "%s %s:%u", fr[k].func,
				 fr[k].file, fr[k].line);
			if (strcmp(line, ours))
				fail_msg("go1.%d%s pc 0x%llx frame %d: runtime \"%s\", ours \"%s\"",
					 minor, flavour,
					 (unsigned long long)pcs[i], k, line,
					 ours);
			k++;
		}
		if (k != nf)
			fail_msg("go1.%d%s pc 0x%llx: runtime %d frames, ours %d",
				 minor, flavour, (unsigned long long)pcs[i],
				 k, nf);
	}
	assert_int_equal(pclose(p), 0);
	/* The inline tree was used: newItem inside push inside build. */
	assert_true(deepest >= 3);
	assert_true(inlined_alloc > 0);
	free(cmd);
	go_binary_close(bin);
}

static void test_src_frames_match_runtime_go123(void **state)
{
	compare_with_callersframes(23, "");
}

static void test_src_frames_match_runtime_go127_stripped(void **state)
{
	compare_with_callersframes(27, "-stripped");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_match_addr2line_go123),
		cmocka_unit_test(test_lines_match_addr2line_go127_stripped_pie),
		cmocka_unit_test(test_newnode_alloc_line_is_marked_line),
		cmocka_unit_test(test_src_frames_match_runtime_go123),
		cmocka_unit_test(test_src_frames_match_runtime_go127_stripped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
