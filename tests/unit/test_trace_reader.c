// SPDX-License-Identifier: BSD-3-Clause
/*
 * trace_reader: generations, types, info and time-ordered events out of
 * traces written by trace_writer, malformed input refused without a crash,
 * and the runtime's own traces (Go 1.23 and 1.27, GODEBUG=traceallocfree=1
 * via the leaky workload's -native flag).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "gobin.h"
#include "format/trace_reader.h"
#include "format/trace_writer.h"

static const struct tw_heap_info info = {
	.min_page_heap_addr = 0xc000000000ull,
	.page_size = 8192,
	.min_heap_align = 8,
	.fixed_stack = 2048,
};

struct buf {
	uint8_t *p;
	size_t len;
};

static void append(struct buf *b, const void *p, size_t n)
{
	b->p = realloc(b->p, b->len + n);
	assert_non_null(b->p);
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void append_gen(struct buf *b, struct tw_gen *g)
{
	uint8_t *enc;
	size_t len;

	assert_int_equal(tw_gen_encode(g, &enc, &len), 0);
	append(b, enc, len);
	free(enc);
	tw_gen_free(g);
}

/*
 * Two generations, freq 5e8 (2 ns per tick), two threads whose events
 * interleave in time: gen 1 allocs on both threads, gen 2 frees.
 */
static struct buf two_gens(void)
{
	struct buf b = { 0 };
	struct tw_gen *g;
	uint64_t t1, t2;

	append(&b, TW_HEADER, TW_HEADER_LEN);
	g = tw_gen_new(1, 500000000, &info, 0);
	assert_non_null(g);
	t1 = tw_gen_define_type(g, 0x4a0000, 56, 56, "main.Node", 9);
	t2 = tw_gen_define_type(g, 0x4a0040, 16, 0, "string", 6);
	assert_int_equal(t1, 1);
	assert_int_equal(t2, 2);
	tw_gen_event(g, 100, TW_EV_SPAN_ALLOC, 10, 5, 1, 6 << 1);
	tw_gen_event(g, 100, TW_EV_HEAP_OBJECT_ALLOC, 30, 5 * 1024, t1, 0);
	tw_gen_event(g, 200, TW_EV_HEAP_OBJECT_ALLOC, 20, 5 * 1024 + 7, t2, 0);
	tw_gen_event(g, 200, TW_EV_GOROUTINE_STACK_ALLOC, 40, 3, 14, 0);
	append_gen(&b, g);
	g = tw_gen_new(2, 500000000, &info, 40);
	assert_non_null(g);
	tw_gen_event(g, 200, TW_EV_HEAP_OBJECT_FREE, 60, 5 * 1024, 0, 0);
	tw_gen_event(g, 100, TW_EV_HEAP_OBJECT_FREE, 50, 5 * 1024 + 7, 0, 0);
	append_gen(&b, g);
	return b;
}

static void test_reader_generations_types_and_order(void **state)
{
	struct buf b = two_gens();
	struct trace_reader *r;
	struct trace_event e;
	const struct trace_type *t;
	static const uint8_t want_kind[] = { TW_EV_SPAN_ALLOC,
		TW_EV_HEAP_OBJECT_ALLOC, TW_EV_HEAP_OBJECT_ALLOC,
		TW_EV_GOROUTINE_STACK_ALLOC };
	static const uint64_t want_ticks[] = { 10, 20, 30, 40 };
	int i;

	assert_int_equal(trace_reader_open_mem(b.p, b.len, &r), 0);
	assert_int_equal(trace_reader_version(r), 23);
	assert_int_equal(trace_reader_next_gen(r), 1);
	assert_int_equal(trace_reader_gen(r), 1);
	assert_int_equal(trace_reader_freq(r), 500000000);
	assert_true(trace_reader_info(r)->valid);
	assert_int_equal(trace_reader_info(r)->min_page_heap_addr,
			 0xc000000000ull);
	assert_int_equal(trace_reader_ntypes(r), 2);
	t = trace_reader_type(r, 1);
	assert_non_null(t);
	assert_int_equal(t->size, 56);
	assert_int_equal(t->name_len, 9);
	assert_memory_equal(t->name, "main.Node", 9);
	assert_null(trace_reader_type(r, 3));
	for (i = 0; i < 4; i++) {
		assert_int_equal(trace_reader_next_event(r, &e), 1);
		assert_int_equal(e.kind, want_kind[i]);
		assert_int_equal(e.ticks, want_ticks[i]);
		assert_int_equal(e.ns, want_ticks[i] * 2);
		assert_int_equal(e.gen, 1);
	}
	assert_int_equal(trace_reader_next_event(r, &e), 0);

	assert_int_equal(trace_reader_next_gen(r), 1);
	assert_int_equal(trace_reader_gen(r), 2);
	/* Types are per generation: gen 2 defines none. */
	assert_null(trace_reader_type(r, 1));
	assert_int_equal(trace_reader_next_event(r, &e), 1);
	assert_int_equal(e.ticks, 50);
	assert_int_equal(e.args[0], 5 * 1024 + 7);
	assert_int_equal(trace_reader_next_event(r, &e), 1);
	assert_int_equal(e.ticks, 60);
	assert_int_equal(trace_reader_next_event(r, &e), 0);
	assert_int_equal(trace_reader_next_gen(r), 0);
	trace_reader_close(r);
	free(b.p);
}

