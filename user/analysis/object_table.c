// SPDX-License-Identifier: BSD-3-Clause
/*
 * object_table.c - live objects in their spans' slots (object_table.h).
 *
 * A page maps to its span through a two-level page table (leaves of 1024
 * pages: 4 KiB per 8 MiB of heap).  Only the first SPAN_PAGES pages of a
 * span are mapped: the objects of a large span sit at its base, small
 * spans have at most 10 pages, and the replay never looked further than
 * that for an object's span (heap_replay_objects.c), so a bogus span of
 * 2^40 pages costs what a real one does.
 */
#include "analysis/object_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "inspect/go_sizeclasses.h"

#define OT_LEAF_BITS 10
#define OT_LEAF_PAGES (1u << OT_LEAF_BITS)
#define OT_NEAR_LEAVES (1u << 22)     /* in the array: pages < 2^32 */
#define SPAN_PAGES 16

_Static_assert(sizeof(struct ot_span) == 64, "a span is one cache line");

/* A division per lookup was a fifth of the lookup's time. */
static void set_geometry(struct object_table *t, uint64_t align,
			 uint64_t page_size)
{
	t->align = align;
	t->page_size = page_size;
	t->ids_per_page = page_size / align;
	t->ipp_shift = (t->ids_per_page & (t->ids_per_page - 1)) ? -1 :
		       __builtin_ctzll(t->ids_per_page);
}

void object_table_init(struct object_table *t)
{
	memset(t, 0, sizeof(*t));
	set_geometry(t, 8, GO_PAGE_SIZE);
	t->epoch = 1;
	u64_map_init(&t->far_leaves);
	u64_map_init(&t->loose);
}

void object_table_free(struct object_table *t)
{
	size_t i = 0;
	uint64_t k, v;

	for (size_t s = 0; s < t->nspans; s++)
		free(t->spans[s].vals);
	free(t->spans);
	for (size_t l = 0; l < t->nleaves; l++)
		free(t->leaves[l]);
	free(t->leaves);
	while (u64_map_next(&t->far_leaves, &i, &k, &v))
		free((void *)(uintptr_t)v);
	u64_map_free(&t->far_leaves);
	u64_map_free(&t->loose);
	object_table_init(t);
}

static uint64_t ids_per_page(const struct object_table *t)
{
	return t->ids_per_page;
}


static uint32_t *leaf_of(const struct object_table *t, uint64_t page)
{
	uint64_t li = page >> OT_LEAF_BITS, v;

	if (li < t->nleaves)
		return t->leaves[li];
	if (li < OT_NEAR_LEAVES || !t->far_leaves.len)
		return NULL;
	return u64_map_get(&t->far_leaves, li + 1, &v) ?
	       (uint32_t *)(uintptr_t)v : NULL;
}

static uint32_t *leaf_make(struct object_table *t, uint64_t page)
{
	uint64_t li = page >> OT_LEAF_BITS;
	uint32_t *leaf = leaf_of(t, page);

	if (leaf)
		return leaf;
	leaf = calloc(OT_LEAF_PAGES, sizeof(*leaf));
	if (!leaf)
		return NULL;
	if (li >= OT_NEAR_LEAVES) {
		if (u64_map_put(&t->far_leaves, li + 1, (uintptr_t)leaf)) {
			free(leaf);
			return NULL;
		}
		return leaf;
	}
	if (li >= t->nleaves) {
		size_t n = t->nleaves ? t->nleaves : 64;
		uint32_t **nl;

		while (n <= li)
			n *= 2;
		nl = realloc(t->leaves, n * sizeof(*nl));
		if (!nl) {
			free(leaf);
			return NULL;
		}
		memset(nl + t->nleaves, 0, (n - t->nleaves) * sizeof(*nl));
		t->leaves = nl;
		t->nleaves = n;
	}
	t->leaves[li] = leaf;
	return leaf;
}

static struct ot_span *span_at_page(const struct object_table *t,
				    uint64_t page)
{
	const uint32_t *leaf = leaf_of(t, page);
	uint32_t i = leaf ? leaf[page & (OT_LEAF_PAGES - 1)] : 0;

	return i ? &t->spans[i - 1] : NULL;
}

/* Page size and alignment are powers of two in every Go: a shift. */
static uint64_t page_of_id(const struct object_table *t, uint64_t id)
{
	return t->ipp_shift >= 0 ? id >> t->ipp_shift : id / t->ids_per_page;
}

static struct ot_span *span_of_id(const struct object_table *t, uint64_t id)
{
	return span_at_page(t, page_of_id(t, id));
}

/* ID's value slot in span S, or NULL when ID is not a slot base there. */
static uint64_t *slot_ref(const struct object_table *t,
			  const struct ot_span *s, uint64_t id)
{
	uint64_t off = id - s->base_id, ob;
	uint32_t slot;

	if (s->per_id)
		return off < s->nvals ? &s->vals[off] : NULL;
	ob = off * t->align;
	if (!s->div_mul)
		return ob ? NULL : &s->vals[0];
	slot = (uint32_t)((ob * s->div_mul) >> 32);
	if (slot >= s->nvals || (uint64_t)slot * s->elemsize != ob)
		return NULL;
	return &s->vals[slot];
}

