// SPDX-License-Identifier: BSD-3-Clause
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "trace/shadow_heap.h"

/* Go 1.23 amd64 facts used below (runtime/sizeclasses.go, mbitmap.go). */
#define HEAP 0xc000000000ull
#define PAGE SH_PAGE_SIZE
#define KC(sizeclass, noscan) ((uint32_t)(((sizeclass) << 1 | (noscan)) << 1))
#define KC_MANUAL 1u
#define KC_TINY KC(2, 1)       /* tinySpanClass: 16 B, noscan */
#define KC_16_SCAN KC(2, 0)
#define KC_48_SCAN KC(5, 0)
#define KC_1024_SCAN KC(36, 0) /* headered objects (> 512 B) */
#define KC_LARGE_SCAN KC(0, 0)
#define KC_LARGE_NOSCAN KC(0, 1)

/* ---- collectors for the iterators -------------------------------------- */

struct obj { uint64_t addr; uint32_t type; };

struct objs {
	struct obj *v;
	size_t n, cap;
};

static int collect_obj(void *ctx, uint64_t addr, uint32_t type)
{
	struct objs *o = ctx;

	if (o->n == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 64;
		o->v = realloc(o->v, o->cap * sizeof(*o->v));
		assert_non_null(o->v);
	}
	o->v[o->n].addr = addr;
	o->v[o->n].type = type;
	o->n++;
	return 0;
}

static struct objs objects_of(const struct shadow_heap *h)
{
	struct objs o = { 0 };

	assert_int_equal(shadow_heap_for_each_object(h, collect_obj, &o), 0);
	return o;
}

struct spans {
	struct sh_span_info v[256];
	size_t n;
};

static int collect_span(void *ctx, const struct sh_span_info *s)
{
	struct spans *sp = ctx;

	assert_true(sp->n < 256);
	sp->v[sp->n++] = *s;
	return 0;
}

struct stacks {
	uint64_t lo[64], size[64];
	size_t n;
};

static int collect_stack(void *ctx, uint64_t lo, uint64_t size)
{
	struct stacks *st = ctx;

	assert_true(st->n < 64);
	st->lo[st->n] = lo;
	st->size[st->n++] = size;
	return 0;
}

/* ---- behaviours -------------------------------------------------------- */

static void test_obj_alloc_then_free_roundtrip(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);
	struct objs o;

	assert_int_equal(shadow_heap_span_alloc(h, HEAP, 1, KC_48_SCAN, 48),
			 SH_OK);
	assert_int_equal(shadow_heap_obj_alloc(h, HEAP + 96, 7), SH_OK);
	assert_int_equal(shadow_heap_live_objects(h), 1);
	o = objects_of(h);
	assert_int_equal(o.n, 1);
	assert_int_equal(o.v[0].addr, HEAP + 96);
	assert_int_equal(o.v[0].type, 7);
	free(o.v);
	assert_int_equal(shadow_heap_obj_free(h, HEAP + 96), SH_OK);
	assert_int_equal(shadow_heap_live_objects(h), 0);
	assert_int_equal(shadow_heap_inconsistent(h), 0);
	shadow_heap_free(h);
}

static void test_tiny_allocs_in_one_block_make_one_live_slot(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);
	uint64_t blk = HEAP + 5 * 16;
	struct objs o;

	shadow_heap_span_alloc(h, HEAP, 1, KC_TINY, 16);
	/* runtime/malloc.go: first tiny object at the block's base, the next
	 * ones at their own (aligned) offsets in the same block. */
	assert_int_equal(shadow_heap_obj_alloc(h, blk, 3), SH_OK);
	assert_int_equal(shadow_heap_obj_alloc(h, blk + 4, 4), SH_OK);
	assert_int_equal(shadow_heap_obj_alloc(h, blk + 9, 5), SH_OK);
	assert_int_equal(shadow_heap_live_objects(h), 1);
	o = objects_of(h);
	assert_int_equal(o.n, 1);
	assert_int_equal(o.v[0].addr, blk);
	assert_int_equal(o.v[0].type, 3); /* the first alloc's type */
	free(o.v);
	assert_int_equal(shadow_heap_inconsistent(h), 0);
	shadow_heap_free(h);
}

static void test_one_free_at_block_base_clears_tiny_block(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);
	uint64_t blk = HEAP + 5 * 16;

	shadow_heap_span_alloc(h, HEAP, 1, KC_TINY, 16);
	shadow_heap_obj_alloc(h, blk, 3);
	shadow_heap_obj_alloc(h, blk + 8, 3);
	assert_int_equal(shadow_heap_obj_free(h, blk), SH_OK);
	assert_int_equal(shadow_heap_live_objects(h), 0);
	/* A new block in the same slot starts again at its base. */
	assert_int_equal(shadow_heap_obj_alloc(h, blk, 6), SH_OK);
	assert_int_equal(shadow_heap_inconsistent(h), 0);
	shadow_heap_free(h);
}

static void test_tiny_interior_alloc_into_dead_block_is_counted(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);

	shadow_heap_span_alloc(h, HEAP, 1, KC_TINY, 16);
	assert_int_equal(shadow_heap_obj_alloc(h, HEAP + 20, 1),
			 SH_ERR_OBJ_TINY_NO_BLOCK);
	assert_int_equal(shadow_heap_live_objects(h), 1); /* still modelled */
	assert_int_equal(shadow_heap_obj_free(h, HEAP + 16), SH_OK);
	shadow_heap_free(h);
}

static void test_headered_alloc_at_base_plus_8_frees_at_base(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);
	struct objs o;

	shadow_heap_span_alloc(h, HEAP, 1, KC_1024_SCAN, 1024);
	/* mallocgc reports x after the 8-byte malloc header. */
	assert_int_equal(shadow_heap_obj_alloc(h, HEAP + 2048 + 8, 9), SH_OK);
	o = objects_of(h);
	assert_int_equal(o.n, 1);
	assert_int_equal(o.v[0].addr, HEAP + 2048);
	free(o.v);
	assert_int_equal(shadow_heap_obj_free(h, HEAP + 2048), SH_OK);
	assert_int_equal(shadow_heap_inconsistent(h), 0);
	shadow_heap_free(h);
}

