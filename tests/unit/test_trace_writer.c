// SPDX-License-Identifier: BSD-3-Clause
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "format/trace_writer.h"
#include "trace_decode.h"

static const struct tw_heap_info info = {
	.min_page_heap_addr = 0xc000000000ull,
	.page_size = 8192,
	.min_heap_align = 8,
	.fixed_stack = 2048,
};

/* What a test saw when decoding one encoded generation. */
struct decoded {
	size_t batches, event_batches, freq_batches, info_batches, type_batches;
	size_t max_batch_total, max_batch_len;
	uint64_t freq;
	uint64_t info[4];
	uint64_t events;
	struct td_event ev[64];          /* the first events, in file order */
	uint64_t ev_m[64];
	struct td_type types[2048];
	size_t ntypes;
	bool gens_ok;                    /* every batch carries the gen */
	bool thread_ts_monotonic;        /* per M, across its batches */
	uint64_t min_ts;
};

static void decode(const uint8_t *buf, size_t len, uint64_t gen,
		   struct decoded *d)
{
	const uint8_t *p = buf, *end = buf + len;
	uint64_t last_m = UINT64_MAX - 1, last_ts = 0;
	struct td_batch b;
	int r;

	memset(d, 0, sizeof(*d));
	d->gens_ok = d->thread_ts_monotonic = true;
	d->min_ts = UINT64_MAX;
	while ((r = td_next_batch(&p, end, &b)) == 1) {
		const uint8_t *q = b.data, *qend = b.data + b.len;

		d->batches++;
		if (b.gen != gen)
			d->gens_ok = false;
		if (b.total > d->max_batch_total)
			d->max_batch_total = b.total;
		if (b.len > d->max_batch_len)
			d->max_batch_len = b.len;
		if (b.ts < d->min_ts)
			d->min_ts = b.ts;
		if (b.exp == 1 && b.len && b.data[0] == 1) {
			d->info_batches++;
			q++;
			for (int i = 0; i < 4; i++)
				assert_int_equal(td_uvarint(&q, qend,
							    &d->info[i]), 0);
			assert_ptr_equal(q, qend);
		} else if (b.exp == 1 && b.len && b.data[0] == 0) {
			d->type_batches++;
			q++;
			while (d->ntypes < 2048 &&
			       (r = td_next_type(&q, qend,
						 &d->types[d->ntypes])) == 1)
				d->ntypes++;
			assert_int_not_equal(r, -1);
		} else if (b.exp == 0 && b.len && b.data[0] == TD_EV_FREQUENCY) {
			d->freq_batches++;
			q++;
			assert_int_equal(td_uvarint(&q, qend, &d->freq), 0);
		} else if (b.exp == 0) {
			uint64_t ts = b.ts;
			struct td_event e;

			d->event_batches++;
			assert_int_not_equal(b.m, UINT64_MAX);
			if (b.m == last_m && b.ts < last_ts)
				d->thread_ts_monotonic = false;
			if (b.m != last_m)
				last_ts = 0;
			while ((r = td_next_event(&q, qend, &ts, &e)) == 1) {
				if (ts < last_ts)
					d->thread_ts_monotonic = false;
				last_ts = ts;
				if (d->events < 64) {
					d->ev[d->events] = e;
					d->ev_m[d->events] = b.m;
				}
				d->events++;
			}
			assert_int_equal(r, 0);
			last_m = b.m;
		} else {
			fail_msg("unexpected batch exp=%d", b.exp);
		}
	}
	assert_int_equal(r, 0);
}

static void encode(struct tw_gen *g, uint8_t **buf, size_t *len)
{
	assert_int_equal(tw_gen_encode(g, buf, len), 0);
	/* Every event byte, and a header per batch besides. */
	assert_true(*len > tw_gen_event_bytes(g));
}

