// SPDX-License-Identifier: BSD-3-Clause
/*
 * trace_reader.c - the AllocFree events of one Go execution trace, one
 * generation at a time, in timestamp order.
 *
 * Wire format (internal/trace/batch.go, generation.go, batchcursor.go):
 *
 *   file   := "go 1.NN trace\0\0\0" batch...
 *   batch  := EvEventBatch(1) gen M ts len data
 *           | EvExperimentalBatch(49) exp gen M ts len data
 *           | EvEndOfGeneration(52)                       (1.26+ only)
 *   event  := type-byte ts-delta arg...                   (uvarints)
 *
 * A generation is the run of batches that carry the same gen number (and,
 * from format 1.26, ends at EvEndOfGeneration).  Its structural batches
 * are told apart by their first data byte: strings (4), stacks (2) and CPU
 * samples (6) are skipped, the frequency (8; from format 1.25 inside a
 * sync batch, 50) is read.  Every other event batch is a thread's event
 * stream: the runtime puts the AllocFree events there among the
 * scheduling events (runtime/traceallocfree.go uses eventWriter), so those
 * are decoded by argument count and dropped.  Experimental batches of the
 * AllocFree experiment hold the info record (first byte 1) or type
 * records (first byte 0, runtime/tracetype.go).
 *
 * Batch data is never copied: the file is mapped and cursors point into it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_reader.h"
#include "format/trace_events.h"
#include "util/grow.h"
#include "util/u64_map.h"
#include "util/uvarint.h"

enum {
	AF_TYPES_BATCH = 0,
	AF_INFO_BATCH = 1,
	HEADER_LEN = 16,
	MAX_BATCH_DATA = 64 << 10,   /* tracev2.MaxBatchSize */
};

struct cursor {
	const uint8_t *p, *end;
	uint64_t ts;                 /* of the pending event */
	uint32_t order;              /* batch index: ties keep file order */
	struct trace_event ev;       /* pending AllocFree event */
};

struct trace_reader {
	const uint8_t *buf;
	size_t len, pos;             /* pos: next batch not yet taken */
	bool mapped;
	unsigned version;
	int err;                     /* sticky */
	char errmsg[160];

	struct trace_heap_info info;

	/* The loaded generation. */
	uint64_t gen, freq;
	uint64_t ns_per_tick;        /* 1e9 / freq when whole, else 0 */
	struct trace_type *types;
	size_t ntypes, types_cap;
	struct u64_map type_ids;     /* id + 1 -> index + 1 */
	struct cursor *curs;         /* one per event batch of the gen */
	size_t ncurs, curs_cap;
	/* The cursors with events left, a min-heap by (ts, order): swaps
	 * move pointers, not cursors. */
	struct cursor **heap;
	size_t nheap, heap_cap;
};

static int fail(struct trace_reader *r, size_t off, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(r->errmsg, sizeof(r->errmsg), "offset %zu: ", off);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(r->errmsg))
		vsnprintf(r->errmsg + n, sizeof(r->errmsg) - n, fmt, ap);
	va_end(ap);
	r->err = -EBADMSG;
	return r->err;
}

static int parse_header(struct trace_reader *r)
{
	unsigned v;

	if (r->len < HEADER_LEN || memcmp(r->buf, "go 1.", 5) ||
	    memcmp(r->buf + 7, " trace\0\0\0", 9) ||
	    r->buf[5] < '0' || r->buf[5] > '9' ||
	    r->buf[6] < '0' || r->buf[6] > '9')
		return fail(r, 0, "not a Go execution trace");
	v = (r->buf[5] - '0') * 10 + (r->buf[6] - '0');
	/* The formats this table of argument counts describes. */
	if (v != 22 && v != 23 && v != 25 && v != 26) {
		snprintf(r->errmsg, sizeof(r->errmsg),
			 "trace format go 1.%u is not supported (1.22-1.26)",
			 v);
		return r->err = -ENOTSUP;
	}
	r->version = v;
	r->pos = HEADER_LEN;
	return 0;
}

static int reader_new(const void *buf, size_t len, bool mapped,
		      struct trace_reader **out)
{
	struct trace_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->buf = buf;
	r->len = len;
	r->mapped = mapped;
	u64_map_init(&r->type_ids);
	*out = r;
	return 0;
}

int trace_reader_open_mem(const void *buf, size_t len,
			  struct trace_reader **out)
{
	int rc = reader_new(buf, len, false, out);

	if (rc)
		return rc;
	/* A bad header is reported by the first next_gen (with a message). */
	parse_header(*out);
	return 0;
}