static void test_span_free_kills_its_objects(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);
	int i;

	shadow_heap_span_alloc(h, HEAP, 1, KC_48_SCAN, 48);
	shadow_heap_span_alloc(h, HEAP + PAGE, 2, KC_16_SCAN, 16);
	for (i = 0; i < 100; i++) {
		shadow_heap_obj_alloc(h, HEAP + i * 48, 1);
		shadow_heap_obj_alloc(h, HEAP + PAGE + i * 16, 2);
	}
	assert_int_equal(shadow_heap_live_objects(h), 200);
	assert_int_equal(shadow_heap_span_free(h, HEAP + PAGE), SH_OK);
	assert_int_equal(shadow_heap_live_objects(h), 100);
	assert_int_equal(shadow_heap_live_spans(h), 1);
	assert_false(shadow_heap_find_span(h, HEAP + PAGE + 16, NULL));
	/* Its objects are gone: freeing one now finds nothing. */
	assert_int_equal(shadow_heap_obj_free(h, HEAP + PAGE + 16),
			 SH_ERR_OBJ_FREE_UNKNOWN);
	shadow_heap_free(h);
}

static void test_alloc_of_live_slot_is_counted_and_updates_type(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);
	struct objs o;

	shadow_heap_span_alloc(h, HEAP, 1, KC_48_SCAN, 48);
	shadow_heap_obj_alloc(h, HEAP + 48, 1);
	assert_int_equal(shadow_heap_obj_alloc(h, HEAP + 48, 2),
			 SH_ERR_OBJ_ALLOC_LIVE);
	assert_int_equal(shadow_heap_stats(h)->errors[SH_ERR_OBJ_ALLOC_LIVE],
			 1);
	assert_int_equal(shadow_heap_live_objects(h), 1);
	o = objects_of(h);
	assert_int_equal(o.v[0].type, 2);
	free(o.v);
	shadow_heap_free(h);
}

static void test_free_of_unknown_address_is_counted(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);

	assert_int_equal(shadow_heap_obj_free(h, HEAP + 64),
			 SH_ERR_OBJ_FREE_UNKNOWN);
	assert_int_equal(shadow_heap_stats(h)->errors[SH_ERR_OBJ_FREE_UNKNOWN],
			 1);
	assert_int_equal(shadow_heap_inconsistent(h), 1);
	assert_int_equal(shadow_heap_ops(h), 1);
	shadow_heap_free(h);
}

static void test_free_of_dead_slot_is_counted(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);

	shadow_heap_span_alloc(h, HEAP, 1, KC_48_SCAN, 48);
	shadow_heap_obj_alloc(h, HEAP, 1);
	shadow_heap_obj_free(h, HEAP);
	assert_int_equal(shadow_heap_obj_free(h, HEAP), SH_ERR_OBJ_FREE_DEAD);
	assert_int_equal(shadow_heap_stats(h)->errors[SH_ERR_OBJ_FREE_DEAD], 1);
	assert_int_equal(shadow_heap_live_objects(h), 0);
	shadow_heap_free(h);
}

static void test_span_free_of_unknown_span_is_counted(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);

	shadow_heap_span_alloc(h, HEAP, 4, KC_MANUAL, 0);
	/* Not a span's base: a page inside one, and a page outside. */
	assert_int_equal(shadow_heap_span_free(h, HEAP + PAGE),
			 SH_ERR_SPAN_FREE_UNKNOWN);
	assert_int_equal(shadow_heap_span_free(h, HEAP + 8 * PAGE),
			 SH_ERR_SPAN_FREE_UNKNOWN);
	assert_int_equal(shadow_heap_live_spans(h), 1);
	assert_int_equal(
		shadow_heap_stats(h)->errors[SH_ERR_SPAN_FREE_UNKNOWN], 2);
	shadow_heap_free(h);
}

static void test_objects_with_unknown_span_go_to_fallback(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);
	struct objs o;

	shadow_heap_span_alloc(h, HEAP + PAGE, 1, KC_48_SCAN, 48);
	shadow_heap_obj_alloc(h, HEAP + PAGE + 48, 2);
	assert_int_equal(shadow_heap_obj_alloc(h, HEAP + 2 * PAGE + 64, 3),
			 SH_ERR_OBJ_NO_SPAN);
	assert_int_equal(shadow_heap_obj_alloc(h, HEAP + 128, 1),
			 SH_ERR_OBJ_NO_SPAN);
	assert_int_equal(shadow_heap_fallback_objects(h), 2);
	assert_int_equal(shadow_heap_live_objects(h), 3);
	/* They iterate too, merged in address order. */
	o = objects_of(h);
	assert_int_equal(o.n, 3);
	assert_int_equal(o.v[0].addr, HEAP + 128);
	assert_int_equal(o.v[0].type, 1);
	assert_int_equal(o.v[1].addr, HEAP + PAGE + 48);
	assert_int_equal(o.v[2].addr, HEAP + 2 * PAGE + 64);
	assert_int_equal(o.v[2].type, 3);
	free(o.v);
	/* And a free at the address finds them. */
	assert_int_equal(shadow_heap_obj_free(h, HEAP + 128), SH_OK);
	assert_int_equal(shadow_heap_fallback_objects(h), 1);
	shadow_heap_free(h);
}

static void test_fallback_free_finds_headered_alloc_8_bytes_on(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);

	shadow_heap_obj_alloc(h, HEAP + 1024 + 8, 1);
	assert_int_equal(shadow_heap_obj_free(h, HEAP + 1024), SH_OK);
	assert_int_equal(shadow_heap_live_objects(h), 0);
	shadow_heap_free(h);
}

