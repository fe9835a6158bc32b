// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_plan_determinism - the speed-ups of issue 16 change no plan:
 *  - go_binary_find_func through the name index finds, for every name of
 *    the function table, what the linear go_pclntab_find finds (funcID 0
 *    preferred, else the first);
 *  - a plan built on several threads (TRACEAF_PLAN_THREADS) is byte for
 *    byte the plan of one thread, full and --memprofilerate, on Go 1.24
 *    (helpers called from mallocgc) and 1.27 (size-specialised functions
 *    called from everywhere), stripped and not.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gobin.h"
#include "attach/probe_plan.h"
#include "inspect/go_binary.h"
#include "inspect/go_pclntab.h"

#define FIRST_MINOR 21
#define LAST_MINOR 27

static void check_index(struct go_binary *bin, int minor)
{
	const struct go_pclntab *t = go_binary_pclntab(bin);
	uint64_t i, checked = 0;

	for (i = 0; i < t->nfunc; i++) {
		struct go_func f, lin;
		uint64_t e, sz;

		if (go_pclntab_func(t, i, &f))
			continue;
		assert_int_equal(go_pclntab_find(t, f.name, &lin), 0);
		if (go_binary_find_func(bin, f.name, &e, &sz))
			fail_msg("go1.%d: %s not found by name", minor, f.name);
		if (e != lin.entry || sz != lin.size)
			fail_msg("go1.%d: %s: index %#lx+%lu, scan %#lx+%lu", minor,
				 f.name, (unsigned long)e, (unsigned long)sz,
				 (unsigned long)lin.entry, (unsigned long)lin.size);
		checked++;
	}
	assert_true(checked > 1000);
	assert_int_equal(go_binary_find_func(bin, "no.such.function", &i, &i),
			 -ENOENT);
}

static void test_name_index_finds_what_the_scan_finds(void **state)
{
	int m;

	for (m = FIRST_MINOR; m <= LAST_MINOR; m++) {
		struct go_binary *bin = gobin_open("fullwork", m, "");

		check_index(bin, m);
		go_binary_close(bin);
	}
}

static void build(struct go_binary *bin, bool sampled, const char *threads,
		  struct probe_plan *p)
{
	char err[256];

	setenv("TRACEAF_PLAN_THREADS", threads, 1);
	if ((sampled ? probe_plan_build_sampled(bin, p, err, sizeof(err)) :
		       probe_plan_build(bin, p, err, sizeof(err))))
		fail_msg("plan (threads %s): %s", threads, err);
	unsetenv("TRACEAF_PLAN_THREADS");
}

static void same_plan(const struct probe_plan *a, const struct probe_plan *b)
{
	assert_memory_equal(&a->layout, &b->layout, sizeof(a->layout));
	assert_int_equal(a->n, b->n);
	assert_memory_equal(a->sites, b->sites, a->n * sizeof(*a->sites));
	assert_int_equal(a->nasites, b->nasites);
	if (a->nasites)
		assert_memory_equal(a->asites, b->asites,
				    a->nasites * sizeof(*a->asites));
	assert_int_equal(a->ncallers, b->ncallers);
	if (a->ncallers)
		assert_memory_equal(a->callers, b->callers,
				    a->ncallers * sizeof(*a->callers));
	assert_int_equal(a->funcs, b->funcs);
	assert_int_equal(a->alloc_anchored, b->alloc_anchored);
	assert_int_equal(a->alloc_fallback, b->alloc_fallback);
}

static void test_plans_do_not_depend_on_the_thread_count(void **state)
{
	static const int minors[] = { 24, 27 };
	static const char *const flavours[] = { "", "-stripped" };
	size_t m, f;
	int s;

	for (m = 0; m < 2; m++)
		for (f = 0; f < 2; f++)
			for (s = 0; s < 2; s++) {
				struct go_binary *bin = gobin_open("fullwork", minors[m],
								   flavours[f]);
				struct probe_plan one, many;

				build(bin, s, "1", &one);
				build(bin, s, "3", &many);
				/* --memprofilerate reads types from callers. */
				if (s)
					assert_true(one.ncallers > 100);
				same_plan(&one, &many);
				probe_plan_free(&one);
				probe_plan_free(&many);
				go_binary_close(bin);
			}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_index_finds_what_the_scan_finds),
		cmocka_unit_test(test_plans_do_not_depend_on_the_thread_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
