// SPDX-License-Identifier: BSD-3-Clause
/*
 * bench_daemon - the daemon's throughput on one core, offline: a
 * synthesized record stream through the same code the tracer runs
 * (session.c -> shadow_heap.c, trace_writer.c -> trace_sink.c), writing
 * real trace files into a temporary directory.
 *
 * The stream imitates what the BPF programs send for an allocating Go
 * program with 4 threads: allocations of five kinds (tiny 8-byte pairs in
 * 16-byte blocks, 56-byte main.Node in 64-byte slots, 100-byte []byte in
 * 112-byte slots, 568-byte main.Big with a malloc header, untyped 48-byte
 * blocks), each thread filling its own span per size class (the mcache),
 * a span allocation per span, GC cycles every GC_EVERY allocations that
 * sweep every full span (10 % of the objects survive one cycle, none two)
 * and free the spans left empty, and goroutine stacks allocated and freed
 * in manual spans.  Per thread one record every ~1 us, the rate a traced
 * program reaches (BENCHMARKS.md: ~0.9 us per allocation).  Type
 * descriptors are real ones of the Go binary given (found through DWARF),
 * read from the file as for a process that has exited.
 *
 * The stream is built in memory first; only session_record() over it,
 * the generation cuts (one per simulated second) and the final flush are
 * timed.  Prints records and events per second of thread CPU time and
 * bytes per event on disk.
 *
 * Usage: bench_daemon GO_BINARY [ALLOCS (default 4000000)] [SAMPLE]
 * Env:   BENCH_DAEMON_OUT=DIR  write the trace files into DIR (an existing,
 *        empty directory) and keep them: tests/e2e/test_daemon_golden.sh
 *        pins their bytes, so a refactoring of the daemon that changes the
 *        output is seen.
 *        BENCH_DAEMON_ROTATE=BYTES  --rotate-size for those files.
 *        BENCH_DAEMON_GEN_NS=NS     generation period in stream time
 *        (default 1 s, the runtime's).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "inspect/go_binary.h"
#include "inspect/go_dwarf.h"
#include "inspect/go_sizeclasses.h"
#include "inspect/go_types.h"
#include "trace/session.h"
#include "trace/shadow_heap.h"
#include "attach/target.h"
#include "format/trace_sink.h"
#include "traceaf_events.h"

#define THREADS 4
#define HEAP_BASE 0xc000000000ull
#define GC_EVERY 250000
#define STACK_EVERY 2000
#define LIVE_STACKS 64
#define TICK_NS 250            /* between records, over all threads */
#define SURVIVE_PCT 10

enum kind { K_TINY, K_NODE, K_BYTES, K_BIG, K_UNTYPED, K_COUNT };

struct kind_desc {
	const char *type;      /* DWARF name, NULL: untyped */
	uint64_t size;         /* requested */
	uint64_t class_size;   /* slot */
	int weight;            /* percent of allocations */
	int noscan;
};

static const struct kind_desc kinds[K_COUNT] = {
	[K_TINY] = { "uint8", 8, 16, 25, 1 },
	[K_NODE] = { "main.Node", 56, 64, 45, 0 },
	[K_BYTES] = { "uint8", 100, 112, 20, 1 },
	[K_BIG] = { "main.Big", 568, 576, 5, 0 },
	[K_UNTYPED] = { NULL, 48, 48, 5, 1 },
};

struct span {
	uint64_t base;
	uint32_t nelems, used;
	uint8_t spanclass;
	uint64_t elemsize;
	uint8_t survivors[TAF_SPAN_BITMAP_MAX];  /* marks of the last sweep */
	int swept;                               /* sweeps so far */
};

struct stream {
	uint8_t *buf;
	size_t len, cap;
	uint64_t ts, next_page, nrec;
	struct span *spans;          /* full spans awaiting a sweep */
	size_t nspans, spans_cap;
	struct span cur[THREADS][K_COUNT];
	uint64_t type_addr[K_COUNT];
	uint8_t class_of[K_COUNT];
	uint64_t stacks[LIVE_STACKS];
	uint64_t stack_span, stack_span_used;
	uint64_t rng;
};