/* Every prefix and every one-byte corruption: an error or fewer events. */
static void test_reader_malformed_never_crashes(void **state)
{
	struct buf b = two_gens();
	size_t cut, i, bad = 0;

	for (cut = 0; cut < b.len; cut++) {
		struct trace_reader *r;
		struct trace_event e;
		int rc, n = 0;

		assert_int_equal(trace_reader_open_mem(b.p, cut, &r), 0);
		while ((rc = trace_reader_next_gen(r)) > 0)
			while ((rc = trace_reader_next_event(r, &e)) > 0)
				n++;
		assert_true(n <= 6);
		if (rc < 0) {
			bad++;
			assert_true(trace_reader_error(r)[0] != 0);
		}
		trace_reader_close(r);
	}
	/* Most cuts fall inside a batch. */
	assert_true(bad > b.len / 2);
	for (i = 0; i < b.len; i++) {
		uint8_t *c = malloc(b.len);
		struct trace_reader *r;
		struct trace_event e;
		int rc;

		memcpy(c, b.p, b.len);
		c[i] ^= 0xa5;
		assert_int_equal(trace_reader_open_mem(c, b.len, &r), 0);
		while ((rc = trace_reader_next_gen(r)) > 0)
			while ((rc = trace_reader_next_event(r, &e)) > 0)
				;
		trace_reader_close(r);
		free(c);
	}
	free(b.p);
}

static void test_reader_refuses_other_formats(void **state)
{
	static const char v21[] = "go 1.21 trace\0\0\0\x01";
	static const char junk[] = "hello, world, this is not a trace";
	struct trace_reader *r;

	assert_int_equal(trace_reader_open_mem(v21, sizeof(v21) - 1, &r), 0);
	assert_int_equal(trace_reader_next_gen(r), -ENOTSUP);
	trace_reader_close(r);
	assert_int_equal(trace_reader_open_mem(junk, sizeof(junk) - 1, &r), 0);
	assert_int_equal(trace_reader_next_gen(r), -EBADMSG);
	trace_reader_close(r);
}

/* A batch longer than the parsers' 64 KiB limit. */
static void test_reader_refuses_oversize_batch(void **state)
{
	struct buf b = { 0 };
	static const uint8_t hdr[] = { 1, 1, 0, 0, 0x81, 0x80, 0x04 };
	uint8_t *pad = calloc(65537, 1);
	struct trace_reader *r;

	append(&b, TW_HEADER, TW_HEADER_LEN);
	append(&b, hdr, sizeof(hdr));   /* size 65537 */
	append(&b, pad, 65537);
	assert_int_equal(trace_reader_open_mem(b.p, b.len, &r), 0);
	assert_int_equal(trace_reader_next_gen(r), -EBADMSG);
	assert_non_null(strstr(trace_reader_error(r), "64 KiB"));
	trace_reader_close(r);
	free(pad);
	free(b.p);
}

