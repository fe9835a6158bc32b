// SPDX-License-Identifier: BSD-3-Clause
/*
 * gc_cycles: the first free begins cycle 1; a page freed again by a
 * later sweep in the same cycle begins the next; frees of one sweep (within
 * the gap) and pages last swept in an earlier cycle do not; gc_cycles_at
 * counts the starts at or before a time.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "analysis/gc_cycles.h"

#define MS 1000000ull

static void test_first_free_begins_cycle_one(void **state)
{
	struct gc_cycles g;

	gc_cycles_init(&g);
	assert_int_equal(gc_cycles_at(&g, 0), 0);
	assert_int_equal(gc_cycles_on_free(&g, 7, 10 * MS), 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(gc_cycles_at(&g, 10 * MS - 1), 0);
	assert_int_equal(gc_cycles_at(&g, 10 * MS), 1);
	gc_cycles_free(&g);
}

static void test_page_swept_twice_begins_the_next(void **state)
{
	struct gc_cycles g;

	gc_cycles_init(&g);
	gc_cycles_on_free(&g, 1, 10 * MS);
	gc_cycles_on_free(&g, 2, 11 * MS);
	/* The same sweep of page 1 goes on: under the gap. */
	gc_cycles_on_free(&g, 1, 10 * MS + GC_SWEEP_GAP_NS - 1);
	assert_int_equal(g.n, 1);
	/* Page 1 again, later: cycle 2 from 30 ms. */
	gc_cycles_on_free(&g, 1, 30 * MS);
	assert_int_equal(g.n, 2);
	/* Page 2 was last swept in cycle 1: no new cycle. */
	gc_cycles_on_free(&g, 2, 31 * MS);
	assert_int_equal(g.n, 2);
	/* Now both are cycle 2's: page 2 again begins cycle 3. */
	gc_cycles_on_free(&g, 2, 50 * MS);
	assert_int_equal(g.n, 3);
	assert_int_equal(gc_cycles_at(&g, 29 * MS), 1);
	assert_int_equal(gc_cycles_at(&g, 30 * MS), 2);
	assert_int_equal(gc_cycles_at(&g, 49 * MS), 2);
	assert_int_equal(gc_cycles_at(&g, 1000 * MS), 3);
	gc_cycles_free(&g);
}

/* A sweep whose frees come one by one (the runtime's traces). */
static void test_long_sweep_of_one_page_is_one_sweep(void **state)
{
	struct gc_cycles g;
	uint64_t t;

	gc_cycles_init(&g);
	for (t = 0; t < 100; t++)
		gc_cycles_on_free(&g, 3, 5 * MS + t * 20000);
	assert_int_equal(g.n, 1);
	gc_cycles_free(&g);
}

/*
 * The runtime's marks (F.gc) replace the estimate: what frees guessed
 * before the first mark is dropped, frees after it begin no cycle, and
 * the cycle at a time counts the marks at or before it.
 */
static void test_marks_replace_the_estimate(void **state)
{
	struct gc_cycles g;

	(void)state;
	gc_cycles_init(&g);
	assert_int_equal(gc_cycles_on_free(&g, 7, 1000), 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(gc_cycles_mark(&g, 5000000), 0);
	assert_true(g.exact);
	assert_int_equal(g.n, 1);
	/* Page 7 swept again much later: no estimated cycle now. */
	assert_int_equal(gc_cycles_on_free(&g, 7, 90000000), 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(gc_cycles_mark(&g, 100000000), 0);
	/* A mark out of order is taken at the last one's time. */
	assert_int_equal(gc_cycles_mark(&g, 50000000), 0);
	assert_int_equal(g.n, 3);
	assert_int_equal(gc_cycles_at(&g, 4999999), 0);
	assert_int_equal(gc_cycles_at(&g, 5000000), 1);
	assert_int_equal(gc_cycles_at(&g, 99999999), 1);
	assert_int_equal(gc_cycles_at(&g, 100000000), 3);
	gc_cycles_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_free_begins_cycle_one),
		cmocka_unit_test(test_page_swept_twice_begins_the_next),
		cmocka_unit_test(test_long_sweep_of_one_page_is_one_sweep),
		cmocka_unit_test(test_marks_replace_the_estimate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