static void test_new_span_drops_stale_fallback_objects(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);

	shadow_heap_obj_alloc(h, HEAP + 16, 1);
	shadow_heap_obj_alloc(h, HEAP + PAGE + 32, 1);
	shadow_heap_obj_alloc(h, HEAP + 3 * PAGE, 1); /* outside: stays */
	assert_int_equal(shadow_heap_span_alloc(h, HEAP, 2, KC_16_SCAN, 16),
			 SH_ERR_FALLBACK_STALE);
	assert_int_equal(shadow_heap_stats(h)->errors[SH_ERR_FALLBACK_STALE],
			 2);
	assert_int_equal(shadow_heap_fallback_objects(h), 1);
	assert_int_equal(shadow_heap_live_objects(h), 1);
	/* The new span's slots start empty. */
	assert_int_equal(shadow_heap_obj_alloc(h, HEAP + 16, 2), SH_OK);
	shadow_heap_free(h);
}

static void test_span_alloc_over_live_span_replaces_it(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);
	struct sh_span_info si;

	shadow_heap_span_alloc(h, HEAP, 2, KC_48_SCAN, 48);
	shadow_heap_span_alloc(h, HEAP + 2 * PAGE, 1, KC_48_SCAN, 48);
	shadow_heap_obj_alloc(h, HEAP, 1);
	shadow_heap_obj_alloc(h, HEAP + 2 * PAGE, 1);
	assert_int_equal(shadow_heap_span_alloc(h, HEAP + PAGE, 2, KC_MANUAL,
						0),
			 SH_ERR_SPAN_OVERLAP);
	assert_int_equal(shadow_heap_stats(h)->errors[SH_ERR_SPAN_OVERLAP], 2);
	assert_int_equal(shadow_heap_live_spans(h), 1);
	assert_int_equal(shadow_heap_live_objects(h), 0);
	assert_false(shadow_heap_find_span(h, HEAP, NULL));
	assert_true(shadow_heap_find_span(h, HEAP + 2 * PAGE + 100, &si));
	assert_int_equal(si.base, HEAP + PAGE);
	assert_int_equal(si.kindclass, KC_MANUAL);
	shadow_heap_free(h);
}

static void test_iteration_is_in_address_order(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);
	uint64_t far = HEAP + (5ull << 37); /* another L2 region */
	struct spans sp = { .n = 0 };
	struct stacks st = { .n = 0 };
	struct objs o;
	size_t i;

	/* Created out of order, across page-map leaves and L2 regions. */
	shadow_heap_span_alloc(h, far, 1, KC_48_SCAN, 48);
	shadow_heap_span_alloc(h, HEAP + (64ull << 20), 1, KC_16_SCAN, 16);
	shadow_heap_span_alloc(h, HEAP, 3, KC_MANUAL, 0);
	shadow_heap_span_alloc(h, HEAP + 3 * PAGE, 1, KC_48_SCAN, 48);
	shadow_heap_obj_alloc(h, far + 48, 1);
	shadow_heap_obj_alloc(h, HEAP + (64ull << 20) + 32, 2);
	shadow_heap_obj_alloc(h, HEAP + 3 * PAGE + 96, 3);
	shadow_heap_obj_alloc(h, HEAP + 3 * PAGE, 4);
	shadow_heap_obj_alloc(h, HEAP + 10 * PAGE, 5); /* fallback */
	shadow_heap_stack_alloc(h, HEAP + 2 * PAGE, 8192);
	shadow_heap_stack_alloc(h, HEAP, 8192);
	shadow_heap_stack_alloc(h, HEAP + PAGE, 4096);

	assert_int_equal(shadow_heap_for_each_span(h, collect_span, &sp), 0);
	assert_int_equal(sp.n, 4);
	for (i = 1; i < sp.n; i++)
		assert_true(sp.v[i - 1].base < sp.v[i].base);
	assert_int_equal(sp.v[0].npages, 3);

	o = objects_of(h);
	assert_int_equal(o.n, 5);
	for (i = 1; i < o.n; i++)
		assert_true(o.v[i - 1].addr < o.v[i].addr);
	assert_int_equal(o.v[2].addr, HEAP + 10 * PAGE);
	free(o.v);

	assert_int_equal(shadow_heap_for_each_stack(h, collect_stack, &st), 0);
	assert_int_equal(st.n, 3);
	assert_int_equal(st.lo[0], HEAP);
	assert_int_equal(st.lo[1], HEAP + PAGE);
	assert_int_equal(st.size[1], 4096);
	assert_int_equal(st.lo[2], HEAP + 2 * PAGE);
	shadow_heap_free(h);
}

static int stop_after_two(void *ctx, uint64_t addr, uint32_t type)
{
	return ++*(int *)ctx == 2 ? 42 : 0;
}

static void test_iteration_stops_when_callback_returns_nonzero(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);
	int seen = 0, i;

	shadow_heap_span_alloc(h, HEAP, 1, KC_16_SCAN, 16);
	for (i = 0; i < 10; i++)
		shadow_heap_obj_alloc(h, HEAP + 16 * i, 0);
	assert_int_equal(shadow_heap_for_each_object(h, stop_after_two, &seen),
			 42);
	assert_int_equal(seen, 2);
	shadow_heap_free(h);
}

static void test_large_object_span_has_one_slot(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);
	struct sh_span_info si;
	struct objs o;

	shadow_heap_span_alloc(h, HEAP, 5, KC_LARGE_SCAN, 5 * PAGE);
	assert_true(shadow_heap_find_span(h, HEAP + 4 * PAGE + 1, &si));
	assert_int_equal(si.nelems, 1);
	assert_int_equal(shadow_heap_obj_alloc(h, HEAP, 11), SH_OK);
	/* Anything else in the span is the same slot. */
	assert_int_equal(shadow_heap_obj_alloc(h, HEAP + 3 * PAGE, 11),
			 SH_ERR_OBJ_ALLOC_LIVE);
	o = objects_of(h);
	assert_int_equal(o.n, 1);
	assert_int_equal(o.v[0].addr, HEAP);
	free(o.v);
	assert_int_equal(shadow_heap_obj_free(h, HEAP), SH_OK);
	assert_int_equal(shadow_heap_live_objects(h), 0);
	shadow_heap_free(h);
}