/* Span and slot of ID, through the memo. */
static struct ot_memo *lookup(struct object_table *t, uint64_t id)
{
	struct ot_memo *m = &t->memo[(id * 0x9e3779b97f4a7c15ull) >>
				     (64 - __builtin_ctz(OT_MEMO))];

	if (m->id == id && m->epoch == t->epoch)
		return m;
	m->id = id;
	m->epoch = t->epoch;
	m->span = span_of_id(t, id);
	m->slot = m->span ? slot_ref(t, m->span, id) : NULL;
	return m;
}

/* Spans changed: every memo is stale. */
static void spans_changed(struct object_table *t)
{
	if (++t->epoch == 0) {
		memset(t->memo, 0, sizeof(t->memo));
		t->epoch = 1;
	}
}

static uint64_t slot_id(const struct object_table *t,
			const struct ot_span *s, size_t slot)
{
	if (s->per_id)
		return s->base_id + slot;
	return s->base_id + slot * s->elemsize / t->align;
}

static size_t mapped_pages(const struct ot_span *s)
{
	return s->npages < SPAN_PAGES ? s->npages : SPAN_PAGES;
}

/* Span S goes: its live objects move to the loose hash. */
static int evict(struct object_table *t, struct ot_span *s)
{
	uint32_t idx = (uint32_t)(s - t->spans) + 1;
	size_t i, n = mapped_pages(s);

	for (i = 0; i < s->nvals; i++) {
		if (!s->vals[i])
			continue;
		if (u64_map_put(&t->loose, slot_id(t, s, i) + 1,
				s->vals[i] - 1))
			return -ENOMEM;
		s->vals[i] = 0;
	}
	for (i = 0; i < n; i++) {
		uint32_t *leaf = leaf_of(t, s->page + i);
		uint32_t *e = leaf ? &leaf[(s->page + i) & (OT_LEAF_PAGES - 1)] :
				     NULL;

		if (e && *e == idx)
			*e = 0;
	}
	free(s->vals);
	s->vals = NULL;
	spans_changed(t);
	s->next_free = t->free_head;
	t->free_head = idx;
	return 0;
}

static int clear_pages(struct object_table *t, uint64_t page, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct ot_span *s = span_at_page(t, page + i);
		int rc;

		if (s && (rc = evict(t, s)))
			return rc;
	}
	return 0;
}

int object_table_geometry(struct object_table *t, uint64_t align,
			  uint64_t page_size)
{
	if (!align || page_size < align || page_size % align)
		return 0;	/* nonsense: keep what we have */
	if (align == t->align && page_size == t->page_size)
		return 0;
	for (size_t s = 0; s < t->nspans; s++) {
		int rc;

		if (t->spans[s].vals && (rc = evict(t, &t->spans[s])))
			return rc;
	}
	set_geometry(t, align, page_size);
	spans_changed(t);
	return 0;
}

static struct ot_span *new_span(struct object_table *t)
{
	struct ot_span *s;

	if (t->free_head) {
		s = &t->spans[t->free_head - 1];
		t->free_head = s->next_free;
		return s;
	}
	if (t->nspans == t->spans_cap) {
		size_t n = t->spans_cap ? t->spans_cap * 2 : 256;

		if (n > UINT32_MAX - 1)
			return NULL;
		/* On cache-line boundaries: a lookup reads one line. */
		s = aligned_alloc(64, n * sizeof(*s));
		if (!s)
			return NULL;
		if (t->nspans)
			memcpy(s, t->spans, t->nspans * sizeof(*s));
		free(t->spans);
		t->spans = s;
		t->spans_cap = n;
	}
	return &t->spans[t->nspans++];
}

