// SPDX-License-Identifier: BSD-3-Clause
/*
 * trace_writer.c - one generation of a "go 1.23 trace" carrying the
 * AllocFree experiment, encoded the way the Go runtime writes it.
 *
 * Wire format (runtime/tracebuf.go, runtime/traceevent.go; read back by
 * internal/trace/batch.go and batchcursor.go):
 *
 *   batch  := EvEventBatch(1) gen M ts len data
 *           | EvExperimentalBatch(49) exp gen M ts len data
 *   event  := type-byte ts-delta arg...        (all numbers uvarint)
 *
 * An event's timestamp is a delta from the previous event of the same
 * batch, the first one's from the batch's base ts.  The parser refuses a
 * batch whose data is longer than MaxBatchSize (64 KiB); the runtime's
 * traceBuf keeps header and data together below 64 KiB, and so do we.
 *
 * Per generation the parsers need: event batches (per M, M must not be
 * 2^64-1), exactly one frequency batch, and, for the AllocFree events, the
 * experiment's info batch and type batches.  String and stack tables may be
 * absent: AllocFree events carry no string or stack IDs.
 *
 * Like the runtime's tracer (runtime/tracebuf.go traceBufFlush), a
 * thread's batch goes out as soon as it is full, and what belongs to the
 * whole generation (the frequency batch, the info batch, the type table:
 * runtime/trace.go traceAdvance dumps its tables the same way) goes out
 * at its end, after the batches still being filled.  The parsers read a
 * generation whole before they use it, so the order of its batches
 * matters only within one thread.  A generation so holds at most one
 * batch per thread in memory, whatever its size; without an output
 * (tw_gen_encode) the batches collect in one buffer instead.  Nothing is
 * allocated per event: buffers grow by doubling.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace_writer.h"
#include "format/type_catalog.h"
#include "util/grow.h"
#include "util/u64_map.h"
#include "util/uvarint.h"

enum {
	/* runtime/traceallocfree.go: first data byte of an AllocFree batch. */
	ALLOC_FREE_TYPES_BATCH = 0,
	ALLOC_FREE_INFO_BATCH = 1,
};

#define VARINT_MAX 10                    /* bytes of a uvarint'd uint64 */
#define BATCH_MAX (64u << 10)            /* MaxBatchSize */
/* Batch header: type, experiment, gen, M, ts, length. */
#define BATCH_HDR_MAX (2 + 4 * VARINT_MAX)
/* Data of one batch, so that header + data <= BATCH_MAX. */
#define BATCH_DATA_MAX (BATCH_MAX - BATCH_HDR_MAX)
/* An event: type byte, ts delta, up to three arguments. */
#define EVENT_MAX (1 + 4 * VARINT_MAX)
/* Longest type name kept: a type record must fit in one batch. */
#define TYPE_NAME_MAX 4096
#define TYPE_RECORD_MAX (5 * VARINT_MAX + TYPE_NAME_MAX)

/*
 * One thread's batch being filled.  buf keeps BATCH_HDR_MAX bytes free in
 * front of the data, so that the header goes there and the batch leaves
 * in one write.
 */
struct tw_thread {
	uint64_t id;
	uint64_t last_ts;            /* of this thread's last event */
	uint64_t base_ts;            /* of its batch: the first event's */
	uint8_t *buf;
	size_t len, cap;             /* len: data bytes after the header room */
};

struct tw_gen {
	uint64_t gen, freq, ts_floor;
	struct tw_heap_info info;

	struct tw_thread *threads;   /* in order of first event */
	size_t nthreads, threads_cap;
	struct u64_map thread_index; /* thread ID + 1 -> index */
	size_t last_thread;          /* cache: bursts come from one thread */

	/* The types this generation defines: the session's catalogue
	 * (tw_gen_use_types) or, for a writer used alone, one of its own. */
	struct type_catalog *types;
	struct type_catalog own_types;
	uint64_t types_mark;         /* the catalogue's generation: ours */

	tw_write_fn write;           /* where whole batches go */
	void *write_ctx;
	int write_err;               /* the first failed write's */
	bool finished;
	uint8_t *mem;                /* without an output: what was written */
	size_t mem_len, mem_cap;

	uint64_t nevents;
	uint64_t min_ts, max_ts;
	uint64_t last_event_ts;      /* as written: tw_gen_last_event_ts */
	size_t data_bytes;           /* sum of thread buffers */
};

static int mem_write(void *ctx, const uint8_t *buf, size_t len);

