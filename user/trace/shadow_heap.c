// SPDX-License-Identifier: BSD-3-Clause
/*
 * shadow_heap.c - spans in a table indexed by a 3-level page map, one live
 * bit per slot, types only for spans that need them, a hash for the rest.
 *
 * Layout:
 *   page map   48-bit address -> 35-bit page number -> l1[11 bits] ->
 *              l2[11 bits] -> leaf[13 bits] = span index (0 = none).  A leaf
 *              covers 64 MiB, the runtime's heap arena size, so a Go heap
 *              touches few leaves and each is used densely.
 *   spans      one table of struct sh_span, reused through a free list, so
 *              the page map holds 4-byte indices and no span is malloc'd.
 *   slots      a bitmap per span (inline in the span for <= 128 slots, which
 *              covers every size class of 64 bytes and up); a
 *              uint32 type per slot only once the span gets a typed object.
 *   fallback   objects allocated where no span is known, keyed by address;
 *              a second map counts them per page so that a new span can
 *              drop the stale ones under it without scanning everything.
 *   stacks     lo -> size.
 */
#include "trace/shadow_heap.h"
#include "trace/shadow_heap_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/u64_map.h"

/* ---- page map ---------------------------------------------------------- */

/* Makes sure leaves exist for pages [pg, end). */
static int map_reserve(struct shadow_heap *h, uint64_t pg, uint64_t end)
{
	while (pg < end) {
		uint32_t ***l2 = &h->l1[pg >> (L2_BITS + LEAF_BITS)];
		uint32_t **leaf;

		if (!*l2) {
			*l2 = calloc(L2_LEN, sizeof(**l2));
			if (!*l2)
				return -ENOMEM;
			h->nl2++;
		}
		leaf = &(*l2)[(pg >> LEAF_BITS) & (L2_LEN - 1)];
		if (!*leaf) {
			*leaf = calloc(LEAF_LEN, sizeof(**leaf));
			if (!*leaf)
				return -ENOMEM;
			h->nleaves++;
		}
		pg = (pg | (LEAF_LEN - 1)) + 1;
	}
	return 0;
}

/* Sets pages [pg, end) to idx; their leaves exist. */
static void map_set(struct shadow_heap *h, uint64_t pg, uint64_t end,
		    uint32_t idx)
{
	while (pg < end) {
		uint32_t *leaf = leaf_of(h, pg);
		uint64_t stop = (pg | (LEAF_LEN - 1)) + 1;

		if (stop > end)
			stop = end;
		for (; pg < stop; pg++)
			leaf[pg & (LEAF_LEN - 1)] = idx;
	}
}

/* ---- spans ------------------------------------------------------------- */

static inline size_t bitmap_bytes(uint32_t nelems)
{
	return ((size_t)nelems + 63) / 64 * 8;
}

static inline bool is_tiny_span(const struct sh_span *s)
{
	/* tinySpanClass: size class 2 (16 B), noscan; kindclass bit 1. */
	return s->elemsize == SH_TINY_BLOCK && (s->kindclass & 2);
}

/* Whether traceSnapshotMemory would report a type for this span's objects
 * (typePointersOfUnchecked: noscan -> none; heapBitsInSpan -> none). */
static inline bool runtime_has_type(const struct sh_span *s)
{
	return !(s->kindclass & 1) && !(s->kindclass & 2) &&
	       s->elemsize > SH_MIN_SIZE_FOR_HEADER;
}

static inline bool keeps_types(const struct shadow_heap *h,
			       const struct sh_span *s)
{
	return !(h->flags & SH_F_RUNTIME_TYPES) || runtime_has_type(s);
}

static void span_kill(struct shadow_heap *h, uint32_t idx)
{
	struct sh_span *s = &h->spans[idx];
	uint64_t pg = s->base >> SH_PAGE_SHIFT;

	map_set(h, pg, pg + s->npages, 0);
	h->live_objects -= s->nlive;
	if (s->nelems > INLINE_SLOTS) {
		free(s->bits.words);
		h->slot_bytes -= bitmap_bytes(s->nelems) + MALLOC_OVERHEAD;
	}
	if (s->types) {
		free(s->types);
		h->slot_bytes -= (size_t)s->nelems * 4 + MALLOC_OVERHEAD;
	}
	memset(s, 0, sizeof(*s));
	s->next_free = h->free_head;
	h->free_head = idx;
	h->live_spans--;
}