static void test_manual_span_accepts_no_objects(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);
	struct sh_span_info si;

	/* elemsize is ignored for manual spans (stacks, workbufs). */
	assert_int_equal(shadow_heap_span_alloc(h, HEAP, 2, KC_MANUAL, 0),
			 SH_OK);
	assert_true(shadow_heap_find_span(h, HEAP + PAGE, &si));
	assert_int_equal(si.nelems, 0);
	assert_int_equal(shadow_heap_obj_alloc(h, HEAP + 64, 1),
			 SH_ERR_OBJ_NOT_IN_SLOT);
	assert_int_equal(shadow_heap_obj_free(h, HEAP + 64),
			 SH_ERR_OBJ_NOT_IN_SLOT);
	assert_int_equal(shadow_heap_live_objects(h), 0);
	assert_int_equal(shadow_heap_fallback_objects(h), 0);
	shadow_heap_free(h);
}

static void test_alloc_in_tail_after_last_slot_is_counted(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);

	/* 8192 / 48 = 170 slots, 32 bytes of tail. */
	shadow_heap_span_alloc(h, HEAP, 1, KC_48_SCAN, 48);
	assert_int_equal(shadow_heap_obj_alloc(h, HEAP + 169 * 48, 1), SH_OK);
	assert_int_equal(shadow_heap_obj_alloc(h, HEAP + 170 * 48, 1),
			 SH_ERR_OBJ_NOT_IN_SLOT);
	shadow_heap_free(h);
}

/*
 * The slot index comes from a multiply by ceil(2^32 / elemsize), which can
 * overshoot by one for offsets past 2^32 / error; near the end of a 4 GiB
 * span of 24-byte slots it does, and must be corrected.
 */
static void test_slot_index_is_exact_near_end_of_4gib_span(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);
	uint64_t np = 1ull << 19, es = 24, k;

	assert_int_equal(shadow_heap_span_alloc(h, HEAP, np, KC_48_SCAN, es),
			 SH_OK);
	for (k = (np * PAGE) / es; k > (np * PAGE) / es - 1000; k--) {
		/* The last byte of slot k - 1, then that slot's base. */
		assert_int_equal(shadow_heap_obj_alloc(h, HEAP + k * es - 1, 1),
				 SH_OK);
		assert_int_equal(shadow_heap_obj_free(h, HEAP + (k - 1) * es),
				 SH_OK);
	}
	assert_int_equal(shadow_heap_live_objects(h), 0);
	shadow_heap_free(h);
}

static void test_bad_span_arguments_are_refused(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);

	assert_int_equal(shadow_heap_span_alloc(h, HEAP + 8, 1, KC_MANUAL, 0),
			 SH_ERR_BAD_ARG);
	assert_int_equal(shadow_heap_span_alloc(h, HEAP, 0, KC_MANUAL, 0),
			 SH_ERR_BAD_ARG);
	assert_int_equal(shadow_heap_span_alloc(h, HEAP, 1, KC_48_SCAN, 0),
			 SH_ERR_BAD_ARG);
	assert_int_equal(shadow_heap_span_alloc(h, 1ull << 48, 1, KC_MANUAL, 0),
			 SH_ERR_BAD_ARG);
	assert_int_equal(shadow_heap_live_spans(h), 0);
	shadow_heap_free(h);
}

static void test_find_span_covers_every_page_across_leaves(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);
	/* 64 MiB leaf boundary in the middle of a 1 GiB span. */
	uint64_t base = HEAP + (64ull << 20) - 3 * PAGE, np = 131072, p;
	struct sh_span_info si;

	assert_int_equal(shadow_heap_span_alloc(h, base, np, KC_LARGE_NOSCAN,
						np * PAGE),
			 SH_OK);
	for (p = 0; p < np; p += 997) {
		assert_true(shadow_heap_find_span(h, base + p * PAGE + 5, &si));
		assert_int_equal(si.base, base);
	}
	assert_true(shadow_heap_find_span(h, base + np * PAGE - 1, NULL));
	assert_false(shadow_heap_find_span(h, base + np * PAGE, NULL));
	assert_false(shadow_heap_find_span(h, base - 1, NULL));
	assert_int_equal(shadow_heap_obj_alloc(h, base, 1), SH_OK);
	assert_int_equal(shadow_heap_span_free(h, base), SH_OK);
	assert_false(shadow_heap_find_span(h, base + (np / 2) * PAGE, NULL));
	assert_int_equal(shadow_heap_live_objects(h), 0);
	shadow_heap_free(h);
}

static void test_stack_alloc_free_and_duplicates(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);
	struct stacks st = { .n = 0 };

	assert_int_equal(shadow_heap_stack_alloc(h, HEAP, 8192), SH_OK);
	assert_int_equal(shadow_heap_stack_alloc(h, HEAP, 16384),
			 SH_ERR_STACK_DUP);
	shadow_heap_for_each_stack(h, collect_stack, &st);
	assert_int_equal(st.n, 1);
	assert_int_equal(st.size[0], 16384);
	assert_int_equal(shadow_heap_stack_free(h, HEAP), SH_OK);
	assert_int_equal(shadow_heap_stack_free(h, HEAP),
			 SH_ERR_STACK_FREE_UNKNOWN);
	assert_int_equal(shadow_heap_live_stacks(h), 0);
	shadow_heap_free(h);
}

static void test_runtime_types_only_for_headered_scan_spans(void **state)
{
	struct shadow_heap *h = shadow_heap_new(SH_F_RUNTIME_TYPES);
	uint64_t big = HEAP + 8 * PAGE;
	struct objs o;

	/* typePointersOfUnchecked: noscan -> nil; <= 512 B (heap bits in
	 * span) -> nil; header or large scan -> the type. */
	shadow_heap_span_alloc(h, HEAP, 1, KC_TINY, 16);
	shadow_heap_span_alloc(h, HEAP + PAGE, 1, KC_48_SCAN, 48);
	shadow_heap_span_alloc(h, HEAP + 2 * PAGE, 1, KC_1024_SCAN, 1024);
	shadow_heap_span_alloc(h, HEAP + 3 * PAGE, 2, KC_LARGE_NOSCAN,
			       2 * PAGE);
	shadow_heap_span_alloc(h, big, 2, KC_LARGE_SCAN, 2 * PAGE);
	shadow_heap_obj_alloc(h, HEAP, 1);
	shadow_heap_obj_alloc(h, HEAP + PAGE, 2);
	shadow_heap_obj_alloc(h, HEAP + 2 * PAGE + 8, 3);
	shadow_heap_obj_alloc(h, HEAP + 3 * PAGE, 4);
	shadow_heap_obj_alloc(h, big, 5);
	o = objects_of(h);
	assert_int_equal(o.n, 5);
	assert_int_equal(o.v[0].type, 0);
	assert_int_equal(o.v[1].type, 0);
	assert_int_equal(o.v[2].type, 3);
	assert_int_equal(o.v[3].type, 0);
	assert_int_equal(o.v[4].type, 5);
	free(o.v);
	shadow_heap_free(h);
}

