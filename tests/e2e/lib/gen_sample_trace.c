// SPDX-License-Identifier: BSD-3-Clause
/*
 * gen_sample_trace - writes AllocFree traces through trace_writer and
 * trace_sink, and next to each file F a file F.expect holding the lines
 * tracecheck must print for it.
 *
 *   gen_sample_trace DIR [GENERATIONS [ROTATE_BYTES]]
 *
 * A simulated heap (spans, objects, stacks) on several threads: all nine
 * event kinds, one thread with far more than 64 KiB of events per
 * generation, hundreds of types (some with spaces in their names),
 * timestamps that interleave across threads and sometimes go back within
 * one.  IDs are never reused and a free is always at least FREE_DELAY after
 * its alloc, more than any jitter, so a replay must find no inconsistency.
 * Each new file starts with "exists" events for everything live.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/trace_sink.h"
#include "format/trace_writer.h"

#define NTHREADS 5
#define NTYPES 400
#define OPS_PER_GEN 40000
#define STEP 100        /* clock advance per operation */
#define JITTER 50       /* per-event timestamp noise, < FREE_DELAY */
#define FREE_DELAY 100  /* a free comes at least one step after its alloc */

static const uint64_t tids[NTHREADS] = { 4242, 4243, 4250, 0, 77777 };

static const struct tw_heap_info info = {
	.min_page_heap_addr = 0xc000000000ull,
	.page_size = 8192,
	.min_heap_align = 8,
	.fixed_stack = 2048,
};

struct type {
	uint64_t addr, size;
	char name[80];
};

struct obj {
	uint64_t id, type, born;   /* type: index + 1, 0 = none */
	uint64_t extra;            /* npages/kindclass or stack order */
};

struct live {
	struct obj *v;
	size_t n, cap;
};

/* Counts for one file, printed as tracecheck prints them. */
struct expect {
	uint64_t ev[9];
	uint64_t gens;
	uint64_t type_allocs[NTYPES + 1];
	uint64_t type_exists[NTYPES + 1];
	uint64_t types_defined;
	bool thread_used[NTHREADS];
	uint64_t allocs[3], frees[3];  /* heap, span, stack */
};

static struct type types[NTYPES];
static struct live heap, spans, stacks;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "gen_sample_trace: %s: %s\n", what, strerror(err));
	exit(1);
}

static void live_add(struct live *l, struct obj o)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v)
			die("realloc", ENOMEM);
	}
	l->v[l->n++] = o;
}

static struct obj live_take(struct live *l, size_t i)
{
	struct obj o = l->v[i];

	l->v[i] = l->v[--l->n];
	return o;
}

static void make_types(void)
{
	static const char *special[] = {
		"struct { F uintptr; X0 chan bool }",
		"map[string]*main.Node",
		"func(int) (string, error)",
		"uint8",
	};
	for (int i = 0; i < NTYPES; i++) {
		types[i].addr = 0x4a0000 + (uint64_t)i * 0x40;
		types[i].size = 8 * (1 + (uint64_t)i % 64);
		if (i < 4)
			snprintf(types[i].name, sizeof(types[i].name), "%s",
				 special[i]);
		else
			snprintf(types[i].name, sizeof(types[i].name),
				 "main.T%03d", i);
	}
	types[3].size = 1; /* make([]byte, n) is "uint8", size 1 */
}

struct gen_ctx {
	struct tw_gen *g;
	struct expect *x;
	uint64_t now;
};

static void emit(struct gen_ctx *c, int thr, enum tw_event ev, uint64_t ts,
		 uint64_t a, uint64_t b, uint64_t d)
{
	int err = tw_gen_event(c->g, tids[thr], ev, ts, a, b, d);

	if (err)
		die("tw_gen_event", -err);
	c->x->ev[ev - TW_EV_SPAN]++;
	c->x->thread_used[thr] = true;
}

/* The generation's ID of type index t (0: none), defining it on first use. */
static uint64_t type_id(struct gen_ctx *c, uint64_t t)
{
	struct type *ty;
	uint64_t id;

	if (!t)
		return 0;
	ty = &types[t - 1];
	id = tw_gen_type_id(c->g, ty->addr);
	if (id)
		return id;
	id = tw_gen_define_type(c->g, ty->addr, ty->size, ty->size / 2,
				ty->name, strlen(ty->name));
	if (!id)
		die("tw_gen_define_type", ENOMEM);
	c->x->types_defined++;
	return id;
}

/*
 * What is live when a file begins, from one thread, like the runtime; just
 * before any other event of the generation, and after the floor.
 */