static void test_varint_roundtrip_max_u64(void **state)
{
	static const uint64_t vals[] = {
		0, 1, 127, 128, 16383, 16384, 1ull << 32, (1ull << 63) - 1,
		1ull << 63, UINT64_MAX - 1, UINT64_MAX,
	};
	size_t n = sizeof(vals) / sizeof(vals[0]), i;
	struct tw_gen *g = tw_gen_new(7, 1000000000, &info, 0);
	struct decoded *d = malloc(sizeof(*d));
	uint8_t *buf;
	size_t len;

	assert_non_null(g);
	for (i = 0; i < n; i++)
		assert_int_equal(tw_gen_event(g, 3, TW_EV_SPAN_ALLOC, 100,
					      vals[i], vals[n - 1 - i],
					      vals[i]),
				 0);
	encode(g, &buf, &len);
	decode(buf, len, 7, d);
	assert_int_equal(d->events, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(d->ev[i].type, TW_EV_SPAN_ALLOC);
		assert_int_equal(d->ev[i].args[0], vals[i]);
		assert_int_equal(d->ev[i].args[1], vals[n - 1 - i]);
		assert_int_equal(d->ev[i].args[2], vals[i]);
	}
	free(buf);
	free(d);
	tw_gen_free(g);
}

static void test_timestamp_near_max_u64_roundtrips(void **state)
{
	struct tw_gen *g = tw_gen_new(1, 1000000000, &info, 0);
	struct decoded *d = malloc(sizeof(*d));
	uint8_t *buf;
	size_t len;

	assert_int_equal(tw_gen_event(g, 1, TW_EV_SPAN_FREE, UINT64_MAX - 9,
				      1, 0, 0), 0);
	assert_int_equal(tw_gen_event(g, 1, TW_EV_SPAN_FREE, UINT64_MAX,
				      2, 0, 0), 0);
	encode(g, &buf, &len);
	decode(buf, len, 1, d);
	assert_int_equal(d->events, 2);
	assert_int_equal(d->ev[0].ts, UINT64_MAX - 9);
	assert_int_equal(d->ev[1].ts, UINT64_MAX);
	assert_int_equal(tw_gen_last_ts(g), UINT64_MAX);
	free(buf);
	free(d);
	tw_gen_free(g);
}

static void test_event_args_follow_each_events_arity(void **state)
{
	static const uint8_t nargs[] = { 3, 3, 1, 2, 2, 1, 2, 2, 1 };
	struct tw_gen *g = tw_gen_new(1, 1000000000, &info, 0);
	struct decoded *d = malloc(sizeof(*d));
	uint64_t tid;
	uint8_t *buf;
	size_t len;
	int ev;

	tid = tw_gen_define_type(g, 0x4a0000, 56, 8, "main.Node", 9);
	assert_int_equal(tid, 1);
	for (ev = TW_EV_SPAN; ev <= TW_EV_GOROUTINE_STACK_FREE; ev++)
		assert_int_equal(tw_gen_event(g, 9, ev, 1000 + ev, 11, tid,
					      33), 0);
	encode(g, &buf, &len);
	decode(buf, len, 1, d);
	assert_int_equal(d->events, 9);
	for (ev = 0; ev < 9; ev++) {
		assert_int_equal(d->ev[ev].type, TW_EV_SPAN + ev);
		assert_int_equal(d->ev[ev].nargs, nargs[ev]);
		assert_int_equal(d->ev[ev].args[0], 11);
		assert_int_equal(d->ev[ev].ts, 1000 + TW_EV_SPAN + ev);
		if (nargs[ev] > 1)
			assert_int_equal(d->ev[ev].args[1], tid);
		if (nargs[ev] > 2)
			assert_int_equal(d->ev[ev].args[2], 33);
	}
	free(buf);
	free(d);
	tw_gen_free(g);
}

static void test_batch_split_at_64k(void **state)
{
	const uint64_t n = 200000;
	struct tw_gen *g = tw_gen_new(2, 1000000000, &info, 0);
	struct decoded *d = malloc(sizeof(*d));
	uint8_t *buf;
	size_t len;
	uint64_t i;

	/* Events of 30+ bytes: ~6 MB, about a hundred batches. */
	for (i = 0; i < n; i++)
		assert_int_equal(tw_gen_event(g, 42, TW_EV_SPAN_ALLOC,
					      1000000 + i * 1000,
					      UINT64_MAX - i, UINT64_MAX,
					      i),
				 0);
	encode(g, &buf, &len);
	decode(buf, len, 2, d);
	assert_int_equal(d->events, n);
	assert_true(d->event_batches > 50);
	assert_true(d->max_batch_total <= 64 * 1024);
	/* Batches are full: a split is not premature. */
	assert_true(len / d->event_batches > 60 * 1024);
	assert_true(d->thread_ts_monotonic);
	assert_true(d->gens_ok);
	free(buf);
	free(d);
	tw_gen_free(g);
}