/* ---- randomized test against a reference model ------------------------- */

/*
 * The reference is deliberately naive: a list of spans searched linearly,
 * a flag and a type per 8-byte granule for slot bases, and a flag and type
 * per byte for fallback objects, over a small domain that straddles a
 * 64 MiB page-map leaf boundary.
 */
#define R_PAGES 48
#define R_BASE (HEAP + (64ull << 20) - 16 * PAGE)
#define R_BYTES (R_PAGES * PAGE)
#define R_MAXSPANS 64

struct rspan {
	uint64_t base, npages, elemsize, nelems;
	uint32_t kc;
	int live;
};

struct ref {
	unsigned flags;
	struct rspan sp[R_MAXSPANS];
	int nsp;
	uint8_t live[R_BYTES / 8];
	uint32_t type[R_BYTES / 8];
	uint8_t fb[R_BYTES];
	uint32_t fbtype[R_BYTES];
	uint64_t nlive, nfb;
	uint64_t stack_size[16]; /* 0 = none */
	uint64_t errors[SH_ERR_COUNT];
};

static const struct { uint32_t kc; uint64_t es; } r_kinds[] = {
	{ KC_TINY, 16 },     { KC_16_SCAN, 16 }, { KC_48_SCAN, 48 },
	{ KC_1024_SCAN, 1024 }, { KC(1, 1), 8 }, { KC_LARGE_SCAN, 0 },
	{ KC_LARGE_NOSCAN, 0 }, { KC_MANUAL, 0 },
};

static int r_err(struct ref *r, int e)
{
	r->errors[e]++;
	return e;
}

static struct rspan *r_find(struct ref *r, uint64_t addr)
{
	int i;

	for (i = 0; i < r->nsp; i++) {
		struct rspan *s = &r->sp[i];

		if (s->live && addr >= s->base &&
		    addr < s->base + s->npages * PAGE)
			return s;
	}
	return NULL;
}

static void r_kill(struct ref *r, struct rspan *s)
{
	uint64_t g, g0 = (s->base - R_BASE) / 8;

	for (g = g0; g < g0 + s->npages * PAGE / 8; g++) {
		r->nlive -= r->live[g];
		r->live[g] = 0;
	}
	s->live = 0;
}

static int r_span_alloc(struct ref *r, uint64_t base, uint64_t np,
			uint32_t kc, uint64_t es)
{
	uint64_t a, stale = 0;
	int i, err = SH_OK, slot = -1;

	for (i = 0; i < r->nsp; i++) {
		struct rspan *s = &r->sp[i];

		if (s->live && s->base < base + np * PAGE &&
		    base < s->base + s->npages * PAGE) {
			r_kill(r, s);
			err = r_err(r, SH_ERR_SPAN_OVERLAP);
		}
	}
	for (i = 0; i < r->nsp && slot < 0; i++)
		if (!r->sp[i].live)
			slot = i;
	if (slot < 0)
		slot = r->nsp++;
	assert_true(r->nsp <= R_MAXSPANS); /* <= R_PAGES live spans */
	r->sp[slot] = (struct rspan){ base, np, (kc & 1) ? 0 : es,
				      (kc & 1) ? 0 : np * PAGE / es, kc, 1 };
	for (a = base - R_BASE; a < base - R_BASE + np * PAGE; a++) {
		if (r->fb[a]) {
			r->fb[a] = 0;
			r->nfb--;
			r->nlive--;
			stale++;
		}
	}
	r->errors[SH_ERR_FALLBACK_STALE] += stale;
	if (stale && !err)
		err = SH_ERR_FALLBACK_STALE;
	return err;
}

static int r_span_free(struct ref *r, uint64_t base)
{
	struct rspan *s = r_find(r, base);

	if (!s || s->base != base)
		return r_err(r, SH_ERR_SPAN_FREE_UNKNOWN);
	r_kill(r, s);
	return SH_OK;
}

static bool r_slot(struct rspan *s, uint64_t addr, uint64_t *sb,
		   uint64_t *rem)
{
	uint64_t i;

	if (!s->nelems)
		return false;
	i = (addr - s->base) / s->elemsize;
	if (i >= s->nelems)
		return false;
	*sb = s->base + i * s->elemsize;
	*rem = addr - *sb;
	return true;
}

static int r_obj_alloc(struct ref *r, uint64_t addr, uint32_t t)
{
	struct rspan *s = r_find(r, addr);
	uint64_t sb, rem, g;
	bool tiny, keep;

	if (!s) {
		uint64_t a = addr - R_BASE;

		r->fbtype[a] = t;
		if (r->fb[a])
			return r_err(r, SH_ERR_OBJ_ALLOC_LIVE);
		r->fb[a] = 1;
		r->nfb++;
		r->nlive++;
		return r_err(r, SH_ERR_OBJ_NO_SPAN);
	}
	if (!r_slot(s, addr, &sb, &rem))
		return r_err(r, SH_ERR_OBJ_NOT_IN_SLOT);
	g = (sb - R_BASE) / 8;
	tiny = s->elemsize == 16 && s->kc == KC_TINY;
	if (r->live[g] && rem && tiny)
		return SH_OK;
	keep = !(r->flags & SH_F_RUNTIME_TYPES) ||
	       (!(s->kc & 2) && s->elemsize > 512);
	r->type[g] = keep ? t : 0;
	if (r->live[g])
		return r_err(r, SH_ERR_OBJ_ALLOC_LIVE);
	r->live[g] = 1;
	r->nlive++;
	return rem && tiny ? r_err(r, SH_ERR_OBJ_TINY_NO_BLOCK) : SH_OK;
}

