// SPDX-License-Identifier: BSD-3-Clause
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "format/stack_sidecar.h"

struct fixture {
	char dir[64];
	char trace[128];
	char sidecar[160];
	char tmp[168];
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	strcpy(fx->dir, "/tmp/test_stack_sidecar.XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->trace, sizeof(fx->trace), "%s/app-1.trace", fx->dir);
	snprintf(fx->sidecar, sizeof(fx->sidecar), "%s.stacks", fx->trace);
	snprintf(fx->tmp, sizeof(fx->tmp), "%s.stacks.tmp", fx->trace);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	unlink(fx->sidecar);
	unlink(fx->tmp);
	rmdir(fx->dir);
	free(fx);
	return 0;
}

static const struct stack_frame leak_frames[] = {
	{ "main.leak", "/src/app/main.go", 42, 0x4a1234 },
	{ "main.loop", "/src/app/main.go", 77, 0x4a1400 },
	{ "main.main", "/src/app/main.go", 90, 0x4a1500 },
};

/* Interns FRAMES as one stack. */
static uint32_t add_stack(struct stack_sidecar_writer *w,
			  const struct stack_frame *frames, size_t n)
{
	uint32_t ids[8], sid = 0;
	size_t i;

	assert_true(n <= 8);
	for (i = 0; i < n; i++)
		assert_int_equal(stack_sidecar_writer_add_frame(w, &frames[i],
								&ids[i]), 0);
	assert_int_equal(stack_sidecar_writer_add_stack(w, ids, n, &sid), 0);
	return sid;
}

static uint8_t *read_all(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc(st.st_size + 1);
	assert_int_equal(read(fd, buf, st.st_size), st.st_size);
	close(fd);
	*len = st.st_size;
	return buf;
}

static void test_round_trip_returns_frames_of_each_alloc(void **state)
{
	struct fixture *fx = *state;
	static const struct stack_frame other[] = {
		{ "main.other", "/src/app/other.go", 7, 0x4a2000 },
		{ "main.main", "/src/app/main.go", 91, 0x4a1508 },
	};
	struct stack_sidecar_writer *w;
	struct stack_sidecar *s;
	const struct stack_frame *f;
	uint32_t leak, oth, sid;
	size_t n;

	assert_int_equal(stack_sidecar_writer_open(fx->trace, &w), 0);
	leak = add_stack(w, leak_frames, 3);
	oth = add_stack(w, other, 2);
	assert_int_not_equal(leak, oth);
	assert_int_equal(stack_sidecar_writer_add_alloc(w, 1, 100, 5000, leak),
			 0);
	assert_int_equal(stack_sidecar_writer_add_alloc(w, 1, 90, 5001, oth),
			 0);
	assert_int_equal(stack_sidecar_writer_add_alloc(w, 2, 100, 4000, oth),
			 0);
	assert_int_equal(stack_sidecar_writer_close(w), 0);

	assert_int_equal(stack_sidecar_open(fx->trace, &s), 0);
	assert_int_equal(stack_sidecar_lookup(s, 1, 100, 5000, &sid), 0);
	assert_int_equal(stack_sidecar_frames(s, sid, &f, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(f[0].func, "main.leak");
	assert_string_equal(f[0].file, "/src/app/main.go");
	assert_int_equal(f[0].line, 42);
	assert_int_equal(f[0].pc, 0x4a1234);
	assert_string_equal(f[2].func, "main.main");
	assert_int_equal(f[2].line, 90);

	assert_int_equal(stack_sidecar_lookup(s, 1, 90, 5001, &sid), 0);
	assert_int_equal(stack_sidecar_frames(s, sid, &f, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(f[0].file, "/src/app/other.go");
	assert_int_equal(stack_sidecar_lookup(s, 2, 100, 4000, &sid), 0);
	assert_int_equal(stack_sidecar_frames(s, sid, &f, &n), 0);
	assert_string_equal(f[0].func, "main.other");
	stack_sidecar_close(s);
}

static void test_lookup_misses_return_enoent(void **state)
{
	struct fixture *fx = *state;
	struct stack_sidecar_writer *w;
	struct stack_sidecar *s;
	const struct stack_frame *f;
	uint32_t leak, sid = 99;
	size_t n;

	assert_int_equal(stack_sidecar_writer_open(fx->trace, &w), 0);
	leak = add_stack(w, leak_frames, 3);
	assert_int_equal(stack_sidecar_writer_add_alloc(w, 3, 100, 5000, leak),
			 0);
	assert_int_equal(stack_sidecar_writer_close(w), 0);
	assert_int_equal(stack_sidecar_open(fx->trace, &s), 0);
	/* Each of the three key parts must match. */
	assert_int_equal(stack_sidecar_lookup(s, 2, 100, 5000, &sid), -ENOENT);
	assert_int_equal(stack_sidecar_lookup(s, 3, 101, 5000, &sid), -ENOENT);
	assert_int_equal(stack_sidecar_lookup(s, 3, 100, 5001, &sid), -ENOENT);
	assert_int_equal(sid, 99);
	assert_int_equal(stack_sidecar_frames(s, 0, &f, &n), -ENOENT);
	assert_int_equal(stack_sidecar_frames(s, leak + 1, &f, &n), -ENOENT);
	stack_sidecar_close(s);
}

static void test_open_without_sidecar_returns_enoent(void **state)
{
	struct fixture *fx = *state;
	struct stack_sidecar *s = (void *)1;

	assert_int_equal(stack_sidecar_open(fx->trace, &s), -ENOENT);
	assert_null(s);
}

static void test_equal_frames_and_stacks_are_interned_once(void **state)
{
	struct fixture *fx = *state;
	struct stack_sidecar_writer *w;
	struct stack_sidecar_writer_stats st;
	struct stack_frame same = leak_frames[0];
	uint32_t a, b, s1, s2;

	assert_int_equal(stack_sidecar_writer_open(fx->trace, &w), 0);
	assert_int_equal(stack_sidecar_writer_add_frame(w, &leak_frames[0], &a),
			 0);
	assert_int_equal(stack_sidecar_writer_add_frame(w, &same, &b), 0);
	assert_int_equal(a, b);
	same.line = 43;
	assert_int_equal(stack_sidecar_writer_add_frame(w, &same, &b), 0);
	assert_int_not_equal(a, b);
	s1 = add_stack(w, leak_frames, 3);
	s2 = add_stack(w, leak_frames, 3);
	assert_int_equal(s1, s2);
	assert_int_not_equal(add_stack(w, leak_frames, 2), s1);
	stack_sidecar_writer_get_stats(w, &st);
	assert_int_equal(st.frames, 4);
	assert_int_equal(st.stacks, 2);
	assert_int_equal(stack_sidecar_writer_close(w), 0);
}

static void test_unknown_symbols_read_back_as_question_mark(void **state)
{
	struct fixture *fx = *state;
	struct stack_frame unk = { NULL, "", 0, 0x401000 };
	struct stack_sidecar_writer *w;
	struct stack_sidecar *s;
	const struct stack_frame *f;
	uint32_t sid;
	size_t n;

	assert_int_equal(stack_sidecar_writer_open(fx->trace, &w), 0);
	sid = add_stack(w, &unk, 1);
	assert_int_equal(stack_sidecar_writer_add_alloc(w, 1, 1, 1, sid), 0);
	assert_int_equal(stack_sidecar_writer_close(w), 0);
	assert_int_equal(stack_sidecar_open(fx->trace, &s), 0);
	assert_int_equal(stack_sidecar_frames(s, sid, &f, &n), 0);
	assert_string_equal(f[0].func, "?");
	assert_string_equal(f[0].file, "?");
	assert_int_equal(f[0].pc, 0x401000);
	stack_sidecar_close(s);
}

static void test_sidecar_has_real_name_only_after_close(void **state)
{
	struct fixture *fx = *state;
	struct stack_sidecar_writer *w;
	uint32_t sid;

	assert_int_equal(stack_sidecar_writer_open(fx->trace, &w), 0);
	sid = add_stack(w, leak_frames, 3);
	assert_int_equal(stack_sidecar_writer_add_alloc(w, 1, 1, 1, sid), 0);
	assert_int_equal(access(fx->sidecar, F_OK), -1);
	assert_int_equal(access(fx->tmp, F_OK), 0);
	stack_sidecar_writer_discard(w);
	assert_int_equal(access(fx->sidecar, F_OK), -1);
	assert_int_equal(access(fx->tmp, F_OK), -1);

	assert_int_equal(stack_sidecar_writer_open(fx->trace, &w), 0);
	assert_int_equal(stack_sidecar_writer_close(w), 0);
	assert_int_equal(access(fx->sidecar, F_OK), 0);
	assert_int_equal(access(fx->tmp, F_OK), -1);
}

static void test_add_alloc_rejects_unknown_stack(void **state)
{
	struct fixture *fx = *state;
	struct stack_sidecar_writer *w;
	uint32_t ids[1] = { 1 }, sid;

	assert_int_equal(stack_sidecar_writer_open(fx->trace, &w), 0);
	assert_int_equal(stack_sidecar_writer_add_alloc(w, 1, 1, 1, 1),
			 -EINVAL);
	assert_int_equal(stack_sidecar_writer_add_stack(w, ids, 1, &sid),
			 -EINVAL);
	stack_sidecar_writer_discard(w);
}

/*
 * Many allocations over several records and generations, IDs going down
 * as well as up: every one is found, and an allocation costs < 8 bytes.
 */
static void test_many_allocs_round_trip_compactly(void **state)
{
	struct fixture *fx = *state;
	enum { N = 5000 };
	struct stack_sidecar_writer *w;
	struct stack_sidecar_writer_stats st;
	struct stack_sidecar *s;
	uint32_t stacks[2], sid;
	uint64_t i, before;

	assert_int_equal(stack_sidecar_writer_open(fx->trace, &w), 0);
	stacks[0] = add_stack(w, leak_frames, 3);
	stacks[1] = add_stack(w, leak_frames + 1, 2);
	stack_sidecar_writer_get_stats(w, &st);
	before = st.bytes;
	for (i = 0; i < N; i++) {
		uint64_t id = 0x10000 + (i * 7919) % 4096;

		assert_int_equal(stack_sidecar_writer_add_alloc(w, 1 + i / 2000,
				 id, 1000000 + i * 20, stacks[i % 2]), 0);
	}
	assert_int_equal(stack_sidecar_writer_close(w), 0);
	{
		size_t len;
		uint8_t *buf = read_all(fx->sidecar, &len);

		assert_true((len - before) < 8 * N);
		free(buf);
	}
	assert_int_equal(stack_sidecar_open(fx->trace, &s), 0);
	for (i = 0; i < N; i++) {
		uint64_t id = 0x10000 + (i * 7919) % 4096;

		assert_int_equal(stack_sidecar_lookup(s, 1 + i / 2000, id,
						      1000000 + i * 20, &sid),
				 0);
		assert_int_equal(sid, stacks[i % 2]);
	}
	stack_sidecar_close(s);
}

/*
 * Allocations written out of time order (neighbours swapped, as the
 * ring buffer hands them over, and one generation written backwards),
 * several at one timestamp, and one (id, ts) written twice: every lookup
 * finds its stack, asked in time order, backwards or at random, and the
 * duplicate answers with the first one written.
 */
static void test_lookups_in_any_order_find_every_alloc(void **state)
{
	struct fixture *fx = *state;
	enum { N = 3000 };
	struct stack_sidecar_writer *w;
	struct stack_sidecar *s;
	uint32_t stacks[3], sid;
	uint64_t i, gen, id, ts;
	unsigned seed = 7;

	assert_int_equal(stack_sidecar_writer_open(fx->trace, &w), 0);
	stacks[0] = add_stack(w, leak_frames, 3);
	stacks[1] = add_stack(w, leak_frames + 1, 2);
	stacks[2] = add_stack(w, leak_frames + 2, 1);
	for (i = 0; i < N; i++) {
		/* gen 1: pairs swapped; gen 2: backwards.  ts: 3 allocs a tick. */
		uint64_t k = i < N / 2 ? (i ^ 1) : N / 2 + (N - 1 - i);

		gen = k < N / 2 ? 1 : 2;
		assert_int_equal(stack_sidecar_writer_add_alloc(w, gen,
				 0x5000 + k * 3, 100 + k / 3, stacks[k % 3]), 0);
	}
	/* A second record of (id, ts) of k = 10: the first one answers. */
	assert_int_equal(stack_sidecar_writer_add_alloc(w, 1, 0x5000 + 30,
				 100 + 10 / 3, stacks[2]), 0);
	assert_int_equal(stack_sidecar_writer_close(w), 0);
	assert_int_equal(stack_sidecar_open(fx->trace, &s), 0);
	for (int pass = 0; pass < 3; pass++) {
		for (i = 0; i < N; i++) {
			uint64_t k = pass == 0 ? i : pass == 1 ? N - 1 - i :
				     (uint64_t)rand_r(&seed) % N;

			gen = k < N / 2 ? 1 : 2;
			id = 0x5000 + k * 3;
			ts = 100 + k / 3;
			assert_int_equal(stack_sidecar_lookup(s, gen, id, ts,
							      &sid), 0);
			assert_int_equal(sid, stacks[k % 3]);
			/* Its neighbours in time are not it. */
			assert_int_equal(stack_sidecar_lookup(s, gen, id + 1,
							      ts, &sid),
					 -ENOENT);
			assert_int_equal(stack_sidecar_lookup(s, gen, id,
							      ts + 1, &sid),
					 -ENOENT);
		}
	}
	stack_sidecar_close(s);
}

static uint8_t *sample(struct fixture *fx, size_t *len)
{
	struct stack_sidecar_writer *w;
	uint32_t sid;

	assert_int_equal(stack_sidecar_writer_open(fx->trace, &w), 0);
	sid = add_stack(w, leak_frames, 3);
	assert_int_equal(stack_sidecar_writer_add_alloc(w, 1, 100, 5000, sid),
			 0);
	assert_int_equal(stack_sidecar_writer_add_alloc(w, 1, 200, 5010, sid),
			 0);
	assert_int_equal(stack_sidecar_writer_close(w), 0);
	return read_all(fx->sidecar, len);
}

static void test_every_truncation_is_malformed(void **state)
{
	struct stack_sidecar *s;
	size_t len, cut;
	uint8_t *buf = sample(*state, &len);

	assert_int_equal(stack_sidecar_parse(buf, len, &s), 0);
	stack_sidecar_close(s);
	for (cut = 0; cut < len; cut++) {
		s = (void *)1;
		assert_true(stack_sidecar_parse(buf, cut, &s) < 0);
		assert_null(s);
	}
	free(buf);
}

static void test_bad_magic_version_and_trailing_bytes_rejected(void **state)
{
	struct stack_sidecar *s;
	size_t len;
	uint8_t *buf = sample(*state, &len), *longer;

	buf[0] = 'T';
	assert_int_equal(stack_sidecar_parse(buf, len, &s), -EBADMSG);
	buf[0] = 't';
	buf[15] = '3';	/* "traceaf-stacks 3" */
	assert_int_equal(stack_sidecar_parse(buf, len, &s), -EPROTONOSUPPORT);
	buf[15] = '2';
	longer = malloc(len + 1);
	memcpy(longer, buf, len);
	longer[len] = 'E';
	assert_int_equal(stack_sidecar_parse(longer, len + 1, &s), -EBADMSG);
	free(longer);
	free(buf);
}

static void test_forward_references_rejected(void **state)
{
#define B(lit) { lit, sizeof(lit) - 1 }
	static const struct {
		const char *data;
		size_t len;
	} bad[] = {
		/* frame naming string 1 before any string */
		B("traceaf-stacks 1\nF\x01\x01\x00\x01" "E\x00\x00"),
		/* stack of frame 1 before any frame */
		B("traceaf-stacks 1\nK\x01\x01" "E\x00\x00"),
		/* allocation of stack 1 before any stack */
		B("traceaf-stacks 1\nA\x01\x01\x00\x00\x01" "E\x01\x00"),
		/* empty stack */
		B("traceaf-stacks 1\nK\x00" "E\x00\x00"),
		/* end record with the wrong totals */
		B("traceaf-stacks 1\nE\x01\x00"),
		/* unknown tag */
		B("traceaf-stacks 1\nZE\x00\x00"),
		/* string with a NUL inside */
		B("traceaf-stacks 1\nS\x02\x61\x00" "E\x00\x00"),
	};
#undef B
	struct stack_sidecar *s;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(stack_sidecar_parse(
			(const uint8_t *)bad[i].data, bad[i].len, &s), -EBADMSG);
	/* The smallest valid file. */
	assert_int_equal(stack_sidecar_parse(
		(const uint8_t *)"traceaf-stacks 1\nE\x00\x00", 20, &s), 0);
	stack_sidecar_close(s);
}

/*
 * A seed of the fuzz corpus, made by an encoder written apart from this
 * one (from the format comment): the reader agrees with it.
 */
static void test_independently_encoded_file_reads_back(void **state)
{
	const char *me = __FILE__, *slash = strrchr(me, '/');
	struct stack_sidecar *s;
	const struct stack_frame *f;
	char path[512];
	uint8_t *buf;
	uint32_t sid;
	size_t len, n;

	snprintf(path, sizeof(path), "%.*s/../fuzz/corpus/stack_sidecar/gens",
		 slash ? (int)(slash - me) : 1, slash ? me : ".");
	buf = read_all(path, &len);
	assert_int_equal(stack_sidecar_parse(buf, len, &s), 0);
	free(buf);
	assert_int_equal(stack_sidecar_lookup(s, 2, 50, 3999, &sid), 0);
	assert_int_equal(sid, 3);
	assert_int_equal(stack_sidecar_frames(s, sid, &f, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(f[0].func, "main.main");
	assert_int_equal(f[0].line, 90);
	assert_string_equal(f[1].func, "?");
	assert_int_equal(f[1].pc, 0x401000);
	assert_string_equal(f[2].func, "main.leak");
	assert_int_equal(stack_sidecar_lookup(s, 1, 0x10000, 6000, &sid), 0);
	assert_int_equal(sid, 3);
	assert_int_equal(stack_sidecar_lookup(s, 1, 90, 5001, &sid), 0);
	assert_int_equal(sid, 2);
	/* A version 1 file: no process record. */
	assert_null(stack_sidecar_process(s));
	stack_sidecar_close(s);
}

/* The "process" seed, from the same independent encoder: format 2. */
static void test_independently_encoded_process_record(void **state)
{
	const char *me = __FILE__, *slash = strrchr(me, '/');
	const struct stack_sidecar_process *p;
	struct stack_sidecar *s;
	char path[512];
	uint8_t *buf;
	uint32_t sid;
	size_t len;

	snprintf(path, sizeof(path),
		 "%.*s/../fuzz/corpus/stack_sidecar/process",
		 slash ? (int)(slash - me) : 1, slash ? me : ".");
	buf = read_all(path, &len);
	assert_int_equal(stack_sidecar_parse(buf, len, &s), 0);
	free(buf);
	p = stack_sidecar_process(s);
	assert_non_null(p);
	assert_string_equal(p->exe, "/srv/app");
	assert_string_equal(p->go_build_id, "goid/x/y/z");
	assert_string_equal(p->gnu_build_id, "");
	assert_int_equal(p->text_start, 0x400000);
	assert_int_equal(p->text_limit, 0x4b0000);
	assert_true(p->wall_ns == 1764720000ull * 1000000000ull);
	assert_int_equal(p->mono_ns, 123456789);
	assert_int_equal(stack_sidecar_lookup(s, 1, 100, 5000, &sid), 0);
	stack_sidecar_close(s);
}

static const struct stack_sidecar_process app_proc = {
	.exe = "/srv/app/bin/app",
	.go_build_id = "abc/def/ghi/jkl",
	.gnu_build_id = "",
	.text_start = 0x400000,
	.text_limit = 0x4a0000,
	.text_offset = 0,
	.wall_ns = 1764720000123456789ull,
	.mono_ns = 987654321000ull,
};

static void test_process_record_round_trips(void **state)
{
	struct fixture *fx = *state;
	const struct stack_sidecar_process *p;
	struct stack_sidecar_writer *w;
	struct stack_sidecar *s;
	uint32_t sid, got;

	assert_int_equal(stack_sidecar_writer_open(fx->trace, &w), 0);
	assert_int_equal(stack_sidecar_writer_set_process(w, &app_proc), 0);
	/* Twice is refused; the file stays good. */
	assert_int_equal(stack_sidecar_writer_set_process(w, &app_proc),
			 -EINVAL);
	sid = add_stack(w, leak_frames, 3);
	assert_int_equal(stack_sidecar_writer_add_alloc(w, 1, 100, 5000, sid),
			 0);
	assert_int_equal(stack_sidecar_writer_close(w), 0);

	assert_int_equal(stack_sidecar_open(fx->trace, &s), 0);
	p = stack_sidecar_process(s);
	assert_non_null(p);
	assert_string_equal(p->exe, app_proc.exe);
	assert_string_equal(p->go_build_id, app_proc.go_build_id);
	assert_string_equal(p->gnu_build_id, "");
	assert_int_equal(p->text_start, 0x400000);
	assert_int_equal(p->text_limit, 0x4a0000);
	assert_int_equal(p->text_offset, 0);
	assert_true(p->wall_ns == app_proc.wall_ns);
	assert_true(p->mono_ns == app_proc.mono_ns);
	assert_int_equal(stack_sidecar_lookup(s, 1, 100, 5000, &got), 0);
	assert_int_equal(got, sid);
	stack_sidecar_close(s);
}

static void test_process_record_after_alloc_refused(void **state)
{
	struct fixture *fx = *state;
	struct stack_sidecar_writer *w;
	struct stack_sidecar *s;
	uint32_t sid;

	assert_int_equal(stack_sidecar_writer_open(fx->trace, &w), 0);
	sid = add_stack(w, leak_frames, 3);
	assert_int_equal(stack_sidecar_writer_add_alloc(w, 1, 100, 5000, sid),
			 0);
	assert_int_equal(stack_sidecar_writer_set_process(w, &app_proc),
			 -EINVAL);
	assert_int_equal(stack_sidecar_writer_close(w), 0);
	assert_int_equal(stack_sidecar_open(fx->trace, &s), 0);
	assert_null(stack_sidecar_process(s));
	stack_sidecar_close(s);
}

/* Fields are added at the end: unknown ones skipped, missing ones 0. */
static void test_process_record_fields_extend_at_the_end(void **state)
{
#define B(lit) (const uint8_t *)lit, sizeof(lit) - 1
	const struct stack_sidecar_process *p;
	struct stack_sidecar *s;

	/* exe = string 1, then 10 fields: the last two are unknown. */
	assert_int_equal(stack_sidecar_parse(B(
		"traceaf-stacks 2\nS\x03" "app"
		"M\x0a\x01\x00\x00\x10\x20\x00\x05\x06\x07\x08" "E\x00\x00"),
		&s), 0);
	p = stack_sidecar_process(s);
	assert_non_null(p);
	assert_string_equal(p->exe, "app");
	assert_string_equal(p->go_build_id, "");
	assert_int_equal(p->text_start, 0x10);
	assert_int_equal(p->text_limit, 0x20);
	assert_int_equal(p->wall_ns, 5);
	assert_int_equal(p->mono_ns, 6);
	stack_sidecar_close(s);
	/* Only the exe: the rest reads as 0. */
	assert_int_equal(stack_sidecar_parse(B(
		"traceaf-stacks 2\nS\x03" "appM\x01\x01" "E\x00\x00"), &s), 0);
	p = stack_sidecar_process(s);
	assert_non_null(p);
	assert_int_equal(p->text_limit, 0);
	assert_int_equal(p->mono_ns, 0);
	stack_sidecar_close(s);
	/* A string ID not yet defined, two records, one past the end. */
	assert_int_equal(stack_sidecar_parse(B(
		"traceaf-stacks 2\nM\x01\x01" "E\x00\x00"), &s), -EBADMSG);
	assert_int_equal(stack_sidecar_parse(B(
		"traceaf-stacks 2\nM\x01\x00M\x01\x00" "E\x00\x00"), &s),
		-EBADMSG);
	assert_int_equal(stack_sidecar_parse(B(
		"traceaf-stacks 2\nM\x05\x00" "E\x00\x00"), &s), -EBADMSG);
#undef B
}

/*
 * Open finds where each allocation record ends but checks its stack IDs
 * only when a lookup decodes its generation: one naming a stack not
 * defined before it then fails that lookup (report refuses the file).
 */
static void test_undefined_stack_fails_its_generations_lookup(void **state)
{
	static const char bad[] = "traceaf-stacks 1\nF\x01\x00\x00\x00"
				  "K\x01\x01" "A\x01\x01\x00\x00\x02"
				  "A\x02\x01\x00\x00\x01" "E\x02\x01";
	struct stack_sidecar *s;
	uint32_t sid = 0;

	assert_int_equal(stack_sidecar_parse((const uint8_t *)bad,
					     sizeof(bad) - 1, &s), 0);
	assert_int_equal(stack_sidecar_lookup(s, 2, 0, 0, &sid), 0);
	assert_int_equal(sid, 1);
	assert_int_equal(stack_sidecar_lookup(s, 1, 0, 0, &sid), -EBADMSG);
	assert_int_equal(stack_sidecar_lookup(s, 1, 0, 0, &sid), -EBADMSG);
	stack_sidecar_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_round_trip_returns_frames_of_each_alloc),
		T(test_lookup_misses_return_enoent),
		T(test_open_without_sidecar_returns_enoent),
		T(test_equal_frames_and_stacks_are_interned_once),
		T(test_unknown_symbols_read_back_as_question_mark),
		T(test_sidecar_has_real_name_only_after_close),
		T(test_add_alloc_rejects_unknown_stack),
		T(test_many_allocs_round_trip_compactly),
		T(test_lookups_in_any_order_find_every_alloc),
		T(test_undefined_stack_fails_its_generations_lookup),
		T(test_every_truncation_is_malformed),
		T(test_bad_magic_version_and_trailing_bytes_rejected),
		T(test_forward_references_rejected),
		T(test_independently_encoded_file_reads_back),
		T(test_independently_encoded_process_record),
		T(test_process_record_round_trips),
		T(test_process_record_after_alloc_refused),
		T(test_process_record_fields_extend_at_the_end),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
