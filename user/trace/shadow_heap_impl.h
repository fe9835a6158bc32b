/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shadow_heap_impl.h - PRIVATE to shadow_heap.c, shadow_heap_fallback.c and
 * shadow_heap_query.c (the layout is described in shadow_heap.c); the
 * interface is shadow_heap.h.
 */
#ifndef SHADOW_HEAP_IMPL_H
#define SHADOW_HEAP_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/shadow_heap.h"
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

/* ---- page map lookups -------------------------------------------------- */

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

/* ---- slots ------------------------------------------------------------- */

static inline uint64_t *bits_of(struct sh_span *s)
{
	return s->nelems <= INLINE_SLOTS ? s->bits.word : s->bits.words;
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

/* shadow_heap_fallback.c: objects where no span is known */
int sh_fb_alloc(struct shadow_heap *h, uint64_t addr, uint32_t type);
int sh_fb_free(struct shadow_heap *h, uint64_t addr);
uint64_t sh_fb_drop_range(struct shadow_heap *h, uint64_t pg, uint64_t end);

#endif /* SHADOW_HEAP_IMPL_H */
