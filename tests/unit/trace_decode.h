/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * trace_decode.h - a small, independent reader of what trace_writer.c
 * writes, for tests: batches, events, AllocFree info and type records.
 * Written from the parser's side (internal/trace/batch.go, batchcursor.go),
 * not from the encoder, so the two can disagree and a test notices.
 */
#ifndef TRACE_DECODE_H
#define TRACE_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TD_EV_EVENT_BATCH 1
#define TD_EV_FREQUENCY 8
#define TD_EV_EXPERIMENTAL_BATCH 49
#define TD_MAX_BATCH_DATA (64u << 10)

struct td_batch {
	int exp;                /* 0 for EvEventBatch, else the experiment */
	uint64_t gen, m, ts;
	const uint8_t *data;
	size_t len;             /* data bytes (what the size field says) */
	size_t total;           /* header and data */
};

struct td_event {
	uint8_t type;
	uint64_t ts;            /* absolute, from the batch's base */
	uint64_t args[3];
	unsigned nargs;
};

/* Reads a uvarint like encoding/binary.Uvarint.  Returns 0 or -1. */
static inline int td_uvarint(const uint8_t **p, const uint8_t *end,
			     uint64_t *v)
{
	uint64_t x = 0;
	unsigned s = 0, i;

	for (i = 0; i < 10 && *p < end; i++) {
		uint8_t b = *(*p)++;

		if (b < 0x80) {
			if (i == 9 && b > 1)
				return -1;
			*v = x | (uint64_t)b << s;
			return 0;
		}
		x |= (uint64_t)(b & 0x7f) << s;
		s += 7;
	}
	return -1;
}

/* Reads one batch.  Returns 1, 0 at the end, -1 if malformed. */
static inline int td_next_batch(const uint8_t **p, const uint8_t *end,
				struct td_batch *b)
{
	const uint8_t *start = *p;
	uint64_t len;

	if (*p == end)
		return 0;
	memset(b, 0, sizeof(*b));
	if (**p == TD_EV_EXPERIMENTAL_BATCH) {
		(*p)++;
		if (*p == end)
			return -1;
		b->exp = *(*p)++;
	} else if (**p == TD_EV_EVENT_BATCH) {
		(*p)++;
	} else {
		return -1;
	}
	if (td_uvarint(p, end, &b->gen) || td_uvarint(p, end, &b->m) ||
	    td_uvarint(p, end, &b->ts) || td_uvarint(p, end, &len))
		return -1;
	if (len > TD_MAX_BATCH_DATA || len > (uint64_t)(end - *p))
		return -1;
	b->data = *p;
	b->len = (size_t)len;
	*p += len;
	b->total = (size_t)(*p - start);
	return 1;
}

/* Arguments after the timestamp of AllocFree event `type`, or -1. */
static inline int td_nargs(uint8_t type)
{
	static const int n[] = { 3, 3, 1, 2, 2, 1, 2, 2, 1 };

	if (type < 128 || type > 136)
		return -1;
	return n[type - 128];
}

/*
 * Reads the next event of an event batch; *ts carries the previous
 * event's timestamp (start with the batch's base ts).  Returns 1, 0 at the
 * end, -1 if malformed.
 */
static inline int td_next_event(const uint8_t **p, const uint8_t *end,
				uint64_t *ts, struct td_event *e)
{
	uint64_t d;
	int n, i;

	if (*p == end)
		return 0;
	memset(e, 0, sizeof(*e));
	e->type = *(*p)++;
	n = td_nargs(e->type);
	if (n < 0 || td_uvarint(p, end, &d))
		return -1;
	*ts += d;
	e->ts = *ts;
	for (i = 0; i < n; i++)
		if (td_uvarint(p, end, &e->args[i]))
			return -1;
	e->nargs = (unsigned)n;
	return 1;
}

struct td_type {
	uint64_t id, addr, size, ptr_bytes;
	const char *name;
	size_t name_len;
};

/*
 * Reads the next record of an AllocFree types batch (data after its first
 * byte).  Returns 1, 0 at the end, -1 if malformed.
 */
static inline int td_next_type(const uint8_t **p, const uint8_t *end,
			       struct td_type *t)
{
	uint64_t n;

	if (*p == end)
		return 0;
	if (td_uvarint(p, end, &t->id) || td_uvarint(p, end, &t->addr) ||
	    td_uvarint(p, end, &t->size) ||
	    td_uvarint(p, end, &t->ptr_bytes) || td_uvarint(p, end, &n) ||
	    n > (uint64_t)(end - *p))
		return -1;
	t->name = (const char *)*p;
	t->name_len = (size_t)n;
	*p += n;
	return 1;
}

#endif /* TRACE_DECODE_H */