/* Room for one more span: the table may move. */
static int span_reserve(struct shadow_heap *h)
{
	uint32_t ncap;
	struct sh_span *n;

	if (h->free_head || h->span_used + 1 < h->span_cap)
		return 0;
	ncap = h->span_cap ? h->span_cap * 2 : 256;
	if (ncap <= h->span_cap)
		return -ENOMEM;
	n = realloc(h->spans, (size_t)ncap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	/*
	 * No memset of the new half: an entry is cleared when span_take hands
	 * it out, and pages never touched stay out of the daemon's RSS (the
	 * table of a 1 GiB heap's 135 k spans doubles to 262 k entries).
	 */
	h->spans = n;
	h->span_cap = ncap;
	return 0;
}

/* An unused span index; span_reserve() made sure there is one. */
static uint32_t span_take(struct shadow_heap *h)
{
	uint32_t idx = h->free_head;

	if (idx)
		h->free_head = h->spans[idx].next_free;
	else
		idx = ++h->span_used;
	return idx;
}

/* ---- updates ----------------------------------------------------------- */

int shadow_heap_span_alloc(struct shadow_heap *h, uint64_t base,
			   uint64_t npages, uint32_t kindclass,
			   uint64_t elemsize)
{
	uint64_t pg = base >> SH_PAGE_SHIFT, end = pg + npages, p, bytes;
	uint64_t nelems = 0, stale;
	uint64_t *words = NULL;
	struct sh_span *s;
	int rc, err = SH_OK;
	uint32_t idx;

	h->stats.ops[SH_OP_SPAN_ALLOC]++;
	if (!base || (base & (SH_PAGE_SIZE - 1)) || !npages ||
	    npages > UINT32_MAX || end > (1ull << PAGE_BITS))
		return fail(h, SH_ERR_BAD_ARG);
	bytes = npages << SH_PAGE_SHIFT;
	if (!(kindclass & 1)) {
		if (elemsize < 8 || elemsize > bytes)
			return fail(h, SH_ERR_BAD_ARG);
		nelems = bytes / elemsize;
		if (nelems > UINT32_MAX)
			return fail(h, SH_ERR_BAD_ARG);
	} else {
		elemsize = 0;
	}

	/* Everything that can fail comes before the first change. */
	rc = map_reserve(h, pg, end);
	if (!rc)
		rc = span_reserve(h);
	if (!rc && nelems > INLINE_SLOTS) {
		words = calloc(1, bitmap_bytes(nelems));
		if (!words)
			rc = -ENOMEM;
	}
	if (rc)
		return fail(h, rc);

	/* Live spans under the new one were freed without our seeing it. */
	for (p = pg; p < end; p++) {
		uint32_t *leaf = leaf_of(h, p), old = leaf[p & (LEAF_LEN - 1)];

		if (old) {
			span_kill(h, old);
			err = fail(h, SH_ERR_SPAN_OVERLAP);
		}
	}
	idx = span_take(h);
	s = &h->spans[idx];
	memset(s, 0, sizeof(*s));
	s->base = base;
	s->elemsize = elemsize;
	s->npages = (uint32_t)npages;
	s->kindclass = kindclass;
	s->nelems = (uint32_t)nelems;
	if (nelems > 1 && bytes <= (1ull << 32))
		s->divmul = (uint32_t)((UINT32_MAX / elemsize) + 1);
	if (words) {
		s->bits.words = words;
		h->slot_bytes += bitmap_bytes(nelems) + MALLOC_OVERHEAD;
	}
	map_set(h, pg, end, idx);
	h->live_spans++;

	if (h->fallback.len) {
		stale = sh_fb_drop_range(h, pg, end);
		h->stats.errors[SH_ERR_FALLBACK_STALE] += stale;
		if (stale && !err)
			err = SH_ERR_FALLBACK_STALE;
	}
	return err;
}

int shadow_heap_span_free(struct shadow_heap *h, uint64_t base)
{
	uint32_t idx = span_at(h, base);

	h->stats.ops[SH_OP_SPAN_FREE]++;
	if (!idx || h->spans[idx].base != base)
		return fail(h, SH_ERR_SPAN_FREE_UNKNOWN);
	span_kill(h, idx);
	return SH_OK;
}

int shadow_heap_span_seed_live(struct shadow_heap *h, uint64_t base,
			       const uint8_t *alloc_bits, uint32_t nelems,
			       uint32_t freeindex)
{
	uint32_t idx = span_at(h, base), i, nw = (nelems + 63) / 64;
	size_t nbytes = ((size_t)nelems + 7) / 8;
	struct sh_span *s;
	uint64_t *w, n = 0;

	if (!idx)
		return -ENOENT;
	s = &h->spans[idx];
	/*
	 * The runtime's nelems may be below ours: a span of scan objects of
	 * <= 512 bytes keeps its heap bits at its end (mbitmap.go
	 * heapBitsInSpan), so its last slots do not exist.  With nlive 0
	 * every bit is clear, those slots' stay so.
	 */
	if (s->base != base || !nelems || nelems > s->nelems || s->nlive ||
	    s->types)
		return -ENOENT;
	w = bits_of(s);
	for (i = 0; i < nw; i++) {
		size_t off = (size_t)i * 8;
		uint64_t v = 0, lo = (uint64_t)i * 64;

		/* Little-endian words: bit i of the bytes is bit i here. */
		memcpy(&v, alloc_bits + off, nbytes - off < 8 ? nbytes - off : 8);
		/* Below freeindex everything is allocated (mbitmap.go). */
		if (freeindex >= lo + 64)
			v = ~0ull;
		else if (freeindex > lo)
			v |= (1ull << (freeindex - lo)) - 1;
		/* Bits past the last slot are not the span's. */
		if (nelems < lo + 64)
			v &= (1ull << (nelems - lo)) - 1;
		w[i] = v;
		n += (uint64_t)__builtin_popcountll(v);
	}
	s->nlive = (uint32_t)n;
	h->live_objects += n;
	h->stats.ops[SH_OP_OBJ_ALLOC] += n;
	return (int)n;
}

int shadow_heap_obj_alloc(struct shadow_heap *h, uint64_t addr,
			  uint32_t type_ref)
{
	uint32_t idx = span_at(h, addr), slot;
	uint64_t rem, *w, bit;
	struct sh_span *s;
	bool live;

	h->stats.ops[SH_OP_OBJ_ALLOC]++;
	if (!idx)
		return sh_fb_alloc(h, addr, type_ref);
	s = &h->spans[idx];
	if (!slot_of(s, addr, &slot, &rem))
		return fail(h, SH_ERR_OBJ_NOT_IN_SLOT);
	w = &bits_of(s)[slot >> 6];
	bit = 1ull << (slot & 63);
	live = *w & bit;

	/* The next object of a live tiny block: nothing to record. */
	if (live && rem && is_tiny_span(s))
		return SH_OK;

	if (!s->types && type_ref && keeps_types(h, s)) {
		s->types = calloc(s->nelems, sizeof(*s->types));
		if (!s->types)
			return fail(h, -ENOMEM);
		h->slot_bytes += (size_t)s->nelems * 4 + MALLOC_OVERHEAD;
	}
	if (s->types)
		s->types[slot] = type_ref;
	if (live)
		return fail(h, SH_ERR_OBJ_ALLOC_LIVE);
	*w |= bit;
	s->nlive++;
	h->live_objects++;
	if (rem && is_tiny_span(s))
		return fail(h, SH_ERR_OBJ_TINY_NO_BLOCK);
	return SH_OK;
}

int shadow_heap_obj_free(struct shadow_heap *h, uint64_t addr)
{
	uint32_t idx = span_at(h, addr), slot;
	uint64_t rem, *w, bit;
	struct sh_span *s;

	h->stats.ops[SH_OP_OBJ_FREE]++;
	if (!idx)
		return sh_fb_free(h, addr);
	s = &h->spans[idx];
	if (!slot_of(s, addr, &slot, &rem))
		return fail(h, SH_ERR_OBJ_NOT_IN_SLOT);
	w = &bits_of(s)[slot >> 6];
	bit = 1ull << (slot & 63);
	if (!(*w & bit))
		return fail(h, SH_ERR_OBJ_FREE_DEAD);
	*w &= ~bit;
	s->nlive--;
	h->live_objects--;
	return rem ? fail(h, SH_ERR_OBJ_FREE_INTERIOR) : SH_OK;
}

int shadow_heap_stack_alloc(struct shadow_heap *h, uint64_t lo,
			    uint64_t size)
{
	int rc;

	h->stats.ops[SH_OP_STACK_ALLOC]++;
	if (!lo)
		return fail(h, SH_ERR_BAD_ARG);
	if (u64_map_get(&h->stacks, lo, NULL)) {
		u64_map_put(&h->stacks, lo, size);
		return fail(h, SH_ERR_STACK_DUP);
	}
	rc = u64_map_put(&h->stacks, lo, size);
	return rc ? fail(h, rc) : SH_OK;
}

int shadow_heap_stack_free(struct shadow_heap *h, uint64_t lo)
{
	h->stats.ops[SH_OP_STACK_FREE]++;
	if (!u64_map_del(&h->stacks, lo))
		return fail(h, SH_ERR_STACK_FREE_UNKNOWN);
	return SH_OK;
}

/* ---- lifetime ---------------------------------------------------------- */

struct shadow_heap *shadow_heap_new(unsigned flags)
{
	struct shadow_heap *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->flags = flags;
	u64_map_init(&h->fallback);
	u64_map_init(&h->fb_pages);
	u64_map_init(&h->stacks);
	return h;
}

void shadow_heap_free(struct shadow_heap *h)
{
	uint32_t i, j;

	if (!h)
		return;
	for (i = 1; i <= h->span_used; i++) {
		struct sh_span *s = &h->spans[i];

		if (s->nelems > INLINE_SLOTS)
			free(s->bits.words);
		free(s->types);
	}
	free(h->spans);
	for (i = 0; i < L1_LEN; i++) {
		if (!h->l1[i])
			continue;
		for (j = 0; j < L2_LEN; j++)
			free(h->l1[i][j]);
		free(h->l1[i]);
	}
	u64_map_free(&h->fallback);
	u64_map_free(&h->fb_pages);
	u64_map_free(&h->stacks);
	free(h);
}
