// SPDX-License-Identifier: BSD-3-Clause
/*
 * heap_replay: counts, slot sizes (tiny blocks), rotation ("exists"
 * events must not count twice), the leak rule, lifetimes and GC cycles
 * estimated from sweeps, on traces written with
 * trace_writer; and the leaky workload's native traces (Go 1.23, 1.27).
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
#include "analysis/heap_replay.h"
#include "analysis/heap_scale.h"
#include "format/trace_writer.h"

static const struct tw_heap_info info = {
	.min_page_heap_addr = 0xc000000000ull,
	.page_size = 8192,
	.min_heap_align = 8,
	.fixed_stack = 2048,
};

/* Span 5: one page of size class 5 (48 B), scan: kindclass 5 << 2. */
#define SPAN 5
#define KC48 (5 << 2)
#define OBJ(k) (SPAN * 1024 + (k) * 6)
#define MS 1000000ull

static char dir[] = "/tmp/test_heap_replay.XXXXXX";

struct file {
	FILE *f;
	struct tw_gen *g;
	uint64_t gen, node, leak;
};

static void file_open(struct file *w, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	memset(w, 0, sizeof(*w));
	w->f = fopen(path, "w");
	assert_non_null(w->f);
	assert_int_equal(fwrite(TW_HEADER, 1, TW_HEADER_LEN, w->f),
			 TW_HEADER_LEN);
}

static void gen_start(struct file *w, uint64_t floor)
{
	w->g = tw_gen_new(++w->gen, 1000000000, &info, floor);
	assert_non_null(w->g);
	w->node = tw_gen_define_type(w->g, 0x4a0000, 48, 48, "main.Node", 9);
	w->leak = tw_gen_define_type(w->g, 0x4a0040, 48, 48, "main.Leak", 9);
}

static void ev(struct file *w, enum tw_event e, uint64_t ts, uint64_t a,
	       uint64_t b, uint64_t c)
{
	assert_int_equal(tw_gen_event(w->g, 1, e, ts, a, b, c), 0);
}

static void gen_end(struct file *w)
{
	uint8_t *buf;
	size_t len;

	assert_int_equal(tw_gen_encode(w->g, &buf, &len), 0);
	assert_int_equal(fwrite(buf, 1, len, w->f), len);
	free(buf);
	tw_gen_free(w->g);
}

static void file_close(struct file *w)
{
	assert_int_equal(fclose(w->f), 0);
}

static struct heap_replay *replay(const char *const *names, size_t n)
{
	struct heap_replay *h = heap_replay_new();
	char path[256];
	size_t i;

	assert_non_null(h);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (heap_replay_file(h, path, false))
			fail_msg("%s", h->err);
	}
	assert_int_equal(heap_replay_finish(h), 0);
	return h;
}

static const struct hr_type *type_named(const struct heap_replay *h,
					const char *name)
{
	size_t i;

	for (i = 0; i < h->ntypes; i++)
		if (!strcmp(h->types[i].name, name))
			return &h->types[i];
	fail_msg("no type %s", name);
	return NULL;
}

/*
 * a.trace: span 5, two main.Node allocated.  b.trace (the rotation): the
 * span and both objects as "exists", a third Node, a free of the first.
 */
static void write_rotation(void)
{
	struct file w;

	file_open(&w, "a.trace");
	gen_start(&w, 0);
	ev(&w, TW_EV_SPAN_ALLOC, 10, SPAN, 1, KC48);
	ev(&w, TW_EV_HEAP_OBJECT_ALLOC, 20, OBJ(0), w.node, 0);
	ev(&w, TW_EV_HEAP_OBJECT_ALLOC, 30, OBJ(1), w.node, 0);
	gen_end(&w);
	file_close(&w);
	file_open(&w, "b.trace");
	gen_start(&w, 30);
	ev(&w, TW_EV_SPAN, 40, SPAN, 1, KC48);
	ev(&w, TW_EV_HEAP_OBJECT, 40, OBJ(0), w.node, 0);
	ev(&w, TW_EV_HEAP_OBJECT, 40, OBJ(1), w.node, 0);
	ev(&w, TW_EV_HEAP_OBJECT_ALLOC, 50, OBJ(2), w.node, 0);
	ev(&w, TW_EV_HEAP_OBJECT_FREE, 60, OBJ(0), 0, 0);
	gen_end(&w);
	file_close(&w);
}