struct tw_gen *tw_gen_new(uint64_t gen, uint64_t freq,
			  const struct tw_heap_info *info, uint64_t ts_floor)
{
	struct tw_gen *g;

	if (gen == 0 || freq == 0 || !info) {
		/* gen 0 is the runtime's sentinel; the parsers refuse it. */
		errno = EINVAL;
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->gen = gen;
	g->freq = freq;
	g->info = *info;
	g->ts_floor = ts_floor;
	g->write = mem_write;
	g->write_ctx = g;
	type_catalog_init(&g->own_types);
	tw_gen_use_types(g, &g->own_types);
	return g;
}

void tw_gen_use_types(struct tw_gen *g, struct type_catalog *cat)
{
	g->types = cat;
	type_catalog_begin_gen(cat);
	g->types_mark = cat->gen_mark;
}

/* The catalogue, NULL when another generation has started in it since. */
static struct type_catalog *gen_types(const struct tw_gen *g)
{
	return g->types->gen_mark == g->types_mark ? g->types : NULL;
}

/* Type IDs 1 .. this are defined in the generation. */
static uint64_t gen_type_count(const struct tw_gen *g)
{
	const struct type_catalog *c = gen_types(g);

	return c ? c->ngen : 0;
}

void tw_gen_free(struct tw_gen *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->nthreads; i++)
		free(g->threads[i].buf);
	free(g->mem);
	free(g->threads);
	u64_map_free(&g->thread_index);
	type_catalog_free(&g->own_types);
	free(g);
}

static struct tw_thread *thread_get(struct tw_gen *g, uint64_t id)
{
	struct tw_thread *t;
	uint64_t i;

	if (g->nthreads && g->threads[g->last_thread].id == id)
		return &g->threads[g->last_thread];
	/* + 1: thread 0 is a valid M, key 0 is the map's empty slot. */
	if (!u64_map_get(&g->thread_index, id + 1, &i)) {
		if (grow_to(&g->threads, &g->threads_cap, g->nthreads + 1,
			    sizeof(*g->threads), 16))
			return NULL;
		if (u64_map_put(&g->thread_index, id + 1, g->nthreads))
			return NULL;
		i = g->nthreads++;
		t = &g->threads[i];
		memset(t, 0, sizeof(*t));
		t->id = id;
		t->last_ts = g->ts_floor;
	}
	g->last_thread = (size_t)i;
	return &g->threads[i];
}

/* Writes a batch header; data of data_len bytes must follow. */
static uint8_t *put_batch_header(uint8_t *p, int exp, uint64_t gen,
				 uint64_t m, uint64_t ts, size_t data_len)
{
	if (exp) {
		*p++ = TW_EV_EXPERIMENTAL_BATCH;
		*p++ = (uint8_t)exp;
	} else {
		*p++ = TW_EV_EVENT_BATCH;
	}
	p = uvarint_put(p, gen);
	p = uvarint_put(p, m);
	p = uvarint_put(p, ts);
	return uvarint_put(p, data_len);
}

/* Without an output the generation's bytes collect in g->mem. */
static int mem_write(void *ctx, const uint8_t *buf, size_t len)
{
	struct tw_gen *g = ctx;

	if (grow_to(&g->mem, &g->mem_cap, g->mem_len + len, 1, BATCH_MAX))
		return -ENOMEM;
	memcpy(g->mem + g->mem_len, buf, len);
	g->mem_len += len;
	return 0;
}

/*
 * Hands a whole batch to the output.  After a failed write nothing more
 * is written (the output cut its file back): the generation is lost, and
 * tw_gen_finish says so.
 */
static void emit(struct tw_gen *g, const uint8_t *buf, size_t len)
{
	if (!g->write_err)
		g->write_err = g->write(g->write_ctx, buf, len);
}

/* Sends t's batch, if it holds anything, and starts an empty one. */
static void thread_flush(struct tw_gen *g, struct tw_thread *t)
{
	uint8_t hdr[BATCH_HDR_MAX], *start;
	size_t hlen;

	if (!t->len)
		return;
	hlen = (size_t)(put_batch_header(hdr, 0, g->gen, t->id, t->base_ts,
					 t->len) - hdr);
	/* The header goes right before the data: one write a batch. */
	start = t->buf + BATCH_HDR_MAX - hlen;
	memcpy(start, hdr, hlen);
	emit(g, start, hlen + t->len);
	t->len = 0;
}