static void test_timestamps_never_decrease_per_thread(void **state)
{
	static const uint64_t ts[] = { 500, 400, 900, 100, 900, 1200, 5 };
	static const uint64_t want[] = { 500, 500, 900, 900, 900, 1200, 1200 };
	struct tw_gen *g = tw_gen_new(3, 1000000000, &info, 450);
	struct decoded *d = malloc(sizeof(*d));
	uint8_t *buf;
	size_t len, i, k = 0;

	for (i = 0; i < 7; i++) {
		/* Thread 1 gets the sequence; thread 2 starts below the floor. */
		assert_int_equal(tw_gen_event(g, 1, TW_EV_HEAP_OBJECT_FREE,
					      ts[i], i, 0, 0), 0);
	}
	assert_int_equal(tw_gen_event(g, 2, TW_EV_HEAP_OBJECT_FREE, 10, 99,
				      0, 0), 0);
	assert_int_equal(tw_gen_last_ts(g), 1200);
	encode(g, &buf, &len);
	decode(buf, len, 3, d);
	assert_int_equal(d->events, 8);
	for (i = 0; i < 8; i++) {
		if (d->ev_m[i] != 1)
			continue;
		assert_int_equal(d->ev[i].ts, want[k]);
		assert_int_equal(d->ev[i].args[0], k);
		k++;
	}
	assert_int_equal(k, 7);
	for (i = 0; i < 8; i++)
		if (d->ev_m[i] == 2)
			assert_int_equal(d->ev[i].ts, 450);
	/* No batch, side batches included, starts before the floor. */
	assert_true(d->min_ts >= 450);
	free(buf);
	free(d);
	tw_gen_free(g);
}

static void test_batch_timestamps_increase_across_splits(void **state)
{
	struct tw_gen *g = tw_gen_new(1, 1000000000, &info, 0);
	const uint8_t *p, *end;
	struct td_batch b;
	uint64_t prev_end = 0, last_m = UINT64_MAX, ts, i;
	size_t nbatches = 0;
	uint8_t *buf;
	size_t len;

	/* Two threads interleaved, each several batches long. */
	for (i = 0; i < 60000; i++) {
		assert_int_equal(tw_gen_event(g, 1 + (i & 1),
					      TW_EV_HEAP_OBJECT_FREE,
					      1000 + i, UINT64_MAX, 0, 0), 0);
	}
	encode(g, &buf, &len);
	p = buf;
	end = buf + len;
	while (td_next_batch(&p, end, &b) == 1) {
		const uint8_t *q = b.data;
		struct td_event e;

		if (b.exp || b.data[0] == TD_EV_FREQUENCY)
			continue;
		if (b.m != last_m)
			prev_end = 0; /* the next thread's batches */
		/* A batch starts where its thread's previous one ended. */
		assert_true(b.ts >= prev_end);
		last_m = b.m;
		nbatches++;
		ts = b.ts;
		while (td_next_event(&q, b.data + b.len, &ts, &e) == 1)
			;
		prev_end = ts;
	}
	assert_true(nbatches >= 6);
	free(buf);
	tw_gen_free(g);
}

static void test_empty_generation_encodes_to_nothing(void **state)
{
	struct tw_gen *g = tw_gen_new(1, 1000000000, &info, 77);
	uint8_t *buf = (uint8_t *)1;
	size_t len = 1;

	/* Types alone do not make a generation. */
	assert_int_equal(tw_gen_define_type(g, 0x1000, 8, 0, "int", 3), 1);
	assert_int_equal(tw_gen_encode(g, &buf, &len), 0);
	assert_int_equal(len, 0);
	assert_null(buf);
	assert_int_equal(tw_gen_events(g), 0);
	assert_int_equal(tw_gen_last_ts(g), 77);
	tw_gen_free(g);
}