static uint64_t rnd(struct stream *st, uint64_t n)
{
	st->rng ^= st->rng >> 12;
	st->rng ^= st->rng << 25;
	st->rng ^= st->rng >> 27;
	return ((st->rng * 0x2545f4914f6cdd1dull) >> 11) % n;
}

static void *put(struct stream *st, size_t len, uint16_t kind, uint32_t tid)
{
	struct taf_rec_hdr *h;

	if (st->len + len > st->cap) {
		st->cap = st->cap ? st->cap * 2 : 64 << 20;
		st->buf = realloc(st->buf, st->cap);
		if (!st->buf) {
			perror("realloc");
			exit(1);
		}
	}
	h = (struct taf_rec_hdr *)(st->buf + st->len);
	memset(h, 0, len);
	st->ts += TICK_NS / 2 + rnd(st, TICK_NS);
	h->ts = st->ts;
	h->pid = 4242;
	h->tid = tid;
	h->kind = kind;
	h->len = (uint16_t)len;
	st->len += len;
	st->nrec++;
	return h;
}

static uint8_t size_class(uint64_t size)
{
	uint8_t c;

	for (c = 1; c < GO_NUM_SIZE_CLASSES; c++)
		if (go_class_to_size[c] == size)
			return c;
	fprintf(stderr, "no size class of %llu bytes\n",
		(unsigned long long)size);
	exit(1);
}

static void new_span(struct stream *st, uint32_t tid, struct span *sp,
		     enum kind k)
{
	struct taf_rec_span_alloc *r;

	memset(sp, 0, sizeof(*sp));
	sp->base = st->next_page;
	st->next_page += GO_PAGE_SIZE;
	sp->spanclass = (uint8_t)(st->class_of[k] << 1 | kinds[k].noscan);
	sp->elemsize = kinds[k].class_size;
	sp->nelems = (uint32_t)(GO_PAGE_SIZE / sp->elemsize);
	r = put(st, sizeof(*r), TAF_REC_SPAN_ALLOC, tid);
	r->base = sp->base;
	r->npages = 1;
	r->spanclass = sp->spanclass;
}

static void heap_alloc(struct stream *st, uint32_t tid, enum kind k,
		       uint64_t addr, uint64_t size)
{
	struct taf_rec_heap_alloc *r = put(st, sizeof(*r), TAF_REC_HEAP_ALLOC,
					   tid);

	r->addr = addr;
	r->type = st->type_addr[k];
	r->size = size;
}

static void alloc_one(struct stream *st)
{
	uint32_t t = (uint32_t)rnd(st, THREADS);
	int w = (int)rnd(st, 100), k;
	struct span *sp;
	uint64_t slot;

	for (k = 0; k < K_COUNT - 1 && w >= kinds[k].weight; k++)
		w -= kinds[k].weight;
	sp = &st->cur[t][k];
	if (!sp->nelems || sp->used == sp->nelems) {
		if (sp->nelems) {
			if (st->nspans == st->spans_cap) {
				st->spans_cap = st->spans_cap ?
						st->spans_cap * 2 : 4096;
				st->spans = realloc(st->spans, st->spans_cap *
						    sizeof(*st->spans));
				if (!st->spans)
					exit(1);
			}
			st->spans[st->nspans++] = *sp;
		}
		new_span(st, 1000 + t, sp, k);
	}
	slot = sp->base + sp->used++ * sp->elemsize;
	if (k == K_TINY) {
		/* Two 8-byte objects share the block, the second at +8. */
		heap_alloc(st, 1000 + t, k, slot, 8);
		heap_alloc(st, 1000 + t, k, slot + 8, 8);
	} else if (k == K_BIG) {
		heap_alloc(st, 1000 + t, k, slot + GO_MALLOC_HEADER_SIZE,
			   kinds[k].size);
	} else {
		heap_alloc(st, 1000 + t, k, slot, kinds[k].size);
	}
}