static void emit_exists(struct gen_ctx *c)
{
	uint64_t ts = c->now - 1;
	size_t i;

	for (i = 0; i < spans.n; i++) {
		struct obj *o = &spans.v[i];

		emit(c, 0, TW_EV_SPAN, ts, o->id, o->extra >> 32,
		     o->extra & 0xffffffff);
		c->x->allocs[1]++;
	}
	for (i = 0; i < heap.n; i++) {
		struct obj *o = &heap.v[i];

		emit(c, 0, TW_EV_HEAP_OBJECT, ts, o->id,
		     type_id(c, o->type), 0);
		c->x->type_exists[o->type]++;
		c->x->allocs[0]++;
	}
	for (i = 0; i < stacks.n; i++) {
		struct obj *o = &stacks.v[i];

		emit(c, 0, TW_EV_GOROUTINE_STACK, ts, o->id, o->extra, 0);
		c->x->allocs[2]++;
	}
}

/* An old enough entry of l to free, or -1. */
static long pick_old(struct live *l, uint64_t now)
{
	size_t i;

	if (!l->n)
		return -1;
	i = rnd() % l->n;
	return l->v[i].born + FREE_DELAY <= now ? (long)i : -1;
}

static void one_op(struct gen_ctx *c)
{
	static uint64_t next_obj = 1, next_span = 1, next_stack = 1;
	uint64_t r = rnd();
	/* Thread 0 does most of the work: far beyond 64 KiB per generation. */
	int thr = r % 10 < 6 ? 0 : 1 + (int)((r >> 8) % (NTHREADS - 1));
	uint64_t ts = c->now + (r >> 16) % (JITTER + 1);
	unsigned what = (unsigned)((r >> 32) % 100);
	struct obj o = { .born = c->now };
	long i;

	if (what < 55) {
		o.id = next_obj;
		next_obj += 1 + (r >> 40) % 7;
		o.type = (r >> 48) % 20 == 0 ? 0 : 1 + (r >> 24) % NTYPES;
		/* Sometimes a thread's clock appears to step back. */
		if ((r >> 56) % 16 == 0)
			ts = ts > 5000 ? ts - 5000 : 0;
		emit(c, thr, TW_EV_HEAP_OBJECT_ALLOC, ts, o.id,
		     type_id(c, o.type), 0);
		c->x->type_allocs[o.type]++;
		c->x->allocs[0]++;
		live_add(&heap, o);
	} else if (what < 92) {
		if ((i = pick_old(&heap, c->now)) < 0)
			return;
		o = live_take(&heap, (size_t)i);
		emit(c, thr, TW_EV_HEAP_OBJECT_FREE, ts, o.id, 0, 0);
		c->x->frees[0]++;
	} else if (what < 95) {
		uint64_t npages = 1 + (r >> 40) % 4;
		uint64_t kc = (r >> 44) % 3 ? ((r >> 46) % 136) << 1 : 1;

		o.id = next_span;
		next_span += npages;
		o.extra = npages << 32 | kc;
		emit(c, thr, TW_EV_SPAN_ALLOC, ts, o.id, npages, kc);
		c->x->allocs[1]++;
		live_add(&spans, o);
	} else if (what < 97) {
		if ((i = pick_old(&spans, c->now)) < 0)
			return;
		o = live_take(&spans, (size_t)i);
		emit(c, thr, TW_EV_SPAN_FREE, ts, o.id, 0, 0);
		c->x->frees[1]++;
	} else if (what < 99) {
		/* runtime: order = bits.Len64(size), 2 KiB -> 12 */
		o.extra = 12 + (r >> 40) % 4;
		o.id = next_stack;
		next_stack += 1ull << (o.extra - 12);
		emit(c, thr, TW_EV_GOROUTINE_STACK_ALLOC, ts, o.id, o.extra, 0);
		c->x->allocs[2]++;
		live_add(&stacks, o);
	} else {
		if ((i = pick_old(&stacks, c->now)) < 0)
			return;
		o = live_take(&stacks, (size_t)i);
		emit(c, thr, TW_EV_GOROUTINE_STACK_FREE, ts, o.id, 0, 0);
		c->x->frees[2]++;
	}
}