static void test_replay_rotation_exists_counted_once(void **state)
{
	static const char *const both[] = { "a.trace", "b.trace" };
	static const char *const second[] = { "b.trace" };
	const struct hr_type *t;
	struct heap_replay *h;

	write_rotation();
	h = replay(both, 2);
	t = type_named(h, "main.Node");
	assert_int_equal(t->c.allocs, 3);
	assert_int_equal(t->c.alloc_bytes, 3 * 48);
	assert_int_equal(t->c.exists, 0);
	assert_int_equal(t->c.frees, 1);
	assert_int_equal(t->c.live, 2);
	assert_int_equal(t->c.live_bytes, 2 * 48);
	assert_int_equal(h->heap_pages, 1);
	assert_int_equal(h->span_allocs, 1);
	assert_int_equal(h->files, 2);
	assert_int_equal(h->anom.alloc_of_live + h->anom.free_of_unknown, 0);
	heap_replay_free(h);

	/* The second file alone: the objects it inherits are "exists". */
	h = replay(second, 1);
	t = type_named(h, "main.Node");
	assert_int_equal(t->c.allocs, 1);
	assert_int_equal(t->c.exists, 2);
	assert_int_equal(t->c.frees, 1);
	assert_int_equal(t->c.live, 2);
	assert_int_equal(h->span_allocs, 0);
	assert_int_equal(h->heap_pages, 1);
	heap_replay_free(h);
}

/* Slot sizes: size class, a large span, the tiny block, no span. */
static void test_replay_object_sizes(void **state)
{
	static const char *const f[] = { "sizes.trace" };
	struct heap_replay *h;
	struct file w;
	uint64_t tiny, big;

	file_open(&w, "sizes.trace");
	gen_start(&w, 0);
	tiny = tw_gen_define_type(w.g, 0x4a0080, 8, 0, "int64", 5);
	big = tw_gen_define_type(w.g, 0x4a00c0, 20000, 0, "main.Big", 8);
	/* Span 20: 3 pages, size class 0 (large). */
	ev(&w, TW_EV_SPAN_ALLOC, 10, 20, 3, 0);
	ev(&w, TW_EV_HEAP_OBJECT_ALLOC, 11, 20 * 1024, big, 0);
	/* Span 30: tiny blocks (spanclass 5). */
	ev(&w, TW_EV_SPAN_ALLOC, 12, 30, 1, 5 << 1);
	ev(&w, TW_EV_HEAP_OBJECT_ALLOC, 13, 30 * 1024, tiny, 0);
	ev(&w, TW_EV_HEAP_OBJECT_ALLOC, 14, 30 * 1024 + 1, tiny, 0);
	/* An object on the second page of a two-page span of class 5. */
	ev(&w, TW_EV_SPAN_ALLOC, 15, 40, 2, KC48);
	ev(&w, TW_EV_HEAP_OBJECT_ALLOC, 16, 41 * 1024 + 6, w.node, 0);
	/* No span: the type's size. */
	ev(&w, TW_EV_HEAP_OBJECT_ALLOC, 17, 90 * 1024, w.leak, 0);
	gen_end(&w);
	file_close(&w);
	h = replay(f, 1);
	assert_int_equal(type_named(h, "main.Big")->c.alloc_bytes, 3 * 8192);
	assert_int_equal(type_named(h, "int64")->c.alloc_bytes, 16);
	assert_int_equal(type_named(h, "main.Node")->c.alloc_bytes, 48);
	assert_int_equal(type_named(h, "main.Leak")->c.alloc_bytes, 48);
	assert_int_equal(h->anom.size_from_type, 1);
	assert_int_equal(h->heap_pages, 6);
	heap_replay_free(h);
}

/* The class of type NAME with slot SIZE (no stacks in these traces). */
static const struct hr_class *class_of(const struct heap_replay *h,
				       const char *name, uint64_t size)
{
	size_t i;

	for (i = 0; i < h->nclasses; i++)
		if (!strcmp(h->types[h->classes[i].type].name, name) &&
		    h->classes[i].size == size)
			return &h->classes[i];
	fail_msg("no class %s/%llu", name, (unsigned long long)size);
	return NULL;
}

