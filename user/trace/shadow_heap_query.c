// SPDX-License-Identifier: BSD-3-Clause
/*
 * shadow_heap_query.c - what the shadow heap holds: lookups, walks in
 * address order (the exists events), counts, memory and names.
 */
#include "trace/shadow_heap.h"
#include "trace/shadow_heap_impl.h"

#include <errno.h>
#include <stdlib.h>

#include "util/u64_map.h"

static void span_info(const struct sh_span *s, struct sh_span_info *out)
{
	out->base = s->base;
	out->npages = s->npages;
	out->kindclass = s->kindclass;
	out->nelems = s->nelems;
	out->elemsize = s->elemsize;
	out->nlive = s->nlive;
}

bool shadow_heap_find_span(const struct shadow_heap *h, uint64_t addr,
			   struct sh_span_info *out)
{
	uint32_t idx = span_at(h, addr);

	if (!idx)
		return false;
	if (out)
		span_info(&h->spans[idx], out);
	return true;
}

int shadow_heap_obj_slot(const struct shadow_heap *h, uint64_t addr,
			 uint64_t *slot_base, struct sh_span_info *span)
{
	uint32_t idx = span_at(h, addr), slot;
	const struct sh_span *s;
	uint64_t rem;

	*slot_base = addr;
	if (!idx)
		return SH_SLOT_NO_SPAN;
	s = &h->spans[idx];
	if (span)
		span_info(s, span);
	if (!s->elemsize || !slot_of(s, addr, &slot, &rem))
		return SH_SLOT_NONE;
	*slot_base = addr - rem;
	return (bits_of((struct sh_span *)s)[slot / 64] >> (slot % 64)) & 1;
}

/* The first span starting at page >= *pg, or 0; *pg moves past it. */
static uint32_t next_span(const struct shadow_heap *h, uint64_t *pg)
{
	uint64_t p = *pg;

	while (p < (1ull << PAGE_BITS)) {
		uint32_t **l2 = h->l1[p >> (L2_BITS + LEAF_BITS)];
		const uint32_t *leaf;
		uint64_t stop;

		if (!l2) {
			p = ((p >> (L2_BITS + LEAF_BITS)) + 1)
			    << (L2_BITS + LEAF_BITS);
			continue;
		}
		leaf = l2[(p >> LEAF_BITS) & (L2_LEN - 1)];
		stop = (p | (LEAF_LEN - 1)) + 1;
		if (!leaf) {
			p = stop;
			continue;
		}
		for (; p < stop; p++) {
			uint32_t idx = leaf[p & (LEAF_LEN - 1)];
			const struct sh_span *s;
			uint64_t first;

			if (!idx)
				continue;
			s = &h->spans[idx];
			first = s->base >> SH_PAGE_SHIFT;
			if (first < p) { /* began before *pg */
				p = first + s->npages;
				break;
			}
			*pg = first + s->npages;
			return idx;
		}
	}
	*pg = p;
	return 0;
}

