// SPDX-License-Identifier: BSD-3-Clause
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "util/u64_map.h"

static void test_put_then_get_returns_value(void **state)
{
	struct u64_map m;
	uint64_t v = 0;

	u64_map_init(&m);
	assert_int_equal(u64_map_put(&m, 0xc000012340ull, 7), 0);
	assert_true(u64_map_get(&m, 0xc000012340ull, &v));
	assert_int_equal(v, 7);
	assert_false(u64_map_get(&m, 0xc000012348ull, &v));
	u64_map_free(&m);
}

static void test_key_zero_is_rejected(void **state)
{
	struct u64_map m;

	u64_map_init(&m);
	assert_int_equal(u64_map_put(&m, 0, 1), -22);
	assert_false(u64_map_get(&m, 0, NULL));
	u64_map_free(&m);
}

static void test_put_existing_key_overwrites(void **state)
{
	struct u64_map m;
	uint64_t v;

	u64_map_init(&m);
	u64_map_put(&m, 5, 1);
	u64_map_put(&m, 5, 2);
	assert_int_equal(m.len, 1);
	assert_true(u64_map_get(&m, 5, &v));
	assert_int_equal(v, 2);
	u64_map_free(&m);
}

/* Random puts and deletes agree with a plain array after every step. */
static void test_random_ops_match_reference(void **state)
{
	enum { KEYS = 2048, OPS = 200000 };
	static uint64_t ref[KEYS];
	static int present[KEYS];
	struct u64_map m;
	unsigned seed = 12345;
	size_t i, count = 0, it = 0;
	uint64_t k, v;

	u64_map_init(&m);
	for (i = 0; i < OPS; i++) {
		unsigned r = rand_r(&seed);
		size_t idx = r % KEYS;
		/* Page-aligned keys collide in the low bits, as type pointers do. */
		uint64_t key = 0xc000000000ull + (uint64_t)idx * 8192;

		if (r & 0x10000) {
			assert_int_equal(u64_map_put(&m, key, i), 0);
			ref[idx] = i;
			present[idx] = 1;
		} else {
			assert_int_equal(u64_map_del(&m, key), present[idx] != 0);
			present[idx] = 0;
		}
	}
	for (i = 0; i < KEYS; i++) {
		uint64_t key = 0xc000000000ull + (uint64_t)i * 8192;
		bool got = u64_map_get(&m, key, &v);

		assert_int_equal(got, present[i] != 0);
		if (got)
			assert_int_equal(v, ref[i]);
		count += present[i] != 0;
	}
	assert_int_equal(m.len, count);
	i = 0;
	while (u64_map_next(&m, &it, &k, &v))
		i++;
	assert_int_equal(i, count);
	u64_map_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_then_get_returns_value),
		cmocka_unit_test(test_key_zero_is_rejected),
		cmocka_unit_test(test_put_existing_key_overwrites),
		cmocka_unit_test(test_random_ops_match_reference),
	};
	return cmocka_run_group_tests_name("u64_map", tests, NULL, NULL);
}