int trace_reader_open(const char *path, struct trace_reader **out)
{
	struct stat st;
	void *m;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		rc = -errno;
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < HEADER_LEN) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -EBADMSG;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	rc = m == MAP_FAILED ? -errno : 0;
	close(fd);
	if (rc)
		return rc;
	rc = reader_new(m, (size_t)st.st_size, true, out);
	if (rc) {
		munmap(m, (size_t)st.st_size);
		return rc;
	}
	parse_header(*out);
	return 0;
}

void trace_reader_close(struct trace_reader *r)
{
	if (!r)
		return;
	if (r->mapped)
		munmap((void *)r->buf, r->len);
	free(r->types);
	free(r->curs);
	free(r->heap);
	u64_map_free(&r->type_ids);
	free(r);
}

unsigned trace_reader_version(const struct trace_reader *r)
{
	return r->version;
}

uint64_t trace_reader_gen(const struct trace_reader *r)
{
	return r->gen;
}

uint64_t trace_reader_freq(const struct trace_reader *r)
{
	return r->freq;
}

size_t trace_reader_ntypes(const struct trace_reader *r)
{
	return r->ntypes;
}

const struct trace_type *trace_reader_type_at(const struct trace_reader *r,
					      size_t i)
{
	return i < r->ntypes ? &r->types[i] : NULL;
}

const struct trace_type *trace_reader_type(const struct trace_reader *r,
					   uint64_t id)
{
	uint64_t idx;

	if (id == UINT64_MAX || !u64_map_get(&r->type_ids, id + 1, &idx))
		return NULL;
	return &r->types[idx - 1];
}

const struct trace_heap_info *trace_reader_info(const struct trace_reader *r)
{
	return &r->info;
}

const char *trace_reader_error(const struct trace_reader *r)
{
	return r->errmsg;
}

/* ---- structural batches ---- */

static int read_types(struct trace_reader *r, const uint8_t *p,
		      const uint8_t *end, size_t off)
{
	while (p < end) {
		struct trace_type t;
		uint64_t n;

		if (uvarint_get(&p, end, &t.id) || uvarint_get(&p, end, &t.addr) ||
		    uvarint_get(&p, end, &t.size) ||
		    uvarint_get(&p, end, &t.ptr_bytes) || uvarint_get(&p, end, &n) ||
		    n > (uint64_t)(end - p))
			return fail(r, off, "malformed type record");
		t.name = (const char *)p;
		t.name_len = (size_t)n;
		p += n;
		if (t.id == UINT64_MAX)
			return fail(r, off, "type ID out of range");
		if (u64_map_get(&r->type_ids, t.id + 1, NULL))
			continue; /* defined twice: the first one counts */
		if (!GROW(r->types, r->ntypes, r->types_cap, 64))
			return r->err = -ENOMEM;
		r->types[r->ntypes++] = t;
		if (u64_map_put(&r->type_ids, t.id + 1, r->ntypes))
			return r->err = -ENOMEM;
	}
	return 0;
}

static int read_info(struct trace_reader *r, const uint8_t *p,
		     const uint8_t *end, size_t off)
{
	struct trace_heap_info in = { .valid = true };

	if (uvarint_get(&p, end, &in.min_page_heap_addr) ||
	    uvarint_get(&p, end, &in.page_size) ||
	    uvarint_get(&p, end, &in.min_heap_align) ||
	    uvarint_get(&p, end, &in.fixed_stack))
		return fail(r, off, "malformed AllocFree info batch");
	if (!in.page_size || !in.min_heap_align || !in.fixed_stack)
		return fail(r, off, "zero unit in AllocFree info batch");
	r->info = in;
	return 0;
}

/* A lone frequency event (< 1.25) or a sync batch (1.25+). */
static int read_sync(struct trace_reader *r, const uint8_t *p,
		     const uint8_t *end, size_t off)
{
	if (r->version >= 25)
		p++; /* EvSync */
	while (p < end) {
		uint8_t ev = *p++;
		uint64_t v[4];
		int n = ev == TW_EV_FREQUENCY ? 1 :
			ev == TW_EV_CLOCK_SNAPSHOT && r->version >= 25 ? 4 : 0;

		if (!n)
			return fail(r, off, "unexpected event %u in sync batch",
				    ev);
		for (int i = 0; i < n; i++)
			if (uvarint_get(&p, end, &v[i]))
				return fail(r, off, "malformed sync batch");
		if (ev == TW_EV_FREQUENCY) {
			if (!v[0])
				return fail(r, off, "zero frequency");
			r->freq = v[0];
		}
	}
	return 0;
}

/* ---- event cursors ---- */

/* uvarint_get with the one-byte case (most deltas and small IDs) first. */
static inline int uv(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	if (*p < end && **p < 0x80) {
		*v = *(*p)++;
		return 0;
	}
	return uvarint_get(p, end, v);
}

/*
 * Moves C to its next AllocFree event.  Returns 1, 0 when the batch is
 * done, or a negative errno.
 */
