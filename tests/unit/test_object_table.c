// SPDX-License-Identifier: BSD-3-Clause
/*
 * The replay's object table must behave exactly as a map keyed by object
 * ID, whatever spans come and go; and it must keep slot-base objects of
 * known heap spans in their slots (the point of it), the rest loose.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "analysis/object_table.h"
#include "util/u64_map.h"

#define IDS_PER_PAGE (8192 / 8)
#define SC(sizeclass, noscan) ((uint64_t)((sizeclass) << 1 | (noscan)) << 1)

static void test_slot_bases_live_in_their_span(void **state)
{
	struct object_table t;
	uint64_t v = 0;

	object_table_init(&t);
	/* Page 3, one page of 64-byte objects (size class 6). */
	assert_int_equal(object_table_span(&t, 3, 1, SC(6, 0)), 0);
	assert_int_equal(object_table_put(&t, 3 * IDS_PER_PAGE + 8, 42), 0);
	assert_int_equal(t.loose.len, 0);
	assert_true(object_table_get(&t, 3 * IDS_PER_PAGE + 8, &v));
	assert_int_equal(v, 42);
	/* The same slot's interior (a malloc header's +8) is another ID. */
	assert_false(object_table_get(&t, 3 * IDS_PER_PAGE + 9, &v));
	assert_int_equal(object_table_put(&t, 3 * IDS_PER_PAGE + 9, 7), 0);
	assert_int_equal(t.loose.len, 1);
	assert_int_equal(t.len, 2);
	/* Value 0 is a value (class 0, existed before the trace). */
	assert_int_equal(object_table_put(&t, 3 * IDS_PER_PAGE, 0), 0);
	assert_true(object_table_get(&t, 3 * IDS_PER_PAGE, &v));
	assert_int_equal(v, 0);
	assert_int_equal(t.loose.len, 1);
	object_table_free(&t);
}

static void test_span_of_gives_slot_size_and_tiny(void **state)
{
	struct object_table t;
	const struct ot_span *s;

	object_table_init(&t);
	assert_int_equal(object_table_span(&t, 10, 1, SC(2, 1)), 0); /* tiny */
	assert_int_equal(object_table_span(&t, 11, 2, SC(0, 0)), 0); /* large */
	assert_int_equal(object_table_span(&t, 20, 1, 1), 0);        /* manual */
	s = object_table_span_of(&t, 10 * IDS_PER_PAGE + 5);
	assert_non_null(s);
	assert_true(s->per_id);
	s = object_table_span_of(&t, 12 * IDS_PER_PAGE + 3);
	assert_non_null(s);
	assert_int_equal(s->elemsize, 2 * 8192);
	assert_null(object_table_span_of(&t, 20 * IDS_PER_PAGE));
	assert_null(object_table_span_of(&t, 13 * IDS_PER_PAGE));
	/* Both halves of a tiny block are slots of their own. */
	assert_int_equal(object_table_put(&t, 10 * IDS_PER_PAGE, 1), 0);
	assert_int_equal(object_table_put(&t, 10 * IDS_PER_PAGE + 1, 2), 0);
	assert_int_equal(t.loose.len, 0);
	object_table_free(&t);
}

/*
 * A large object's span (size class 0) holds one object, whether it is
 * scanned or not and however many pages it has: a big []byte is a
 * noscan span of 17+ pages, and its one slot is the whole span (the
 * report sized such objects by their type before, 1 byte for uint8).
 */
static void test_large_spans_have_one_slot(void **state)
{
	static const struct {
		uint64_t npages, kindclass;
	} spans[] = {
		{ 2, SC(0, 0) }, { 2, SC(0, 1) },
		{ 17, SC(0, 0) }, { 17, SC(0, 1) }, { 200, SC(0, 1) },
	};
	struct object_table t;
	uint64_t page = 100, v = 0;
	size_t i;

	object_table_init(&t);
	for (i = 0; i < sizeof(spans) / sizeof(spans[0]); i++) {
		const struct ot_span *s;
		uint64_t id = page * IDS_PER_PAGE;

		assert_int_equal(object_table_span(&t, page, spans[i].npages,
						   spans[i].kindclass), 0);
		s = object_table_span_of(&t, id);
		assert_non_null(s);
		assert_int_equal(s->elemsize, spans[i].npages * 8192);
		assert_int_equal(s->nvals, 1);
		assert_false(s->per_id);
		assert_int_equal(object_table_put(&t, id, i + 1), 0);
		assert_int_equal(t.loose.len, 0);
		assert_true(object_table_get(&t, id, &v));
		assert_int_equal(v, i + 1);
		page += spans[i].npages;
	}
	object_table_free(&t);
}

