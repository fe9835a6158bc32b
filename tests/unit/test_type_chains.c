// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_type_chains.c - full mode's type chains (alloc_sites_chain.c) in
 * the plans of the real fullwork builds, plain, stripped, PIE and
 * stripped PIE:
 *  - Go 1.27: mallocgc's size-class dispatch gets no ALLOC_ARGS probe;
 *    its calls of the producers pass the type on (PASS) with a size
 *    bounded by the producer (BOUND), and the SC producers' sites carry
 *    that bound (their class size; 15 for the tiny allocator);
 *  - the calls behind the benchmarked paths are described without a
 *    capture: makeslice and newarray pass their AX on, growslice its SI
 *    (passed on, or read from the slot it spilled it to; a constant nil
 *    for pointer-free elements), rawstring's nil is a constant, the maps'
 *    typ.Group a load from an argument passed on;
 *  - every capture (ALLOC_ARGS) probe names a type register and sits on
 *    the call itself; no entry is left without a type;
 *  - Go 1.21..1.26 plans have no chain at all (behaviour unchanged).
 * Binaries: $TRACEAF_GOBIN_DIR (default build/go-bin), `make workloads`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gobin.h"
#include "attach/probe_plan.h"
#include "inspect/alloc_sites.h"
#include "inspect/go_binary.h"

static const char *const flavours[] = { "", "-stripped", "-pie",
					"-stripped-pie" };

/* The plan's callers whose return address lies in function `name`. */
static size_t entries_in(const struct go_binary *bin, const struct probe_plan *p,
			 const char *name, const struct probe_caller **out,
			 size_t max)
{
	uint64_t e, sz;
	size_t i, n = 0;

	if (go_binary_find_func(bin, name, &e, &sz))
		fail_msg("%s not in the binary", name);
	for (i = 0; i < p->ncallers; i++)
		if (p->callers[i].ret > e && p->callers[i].ret <= e + sz && n < max)
			out[n++] = &p->callers[i];
	return n;
}

static unsigned count_kind(const struct probe_caller *const *v, size_t n,
			   int kind)
{
	unsigned c = 0;
	size_t i;

	for (i = 0; i < n; i++)
		c += v[i]->val.type.kind == kind;
	return c;
}