static void test_type_ids_start_at_one_per_generation(void **state)
{
	struct tw_gen *g1 = tw_gen_new(1, 1000000000, &info, 0);
	struct tw_gen *g2 = tw_gen_new(2, 1000000000, &info, 0);
	struct decoded *d = malloc(sizeof(*d));
	uint8_t *buf;
	size_t len;

	assert_int_equal(tw_gen_define_type(g1, 0xa0, 8, 8, "*int", 4), 1);
	assert_int_equal(tw_gen_define_type(g1, 0xb0, 56, 8, "main.Node", 9),
			 2);
	assert_int_equal(tw_gen_define_type(g1, 0xa0, 8, 8, "*int", 4), 1);
	assert_int_equal(tw_gen_type_id(g1, 0xb0), 2);
	assert_int_equal(tw_gen_type_id(g1, 0xc0), 0);
	assert_int_equal(tw_gen_define_type(g1, 0, 1, 0, "nil", 3), 0);

	/* The next generation has its own table. */
	assert_int_equal(tw_gen_type_id(g2, 0xa0), 0);
	assert_int_equal(tw_gen_define_type(g2, 0xb0, 56, 8, "main.Node", 9),
			 1);
	assert_int_equal(tw_gen_event(g2, 5, TW_EV_HEAP_OBJECT_ALLOC, 10, 1,
				      1, 0), 0);
	encode(g2, &buf, &len);
	decode(buf, len, 2, d);
	assert_int_equal(d->ntypes, 1);
	assert_int_equal(d->types[0].id, 1);
	assert_int_equal(d->types[0].addr, 0xb0);
	assert_int_equal(d->types[0].size, 56);
	assert_int_equal(d->types[0].ptr_bytes, 8);
	assert_int_equal(d->types[0].name_len, 9);
	assert_memory_equal(d->types[0].name, "main.Node", 9);
	free(buf);
	free(d);
	tw_gen_free(g1);
	tw_gen_free(g2);
}

static void test_type_batches_split_at_64k(void **state)
{
	const size_t n = 2000;
	struct tw_gen *g = tw_gen_new(4, 1000000000, &info, 0);
	struct decoded *d = malloc(sizeof(*d));
	char name[200];
	uint8_t *buf;
	size_t len, i;

	/* 2000 names of ~150 bytes: ~300 KB of types. */
	for (i = 0; i < n; i++) {
		int k = snprintf(name, sizeof(name), "main.T%zu_%0140zu", i, i);

		assert_int_equal(tw_gen_define_type(g, 0x400000 + i * 64,
						    i, 0, name, (size_t)k),
				 i + 1);
	}
	assert_int_equal(tw_gen_event(g, 1, TW_EV_HEAP_OBJECT_ALLOC, 5, 0,
				      n, 0), 0);
	encode(g, &buf, &len);
	decode(buf, len, 4, d);
	assert_true(d->type_batches >= 5);
	assert_true(d->max_batch_total <= 64 * 1024);
	assert_int_equal(d->ntypes, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(d->types[i].id, i + 1);
		assert_int_equal(d->types[i].addr, 0x400000 + i * 64);
		assert_int_equal(d->types[i].size, i);
	}
	free(buf);
	free(d);
	tw_gen_free(g);
}

static void test_long_type_name_is_cut_to_fit_a_batch(void **state)
{
	struct tw_gen *g = tw_gen_new(1, 1000000000, &info, 0);
	struct decoded *d = malloc(sizeof(*d));
	size_t big = 100000;
	char *name = malloc(big);
	uint8_t *buf;
	size_t len;

	memset(name, 'x', big);
	assert_int_equal(tw_gen_define_type(g, 0x10, 1, 0, name, big), 1);
	assert_int_equal(tw_gen_event(g, 1, TW_EV_HEAP_OBJECT, 5, 0, 1, 0),
			 0);
	encode(g, &buf, &len);
	decode(buf, len, 1, d);
	assert_int_equal(d->ntypes, 1);
	assert_int_equal(d->types[0].name_len, 4096);
	assert_true(d->max_batch_total <= 64 * 1024);
	free(name);
	free(buf);
	free(d);
	tw_gen_free(g);
}

static void test_generation_has_frequency_and_info_batches(void **state)
{
	struct tw_gen *g = tw_gen_new(9, 15625000, &info, 0);
	struct decoded *d = malloc(sizeof(*d));
	uint8_t *buf;
	size_t len;

	assert_int_equal(tw_gen_event(g, 0, TW_EV_GOROUTINE_STACK, 3000, 280,
				      13, 0), 0);
	encode(g, &buf, &len);
	decode(buf, len, 9, d);
	assert_true(d->gens_ok);
	assert_int_equal(d->freq_batches, 1);
	assert_int_equal(d->freq, 15625000);
	assert_int_equal(d->info_batches, 1);
	assert_int_equal(d->info[0], 0xc000000000ull);
	assert_int_equal(d->info[1], 8192);
	assert_int_equal(d->info[2], 8);
	assert_int_equal(d->info[3], 2048);
	assert_int_equal(d->type_batches, 0);
	/* Thread 0 is a real M for the parser. */
	assert_int_equal(d->event_batches, 1);
	assert_int_equal(d->ev_m[0], 0);
	free(buf);
	free(d);
	tw_gen_free(g);
}