int object_table_span(struct object_table *t, uint64_t page,
		      uint64_t npages, uint64_t kindclass)
{
	struct ot_span *s = span_at_page(t, page), *ns;
	uint64_t ipp = ids_per_page(t), elemsize, nvals;
	size_t n = npages < SPAN_PAGES ? npages : SPAN_PAGES, i;
	/* kindclass is the trace's span argument: spanclass << 1 | manual,
	 * and spanclass is sizeclass << 1 | noscan (runtime/traceallocfree.go,
	 * traceSpanTypeAndClass; mheap.go, makeSpanClass).  Size class 0 is
	 * a large object, one to a span, scan or noscan alike. */
	uint64_t sizeclass = kindclass >> 2;
	bool tiny = (kindclass >> 1) == GO_TINY_SPANCLASS;
	int rc;

	if (s && s->page == page && s->npages == npages &&
	    s->kindclass == kindclass)
		return 0;
	if (!n || page > (UINT64_MAX - SPAN_PAGES) / ipp)
		return 0;	/* nothing an object could be in */
	rc = clear_pages(t, page, n);
	if (rc)
		return rc;
	elemsize = go_span_elemsize((uint8_t)(kindclass >> 1), npages);
	if ((kindclass & 1) || kindclass > 0xffff || !elemsize)
		return 0;
	if (tiny)
		nvals = n * ipp;
	else if (sizeclass == 0)
		nvals = 1;
	else
		nvals = n * t->page_size / elemsize;
	if (!nvals)
		return 0;
	ns = new_span(t);
	spans_changed(t);
	if (!ns)
		return -ENOMEM;
	memset(ns, 0, sizeof(*ns));
	ns->vals = calloc(nvals, sizeof(*ns->vals));
	if (!ns->vals) {
		ns->next_free = t->free_head;
		t->free_head = (uint32_t)(ns - t->spans) + 1;
		return -ENOMEM;
	}
	ns->page = page;
	ns->npages = npages;
	ns->base_id = page * ipp;
	ns->elemsize = elemsize;
	ns->kindclass = (uint32_t)kindclass;
	ns->per_id = tiny;
	ns->nvals = (uint32_t)nvals;
	/* runtime/mheap.go, initSpan: divMul = ^uint32(0)/elemsize + 1,
	 * exact for every offset in a small span. */
	ns->div_mul = sizeclass ? UINT32_MAX / (uint32_t)elemsize + 1 : 0;
	for (i = 0; i < n; i++) {
		uint32_t *leaf = leaf_make(t, page + i);

		if (!leaf)
			return -ENOMEM;
		leaf[(page + i) & (OT_LEAF_PAGES - 1)] =
			(uint32_t)(ns - t->spans) + 1;
	}
	return 0;
}

int object_table_span_gone(struct object_table *t, uint64_t page)
{
	struct ot_span *s = span_at_page(t, page);

	return s && s->page == page ? evict(t, s) : 0;
}

const struct ot_span *object_table_span_of(struct object_table *t,
					   uint64_t id)
{
	return lookup(t, id)->span;
}

struct ot_ref object_table_ref(struct object_table *t, uint64_t id)
{
	const struct ot_memo *m = lookup(t, id);

	return (struct ot_ref){ .id = id, .slot = m->slot, .span = m->span };
}

bool object_table_get(struct object_table *t, uint64_t id, uint64_t *val)
{
	const uint64_t *r = lookup(t, id)->slot;

	if (r && *r) {
		*val = *r - 1;
		return true;
	}
	return t->loose.len && id + 1 && u64_map_get(&t->loose, id + 1, val);
}

int object_table_put(struct object_table *t, uint64_t id, uint64_t val)
{
	uint64_t *r = lookup(t, id)->slot, *lr;
	bool found;

	if (r && (*r || !t->loose.len || !u64_map_get(&t->loose, id + 1,
						      &(uint64_t){ 0 }))) {
		if (val != UINT64_MAX) {
			t->len += !*r;
			*r = val + 1;
			return 0;
		}
		/* The one value a slot cannot hold (+ 1 would be 0). */
		if (*r) {
			*r = 0;
			t->len--;
		}
	}
	if (id + 1 == 0)
		return -EINVAL;
	lr = u64_map_ref(&t->loose, id + 1, &found);
	if (!lr)
		return -ENOMEM;
	t->len += !found;
	*lr = val;
	return 0;
}

bool object_table_del(struct object_table *t, uint64_t id)
{
	uint64_t *r = lookup(t, id)->slot;

	if (r && *r) {
		*r = 0;
		t->len--;
		return true;
	}
	if (t->loose.len && id + 1 && u64_map_del(&t->loose, id + 1)) {
		t->len--;
		return true;
	}
	return false;
}

void object_table_prefetch_page(const struct object_table *t, uint64_t id)
{
	uint64_t page = page_of_id(t, id);
	const uint32_t *leaf = leaf_of(t, page);

	if (leaf)
		__builtin_prefetch(&leaf[page & (OT_LEAF_PAGES - 1)]);
}

void object_table_prefetch_span(const struct object_table *t, uint64_t id)
{
	uint64_t page = page_of_id(t, id);
	const uint32_t *leaf = leaf_of(t, page);
	uint32_t i = leaf ? leaf[page & (OT_LEAF_PAGES - 1)] : 0;

	if (i)
		__builtin_prefetch(&t->spans[i - 1]);
}

void object_table_prefetch(struct object_table *t, uint64_t id)
{
	const uint64_t *r = lookup(t, id)->slot;

	if (r)
		__builtin_prefetch(r, 1);
	else if (t->loose.len && id + 1)
		u64_map_prefetch(&t->loose, id + 1);
}

bool object_table_next(const struct object_table *t, struct ot_iter *it,
		       uint64_t *id, uint64_t *val)
{
	uint64_t k;

	for (; it->span < t->nspans; it->span++, it->slot = 0) {
		const struct ot_span *s = &t->spans[it->span];

		if (!s->vals)
			continue;
		for (; it->slot < s->nvals; it->slot++) {
			if (!s->vals[it->slot])
				continue;
			*id = slot_id(t, s, it->slot);
			*val = s->vals[it->slot++] - 1;
			return true;
		}
	}
	if (!u64_map_next(&t->loose, &it->loose, &k, val))
		return false;
	*id = k - 1;
	return true;
}