static void write_expect(const char *trace_path, const struct expect *x)
{
	static const char *names[9] = {
		"Span", "SpanAlloc", "SpanFree", "HeapObject",
		"HeapObjectAlloc", "HeapObjectFree", "GoroutineStack",
		"GoroutineStackAlloc", "GoroutineStackFree",
	};
	static const char *fams[3] = { "heap", "span", "stack" };
	char path[4200];
	uint64_t total = 0, ntypes = 0;
	int i, threads = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s.expect", trace_path);
	f = fopen(path, "w");
	if (!f)
		die(path, errno);
	fprintf(f, "valid 1\n");
	fprintf(f, "version 23\n");
	fprintf(f, "generations %llu\n", (unsigned long long)x->gens);
	for (i = 0; i < NTHREADS; i++)
		threads += x->thread_used[i];
	fprintf(f, "threads %d\n", threads);
	for (i = 0; i < 9; i++) {
		fprintf(f, "ev %s %llu\n", names[i],
			(unsigned long long)x->ev[i]);
		total += x->ev[i];
	}
	fprintf(f, "experimental_events %llu\n", (unsigned long long)total);
	fprintf(f, "info_batches %llu\n", (unsigned long long)x->gens);
	fprintf(f, "info minPageHeapAddr %#llx\n",
		(unsigned long long)info.min_page_heap_addr);
	fprintf(f, "types_defined %llu\n",
		(unsigned long long)x->types_defined);
	for (i = 0; i <= NTYPES; i++) {
		const char *n = i ? types[i - 1].name : "<notype>";
		uint64_t sz = i ? types[i - 1].size : 0;

		if (x->type_allocs[i]) {
			fprintf(f, "type %s %llu allocs %llu\n", n,
				(unsigned long long)sz,
				(unsigned long long)x->type_allocs[i]);
			ntypes++;
		}
		if (x->type_exists[i]) {
			fprintf(f, "type %s %llu exists %llu\n", n,
				(unsigned long long)sz,
				(unsigned long long)x->type_exists[i]);
			ntypes++;
		}
	}
	for (i = 0; i < 3; i++) {
		fprintf(f, "replay %s allocs %llu\n", fams[i],
			(unsigned long long)x->allocs[i]);
		fprintf(f, "replay %s frees %llu\n", fams[i],
			(unsigned long long)x->frees[i]);
		fprintf(f, "replay %s alloc_of_live 0\n", fams[i]);
		fprintf(f, "replay %s free_of_unknown 0\n", fams[i]);
		fprintf(f, "replay %s live_at_end %llu\n", fams[i],
			(unsigned long long)(x->allocs[i] - x->frees[i]));
	}
	fprintf(f, "type_lines %llu\n", (unsigned long long)ntypes);
	fclose(f);
	printf("%s\n", trace_path);
}

int main(int argc, char **argv)
{
	struct trace_sink_opts o = { 0 };
	struct trace_sink_stats st;
	struct trace_sink *sink;
	struct expect *x = calloc(1, sizeof(*x));
	struct gen_ctx c = { .x = x, .now = 1000000000 };
	char path[4096] = "";
	uint64_t floor = 0;
	int gens, i, k, err;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: %s DIR [GENERATIONS [ROTATE_BYTES]]\n",
			argv[0]);
		return 2;
	}
	gens = argc > 2 ? atoi(argv[2]) : 4;
	o.dir = argv[1];
	o.name = "sample";
	o.rotate_size = argc > 3 ? strtoull(argv[3], NULL, 0) : 0;
	if ((err = trace_sink_open(&o, &sink)))
		die("trace_sink_open", -err);
	make_types();

	for (i = 0; i < gens; i++) {
		uint8_t *buf;
		size_t len;

		if (trace_sink_at_file_start(sink) && path[0]) {
			write_expect(path, x);
			memset(x, 0, sizeof(*x));
		}
		c.g = tw_gen_new(trace_sink_next_gen(sink), 1000000000, &info,
				 floor);
		if (!c.g)
			die("tw_gen_new", ENOMEM);
		if (trace_sink_at_file_start(sink))
			emit_exists(&c);
		for (k = 0; k < OPS_PER_GEN; k++) {
			one_op(&c);
			c.now += STEP;
		}
		floor = tw_gen_last_ts(c.g);
		if ((err = tw_gen_encode(c.g, &buf, &len)))
			die("tw_gen_encode", -err);
		if ((err = trace_sink_write_gen(sink, buf, len)))
			die("trace_sink_write_gen", -err);
		free(buf);
		tw_gen_free(c.g);
		x->gens++;
		trace_sink_get_stats(sink, &st);
		snprintf(path, sizeof(path), "%s", st.current_path);
		/* The next generation starts after this one ended. */
		if (c.now < floor)
			c.now = floor;
		c.now += FREE_DELAY;
	}
	write_expect(path, x);
	trace_sink_close(sink);
	free(x);
	return 0;
}
