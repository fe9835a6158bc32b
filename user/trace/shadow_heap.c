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
#include "shadow_heap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/u64_map.h"

#define L1_BITS 11
#define L2_BITS 11
#define LEAF_BITS 13
#define PAGE_BITS (SH_ADDR_BITS - SH_PAGE_SHIFT) /* 35 */
#define L1_LEN (1u << L1_BITS)
#define L2_LEN (1u << L2_BITS)
#define LEAF_LEN (1u << LEAF_BITS)
#define MALLOC_OVERHEAD 16
/* Slots whose live bits sit in the span record itself. */
#define INLINE_WORDS 2
#define INLINE_SLOTS (64 * INLINE_WORDS) /* what glibc adds per block, rounded up */

_Static_assert(L1_BITS + L2_BITS + LEAF_BITS == PAGE_BITS,
	       "page map must cover the address space");

struct sh_span {
	uint64_t base;
	uint64_t elemsize;   /* 0: manual span */
	uint32_t npages;
	uint32_t kindclass;
	uint32_t nelems;     /* 0: accepts no objects */
	union {
		uint32_t nlive;
		uint32_t next_free;  /* free-list link while dead */
	};
	uint32_t divmul;     /* ceil(2^32 / elemsize); 0: divide */
	union {
		uint64_t word[INLINE_WORDS];   /* nelems <= INLINE_SLOTS */
		uint64_t *words;
	} bits;
	uint32_t *types;     /* NULL until the span has a typed object */
};

struct shadow_heap {
	unsigned flags;
	uint32_t **l1[L1_LEN];
	size_t nl2, nleaves;

	struct sh_span *spans;   /* [0] unused: index 0 means "none" */
	uint32_t span_cap;
	uint32_t span_used;      /* high-water mark of indices handed out */
	uint32_t free_head;      /* 0: empty */
	uint64_t live_spans;

	uint64_t live_objects;   /* slots + fallback */
	size_t slot_bytes;       /* bitmaps and type arrays, with overhead */

	struct u64_map fallback;    /* addr -> type_ref */
	struct u64_map fb_pages;    /* page + 1 -> fallback objects on it */
	struct u64_map stacks;      /* lo -> size */

	struct shadow_heap_stats stats;
};

static inline int fail(struct shadow_heap *h, int err)
{
	if (err > 0)
		h->stats.errors[err]++;
	else if (err < 0)
		h->stats.oom++;
	return err;
}

/* ---- page map ---------------------------------------------------------- */

static inline uint32_t *leaf_of(const struct shadow_heap *h, uint64_t pg)
{
	uint32_t **l2 = h->l1[pg >> (L2_BITS + LEAF_BITS)];

	return l2 ? l2[(pg >> LEAF_BITS) & (L2_LEN - 1)] : NULL;
}

static inline uint32_t span_at(const struct shadow_heap *h, uint64_t addr)
{
	uint32_t *leaf;
	uint64_t pg;

	if (addr >> SH_ADDR_BITS)
		return 0;
	pg = addr >> SH_PAGE_SHIFT;
	leaf = leaf_of(h, pg);
	return leaf ? leaf[pg & (LEAF_LEN - 1)] : 0;
}

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

static inline uint64_t *bits_of(struct sh_span *s)
{
	return s->nelems <= INLINE_SLOTS ? s->bits.word : s->bits.words;
}

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