static void test_objects_outlive_their_span(void **state)
{
	struct object_table t;
	uint64_t v = 0, id = 5 * IDS_PER_PAGE + 2;

	object_table_init(&t);
	assert_int_equal(object_table_span(&t, 5, 1, SC(1, 1)), 0); /* 8 B */
	assert_int_equal(object_table_put(&t, id, 9), 0);
	assert_int_equal(object_table_span_gone(&t, 5), 0);
	assert_null(object_table_span_of(&t, id));
	assert_true(object_table_get(&t, id, &v));
	assert_int_equal(v, 9);
	/* A new span there: the loose object is still found, updated and
	 * deleted in one place. */
	assert_int_equal(object_table_span(&t, 5, 1, SC(1, 1)), 0);
	assert_int_equal(object_table_put(&t, id, 10), 0);
	assert_int_equal(t.len, 1);
	assert_true(object_table_get(&t, id, &v));
	assert_int_equal(v, 10);
	assert_true(object_table_del(&t, id));
	assert_false(object_table_get(&t, id, &v));
	assert_int_equal(t.len, 0);
	assert_int_equal(t.loose.len, 0);
	object_table_free(&t);
}

static void test_bogus_spans_cost_nothing(void **state)
{
	struct object_table t;
	uint64_t v = 0, far = (1ull << 40) * IDS_PER_PAGE;

	object_table_init(&t);
	/* 2^40 pages: mapped only as far as an object can be found. */
	assert_int_equal(object_table_span(&t, 0, 1ull << 40, SC(0, 0)), 0);
	assert_int_equal(object_table_span(&t, 1ull << 40, 1, SC(6, 0)), 0);
	assert_int_equal(object_table_span(&t, UINT64_MAX - 3, 1, SC(6, 0)), 0);
	assert_int_equal(object_table_span(&t, 7, 1, SC(99, 0)), 0);
	assert_int_equal(object_table_put(&t, far, 3), 0);
	assert_int_equal(t.loose.len, 0);
	assert_true(object_table_get(&t, far, &v));
	assert_int_equal(v, 3);
	assert_int_equal(object_table_put(&t, UINT64_MAX - 1, 4), 0);
	/* The one value a slot cannot hold goes loose. */
	assert_int_equal(object_table_put(&t, far + 8, UINT64_MAX), 0);
	assert_int_equal(t.loose.len, 2);
	assert_true(object_table_get(&t, far + 8, &v));
	assert_int_equal(v, UINT64_MAX);
	assert_int_equal(t.len, 3);
	object_table_free(&t);
}

/* A span for op R: a few classes over a few pages, overlaps included. */
static void random_span(struct object_table *t, unsigned r)
{
	static const uint64_t kinds[] = { SC(2, 1), SC(6, 0), SC(0, 0),
					  SC(1, 1), SC(30, 0), 1, SC(67, 0) };
	uint64_t page = r % 24, np = 1 + (r >> 5) % 3;

	assert_int_equal(object_table_span(t, page, np,
					   kinds[(r >> 8) % 7]), 0);
}

/* Random ops, spans changing under the objects, agree with a plain map. */
static void test_random_ops_match_a_map(void **state)
{
	enum { OPS = 400000, IDS = 24 * IDS_PER_PAGE };
	struct object_table t;
	struct u64_map ref;
	struct ot_iter it = { 0 };
	unsigned seed = 2026;
	uint64_t id, v, w, seen = 0;
	size_t i;

	object_table_init(&t);
	u64_map_init(&ref);
	for (i = 0; i < OPS; i++) {
		unsigned r = (unsigned)rand_r(&seed), op = r % 100;

		/* Mostly IDs at 64-byte steps (slot bases), some odd ones. */
		id = (r >> 7) % IDS;
		if (op & 1)
			id &= ~7ull;
		if (op < 2) {
			random_span(&t, r >> 7);
		} else if (op < 3) {
			assert_int_equal(object_table_span_gone(&t, id % 24), 0);
		} else if (op < 4 && i % 97 == 0) {
			assert_int_equal(object_table_geometry(&t, 8 << (r & 1),
							       8192), 0);
			assert_int_equal(object_table_geometry(&t, 8, 8192), 0);
		} else if (op < 55) {
			v = r ^ i;
			assert_int_equal(object_table_put(&t, id, v), 0);
			assert_int_equal(u64_map_put(&ref, id + 1, v), 0);
		} else if (op < 85) {
			assert_int_equal(object_table_del(&t, id),
					 u64_map_del(&ref, id + 1));
		} else {
			object_table_prefetch(&t, id);
			assert_int_equal(object_table_get(&t, id, &v),
					 u64_map_get(&ref, id + 1, &w));
			if (u64_map_get(&ref, id + 1, &w))
				assert_int_equal(v, w);
		}
		assert_int_equal(t.len, ref.len);
	}
	while (object_table_next(&t, &it, &id, &v)) {
		assert_true(u64_map_get(&ref, id + 1, &w));
		assert_int_equal(v, w);
		seen++;
	}
	assert_int_equal(seen, ref.len);
	assert_true(seen > 1000);
	u64_map_free(&ref);
	object_table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slot_bases_live_in_their_span),
		cmocka_unit_test(test_span_of_gives_slot_size_and_tiny),
		cmocka_unit_test(test_large_spans_have_one_slot),
		cmocka_unit_test(test_objects_outlive_their_span),
		cmocka_unit_test(test_bogus_spans_cost_nothing),
		cmocka_unit_test(test_random_ops_match_a_map),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