/* Makes room for one more event in t's batch, sending it when full. */
static int thread_reserve(struct tw_gen *g, struct tw_thread *t, uint64_t ts)
{
	if (t->len + EVENT_MAX > BATCH_DATA_MAX)
		thread_flush(g, t);
	if (!t->len)
		/* The first event's delta is then 0. */
		t->base_ts = ts;
	/* Grows to BATCH_MAX at most: a thread's batch is all it keeps. */
	if (BATCH_HDR_MAX + t->len + EVENT_MAX > t->cap &&
	    grow_to(&t->buf, &t->cap, BATCH_HDR_MAX + t->len + EVENT_MAX, 1,
		    1024))
		return -ENOMEM;
	return 0;
}

int tw_gen_event(struct tw_gen *g, uint64_t thread, enum tw_event ev,
		 uint64_t ts, uint64_t a, uint64_t b, uint64_t c)
{
	struct tw_thread *t;
	uint8_t *p, *start;
	unsigned nargs;
	uint64_t prev;

	if (ev < TW_EV_FIRST || ev > TW_EV_LAST || g->finished)
		return -EINVAL;
	/* NoThread (2^64-1) makes the parsers refuse the batch. */
	if (thread == UINT64_MAX)
		return -EINVAL;
	/* A type ID must be defined in the generation that uses it. */
	if ((ev == TW_EV_HEAP_OBJECT || ev == TW_EV_HEAP_OBJECT_ALLOC) &&
	    b > gen_type_count(g))
		return -EINVAL;
	t = thread_get(g, thread);
	if (!t)
		return -ENOMEM;

	/* Time never goes back, neither per thread nor below the floor. */
	if (ts < t->last_ts)
		ts = t->last_ts;
	if (thread_reserve(g, t, ts))
		return -ENOMEM;
	prev = t->len ? t->last_ts : t->base_ts;

	start = p = t->buf + BATCH_HDR_MAX + t->len;
	*p++ = (uint8_t)ev;
	p = uvarint_put(p, ts - prev);
	nargs = tw_events[ev].nargs - 1u; /* after the timestamp */
	p = uvarint_put(p, a);
	if (nargs > 1)
		p = uvarint_put(p, b);
	if (nargs > 2)
		p = uvarint_put(p, c);
	t->len += (size_t)(p - start);
	g->data_bytes += (size_t)(p - start);
	t->last_ts = ts;
	g->last_event_ts = ts;

	if (!g->nevents || ts < g->min_ts)
		g->min_ts = ts;
	if (ts > g->max_ts)
		g->max_ts = ts;
	g->nevents++;
	return 0;
}

uint64_t tw_gen_type_id(const struct tw_gen *g, uint64_t addr)
{
	const struct type_catalog *c = gen_types(g);

	if (!addr || !c)
		return 0;
	return type_catalog_gen_id_of(c, type_catalog_find(c, addr));
}

uint64_t tw_gen_define_type(struct tw_gen *g, uint64_t addr, uint64_t size,
			    uint64_t ptr_bytes, const char *name,
			    size_t name_len)
{
	struct type_catalog *c = gen_types(g);

	/* Like runtime/tracetype.go: a nil type has no ID (0). */
	if (!addr || !c)
		return 0;
	return type_catalog_gen_id(c, type_catalog_intern(c, addr, size,
				   ptr_bytes, name, name_len));
}

uint64_t tw_gen_type(struct tw_gen *g, uint32_t ref)
{
	struct type_catalog *c = gen_types(g);

	return c ? type_catalog_gen_id(c, ref) : 0;
}

uint64_t tw_gen_events(const struct tw_gen *g)
{
	return g->nevents;
}

uint64_t tw_gen_last_event_ts(const struct tw_gen *g)
{
	return g->last_event_ts;
}

uint64_t tw_gen_last_ts(const struct tw_gen *g)
{
	return g->nevents ? g->max_ts : g->ts_floor;
}

size_t tw_gen_event_bytes(const struct tw_gen *g)
{
	return g->data_bytes;
}

/* A type record must fit in one batch: longer names are cut. */
static size_t type_name_len(const struct type_entry *e)
{
	return e->name_len < TYPE_NAME_MAX ? e->name_len : TYPE_NAME_MAX;
}

static size_t type_record_len(const struct type_entry *e, uint64_t id)
{
	size_t n = type_name_len(e);

	return uvarint_len(id) + uvarint_len(e->key) + uvarint_len(e->size) +
	       uvarint_len(e->ptr_bytes) + uvarint_len(n) + n;
}