static void test_invalid_events_are_rejected(void **state)
{
	struct tw_gen *g = tw_gen_new(1, 1000000000, &info, 0);

	assert_null(tw_gen_new(0, 1000000000, &info, 0));
	assert_int_equal(tw_gen_event(g, 1, 127, 1, 0, 0, 0), -EINVAL);
	assert_int_equal(tw_gen_event(g, 1, 137, 1, 0, 0, 0), -EINVAL);
	assert_int_equal(tw_gen_event(g, UINT64_MAX, TW_EV_SPAN_FREE, 1, 0, 0,
				      0), -EINVAL);
	/* A type ID must be defined in this generation. */
	assert_int_equal(tw_gen_event(g, 1, TW_EV_HEAP_OBJECT_ALLOC, 1, 0, 1,
				      0), -EINVAL);
	assert_int_equal(tw_gen_event(g, 1, TW_EV_HEAP_OBJECT_ALLOC, 1, 0, 0,
				      0), 0);
	assert_int_equal(tw_gen_events(g), 1);
	tw_gen_free(g);
}

static void test_many_threads_keep_their_own_batches(void **state)
{
	const uint64_t nthreads = 3000, per = 20;
	struct tw_gen *g = tw_gen_new(1, 1000000000, &info, 0);
	const uint8_t *p, *end;
	struct td_batch b;
	uint64_t *seen = calloc(nthreads, sizeof(*seen));
	uint8_t *buf;
	size_t len;
	uint64_t i, t;

	for (i = 0; i < per; i++)
		for (t = 0; t < nthreads; t++)
			assert_int_equal(tw_gen_event(g, 100000 + t * 7,
						      TW_EV_SPAN_FREE,
						      10 + i, t, 0, 0), 0);
	assert_int_equal(tw_gen_events(g), nthreads * per);
	encode(g, &buf, &len);
	p = buf;
	end = buf + len;
	while (td_next_batch(&p, end, &b) == 1) {
		const uint8_t *q = b.data;
		struct td_event e;
		uint64_t ts = b.ts;

		if (b.exp || b.data[0] == TD_EV_FREQUENCY)
			continue;
		while (td_next_event(&q, b.data + b.len, &ts, &e) == 1) {
			assert_int_equal(b.m, 100000 + e.args[0] * 7);
			seen[e.args[0]]++;
		}
	}
	for (t = 0; t < nthreads; t++)
		assert_int_equal(seen[t], per);
	free(seen);
	free(buf);
	tw_gen_free(g);
}

/* A streamed generation's output: every write, and all of it. */
struct stream_out {
	uint8_t *buf;
	size_t len, cap;
	size_t writes;
	size_t fail_at;                  /* write number that fails; 0: none */
	bool whole;                      /* every write was one whole batch */
};

static int stream_write(void *ctx, const uint8_t *buf, size_t len)
{
	struct stream_out *o = ctx;
	const uint8_t *p = buf;
	struct td_batch b;

	if (++o->writes == o->fail_at)
		return -ENOSPC;
	if (td_next_batch(&p, buf + len, &b) != 1 || p != buf + len ||
	    len > 64 * 1024)
		o->whole = false;
	if (o->len + len > o->cap) {
		o->cap = (o->len + len) * 2;
		o->buf = realloc(o->buf, o->cap);
		assert_non_null(o->buf);
	}
	memcpy(o->buf + o->len, buf, len);
	o->len += len;
	return 0;
}

/* Events of threads 1..3 and some types, the same into any generation. */
static void fill(struct tw_gen *g, uint64_t n)
{
	uint64_t i, ty = tw_gen_define_type(g, 0x4000, 64, 8, "main.Node", 9);

	assert_int_equal(ty, 1);
	for (i = 0; i < n; i++)
		assert_int_equal(tw_gen_event(g, 1 + i % 3,
					      TW_EV_HEAP_OBJECT_ALLOC,
					      1000 + i * 7, 0x100000 + i, ty,
					      0),
				 0);
}