/* One GC cycle: every full span swept; empty ones freed. */
static void gc(struct stream *st)
{
	size_t i, kept = 0;

	for (i = 0; i < st->nspans; i++) {
		struct span *sp = &st->spans[i];
		uint32_t tid = 1000 + (uint32_t)rnd(st, THREADS), j;
		struct taf_rec_span_sweep *r = put(st, sizeof(*r),
						   TAF_REC_SPAN_SWEEP, tid);
		int live = 0;

		r->base = sp->base;
		r->npages = 1;
		r->elemsize = sp->elemsize;
		r->nelems = sp->nelems;
		r->spanclass = sp->spanclass;
		r->nbytes = (uint8_t)((sp->nelems + 7) / 8);
		if (sp->swept == 0) {
			/* Fresh span: every slot allocated below freeindex. */
			r->freeindex = sp->nelems;
			for (j = 0; j < sp->nelems; j++) {
				if (rnd(st, 100) < SURVIVE_PCT) {
					r->mark_bits[j / 8] |= 1u << (j % 8);
					live = 1;
				}
			}
			memcpy(sp->survivors, r->mark_bits, r->nbytes);
		} else {
			/* Survivors die: allocBits = last marks. */
			r->freeindex = 0;
			memcpy(r->alloc_bits, sp->survivors, r->nbytes);
		}
		sp->swept++;
		if (live) {
			st->spans[kept++] = *sp;
		} else {
			struct taf_rec_addr *f = put(st, sizeof(*f),
						     TAF_REC_SPAN_FREE, tid);

			f->addr = sp->base;
		}
	}
	st->nspans = kept;
}

/* A goroutine stack (8 KiB, in a 4-page manual span) born or gone. */
static void stack_event(struct stream *st)
{
	uint32_t tid = 1000 + (uint32_t)rnd(st, THREADS);
	size_t i = rnd(st, LIVE_STACKS);

	if (st->stacks[i]) {
		struct taf_rec_addr *f = put(st, sizeof(*f),
					     TAF_REC_STACK_FREE, tid);

		f->addr = st->stacks[i];
		st->stacks[i] = 0;
		return;
	}
	if (!st->stack_span || st->stack_span_used == 4) {
		struct taf_rec_span_alloc *r = put(st, sizeof(*r),
						   TAF_REC_SPAN_ALLOC, tid);

		st->stack_span = st->next_page;
		st->stack_span_used = 0;
		st->next_page += 4 * GO_PAGE_SIZE;
		r->base = st->stack_span;
		r->npages = 4;
		r->alloc_type = 1;
	}
	{
		struct taf_rec_stack_alloc *r = put(st, sizeof(*r),
						    TAF_REC_STACK_ALLOC, tid);

		r->lo = st->stack_span + st->stack_span_used++ * 8192;
		r->hi = r->lo + 8192;
		st->stacks[i] = r->lo;
	}
}

static void build_stream(struct stream *st, uint64_t allocs)
{
	uint64_t i;

	for (i = 1; i <= allocs; i++) {
		alloc_one(st);
		if (i % STACK_EVERY == 0)
			stack_event(st);
		if (i % GC_EVERY == 0)
			gc(st);
	}
}