/*
 * Tiny blocks (span 30, spanclass 5): an ID in the lower half counts 16
 * bytes until the upper half of its block gets one, then 8; an upper
 * half 8; a block whose lower ID was freed keeps what it had.
 */
static void test_replay_tiny_blocks_count_the_bytes_they_hold(void **state)
{
	static const char *const f[] = { "tiny.trace" };
	const uint64_t b0 = 30 * 1024, b1 = b0 + 2, b2 = b0 + 4;
	struct heap_replay *h;
	struct file w;
	uint64_t u8, str;

	file_open(&w, "tiny.trace");
	gen_start(&w, 0);
	u8 = tw_gen_define_type(w.g, 0x4a0080, 1, 0, "uint8", 5);
	str = tw_gen_define_type(w.g, 0x4a00c0, 4, 0, "int32", 5);
	ev(&w, TW_EV_SPAN_ALLOC, 10, 30, 1, 5 << 1);
	/* Block 0: one 16-byte []byte (type uint8, size 1). */
	ev(&w, TW_EV_HEAP_OBJECT_ALLOC, 11, b0, u8, 0);
	/* Block 1: two int32s, one per half. */
	ev(&w, TW_EV_HEAP_OBJECT_ALLOC, 12, b1, str, 0);
	ev(&w, TW_EV_HEAP_OBJECT_ALLOC, 13, b1 + 1, str, 0);
	/* Block 2: the lower half freed before the upper gets an ID. */
	ev(&w, TW_EV_HEAP_OBJECT_ALLOC, 14, b2, u8, 0);
	ev(&w, TW_EV_HEAP_OBJECT_FREE, 15, b2, 0, 0);
	ev(&w, TW_EV_HEAP_OBJECT_ALLOC, 16, b2 + 1, u8, 0);
	gen_end(&w);
	file_close(&w);
	h = replay(f, 1);
	/* uint8: 16 (block 0) + 16 (block 2, freed whole) + 8. */
	assert_int_equal(type_named(h, "uint8")->c.alloc_bytes, 40);
	assert_int_equal(type_named(h, "uint8")->c.live_bytes, 24);
	assert_int_equal(type_named(h, "int32")->c.alloc_bytes, 16);
	assert_int_equal(type_named(h, "int32")->c.live_bytes, 16);
	assert_int_equal(type_named(h, "int32")->c.allocs, 2);
	assert_int_equal(class_of(h, "int32", 8)->allocs, 2);
	assert_int_equal(class_of(h, "int32", 8)->live, 2);
	assert_int_equal(class_of(h, "int32", 16)->allocs, 0);
	assert_int_equal(class_of(h, "int32", 16)->live, 0);
	heap_replay_free(h);
}

/*
 * GC cycles from sweeps, all on span 5's page: the first free begins
 * cycle 1, each later sweep of the page the next one.
 *   0 ms  alloc n1 n2 n3, leak l        10 ms  free n1 (cycle 1)
 *  15 ms  alloc n4                      30 ms  free n2 (cycle 2)
 *  50 ms  free n4 (cycle 3)             70 ms  free n3 (cycle 4)
 *  80 ms  alloc n5, the end
 * n1 survived 0 cycles (short-lived), n2 and n4 1, n3 3; l 3 and n5 0
 * at the end.
 */