static int cursor_advance(struct trace_reader *r, struct cursor *c)
{
	const uint8_t *p = c->p, *end = c->end;

	while (p < end) {
		const uint8_t *start = p;
		uint8_t type = *p++;
		uint64_t d, a;
		const struct tw_event_spec *spec;
		int n, i;

		/*
		 * The AllocFree events, nearly all of an event batch: their
		 * argument count without the spec's checks.  (Decoding a
		 * uvarint from one 8-byte load with masks, no branch, was
		 * slower: each event's position then waits on the last
		 * one's decoding, where predicted branches run ahead.)
		 */
		if (type >= TW_EV_FIRST && type <= TW_EV_LAST) {
			uint64_t args[3] = { 0, 0, 0 };

			n = tw_events[type].nargs;
			if (uv(&p, end, &d))
				goto bad;
			if (c->ts + d < c->ts)
				return fail(r, (size_t)(start - r->buf),
					    "timestamp overflows 64 bits");
			for (i = 0; i < n - 1; i++)
				if (uv(&p, end, &args[i]))
					goto bad;
			c->ts += d;
			c->ev.args[0] = args[0];
			c->ev.args[1] = args[1];
			c->ev.args[2] = args[2];
			c->ev.kind = type;
			c->ev.ticks = c->ts;
			c->p = p;
			return 1;
		}
		spec = tw_event_spec(type);
		/* Arguments, timestamp included; 0: not in an event batch
		 * (nor, before format 1.25, anything past Go 1.23's last). */
		n = spec && spec->timed ? spec->nargs : 0;
		if (type > TW_EV_GO_STATUS_STACK && r->version < 25)
			n = 0;
		if (!n) {
			c->p = p;
			return fail(r, (size_t)(start - r->buf),
				    "event type %u in an event batch", type);
		}
		if (uv(&p, end, &d))
			goto bad;
		if (c->ts + d < c->ts)
			return fail(r, (size_t)(start - r->buf),
				    "timestamp overflows 64 bits");
		c->ts += d;
		/* Another event of the thread's stream: skipped. */
		for (i = 0; i < n - 1; i++)
			if (uv(&p, end, &a))
				goto bad;
		continue;
bad:
		c->p = p;
		return fail(r, (size_t)(start - r->buf),
			    "truncated event of type %u", type);
	}
	c->p = p;
	return 0;
}

static bool cur_less(const struct cursor *a, const struct cursor *b)
{
	return a->ts != b->ts ? a->ts < b->ts : a->order < b->order;
}

static void sift_down(struct cursor **h, size_t n, size_t i)
{
	struct cursor *t = h[i];

	for (;;) {
		size_t l = 2 * i + 1, m;

		if (l >= n)
			break;
		m = l + 1 < n && cur_less(h[l + 1], h[l]) ? l + 1 : l;
		if (!cur_less(h[m], t))
			break;
		h[i] = h[m];
		i = m;
	}
	h[i] = t;
}

static int add_cursor(struct trace_reader *r, const uint8_t *data,
		      size_t len, uint64_t ts)
{
	struct cursor *c;

	if (!GROW(r->curs, r->ncurs, r->curs_cap, 64))
		return r->err = -ENOMEM;
	c = &r->curs[r->ncurs];
	memset(c, 0, sizeof(*c));
	c->p = data;
	c->end = data + len;
	c->ts = ts;
	c->order = (uint32_t)r->ncurs;
	r->ncurs++;
	return 0;
}

/* ---- generations ---- */

static void reset_gen(struct trace_reader *r)
{
	r->gen = 0;
	r->freq = 0;
	r->ntypes = 0;
	r->ncurs = 0;
	r->nheap = 0;
	u64_map_free(&r->type_ids);
}