static int find_types(struct stream *st, const struct go_binary *bin)
{
	struct go_type_reader r;
	int k, rc;

	rc = go_types_init(&r, bin, 0, NULL, NULL);
	if (rc)
		return rc;
	for (k = 0; k < K_COUNT; k++) {
		uint64_t off;

		st->class_of[k] = size_class(kinds[k].class_size);
		if (!kinds[k].type)
			continue;
		if (go_dwarf_runtime_type_off(go_binary_dwarf(bin), kinds[k].type, &off)) {
			fprintf(stderr, "no type %s in the binary's DWARF\n",
				kinds[k].type);
			return -ENOENT;
		}
		st->type_addr[k] = r.types + off;
	}
	return 0;
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[4096];

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	uint64_t allocs = argc > 2 ? strtoull(argv[2], NULL, 0) : 4000000;
	unsigned sample = argc > 3 ? (unsigned)atoi(argv[3]) : 1;
	char tmpdir[] = "/tmp/bench_daemon.XXXXXX", err[256];
	const char *keep = getenv("BENCH_DAEMON_OUT");
	char *dir = keep && *keep ? (char *)keep : tmpdir;
	const char *rotate = getenv("BENCH_DAEMON_ROTATE");
	struct session_opts so = {
		.dir = dir, .sample = sample,
		.rotate_size = rotate ? strtoull(rotate, NULL, 0) : 0,
		.gen_size = SESSION_GEN_SIZE_DEFAULT,  /* the daemon's */
	};
	struct stream st = { .next_page = HEAP_BASE, .ts = 1000000000ull,
			     .rng = 0x9e3779b97f4a7c15ull };
	struct trace_sink_stats ss;
	struct go_binary *bin;
	struct session *s;
	struct target tg;
	const char *gen_env = getenv("BENCH_DAEMON_GEN_NS");
	uint64_t gen_ns = gen_env ? strtoull(gen_env, NULL, 0) : 1000000000ull;
	uint64_t next_cut, records;
	double t0, t1;
	size_t off;

	if (argc < 2) {
		fprintf(stderr, "usage: %s GO_BINARY [ALLOCS] [SAMPLE]\n",
			argv[0]);
		return 2;
	}
	if (go_binary_open(argv[1], &bin, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", argv[1], err);
		return 1;
	}
	if (find_types(&st, bin))
		return 1;
	build_stream(&st, allocs);
	if (dir == tmpdir && !mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	/* A process that has exited: types are read from the file. */
	target_init_gone(&tg, 4242, "bench", 0, 0);
	if (session_start(&s, &tg, bin, 0, &so, err, sizeof(err))) {
		fprintf(stderr, "session: %s\n", err);
		return 1;
	}
	session_begin(s, 1);

	t0 = cpu_s();
	next_cut = 1000000000ull + gen_ns;
	for (off = 0; off < st.len;) {
		const struct taf_rec_hdr *h = (const void *)(st.buf + off);
		struct record_view v;

		if (h->ts >= next_cut) {
			session_cut(s);
			next_cut += gen_ns;
		}
		/* Decoded as the dispatcher does: part of the daemon's cost. */
		if (record_view_decode(h, h->len, &v) == 0)
			session_record(s, &v);
		off += h->len;
	}
	records = st.nrec;
	{
		uint64_t inconsistent = session_inconsistent(s);
		struct session_counts c;

		session_cut(s);
		t1 = cpu_s();
		c = *session_counts(s);
		session_sink_stats(s, &ss);
		session_finish(s);
		printf("records %llu (%.0f MB), events %llu in %llu generations, "
		       "%llu bytes, shadow-heap inconsistencies %llu\n",
		       (unsigned long long)records, st.len / 1e6,
		       (unsigned long long)c.events,
		       (unsigned long long)c.generations,
		       (unsigned long long)ss.bytes_written,
		       (unsigned long long)inconsistent);
		printf("cpu_s %.3f\n", t1 - t0);
		printf("records_per_s %.2fM\n", records / (t1 - t0) / 1e6);
		printf("events_per_s %.2fM\n", c.events / (t1 - t0) / 1e6);
		printf("ns_per_event %.1f\n", (t1 - t0) * 1e9 / c.events);
		printf("bytes_per_event %.2f\n",
		       (double)ss.bytes_written / c.events);
	}
	if (dir == tmpdir)
		remove_dir(dir);
	go_binary_close(bin);
	free(st.buf);
	free(st.spans);
	return 0;
}