static void test_stream_sends_full_batches_before_the_end(void **state)
{
	const uint64_t n = 300000;
	struct stream_out o = { .whole = true };
	struct tw_gen *g = tw_gen_new(3, 1000000000, &info, 0);
	struct tw_gen *m = tw_gen_new(3, 1000000000, &info, 0);
	struct decoded *d = malloc(sizeof(*d)), *dm = malloc(sizeof(*dm));
	size_t before, mlen;
	uint8_t *mbuf;

	tw_gen_stream(g, stream_write, &o);
	fill(g, n);
	/* ~1.8 MB of events: all but the last batches written, not held. */
	before = o.len;
	assert_true(before > tw_gen_event_bytes(g) - 3 * 64 * 1024);
	assert_true(o.writes >= tw_gen_event_bytes(g) / (64 * 1024) - 3);
	assert_int_equal(tw_gen_finish(g), 0);
	assert_true(o.whole);
	/* The tables come at the end, after the last batches. */
	decode(o.buf + before, o.len - before, 3, d);
	assert_int_equal(d->freq_batches, 1);
	assert_int_equal(d->info_batches, 1);
	assert_int_equal(d->type_batches, 1);
	assert_int_equal(d->event_batches, 3);
	/* The whole stream is the generation tw_gen_encode gives. */
	fill(m, n);
	encode(m, &mbuf, &mlen);
	assert_int_equal(mlen, o.len);
	assert_memory_equal(mbuf, o.buf, mlen);
	decode(o.buf, o.len, 3, d);
	decode(mbuf, mlen, 3, dm);
	assert_int_equal(d->events, n);
	assert_true(d->thread_ts_monotonic);
	assert_true(d->gens_ok);
	assert_int_equal(d->min_ts, 1000);
	/* No event after the end. */
	assert_int_equal(tw_gen_event(g, 1, TW_EV_SPAN_FREE, 1 << 30, 1, 0, 0),
			 -EINVAL);
	/* A streamed generation has no buffer to hand out. */
	free(mbuf);
	assert_int_equal(tw_gen_encode(g, &mbuf, &mlen), -EINVAL);
	assert_null(mbuf);
	free(o.buf);
	free(d);
	free(dm);
	tw_gen_free(g);
	tw_gen_free(m);
}

static void test_stream_stops_at_the_first_failed_write(void **state)
{
	struct stream_out o = { .whole = true, .fail_at = 3 };
	struct tw_gen *g = tw_gen_new(1, 1000000000, &info, 0);

	tw_gen_stream(g, stream_write, &o);
	/* Events keep being taken: the loss is told by tw_gen_finish. */
	fill(g, 100000);
	assert_int_equal(tw_gen_events(g), 100000);
	assert_int_equal(tw_gen_finish(g), -ENOSPC);
	/* Two batches went out, the third failed, none was tried after. */
	assert_int_equal(o.writes, 3);
	assert_true(o.whole);
	assert_int_equal(tw_gen_finish(g), -ENOSPC);
	free(o.buf);
	tw_gen_free(g);
}

static void test_stream_of_no_events_writes_nothing(void **state)
{
	struct stream_out o = { .whole = true };
	struct tw_gen *g = tw_gen_new(1, 1000000000, &info, 0);

	tw_gen_stream(g, stream_write, &o);
	assert_int_equal(tw_gen_define_type(g, 0x1000, 8, 0, "int", 3), 1);
	assert_int_equal(tw_gen_finish(g), 0);
	assert_int_equal(o.writes, 0);
	tw_gen_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_varint_roundtrip_max_u64),
		cmocka_unit_test(test_timestamp_near_max_u64_roundtrips),
		cmocka_unit_test(test_event_args_follow_each_events_arity),
		cmocka_unit_test(test_batch_split_at_64k),
		cmocka_unit_test(test_timestamps_never_decrease_per_thread),
		cmocka_unit_test(test_batch_timestamps_increase_across_splits),
		cmocka_unit_test(test_empty_generation_encodes_to_nothing),
		cmocka_unit_test(test_type_ids_start_at_one_per_generation),
		cmocka_unit_test(test_type_batches_split_at_64k),
		cmocka_unit_test(test_long_type_name_is_cut_to_fit_a_batch),
		cmocka_unit_test(test_generation_has_frequency_and_info_batches),
		cmocka_unit_test(test_invalid_events_are_rejected),
		cmocka_unit_test(test_many_threads_keep_their_own_batches),
		cmocka_unit_test(test_stream_sends_full_batches_before_the_end),
		cmocka_unit_test(test_stream_stops_at_the_first_failed_write),
		cmocka_unit_test(test_stream_of_no_events_writes_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