static void test_replay_cycles_shortlived_survived_lifetimes(void **state)
{
	static const char *const f[] = { "cycles.trace" };
	const struct hr_class *node, *leak;
	struct heap_replay *h;
	struct file w;

	file_open(&w, "cycles.trace");
	gen_start(&w, 0);
	ev(&w, TW_EV_SPAN_ALLOC, 1, SPAN, 1, KC48);
	ev(&w, TW_EV_HEAP_OBJECT_ALLOC, 2, OBJ(1), w.node, 0);
	ev(&w, TW_EV_HEAP_OBJECT_ALLOC, 3, OBJ(2), w.node, 0);
	ev(&w, TW_EV_HEAP_OBJECT_ALLOC, 4, OBJ(3), w.node, 0);
	ev(&w, TW_EV_HEAP_OBJECT_ALLOC, 5, OBJ(9), w.leak, 0);
	ev(&w, TW_EV_HEAP_OBJECT_FREE, 10 * MS, OBJ(1), 0, 0);
	ev(&w, TW_EV_HEAP_OBJECT_ALLOC, 15 * MS, OBJ(4), w.node, 0);
	ev(&w, TW_EV_HEAP_OBJECT_FREE, 30 * MS, OBJ(2), 0, 0);
	ev(&w, TW_EV_HEAP_OBJECT_FREE, 50 * MS, OBJ(4), 0, 0);
	ev(&w, TW_EV_HEAP_OBJECT_FREE, 70 * MS, OBJ(3), 0, 0);
	ev(&w, TW_EV_HEAP_OBJECT_ALLOC, 80 * MS, OBJ(5), w.node, 0);
	gen_end(&w);
	file_close(&w);
	h = replay(f, 1);
	assert_int_equal(h->gc_cycles, 4);
	node = class_of(h, "main.Node", 48);
	leak = class_of(h, "main.Leak", 48);
	assert_int_equal(node->allocs, 5);
	assert_int_equal(node->frees, 4);
	assert_int_equal(node->shortlived, 1);
	assert_int_equal(node->survived, 1);	/* n3 */
	assert_int_equal(leak->shortlived, 0);
	assert_int_equal(leak->survived, 1);
	/* 10 + 30 + 35 + 70 + 0 ms; 80 ms (the lifetimes' unit is 1 us). */
	assert_true(node->live_s > 0.1449 && node->live_s < 0.1451);
	assert_true(leak->live_s > 0.0799 && leak->live_s < 0.0801);
	heap_replay_free(h);
}

/* Frees of one sweep, less than the gap apart, begin one cycle. */
static void test_replay_one_sweep_is_one_cycle(void **state)
{
	static const char *const f[] = { "sweep.trace" };
	struct heap_replay *h;
	struct file w;
	int k;

	file_open(&w, "sweep.trace");
	gen_start(&w, 0);
	ev(&w, TW_EV_SPAN_ALLOC, 1, SPAN, 1, KC48);
	for (k = 0; k < 40; k++)
		ev(&w, TW_EV_HEAP_OBJECT_ALLOC, 2 + k, OBJ(k), w.node, 0);
	/* The runtime's own traces time each free: 10 us apart. */
	for (k = 0; k < 20; k++)
		ev(&w, TW_EV_HEAP_OBJECT_FREE, MS + k * 10000, OBJ(k), 0, 0);
	for (k = 20; k < 40; k++)
		ev(&w, TW_EV_HEAP_OBJECT_FREE, 40 * MS + k * 10000, OBJ(k), 0,
		   0);
	gen_end(&w);
	file_close(&w);
	h = replay(f, 1);
	assert_int_equal(h->gc_cycles, 2);
	assert_int_equal(class_of(h, "main.Node", 48)->shortlived, 20);
	heap_replay_free(h);
}

/*
 * NGEN generations of GEN_MS each: 10 main.Node churned a generation
 * (the next one frees them), 10 main.Leak leaked in every EVERY-th, and a
 * goroutine stack at each generation's end.
 */
static void leak_gens(struct file *w, uint64_t ngen, uint64_t gen_ms,
		      uint64_t every)
{
	uint64_t g, k, ts = 0, lk = 0, nd = 100;

	for (g = 0; g < ngen; g++) {
		gen_start(w, ts);
		if (!g)
			ev(w, TW_EV_SPAN_ALLOC, 1, 1, 10, KC48);
		for (k = 0; k < 10; k++) {
			ts = g * gen_ms * MS + k + 10;
			if (g)
				ev(w, TW_EV_HEAP_OBJECT_FREE, ts,
				   1024 + (nd - 10) * 6, 0, 0);
			ev(w, TW_EV_HEAP_OBJECT_ALLOC, ts, 1024 + nd++ * 6,
			   w->node, 0);
			if (g % every == 0)
				ev(w, TW_EV_HEAP_OBJECT_ALLOC, ts,
				   1024 + lk++ * 6, w->leak, 0);
		}
		ts = g * gen_ms * MS + (gen_ms - 1) * MS;
		ev(w, TW_EV_GOROUTINE_STACK_ALLOC, ts, 1000 + g, 14, 0);
		gen_end(w);
	}
}