/* Slot of addr in s, and addr's offset inside that slot. */
static inline bool slot_of(const struct sh_span *s, uint64_t addr,
			   uint32_t *slot, uint64_t *rem)
{
	uint64_t off = addr - s->base, i;

	if (s->nelems <= 1) {
		if (!s->nelems || off >= s->elemsize)
			return false;
		*slot = 0;
		*rem = off;
		return true;
	}
	if (s->divmul) {
		/*
		 * off < 2^32 here.  With m = ceil(2^32 / d), off * m / 2^32
		 * exceeds off / d by less than off / 2^32 < 1, so the product
		 * is floor(off / d) or one more (the runtime's divMagic,
		 * mbitmap.go, without relying on its size-class table).
		 */
		i = (off * s->divmul) >> 32;
		if (i * s->elemsize > off)
			i--;
	} else {
		i = off / s->elemsize;
	}
	if (i >= s->nelems)
		return false;
	*slot = (uint32_t)i;
	*rem = off - i * s->elemsize;
	return true;
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

/* ---- fallback ---------------------------------------------------------- */

static int fb_page_add(struct shadow_heap *h, uint64_t addr, int delta)
{
	uint64_t key = (addr >> SH_PAGE_SHIFT) + 1, n = 0;

	u64_map_get(&h->fb_pages, key, &n);
	n += delta;
	if (!n) {
		u64_map_del(&h->fb_pages, key);
		return 0;
	}
	return u64_map_put(&h->fb_pages, key, n);
}

static int fb_alloc(struct shadow_heap *h, uint64_t addr, uint32_t type)
{
	int rc;

	if (!addr)
		return fail(h, SH_ERR_BAD_ARG);
	if (u64_map_get(&h->fallback, addr, NULL)) {
		/* Best effort: a failed update keeps the old type. */
		u64_map_put(&h->fallback, addr, type);
		return fail(h, SH_ERR_OBJ_ALLOC_LIVE);
	}
	/* Reserve page-count room first so that a failure changes nothing. */
	rc = fb_page_add(h, addr, 1);
	if (rc)
		return fail(h, rc);
	rc = u64_map_put(&h->fallback, addr, type);
	if (rc) {
		fb_page_add(h, addr, -1);
		return fail(h, rc);
	}
	h->live_objects++;
	return fail(h, SH_ERR_OBJ_NO_SPAN);
}

static bool fb_del(struct shadow_heap *h, uint64_t addr)
{
	if (!u64_map_del(&h->fallback, addr))
		return false;
	/* Should this fail (ENOMEM), the page's count stays too high, which
	 * only costs a needless scan when a span is allocated there. */
	fb_page_add(h, addr, -1);
	h->live_objects--;
	return true;
}

static int fb_free(struct shadow_heap *h, uint64_t addr)
{
	/* The sweeper frees slot bases; an object with a malloc header was
	 * reported allocated 8 bytes further (runtime/malloc.go). */
	if (fb_del(h, addr) || fb_del(h, addr + SH_MALLOC_HEADER))
		return SH_OK;
	return fail(h, SH_ERR_OBJ_FREE_UNKNOWN);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Drops fallback objects on pages [pg, end): a span now owns those pages,
 * so the objects belonged to an earlier, unseen span.  Returns how many.
 */
static uint64_t fb_drop_range(struct shadow_heap *h, uint64_t pg,
			      uint64_t end)
{
	uint64_t lo = pg << SH_PAGE_SHIFT, hi = end << SH_PAGE_SHIFT;
	uint64_t key, *dead, n = 0, p;
	size_t it = 0, ndead = 0;

	for (p = pg; p < end; p++)
		if (u64_map_get(&h->fb_pages, p + 1, NULL))
			break;
	if (p == end)
		return 0;
	/* Rare (a span was missed): scan the table, delete after. */
	dead = malloc(h->fallback.len * sizeof(*dead));
	if (!dead)
		return 0; /* stale objects stay; they are still counted live */
	while (u64_map_next(&h->fallback, &it, &key, NULL))
		if (key >= lo && key < hi)
			dead[ndead++] = key;
	for (it = 0; it < ndead; it++)
		n += fb_del(h, dead[it]);
	free(dead);
	return n;
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
		stale = fb_drop_range(h, pg, end);
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
		return fb_alloc(h, addr, type_ref);
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
		return fb_free(h, addr);
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

/* ---- queries ----------------------------------------------------------- */

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
