// SPDX-License-Identifier: BSD-3-Clause
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "trace/alloc_sample.h"

static void test_rate_one_keeps_everything(void **state)
{
	uint64_t i;

	for (i = 0; i < 1000; i++) {
		assert_true(alloc_sampled(0xc000000000ull + i * 8, i, 1));
		assert_true(alloc_sampled(0xc000000000ull + i * 8, i, 0));
	}
}

/*
 * The allocator's pattern: consecutive 64-byte slots at increasing
 * timestamps.  Bernoulli(1/n): over 10^6 draws the standard deviation is
 * ~0.3% of the count for n = 10, so 2% fails only for a biased hash.
 */
static void test_keeps_about_one_in_n(void **state)
{
	static const unsigned rates[] = { 2, 10, 100 };
	const uint64_t draws = 1000000;
	uint64_t i, kept;
	size_t r;

	for (r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
		double want = (double)draws / rates[r];

		kept = 0;
		for (i = 0; i < draws; i++)
			kept += alloc_sampled(0xc000100000ull + i * 64,
					      1000000 + i * 37, rates[r]);
		assert_true(kept > want * 0.9 && kept < want * 1.1);
	}
}

/* A loop allocating 10 types in turn: each type keeps ~1/10, unlike a
 * counter that would keep one type only. */
static void test_periodic_pattern_is_not_aliased(void **state)
{
	uint64_t kept[10] = { 0 }, i;
	int t;

	for (i = 0; i < 500000; i++)
		kept[i % 10] += alloc_sampled(0xc000200000ull + i * 16,
					      i * 100, 10);
	for (t = 0; t < 10; t++)
		assert_true(kept[t] > 4000 && kept[t] < 6000);
}

/* The same allocation always gets the same answer (files reproducible;
 * snapshot objects, ts 0, decided by address alone). */
static void test_deterministic(void **state)
{
	uint64_t i;

	for (i = 0; i < 1000; i++)
		assert_int_equal(alloc_sampled(0xc000300000ull + i * 8, 0, 7),
				 alloc_sampled(0xc000300000ull + i * 8, 0, 7));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_one_keeps_everything),
		cmocka_unit_test(test_keeps_about_one_in_n),
		cmocka_unit_test(test_periodic_pattern_is_not_aliased),
		cmocka_unit_test(test_deterministic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