static int r_obj_free(struct ref *r, uint64_t addr)
{
	struct rspan *s = r_find(r, addr);
	uint64_t sb, rem, g, a = addr - R_BASE;

	if (!s) {
		if (!r->fb[a] && a + 8 < R_BYTES && r->fb[a + 8])
			a += 8;
		if (!r->fb[a])
			return r_err(r, SH_ERR_OBJ_FREE_UNKNOWN);
		r->fb[a] = 0;
		r->nfb--;
		r->nlive--;
		return SH_OK;
	}
	if (!r_slot(s, addr, &sb, &rem))
		return r_err(r, SH_ERR_OBJ_NOT_IN_SLOT);
	g = (sb - R_BASE) / 8;
	if (!r->live[g])
		return r_err(r, SH_ERR_OBJ_FREE_DEAD);
	r->live[g] = 0;
	r->nlive--;
	return rem ? r_err(r, SH_ERR_OBJ_FREE_INTERIOR) : SH_OK;
}

/* Objects in address order, the reference's way: walk every byte. */
static void r_check_objects(struct ref *r, const struct shadow_heap *h)
{
	struct objs o = objects_of(h);
	uint64_t a;
	size_t n = 0;

	for (a = 0; a < R_BYTES; a++) {
		bool slot = !(a & 7) && r->live[a / 8];

		if (!slot && !r->fb[a])
			continue;
		assert_true(n < o.n);
		assert_int_equal(o.v[n].addr, R_BASE + a);
		assert_int_equal(o.v[n].type,
				 slot ? r->type[a / 8] : r->fbtype[a]);
		n++;
	}
	assert_int_equal(n, o.n);
	free(o.v);
}

static int cmp_rspan(const void *a, const void *b)
{
	const struct rspan *x = a, *y = b;

	return x->base < y->base ? -1 : x->base > y->base;
}

static void r_check_spans(struct ref *r, const struct shadow_heap *h)
{
	struct rspan live[R_MAXSPANS];
	struct spans sp = { .n = 0 };
	size_t n = 0, i;

	for (i = 0; i < (size_t)r->nsp; i++)
		if (r->sp[i].live)
			live[n++] = r->sp[i];
	qsort(live, n, sizeof(live[0]), cmp_rspan);
	shadow_heap_for_each_span(h, collect_span, &sp);
	assert_int_equal(sp.n, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(sp.v[i].base, live[i].base);
		assert_int_equal(sp.v[i].npages, live[i].npages);
		assert_int_equal(sp.v[i].kindclass, live[i].kc);
	}
}

static void r_check_stacks(struct ref *r, const struct shadow_heap *h)
{
	struct stacks st = { .n = 0 };
	size_t i, n = 0;

	shadow_heap_for_each_stack(h, collect_stack, &st);
	for (i = 0; i < 16; i++) {
		if (!r->stack_size[i])
			continue;
		assert_true(n < st.n);
		assert_int_equal(st.lo[n], HEAP + (1ull << 30) + i * 8192);
		assert_int_equal(st.size[n], r->stack_size[i]);
		n++;
	}
	assert_int_equal(n, st.n);
}

static uint64_t rng_state;