/* Writes the generation's types, in ID order, as AllocFree types batches. */
static void put_type_batches(struct tw_gen *g, uint64_t ts)
{
	/* Like the runtime, side batches belong to no thread. */
	const uint64_t m = UINT64_MAX;
	const struct type_catalog *c = gen_types(g);
	uint8_t *buf, *p;
	size_t data;
	uint64_t id = 1, j;

	if (!c) {
		/* Another generation took the catalogue: these IDs are gone. */
		if (!g->write_err)
			g->write_err = -EBUSY;
		return;
	}
	if (!c->ngen)
		return;
	buf = malloc(BATCH_MAX);
	if (!buf) {
		if (!g->write_err)
			g->write_err = -ENOMEM;
		return;
	}
	while (id <= c->ngen) {
		/* Take as many records as fit. */
		data = 1;
		for (j = id; j <= c->ngen; j++) {
			size_t r = type_record_len(type_catalog_gen_entry(c, j), j);

			if (data + r > BATCH_DATA_MAX)
				break;
			data += r;
		}
		p = put_batch_header(buf, TW_EXP_ALLOC_FREE, g->gen, m, ts,
				     data);
		*p++ = ALLOC_FREE_TYPES_BATCH;
		for (; id < j; id++) {
			const struct type_entry *e = type_catalog_gen_entry(c, id);
			size_t n = type_name_len(e);

			p = uvarint_put(p, id);
			p = uvarint_put(p, e->key);
			p = uvarint_put(p, e->size);
			p = uvarint_put(p, e->ptr_bytes);
			p = uvarint_put(p, n);
			if (n)
				memcpy(p, type_catalog_name(c, e), n);
			p += n;
		}
		emit(g, buf, (size_t)(p - buf));
	}
	free(buf);
}

void tw_gen_stream(struct tw_gen *g, tw_write_fn write, void *ctx)
{
	g->write = write;
	g->write_ctx = ctx;
}

int tw_gen_finish(struct tw_gen *g)
{
	const uint64_t m = UINT64_MAX;
	uint8_t tmp[BATCH_HDR_MAX + 1 + 4 * VARINT_MAX], data[1 + 4 * VARINT_MAX];
	uint8_t *p, *q;
	uint64_t ts;
	size_t i;

	if (g->finished)
		return g->write_err;
	g->finished = true;
	/* Go 1.23/1.24 refuse a generation without events. */
	if (!g->nevents)
		return g->write_err;
	/* The batches still being filled, each thread's last. */
	for (i = 0; i < g->nthreads; i++)
		thread_flush(g, &g->threads[i]);
	/*
	 * Side batches carry the generation's first timestamp: 1.25+ parsers
	 * take the smallest batch time as the time of the generation's Sync.
	 */
	ts = g->min_ts;

	/* runtime/tracetime.go traceFrequency: a lone EvFrequency. */
	q = data;
	*q++ = TW_EV_FREQUENCY;
	q = uvarint_put(q, g->freq);
	p = put_batch_header(tmp, 0, g->gen, m, ts, (size_t)(q - data));
	memcpy(p, data, (size_t)(q - data));
	emit(g, tmp, (size_t)(p - tmp) + (size_t)(q - data));

	/* runtime/traceallocfree.go traceSnapshotMemory: the info batch. */
	q = data;
	*q++ = ALLOC_FREE_INFO_BATCH;
	q = uvarint_put(q, g->info.min_page_heap_addr);
	q = uvarint_put(q, g->info.page_size);
	q = uvarint_put(q, g->info.min_heap_align);
	q = uvarint_put(q, g->info.fixed_stack);
	p = put_batch_header(tmp, TW_EXP_ALLOC_FREE, g->gen, m, ts,
			     (size_t)(q - data));
	memcpy(p, data, (size_t)(q - data));
	emit(g, tmp, (size_t)(p - tmp) + (size_t)(q - data));

	put_type_batches(g, ts);
	return g->write_err;
}

int tw_gen_encode(struct tw_gen *g, uint8_t **buf, size_t *len)
{
	int rc;

	*buf = NULL;
	*len = 0;
	if (g->write != mem_write)
		return -EINVAL;
	rc = tw_gen_finish(g);
	if (rc)
		return rc;
	*buf = g->mem;
	*len = g->mem_len;
	g->mem = NULL;
	g->mem_len = g->mem_cap = 0;
	return 0;
}