static uint8_t *put_uv(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* A timestamp that wraps past 2^64 would break the order: refused. */
static void test_reader_refuses_timestamp_overflow(void **state)
{
	uint8_t buf[128], *p = buf;
	struct trace_reader *r;

	memcpy(p, TW_HEADER, TW_HEADER_LEN);
	p += TW_HEADER_LEN;
	/* Frequency batch: gen 1, M 0, ts 0, 2 bytes: EvFrequency 100. */
	p = put_uv(put_uv(put_uv(put_uv(put_uv(p, 1), 1), 0), 0), 2);
	*p++ = 8;
	*p++ = 100;
	/* Event batch at ts 2^64-10: one HeapObjectAlloc 20 ticks later. */
	p = put_uv(put_uv(put_uv(p, 1), 1), 0);
	p = put_uv(put_uv(p, UINT64_MAX - 10), 4);
	*p++ = TW_EV_HEAP_OBJECT_ALLOC;
	*p++ = 20;
	*p++ = 1;
	*p++ = 0;
	assert_int_equal(trace_reader_open_mem(buf, (size_t)(p - buf), &r), 0);
	assert_int_equal(trace_reader_next_gen(r), -EBADMSG);
	assert_non_null(strstr(trace_reader_error(r), "overflow"));
	trace_reader_close(r);
}

/* Counts per kind and main.leakRecord allocations over a whole file. */
struct native_counts {
	uint64_t kinds[9];
	uint64_t leak_allocs, gens;
	unsigned version;
	bool ordered;
};

static void count_file(const char *path, struct native_counts *c)
{
	struct trace_reader *r;
	struct trace_event e;
	int rc;

	memset(c, 0, sizeof(*c));
	c->ordered = true;
	assert_int_equal(trace_reader_open(path, &r), 0);
	c->version = trace_reader_version(r);
	while ((rc = trace_reader_next_gen(r)) > 0) {
		uint64_t last = 0;

		c->gens++;
		while ((rc = trace_reader_next_event(r, &e)) > 0) {
			const struct trace_type *t;

			if (e.ticks < last)
				c->ordered = false;
			last = e.ticks;
			c->kinds[e.kind - TW_EV_FIRST]++;
			if (e.kind != TW_EV_HEAP_OBJECT_ALLOC)
				continue;
			t = trace_reader_type(r, e.args[1]);
			if (t && t->name_len == 15 &&
			    !memcmp(t->name, "main.leakRecord", 15))
				c->leak_allocs++;
		}
		if (rc < 0)
			break;
	}
	if (rc < 0)
		fail_msg("%s: %s", path, trace_reader_error(r));
	trace_reader_close(r);
}

/* Runs leaky built by Go 1.MINOR with the runtime's own tracing. */
static void native_trace(int minor, unsigned want_version)
{
	char bin[512], out[] = "/tmp/test_trace_reader.XXXXXX", path[600];
	struct native_counts c;
	pid_t pid;
	int st, fd;

	gobin_path(bin, sizeof(bin), "leaky", minor, "");
	if (access(bin, X_OK))
		fail_msg("%s missing (run make workloads)", bin);
	fd = mkstemp(out);
	assert_true(fd >= 0);
	close(fd);
	snprintf(path, sizeof(path), "%s", out);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int dn = open("/dev/null", O_WRONLY);

		dup2(dn, 1);
		setenv("GODEBUG", "traceallocfree=1", 1);
		execl(bin, bin, "-n", "3000", "-steps", "6", "-step", "20ms",
		      "-churn", "2000", "-native", path, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	count_file(path, &c);
	unlink(path);
	/* The header says which format: Go 1.27 writes 1.26's. */
	assert_int_equal(c.version, want_version);
	assert_true(c.gens >= 1);
	assert_true(c.ordered);
	assert_int_equal(c.leak_allocs, 3000);
	/* 6 x 2000 churnNode + 6 x 250 []byte at least. */
	assert_true(c.kinds[TW_EV_HEAP_OBJECT_ALLOC - TW_EV_FIRST] >= 16500);
	assert_true(c.kinds[TW_EV_SPAN_ALLOC - TW_EV_FIRST] > 0);
	assert_true(c.kinds[TW_EV_HEAP_OBJECT - TW_EV_FIRST] > 0);
	assert_true(c.kinds[TW_EV_GOROUTINE_STACK - TW_EV_FIRST] > 0);
}

static void test_reader_native_go123(void **state)
{
	native_trace(23, 23);
}

static void test_reader_native_go127(void **state)
{
	native_trace(27, 26);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reader_generations_types_and_order),
		cmocka_unit_test(test_reader_malformed_never_crashes),
		cmocka_unit_test(test_reader_refuses_other_formats),
		cmocka_unit_test(test_reader_refuses_oversize_batch),
		cmocka_unit_test(test_reader_refuses_timestamp_overflow),
		cmocka_unit_test(test_reader_native_go123),
		cmocka_unit_test(test_reader_native_go127),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