static uint64_t rnd(uint64_t n)
{
	/* xorshift64*: reproducible across libcs. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return ((rng_state * 0x2545f4914f6cdd1dull) >> 11) % n;
}

/* An address the generator aims at: mostly slots of live spans. */
static uint64_t r_pick_addr(struct ref *r)
{
	struct rspan *live[R_MAXSPANS], *s;
	uint64_t k = rnd(100), slot, a;
	int n = 0, i;

	for (i = 0; i < r->nsp; i++)
		if (r->sp[i].live && r->sp[i].nelems)
			live[n++] = &r->sp[i];
	if (!n || k < 8)
		return R_BASE + rnd(R_BYTES / 8) * 8;
	if (k < 10) /* unaligned: tiny objects where no span is known */
		return R_BASE + rnd(R_BYTES);
	s = live[rnd(n)];
	slot = rnd(s->nelems + 1); /* sometimes the tail */
	a = s->base + slot * s->elemsize;
	if (k >= 90)
		a += 8; /* headered */
	else if (k >= 75) /* tiny continuation, or a stray interior one */
		a += 1 + rnd(15);
	return a < R_BASE + R_BYTES ? a : R_BASE + rnd(R_BYTES);
}

static void run_random_ops(unsigned flags, uint64_t nops)
{
	struct shadow_heap *h = shadow_heap_new(flags);
	struct ref *r = calloc(1, sizeof(*r));
	uint64_t op;
	int i;

	assert_non_null(r);
	r->flags = flags;
	rng_state = 0x9e3779b97f4a7c15ull ^ flags;
	for (op = 0; op < nops; op++) {
		uint64_t k = rnd(10000), a, np;
		int got, want;

		if (k < 20) {
			int kind = rnd(sizeof(r_kinds) / sizeof(r_kinds[0]));
			uint64_t pg = rnd(R_PAGES), es;

			np = 1 + rnd(4);
			if (pg + np > R_PAGES)
				np = R_PAGES - pg;
			es = r_kinds[kind].es ? r_kinds[kind].es : np * PAGE;
			a = R_BASE + pg * PAGE;
			want = r_span_alloc(r, a, np, r_kinds[kind].kc, es);
			got = shadow_heap_span_alloc(h, a, np,
						     r_kinds[kind].kc, es);
		} else if (k < 30) {
			a = r_pick_addr(r) & ~(PAGE - 1);
			if (rnd(4) == 0)
				a = R_BASE + rnd(R_PAGES) * PAGE;
			else if (r_find(r, a))
				a = r_find(r, a)->base;
			want = r_span_free(r, a);
			got = shadow_heap_span_free(h, a);
		} else if (k < 6000) {
			uint32_t t = rnd(4) ? 1 + (uint32_t)rnd(1000) : 0;

			a = r_pick_addr(r);
			want = r_obj_alloc(r, a, t);
			got = shadow_heap_obj_alloc(h, a, t);
		} else if (k < 9800) {
			a = r_pick_addr(r);
			if (rnd(8) == 0) /* tiny blocks free at their base */
				a &= ~15ull;
			want = r_obj_free(r, a);
			got = shadow_heap_obj_free(h, a);
		} else {
			uint64_t si = rnd(16), sz = 2048ull << rnd(4);

			a = HEAP + (1ull << 30) + si * 8192;
			if (k < 9900) {
				want = r->stack_size[si] ? SH_ERR_STACK_DUP
							 : SH_OK;
				r->stack_size[si] = sz;
				got = shadow_heap_stack_alloc(h, a, sz);
			} else {
				want = r->stack_size[si]
					       ? SH_OK
					       : SH_ERR_STACK_FREE_UNKNOWN;
				r->stack_size[si] = 0;
				got = shadow_heap_stack_free(h, a);
			}
			if (want)
				r->errors[want]++;
		}
		if (got != want)
			fail_msg("op %llu (k=%llu addr=%#llx): got %s, want %s",
				 (unsigned long long)op, (unsigned long long)k,
				 (unsigned long long)a,
				 shadow_heap_err_name(got),
				 shadow_heap_err_name(want));
		assert_int_equal(shadow_heap_live_objects(h), r->nlive);
		if (op % 25000 == 0 || op == nops - 1) {
			r_check_objects(r, h);
			r_check_spans(r, h);
			r_check_stacks(r, h);
			assert_int_equal(shadow_heap_fallback_objects(h),
					 r->nfb);
		}
	}
	for (i = 1; i < SH_ERR_COUNT; i++)
		assert_int_equal(shadow_heap_stats(h)->errors[i], r->errors[i]);
	assert_int_equal(shadow_heap_ops(h), nops);
	shadow_heap_free(h);
	free(r);
}

static void test_random_ops_match_reference_model(void **state)
{
	run_random_ops(0, 1000000);
}

static void test_random_ops_match_reference_with_runtime_types(void **state)
{
	run_random_ops(SH_F_RUNTIME_TYPES, 200000);
}

/* ---- memory ------------------------------------------------------------ */

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/*
 * 4.2 M small objects (half typed), 16 K headered ones and some large ones:
 * the module's own accounting stays under the bound stated in
 * shadow_heap.h, and so does what malloc really handed out.
 */
static void test_memory_per_live_object_is_under_bound(void **state)
{
	enum { SMALL_SPANS = 8192, MID_SPANS = 2048, LARGE_SPANS = 256 };
	size_t before = heap_in_use(), fixed, mem, used;
	struct shadow_heap *h = shadow_heap_new(0);
	uint64_t a = HEAP, objs = 0, slots = 0, typed_slots = 0, spans = 0;
	uint64_t leaves, l2s;
	double bound;
	int i, j;

	fixed = shadow_heap_mem_bytes(h);
	for (i = 0; i < SMALL_SPANS; i++, a += PAGE) {
		uint32_t t = i & 1 ? 7 : 0;

		assert_int_equal(shadow_heap_span_alloc(h, a, 1, KC_16_SCAN, 16),
				 SH_OK);
		for (j = 0; j < 512; j++)
			assert_int_equal(shadow_heap_obj_alloc(h, a + 16 * j, t),
					 SH_OK);
		objs += 512;
		slots += 512;
		typed_slots += t ? 512 : 0;
		spans++;
	}
	for (i = 0; i < MID_SPANS; i++, a += PAGE) {
		shadow_heap_span_alloc(h, a, 1, KC_1024_SCAN, 1024);
		for (j = 0; j < 8; j++)
			shadow_heap_obj_alloc(h, a + 1024 * j + 8, 9);
		objs += 8;
		slots += 8;
		typed_slots += 8;
		spans++;
	}
	for (i = 0; i < LARGE_SPANS; i++, a += 4 * PAGE) {
		shadow_heap_span_alloc(h, a, 4, KC_LARGE_SCAN, 4 * PAGE);
		shadow_heap_obj_alloc(h, a, 11);
		objs++;
		slots++;
		typed_slots++;
		spans++;
	}
	assert_int_equal(shadow_heap_live_objects(h), objs);
	assert_int_equal(shadow_heap_inconsistent(h), 0);

	/* The page map: 64 MiB leaves and 128 GiB L2 tables touched. */
	leaves = ((a - 1) >> 26) - (HEAP >> 26) + 1;
	l2s = ((a - 1) >> 37) - (HEAP >> 37) + 1;
	bound = fixed + 0.125 * slots + 4.0 * typed_slots + 152.0 * spans +
		leaves * (32768 + 16) + l2s * (16384 + 16);
	mem = shadow_heap_mem_bytes(h);
	used = heap_in_use() - before;
	print_message("%llu objects: %.3f B/object, %zu bytes\n",
		      (unsigned long long)objs, (double)mem / objs, mem);
	print_message("malloc'd %zu bytes, bound %.0f bytes\n", used, bound);
	assert_true(mem <= bound);
	/* Page rounding of mmap'd blocks (span table, malloc state). */
	assert_true(used <= bound + 64 * 1024);
	/* Full 16-byte spans: 0.125 + 152/512 (+ 4 typed) per object. */
	assert_true((double)mem / objs < 4.5);
	shadow_heap_free(h);
}

static void test_memory_returns_after_spans_die(void **state)
{
	struct shadow_heap *h = shadow_heap_new(0);
	size_t with, after;
	int i, j;

	shadow_heap_span_alloc(h, HEAP, 1, KC_16_SCAN, 16);
	shadow_heap_span_free(h, HEAP); /* table, leaf, L2 now exist */
	after = shadow_heap_mem_bytes(h);
	for (i = 0; i < 100; i++) {
		shadow_heap_span_alloc(h, HEAP + i * PAGE, 1, KC_16_SCAN, 16);
		for (j = 0; j < 512; j += 3)
			shadow_heap_obj_alloc(h, HEAP + i * PAGE + 16 * j, 1);
	}
	with = shadow_heap_mem_bytes(h);
	assert_true(with > after + 100 * (64 + 2048));
	for (i = 0; i < 100; i++)
		shadow_heap_span_free(h, HEAP + i * PAGE);
	assert_int_equal(shadow_heap_mem_bytes(h), after);
	shadow_heap_free(h);
}

/* Seeding a span's bits at once is seeding its live slots one by one. */
static void test_span_seed_live_is_the_objects_one_by_one(void **state)
{
	/* 16-byte spans of 512 slots (words), 1024-byte ones of 8 (inline);
	 * nelems one short, as spans with heap bits at their end are. */
	static const struct { uint32_t kc, size, npages, nelems, freeindex; } c[] = {
		{ KC_16_SCAN, 16, 1, 504, 70 },
		{ KC_16_SCAN, 16, 1, 512, 512 },
		{ KC_48_SCAN, 48, 1, 170, 0 },
		{ KC_1024_SCAN, 1024, 1, 8, 3 },
	};
	size_t k, i;

	for (k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		struct shadow_heap *a = shadow_heap_new(0), *b = shadow_heap_new(0);
		uint8_t bits[64];
		struct objs oa, ob;
		uint64_t want = 0;

		/* A pattern, and garbage past the last slot. */
		for (i = 0; i < sizeof(bits); i++)
			bits[i] = (uint8_t)(0x5a ^ (i * 37));
		assert_int_equal(shadow_heap_span_alloc(a, HEAP, c[k].npages,
							c[k].kc, c[k].size), SH_OK);
		assert_int_equal(shadow_heap_span_alloc(b, HEAP, c[k].npages,
							c[k].kc, c[k].size), SH_OK);
		for (i = 0; i < c[k].nelems; i++)
			if (i < c[k].freeindex || (bits[i / 8] >> (i % 8) & 1)) {
				assert_int_equal(shadow_heap_obj_alloc(
					a, HEAP + i * c[k].size, 0), SH_OK);
				want++;
			}
		assert_int_equal(shadow_heap_span_seed_live(b, HEAP, bits,
							    c[k].nelems,
							    c[k].freeindex),
				 (int)want);
		assert_int_equal(shadow_heap_live_objects(b), want);
		oa = objects_of(a);
		ob = objects_of(b);
		assert_int_equal(oa.n, ob.n);
		for (i = 0; i < oa.n; i++) {
			assert_int_equal(oa.v[i].addr, ob.v[i].addr);
			assert_int_equal(oa.v[i].type, ob.v[i].type);
		}
		assert_int_equal(shadow_heap_stats(b)->ops[SH_OP_OBJ_ALLOC], want);
		/* The slots behave as allocated ones: a free finds them. */
		if (want)
			assert_int_equal(shadow_heap_obj_free(b, ob.v[0].addr),
					 SH_OK);
		/* Not fresh any more: the caller goes one by one. */
		assert_int_equal(shadow_heap_span_seed_live(a, HEAP, bits,
							    c[k].nelems, 0),
				 want ? -ENOENT : 0);
		/* More slots than the span has, or no span. */
		assert_int_equal(shadow_heap_span_seed_live(
					 b, HEAP + (1 << 20), bits, 1, 0), -ENOENT);
		free(oa.v);
		free(ob.v);
		shadow_heap_free(a);
		shadow_heap_free(b);
	}
	{
		struct shadow_heap *h = shadow_heap_new(0);
		uint8_t bits[8] = { 0xff };

		assert_int_equal(shadow_heap_span_alloc(h, HEAP, 1, KC_1024_SCAN,
							1024), SH_OK);
		assert_int_equal(shadow_heap_span_seed_live(h, HEAP, bits, 9, 0),
				 -ENOENT);
		/* A span holding a typed object keeps its types: refused. */
		assert_int_equal(shadow_heap_obj_alloc(h, HEAP, 5), SH_OK);
		assert_int_equal(shadow_heap_obj_free(h, HEAP), SH_OK);
		assert_int_equal(shadow_heap_span_seed_live(h, HEAP, bits, 8, 0),
				 -ENOENT);
		shadow_heap_free(h);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_obj_alloc_then_free_roundtrip),
		cmocka_unit_test(test_tiny_allocs_in_one_block_make_one_live_slot),
		cmocka_unit_test(test_one_free_at_block_base_clears_tiny_block),
		cmocka_unit_test(test_tiny_interior_alloc_into_dead_block_is_counted),
		cmocka_unit_test(test_headered_alloc_at_base_plus_8_frees_at_base),
		cmocka_unit_test(test_span_free_kills_its_objects),
		cmocka_unit_test(test_alloc_of_live_slot_is_counted_and_updates_type),
		cmocka_unit_test(test_free_of_unknown_address_is_counted),
		cmocka_unit_test(test_free_of_dead_slot_is_counted),
		cmocka_unit_test(test_span_free_of_unknown_span_is_counted),
		cmocka_unit_test(test_objects_with_unknown_span_go_to_fallback),
		cmocka_unit_test(test_fallback_free_finds_headered_alloc_8_bytes_on),
		cmocka_unit_test(test_new_span_drops_stale_fallback_objects),
		cmocka_unit_test(test_span_alloc_over_live_span_replaces_it),
		cmocka_unit_test(test_iteration_is_in_address_order),
		cmocka_unit_test(test_iteration_stops_when_callback_returns_nonzero),
		cmocka_unit_test(test_large_object_span_has_one_slot),
		cmocka_unit_test(test_manual_span_accepts_no_objects),
		cmocka_unit_test(test_alloc_in_tail_after_last_slot_is_counted),
		cmocka_unit_test(test_slot_index_is_exact_near_end_of_4gib_span),
		cmocka_unit_test(test_bad_span_arguments_are_refused),
		cmocka_unit_test(test_find_span_covers_every_page_across_leaves),
		cmocka_unit_test(test_stack_alloc_free_and_duplicates),
		cmocka_unit_test(test_runtime_types_only_for_headered_scan_spans),
		cmocka_unit_test(test_random_ops_match_reference_model),
		cmocka_unit_test(test_random_ops_match_reference_with_runtime_types),
		cmocka_unit_test(test_memory_per_live_object_is_under_bound),
		cmocka_unit_test(test_memory_returns_after_spans_die),
		cmocka_unit_test(test_span_seed_live_is_the_objects_one_by_one),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
