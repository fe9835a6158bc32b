// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_trace_decode - the tests' own trace reader (tests/unit/
 * trace_decode.h) on arbitrary bytes: it judges the encoder's output in
 * the unit tests, so it must not crash or read out of bounds on any input,
 * and must keep its own promises (a batch is what it says it is, events
 * and records stay inside their batch).
 *
 * Input: a trace file (the 16-byte header is skipped when present).
 * Seeds: files the tracer wrote (traced knownalloc), cut at batch
 * boundaries, and generations encoded by trace_writer (gen_seeds.py).
 */
#include "fuzz_common.h"
#include "trace_decode.h"
#include "format/trace_writer.h"

static void walk_batch(const struct td_batch *b)
{
	const uint8_t *q = b->data, *end = b->data + b->len;
	uint64_t v, ts = b->ts;
	struct td_event e;
	struct td_type t;
	int r, i;

	if (b->len == 0)
		return;
	if (b->exp == 1 && b->data[0] == 1) {        /* AllocFree info */
		q++;
		for (i = 0; i < 4 && td_uvarint(&q, end, &v) == 0; i++)
			;
		FUZZ_CHECK(q <= end);
	} else if (b->exp == 1 && b->data[0] == 0) { /* AllocFree types */
		q++;
		while ((r = td_next_type(&q, end, &t)) == 1) {
			FUZZ_CHECK((const uint8_t *)t.name >= b->data &&
				   (const uint8_t *)t.name + t.name_len <= end);
			FUZZ_CHECK(q <= end);
		}
		FUZZ_CHECK(r == 0 || r == -1);
	} else if (b->exp == 0 && b->data[0] == TD_EV_FREQUENCY) {
		q++;
		(void)td_uvarint(&q, end, &v);
		FUZZ_CHECK(q <= end);
	} else if (b->exp == 0) {
		while ((r = td_next_event(&q, end, &ts, &e)) == 1) {
			FUZZ_CHECK(q <= end);
			FUZZ_CHECK(e.type >= TW_EV_FIRST &&
				   e.type < TW_EV_FIRST + TW_EV_COUNT);
			FUZZ_CHECK(e.nargs >= 1 && e.nargs <= 3);
			FUZZ_CHECK(e.ts == ts);
		}
		FUZZ_CHECK(r == 0 || r == -1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size, *before;
	struct td_batch b;
	int r;

	if (size >= TW_HEADER_LEN && !memcmp(data, TW_HEADER, TW_HEADER_LEN))
		p += TW_HEADER_LEN;
	for (;;) {
		before = p;
		r = td_next_batch(&p, end, &b);
		if (r != 1)
			break;
		FUZZ_CHECK(p > before && p <= end);
		FUZZ_CHECK(b.total == (size_t)(p - before));
		FUZZ_CHECK(b.data + b.len == p);
		FUZZ_CHECK(b.len <= TD_MAX_BATCH_DATA);
		walk_batch(&b);
	}
	FUZZ_CHECK(r == 0 || r == -1);
	FUZZ_CHECK(p >= data && p <= end);
	return 0;
}