/*
 * Eight generations of 100 ms: each leaks 10 main.Leak and churns 10
 * main.Node that the next generation frees.  Node lifetime: 100 ms.
 */
static void test_replay_leak_rule_and_lifetimes(void **state)
{
	static const char *const f[] = { "leak.trace" };
	const struct hr_type *leak, *node;
	struct heap_replay *h;
	struct file w;
	uint64_t p50;

	file_open(&w, "leak.trace");
	leak_gens(&w, 8, 100, 1);
	file_close(&w);
	h = replay(f, 1);
	leak = type_named(h, "main.Leak");
	node = type_named(h, "main.Node");
	assert_int_equal(h->generations, 8);
	assert_true(h->npoints >= 8);
	assert_true(leak->leak.suspect);
	assert_int_equal(leak->leak.live_end, 80);
	assert_int_equal(leak->leak.growth_bytes, 70 * 48);
	assert_false(node->leak.suspect);
	assert_int_equal(node->c.live, 10);
	assert_int_equal(node->c.frees, 70);
	assert_int_equal(h->lifetimes, 70);
	p50 = heap_replay_lifetime_pct(h, 50);
	assert_true(p50 > 95 * MS && p50 < 105 * MS);
	/* Goroutine stacks: order 14 = 8 KiB each. */
	assert_int_equal(h->stacks_live, 8);
	assert_int_equal(h->stack_bytes, 8 * 8192);
	heap_replay_free(h);
}

/*
 * A leak in bursts (10 main.Leak every other 50 ms generation) with a
 * checkpoint at every generation end: the floor rises at only half the
 * checkpoints, but in every stretch of time the rule steps by.  Counted
 * per checkpoint gap (the rule before), it was no suspect.
 */
static void test_replay_leak_in_bursts(void **state)
{
	static const char *const f[] = { "burst.trace" };
	const struct hr_type *leak, *node;
	struct heap_replay *h;
	struct file w;

	file_open(&w, "burst.trace");
	leak_gens(&w, 20, 50, 2);
	file_close(&w);
	h = replay(f, 1);
	leak = type_named(h, "main.Leak");
	node = type_named(h, "main.Node");
	assert_true(h->npoints >= 19);
	assert_int_equal(leak->leak.steps, 8);
	assert_true(leak->leak.rises >= 6);
	assert_true(leak->leak.suspect);
	assert_int_equal(leak->leak.live_end, 100);
	assert_false(node->leak.suspect);
	heap_replay_free(h);
}

/* 60 s of events every 50 ms: checkpoints thinned, in order, to the end. */
static void test_replay_checkpoints_thinned(void **state)
{
	static const char *const f[] = { "long.trace" };
	struct heap_replay *h;
	struct file w;
	uint64_t g, k, ts = 0;
	size_t i;

	file_open(&w, "long.trace");
	for (g = 0; g < 60; g++) {
		gen_start(&w, ts);
		for (k = 0; k < 20; k++) {
			ts = (g * 20 + k) * 50 * MS;
			ev(&w, TW_EV_HEAP_OBJECT_ALLOC, ts, g * 20 + k + 1,
			   w.leak, 0);
		}
		gen_end(&w);
	}
	file_close(&w);
	h = replay(f, 1);
	assert_true(h->npoints >= 100 && h->npoints <= 256);
	for (i = 1; i < h->npoints; i++)
		assert_true(h->points[i].t_ns > h->points[i - 1].t_ns);
	assert_int_equal(h->points[h->npoints - 1].t_ns, ts);
	assert_int_equal(h->points[h->npoints - 1].live, 1200);
	assert_true(type_named(h, "main.Leak")->leak.suspect);
	heap_replay_free(h);
}