/* Takes one batch at r->pos into the generation.  1: taken, 0: not ours. */
static int take_batch(struct trace_reader *r, bool first)
{
	const uint8_t *p = r->buf + r->pos, *end = r->buf + r->len, *data;
	size_t off = r->pos;
	uint64_t gen, m, ts, len;
	int exp = 0, rc = 0;
	uint8_t kind = *p++;

	if (kind == TW_EV_EXPERIMENTAL_BATCH) {
		if (p == end)
			return fail(r, off, "truncated batch header");
		exp = *p++;
	} else if (kind != TW_EV_EVENT_BATCH) {
		return fail(r, off, "expected a batch, found byte %u", kind);
	}
	if (uvarint_get(&p, end, &gen) || uvarint_get(&p, end, &m) ||
	    uvarint_get(&p, end, &ts) || uvarint_get(&p, end, &len))
		return fail(r, off, "truncated batch header");
	if (len > MAX_BATCH_DATA)
		return fail(r, off, "batch of %llu bytes (at most 64 KiB)",
			    (unsigned long long)len);
	if (len > (uint64_t)(end - p))
		return fail(r, off, "truncated batch (%llu bytes, %zu left)",
			    (unsigned long long)len, (size_t)(end - p));
	if (!first && gen != r->gen)
		return 0;
	r->gen = gen;
	data = p;
	r->pos = (size_t)(p + len - r->buf);
	if (exp) {
		if (exp != TW_EXP_ALLOC_FREE || !len)
			return 1;
		if (data[0] == AF_TYPES_BATCH)
			rc = read_types(r, data + 1, data + len, off);
		else if (data[0] == AF_INFO_BATCH)
			rc = read_info(r, data + 1, data + len, off);
		return rc ? rc : 1;
	}
	if (!len)
		return 1;
	switch (data[0]) {
	case TW_EV_STACKS:
	case TW_EV_STRINGS:
	case TW_EV_CPU_SAMPLES:
		return 1;
	case TW_EV_FREQUENCY:
		if (r->version < 25)
			rc = read_sync(r, data, data + len, off);
		break;
	case TW_EV_SYNC:
		if (r->version >= 25) {
			rc = read_sync(r, data, data + len, off);
			break;
		}
		/* fall through */
	default:
		rc = add_cursor(r, data, (size_t)len, ts);
	}
	return rc ? rc : 1;
}

int trace_reader_next_gen(struct trace_reader *r)
{
	bool first = true;
	size_t i;
	int rc;

	if (r->err)
		return r->err;
	reset_gen(r);
	/*
	 * What the generations before took is never read again: handing its
	 * pages back keeps a reader's memory at a generation's worth, not a
	 * file's (the file stays in the page cache).
	 */
	if (r->mapped && r->pos >= (2u << 20)) {
		size_t done = r->pos & ~(size_t)((1u << 20) - 1);

		madvise((void *)r->buf, done, MADV_DONTNEED);
	}
	while (r->pos < r->len) {
		if (r->buf[r->pos] == TW_EV_END_OF_GENERATION &&
		    r->version >= 26) {
			r->pos++;
			if (!first)
				break;
			continue;
		}
		rc = take_batch(r, first);
		if (rc < 0)
			return rc;
		if (!rc)
			break;
		first = false;
	}
	if (first)
		return 0;
	if (r->ncurs && !r->freq)
		return fail(r, r->pos, "generation %llu has no frequency",
			    (unsigned long long)r->gen);
	r->ns_per_tick = r->freq && r->freq <= 1000000000u &&
			 1000000000u % r->freq == 0 ? 1000000000u / r->freq : 0;
	/* Prime every cursor, keep those with events, then heapify. */
	if (r->ncurs > r->heap_cap) {
		void *n = realloc(r->heap, r->ncurs * sizeof(*r->heap));

		if (!n)
			return r->err = -ENOMEM;
		r->heap = n;
		r->heap_cap = r->ncurs;
	}
	r->nheap = 0;
	for (i = 0; i < r->ncurs; i++) {
		rc = cursor_advance(r, &r->curs[i]);
		if (rc < 0)
			return rc;
		if (rc)
			r->heap[r->nheap++] = &r->curs[i];
	}
	for (i = r->nheap / 2; i-- > 0;)
		sift_down(r->heap, r->nheap, i);
	return 1;
}

/*
 * ns = ticks * 1e9 / freq without overflow for any 64-bit ticks.  A
 * 128-bit division per event was 3% of `report`; the clocks in use tick
 * in whole nanoseconds (ours: 1e9/s; the runtime's: 64 ns, 15625000/s),
 * which a multiplication does exactly.
 */
static inline uint64_t ticks_ns(const struct trace_reader *r, uint64_t t)
{
	if (r->ns_per_tick && t <= UINT64_MAX / r->ns_per_tick)
		return t * r->ns_per_tick;
	return (uint64_t)((unsigned __int128)t * 1000000000u / r->freq);
}

int trace_reader_next_event(struct trace_reader *r, struct trace_event *e)
{
	struct cursor *c;
	int rc;

	if (r->err)
		return r->err;
	if (!r->nheap)
		return 0;
	c = r->heap[0];
	*e = c->ev;
	e->gen = r->gen;
	e->ns = ticks_ns(r, e->ticks);
	rc = cursor_advance(r, c);
	if (rc < 0)
		return rc;
	if (!rc)
		r->heap[0] = r->heap[--r->nheap];
	/* Two batches left, taking turns: a compare, not a sift. */
	if (r->nheap == 2) {
		struct cursor *t = r->heap[0];

		if (cur_less(r->heap[1], t)) {
			r->heap[0] = r->heap[1];
			r->heap[1] = t;
		}
	} else if (r->nheap > 2) {
		sift_down(r->heap, r->nheap, 0);
	}
	return 1;
}