int shadow_heap_for_each_span(const struct shadow_heap *h, sh_span_fn fn,
			      void *ctx)
{
	struct sh_span_info info;
	uint64_t pg = 0;
	uint32_t idx;
	int rc;

	while ((idx = next_span(h, &pg))) {
		span_info(&h->spans[idx], &info);
		rc = fn(ctx, &info);
		if (rc)
			return rc;
	}
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorted pairs of a map: keys at [2i], values at [2i+1]. */
static uint64_t *sorted_pairs(const struct u64_map *m)
{
	uint64_t *v = malloc((m->len ? m->len : 1) * 2 * sizeof(*v));
	size_t it = 0, n = 0;

	if (!v)
		return NULL;
	while (u64_map_next(m, &it, &v[2 * n], &v[2 * n + 1]))
		n++;
	qsort(v, n, 2 * sizeof(*v), u64_cmp);
	return v;
}

int shadow_heap_for_each_object(const struct shadow_heap *h, sh_obj_fn fn,
				void *ctx)
{
	uint64_t *fb = NULL, pg = 0;
	size_t nfb = h->fallback.len, f = 0;
	uint32_t idx;
	int rc = 0;

	if (nfb && !(fb = sorted_pairs(&h->fallback)))
		return -ENOMEM;
	while (!rc && (idx = next_span(h, &pg))) {
		struct sh_span *s = &h->spans[idx];
		const uint64_t *bits;
		uint32_t wi;

		if (!s->nlive)
			continue;
		/* No fallback object lies inside a known span (span_alloc
		 * drops them), so whole spans interleave with them. */
		for (; !rc && f < nfb && fb[2 * f] < s->base; f++)
			rc = fn(ctx, fb[2 * f], (uint32_t)fb[2 * f + 1]);
		bits = bits_of(s);
		for (wi = 0; !rc && wi < (s->nelems + 63) / 64; wi++) {
			uint64_t w = bits[wi];

			while (w && !rc) {
				uint64_t i = (uint64_t)wi * 64 +
					     __builtin_ctzll(w);

				rc = fn(ctx, s->base + i * s->elemsize,
					s->types ? s->types[i] : 0);
				w &= w - 1;
			}
		}
	}
	for (; !rc && f < nfb; f++)
		rc = fn(ctx, fb[2 * f], (uint32_t)fb[2 * f + 1]);
	free(fb);
	return rc;
}

int shadow_heap_for_each_stack(const struct shadow_heap *h, sh_stack_fn fn,
			       void *ctx)
{
	size_t n = h->stacks.len, i;
	uint64_t *st;
	int rc = 0;

	if (!n)
		return 0;
	st = sorted_pairs(&h->stacks);
	if (!st)
		return -ENOMEM;
	for (i = 0; !rc && i < n; i++)
		rc = fn(ctx, st[2 * i], st[2 * i + 1]);
	free(st);
	return rc;
}

uint64_t shadow_heap_live_objects(const struct shadow_heap *h)
{
	return h->live_objects;
}

uint64_t shadow_heap_live_spans(const struct shadow_heap *h)
{
	return h->live_spans;
}

uint64_t shadow_heap_live_stacks(const struct shadow_heap *h)
{
	return h->stacks.len;
}

uint64_t shadow_heap_fallback_objects(const struct shadow_heap *h)
{
	return h->fallback.len;
}

static size_t map_bytes(const struct u64_map *m)
{
	return m->cap ? m->cap * 16 + 2 * MALLOC_OVERHEAD : 0;
}

size_t shadow_heap_mem_bytes(const struct shadow_heap *h)
{
	return sizeof(*h) + MALLOC_OVERHEAD +
	       h->nl2 * (L2_LEN * sizeof(uint32_t *) + MALLOC_OVERHEAD) +
	       h->nleaves * (LEAF_LEN * sizeof(uint32_t) + MALLOC_OVERHEAD) +
	       (h->span_cap ? (size_t)h->span_cap * sizeof(struct sh_span) +
				      MALLOC_OVERHEAD : 0) +
	       h->slot_bytes + map_bytes(&h->fallback) +
	       map_bytes(&h->fb_pages) + map_bytes(&h->stacks);
}

const struct shadow_heap_stats *shadow_heap_stats(const struct shadow_heap *h)
{
	return &h->stats;
}

uint64_t shadow_heap_inconsistent(const struct shadow_heap *h)
{
	uint64_t n = 0;
	int i;

	for (i = 1; i < SH_ERR_COUNT; i++)
		n += h->stats.errors[i];
	return n;
}

uint64_t shadow_heap_ops(const struct shadow_heap *h)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < SH_OP_COUNT; i++)
		n += h->stats.ops[i];
	return n;
}

const char *shadow_heap_err_name(int err)
{
	static const char *const names[SH_ERR_COUNT] = {
		[SH_OK] = "ok",
		[SH_ERR_BAD_ARG] = "bad_arg",
		[SH_ERR_SPAN_OVERLAP] = "span_overlap",
		[SH_ERR_SPAN_FREE_UNKNOWN] = "span_free_unknown",
		[SH_ERR_FALLBACK_STALE] = "fallback_stale",
		[SH_ERR_OBJ_NO_SPAN] = "obj_no_span",
		[SH_ERR_OBJ_ALLOC_LIVE] = "obj_alloc_live",
		[SH_ERR_OBJ_TINY_NO_BLOCK] = "obj_tiny_no_block",
		[SH_ERR_OBJ_NOT_IN_SLOT] = "obj_not_in_slot",
		[SH_ERR_OBJ_FREE_DEAD] = "obj_free_dead",
		[SH_ERR_OBJ_FREE_INTERIOR] = "obj_free_interior",
		[SH_ERR_OBJ_FREE_UNKNOWN] = "obj_free_unknown",
		[SH_ERR_STACK_DUP] = "stack_dup",
		[SH_ERR_STACK_FREE_UNKNOWN] = "stack_free_unknown",
	};

	if (err == -ENOMEM)
		return "out_of_memory";
	if (err < 0 || err >= SH_ERR_COUNT)
		return "unknown";
	return names[err];
}

const char *shadow_heap_op_name(int op)
{
	static const char *const names[SH_OP_COUNT] = {
		[SH_OP_SPAN_ALLOC] = "span_alloc",
		[SH_OP_SPAN_FREE] = "span_free",
		[SH_OP_OBJ_ALLOC] = "obj_alloc",
		[SH_OP_OBJ_FREE] = "obj_free",
		[SH_OP_STACK_ALLOC] = "stack_alloc",
		[SH_OP_STACK_FREE] = "stack_free",
	};

	return op >= 0 && op < SH_OP_COUNT ? names[op] : "unknown";
}