/* The leaky workload traced by the runtime: its leak found, exactly. */
static void native_leak(int minor)
{
	char bin[512], path[600];
	const struct hr_type *t;
	struct heap_replay *h;
	pid_t pid;
	int st;

	gobin_path(bin, sizeof(bin), "leaky", minor, "");
	if (access(bin, X_OK))
		fail_msg("%s missing (run make workloads)", bin);
	snprintf(path, sizeof(path), "%s/native%d.trace", dir, minor);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int dn = open("/dev/null", O_WRONLY);

		dup2(dn, 1);
		setenv("GODEBUG", "traceallocfree=1", 1);
		execl(bin, bin, "-n", "4000", "-steps", "10", "-step", "50ms",
		      "-churn", "2000", "-native", path, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	h = heap_replay_new();
	assert_non_null(h);
	if (heap_replay_file(h, path, false))
		fail_msg("%s", h->err);
	assert_int_equal(heap_replay_finish(h), 0);
	t = type_named(h, "main.leakRecord");
	assert_int_equal(t->c.allocs, 4000);
	assert_int_equal(t->c.live, 4000);
	assert_int_equal(t->c.alloc_bytes, 4000 * 192);
	assert_true(t->leak.suspect);
	t = type_named(h, "main.churnNode");
	assert_int_equal(t->c.allocs, 20000);
	assert_false(t->leak.suspect);
	heap_replay_free(h);
}

static void test_replay_native_go123(void **state)
{
	native_leak(23);
}

static void test_replay_native_go127(void **state)
{
	native_leak(27);
}

/*
 * A --memprofilerate trace: no spans, and one type name in two entries
 * whose sizes are the sampled slot sizes (session_sampled.c, sampled_type).  Each
 * object takes its entry's size; scaled at 4096, each class stands for
 * 1 / (1 - exp(-size / 4096)) objects (runtime/pprof scaleHeapSample):
 * 4096 B -> 1.582, 64 B -> 64.50.
 */
static void test_replay_sampled_sizes_and_scale(void **state)
{
	static const char *const f[] = { "sampled.trace" };
	struct heap_replay *h;
	const struct hr_type *t;
	struct file w;
	uint64_t big, small;
	int i;

	file_open(&w, "sampled.trace");
	gen_start(&w, 0);
	big = tw_gen_define_type(w.g, 1ull << 63 | 1, 4096, 0, "uint8", 5);
	small = tw_gen_define_type(w.g, 1ull << 63 | 2, 64, 0, "uint8", 5);
	for (i = 0; i < 10; i++)
		ev(&w, TW_EV_HEAP_OBJECT_ALLOC, 10 + i, 100 * 1024 + i * 512, big, 0);
	for (i = 0; i < 100; i++)
		ev(&w, TW_EV_HEAP_OBJECT_ALLOC, 30 + i, 200 * 1024 + i * 8, small, 0);
	for (i = 0; i < 5; i++)
		ev(&w, TW_EV_HEAP_OBJECT_FREE, 200 + i, 100 * 1024 + i * 512, 0, 0);
	gen_end(&w);
	file_close(&w);
	h = replay(f, 1);
	t = type_named(h, "uint8");
	assert_int_equal(t->c.allocs, 110);
	assert_int_equal(t->c.alloc_bytes, 10 * 4096 + 100 * 64);
	assert_int_equal(t->c.free_bytes, 5 * 4096);
	assert_int_equal(heap_replay_scale(h, 4096), 0);
	assert_int_equal(h->sample_rate, 4096);
	assert_int_equal(t->c.allocs, 16 + 6450);
	assert_int_equal(t->c.alloc_bytes, 64798 + 412808);
	assert_int_equal(t->c.frees, 8);
	assert_int_equal(t->c.free_bytes, 32399);
	assert_int_equal(t->c.live, 8 + 6450);
	heap_replay_free(h);

	/* Rate 1: every allocation was a sample; nothing to scale. */
	h = replay(f, 1);
	assert_int_equal(heap_replay_scale(h, 1), 0);
	assert_int_equal(type_named(h, "uint8")->c.allocs, 110);
	heap_replay_free(h);
}

static int setup(void **state)
{
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_rotation_exists_counted_once),
		cmocka_unit_test(test_replay_object_sizes),
		cmocka_unit_test(test_replay_tiny_blocks_count_the_bytes_they_hold),
		cmocka_unit_test(test_replay_cycles_shortlived_survived_lifetimes),
		cmocka_unit_test(test_replay_one_sweep_is_one_cycle),
		cmocka_unit_test(test_replay_leak_rule_and_lifetimes),
		cmocka_unit_test(test_replay_leak_in_bursts),
		cmocka_unit_test(test_replay_checkpoints_thinned),
		cmocka_unit_test(test_replay_native_go123),
		cmocka_unit_test(test_replay_native_go127),
		cmocka_unit_test(test_replay_sampled_sizes_and_scale),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
