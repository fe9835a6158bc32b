// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_record_view - a record is decoded once: a record shorter than its
 * header, than its header's length or than its kind's body is refused; a
 * good one gives its typed body, and an allocation with --stacks its
 * stack (the PCs only in the record that carries them).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "trace/record_view.h"

static void hdr(struct taf_rec_hdr *h, unsigned kind, size_t len)
{
	h->kind = (uint16_t)kind;
	h->len = (uint16_t)len;
	h->ts = 1000;
	h->pid = 42;
}

static void test_short_records_are_refused(void **state)
{
	struct taf_rec_span_alloc r = { 0 };
	struct record_view v;

	hdr(&r.hdr, TAF_REC_SPAN_ALLOC, sizeof(r));
	assert_int_equal(record_view_decode(&r, sizeof(r.hdr) - 1, &v), -EINVAL);
	/* The header claims more than the ring gave. */
	assert_int_equal(record_view_decode(&r, sizeof(r) - 8, &v), -EINVAL);
	/* Header and length agree, but a span alloc needs its body. */
	r.hdr.len = sizeof(r.hdr);
	assert_int_equal(record_view_decode(&r, sizeof(r.hdr), &v), -EINVAL);
	r.hdr.len = sizeof(r);
	assert_int_equal(record_view_decode(&r, sizeof(r), &v), 0);
	assert_ptr_equal(v.span_alloc, &r);
	assert_ptr_equal(v.hdr, &r.hdr);
}

static void test_every_kind_needs_its_body(void **state)
{
	static const struct { unsigned kind; size_t len; } kinds[] = {
		{ TAF_REC_HEAP_ALLOC, sizeof(struct taf_rec_heap_alloc) },
		{ TAF_REC_SPAN_SWEEP, sizeof(struct taf_rec_span_sweep) },
		{ TAF_REC_SPAN_ALLOC, sizeof(struct taf_rec_span_alloc) },
		{ TAF_REC_SPAN_FREE, sizeof(struct taf_rec_addr) },
		{ TAF_REC_STACK_ALLOC, sizeof(struct taf_rec_stack_alloc) },
		{ TAF_REC_STACK_FREE, sizeof(struct taf_rec_addr) },
		{ TAF_REC_SAMPLED_FREE, sizeof(struct taf_rec_addr) },
		{ TAF_REC_GC_CYCLE, sizeof(struct taf_rec_addr) },
	};
	static uint8_t buf[sizeof(struct taf_rec_span_sweep)];
	struct record_view v;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		memset(buf, 0, sizeof(buf));
		hdr((struct taf_rec_hdr *)buf, kinds[i].kind, kinds[i].len - 1);
		assert_int_equal(record_view_decode(buf, kinds[i].len - 1, &v),
				 -EINVAL);
		((struct taf_rec_hdr *)buf)->len = (uint16_t)kinds[i].len;
		assert_int_equal(record_view_decode(buf, kinds[i].len, &v), 0);
		assert_ptr_equal(v.body, buf);
	}
}

static void test_exec_and_unknown_kinds(void **state)
{
	struct taf_rec_exec e = { 0 };
	struct record_view v;

	/* An exec that is only a header still is a record, without body. */
	hdr(&e.hdr, TAF_REC_EXEC, sizeof(e.hdr));
	assert_int_equal(record_view_decode(&e, sizeof(e.hdr), &v), 0);
	assert_null(v.exec);
	hdr(&e.hdr, TAF_REC_EXEC, sizeof(e));
	assert_int_equal(record_view_decode(&e, sizeof(e), &v), 0);
	assert_ptr_equal(v.exec, &e);
	/* A kind this build does not know: the header, nothing else. */
	hdr(&e.hdr, TAF_REC_KIND_MAX + 3, sizeof(e));
	assert_int_equal(record_view_decode(&e, sizeof(e), &v), 0);
	assert_ptr_equal(v.hdr, &e.hdr);
	assert_null(v.body);
}

static void test_allocation_stacks(void **state)
{
	struct taf_rec_heap_alloc_pcs p = { 0 };
	struct record_view v;

	/* No stack flag: no stack, whatever the length. */
	hdr(&p.s.a.hdr, TAF_REC_HEAP_ALLOC, sizeof(p));
	assert_int_equal(record_view_decode(&p, sizeof(p), &v), 0);
	assert_null(v.stack.stack);
	/* Named by its hash only. */
	p.s.a.hdr.flags = TAF_ALLOC_F_STACK;
	p.s.a.hdr.len = sizeof(p.s);
	assert_int_equal(record_view_decode(&p, sizeof(p.s), &v), 0);
	assert_ptr_equal(v.stack.stack, &p.s);
	assert_null(v.stack.pcs);
	/* Whole: the PCs, their count capped at the array. */
	p.s.a.hdr.len = sizeof(p);
	p.nr_pcs = 1000;
	assert_int_equal(record_view_decode(&p, sizeof(p), &v), 0);
	assert_ptr_equal(v.stack.pcs, p.pcs);
	assert_int_equal(v.stack.nr_pcs, TAF_STACK_DEPTH);
	/* A flag on a record too short for a stack: the allocation alone. */
	p.s.a.hdr.len = sizeof(p.s.a);
	assert_int_equal(record_view_decode(&p, sizeof(p.s.a), &v), 0);
	assert_non_null(v.heap_alloc);
	assert_null(v.stack.stack);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short_records_are_refused),
		cmocka_unit_test(test_every_kind_needs_its_body),
		cmocka_unit_test(test_exec_and_unknown_kinds),
		cmocka_unit_test(test_allocation_stacks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