static void test_go127_dispatch_climbs(void **state)
{
	size_t fl, i;

	unsetenv(PROBE_PLAN_MODE_ENV);
	unsetenv(PROBE_PLAN_REFUSE_ENV);
	for (fl = 0; fl < 4; fl++) {
		struct go_binary *bin = gobin_open("fullwork", 27, flavours[fl]);
		const struct probe_caller *v[64];
		struct probe_plan p;
		char err[256];
		unsigned sc_sites = 0;
		size_t n;

		assert_int_equal(probe_plan_build(bin, &p, err, sizeof(err)), 0);
		for (i = 0; i < p.n; i++) {
			const struct probe_site *s = &p.sites[i];

			if (s->role == TAF_PROBE_ALLOC_ARGS) {
				if (!strcmp(s->func, "runtime.mallocgc"))
					fail_msg("%s: ALLOC_ARGS probe left in mallocgc at %#lx",
						 flavours[fl], (unsigned long)s->vaddr);
				assert_true(s->aux < TAF_REG_COUNT && s->aux != TAF_REG_R14);
				assert_true(s->emulated);
			}
			if (s->role != TAF_PROBE_ALLOC_SITE)
				continue;
			if (strstr(s->func, "mallocgcTinySC")) {
				assert_int_equal(p.asites[s->aux].size_max, 15);
				sc_sites++;
			} else if (!strcmp(s->func, "runtime.mallocgcSmallNoScanSC2")) {
				assert_int_equal(p.asites[s->aux].size_max, 16);
				sc_sites++;
			} else if (!strcmp(s->func, "runtime.mallocgcSmallScanNoHeaderSC6")) {
				assert_int_equal(p.asites[s->aux].size_max, 64);
				sc_sites++;
			} else if (!strstr(s->func, "SC")) {
				assert_int_equal(p.asites[s->aux].size_max, 0);
			}
		}
		assert_true(sc_sites >= 3);
		assert_true(p.chain_passers >= 5);
		for (i = 0; i < p.ncallers; i++)
			assert_int_not_equal(p.callers[i].val.type.kind, TAF_CVAL_NONE);

		/* mallocgc: the two tables and the tiny call. */
		n = entries_in(bin, &p, "runtime.mallocgc", v, 64);
		assert_int_equal(count_kind(v, n, TAF_CVAL_PASS), 3);
		for (i = 0; i < n; i++)
			if (v[i]->val.type.kind == TAF_CVAL_PASS)
				assert_int_equal(v[i]->val.size.kind, TAF_CVAL_BOUND);
		/* make([]byte, n), new(T) of a dispatched size, newarray. */
		n = entries_in(bin, &p, "runtime.makeslice", v, 64);
		assert_int_equal(n, 1);
		assert_int_equal(v[0]->val.type.kind, TAF_CVAL_PASS);
		n = entries_in(bin, &p, "runtime.newobject", v, 64);
		assert_int_equal(count_kind(v, n, TAF_CVAL_PASS), n);
		n = entries_in(bin, &p, "runtime.newarray", v, 64);
		assert_true(n >= 1);
		assert_int_equal(count_kind(v, n, TAF_CVAL_PASS), n);
		/* append: nil for pointer-free elements, SI passed on else. */
		n = entries_in(bin, &p, "runtime.growslice", v, 64);
		assert_int_equal(n, 2);
		assert_int_equal(count_kind(v, n, TAF_CVAL_PENDING), 0);
		assert_int_equal(count_kind(v, n, TAF_CVAL_CONST), 1);
		assert_int_equal(count_kind(v, n, TAF_CVAL_PASS) +
				 count_kind(v, n, TAF_CVAL_STACK), 1);
		/* Map groups: newarray(typ.Group, n), typ an argument. */
		n = entries_in(bin, &p, "internal/runtime/maps.(*Map).growToSmall", v, 64);
		assert_int_equal(count_kind(v, n, TAF_CVAL_PASS_DEREF), 1);
		/* Its caller, mapassign_fast64, has typ in a slot. */
		n = entries_in(bin, &p, "runtime.mapassign_fast64", v, 64);
		assert_true(n >= 1);
		assert_int_equal(count_kind(v, n, TAF_CVAL_PENDING), 0);
		probe_plan_free(&p);
		go_binary_close(bin);
	}
}

static void test_older_versions_have_no_chains(void **state)
{
	int minor;
	size_t fl, i;

	unsetenv(PROBE_PLAN_MODE_ENV);
	unsetenv(PROBE_PLAN_REFUSE_ENV);
	for (minor = 21; minor <= 26; minor++)
		for (fl = 0; fl < 4; fl++) {
			struct go_binary *bin = gobin_open("fullwork", minor, flavours[fl]);
			struct probe_plan p;
			char err[256];

			assert_int_equal(probe_plan_build(bin, &p, err, sizeof(err)), 0);
			assert_int_equal(p.chain_passers + p.chain_captured, 0);
			for (i = 0; i < p.ncallers; i++) {
				int t = p.callers[i].val.type.kind, s = p.callers[i].val.size.kind;

				assert_true(t != TAF_CVAL_PASS && t != TAF_CVAL_PASS_DEREF);
				assert_true(s != TAF_CVAL_BOUND);
			}
			for (i = 0; i < p.n; i++)
				if (p.sites[i].role == TAF_PROBE_ALLOC_ARGS)
					assert_int_equal(p.sites[i].aux, TAF_REG_BX);
			probe_plan_free(&p);
			go_binary_close(bin);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_go127_dispatch_climbs),
		cmocka_unit_test(test_older_versions_have_no_chains),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
