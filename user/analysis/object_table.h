/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * object_table.h - the replay's live heap objects: trace object ID ->
 * one 64-bit value, stored in the slots of the span that holds the object.
 *
 * Why not a hash of IDs: a hash scatters neighbours, so replaying millions
 * of live objects missed the caches and the TLB on almost every event
 * (40 % of `report` on a 1 GB trace set).  The runtime allocates a span's
 * slots in order and sweeps them in order, so an array of values per span,
 * found through a page table, is read and written in the same order as the
 * heap itself, like the daemon's shadow heap.
 *
 * Semantics are exactly those of a map keyed by ID: an ID that is not the
 * base of a slot of a known heap span (no span, a manual span, a malloc
 * header's interior address in the runtime's own traces, an unknown size
 * class) lives in a hash beside the spans ("loose"), and so do the live
 * objects of a span that goes (SpanFree, or a span allocated over it)
 * until they are freed.  Tiny-allocator spans keep a value per ID (two per
 * 16-byte block), every other span one per slot.
 *
 * Geometry: IDs are (addr - minPageHeapAddr) / align and span IDs
 * (addr - minPageHeapAddr) / page_size (runtime/traceallocfree.go); they
 * come from the trace's info batch (8 and 8192 until one is read).
 *
 * Owns: its spans' slot arrays, the page table, the loose hash.
 */
#ifndef OBJECT_TABLE_H
#define OBJECT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/u64_map.h"

/* A heap span known to the table. */
struct ot_span {
	uint64_t page;          /* span ID: its first page */
	uint64_t npages;
	uint64_t base_id;       /* object ID of its first byte */
	uint64_t elemsize;      /* slot bytes (the whole span when large) */
	uint32_t kindclass;     /* spanclass << 1 (a heap span) */
	uint32_t div_mul;       /* byte offset -> slot, as the runtime's
				   mspan.divMul; 0 for a large span */
	bool per_id;            /* tiny span: a value per ID, not per slot */
	uint32_t nvals;
	uint64_t *vals;         /* [nvals]: value + 1; 0 = nothing live.
				   NULL: this entry is unused */
	uint32_t next_free;     /* unused entries: index + 1 of the next */
};

/*
 * What a lookup of ID found, kept for the lookups of the same ID that
 * follow (the replay's read-ahead prefetch, then get, size, put or del):
 * the page table and the span are read once per event, not four times.
 * Valid while EPOCH is the table's (any span change bumps it).
 */
#define OT_MEMO 128

struct ot_memo {
	uint64_t id;
	uint64_t *slot;         /* NULL: ID is not a slot base */
	struct ot_span *span;   /* NULL: in no span */
	uint32_t epoch;
};

struct object_table {
	uint64_t align, page_size;
	uint64_t ids_per_page;  /* page_size / align */
	int ipp_shift;          /* its log2; -1 if not a power of two */
	struct ot_memo memo[OT_MEMO];
	uint32_t epoch;         /* 0 is never current */
	struct ot_span *spans;
	size_t nspans, spans_cap;
	uint32_t free_head;     /* index + 1 of an unused entry, 0 = none */
	uint32_t **leaves;      /* [page >> OT_LEAF_BITS]: span index + 1 per
				   page of the leaf */
	size_t nleaves;
	struct u64_map far_leaves; /* leaves beyond the array: index + 1 ->
				      pointer */
	struct u64_map loose;   /* ID + 1 -> value */
	size_t len;             /* live objects, spans and loose */
};

/* Iteration state: for (it = {0}; object_table_next(t, &it, ..);) */
struct ot_iter {
	size_t span, slot, loose;
};

void object_table_init(struct object_table *t);
void object_table_free(struct object_table *t);

/*
 * The trace's ALIGN and PAGE_SIZE (its info batch).  A change with spans
 * known moves their objects to the loose hash first.  0 or -ENOMEM.
 */
int object_table_geometry(struct object_table *t, uint64_t align,
			  uint64_t page_size);

/*
 * Span PAGE of NPAGES pages and KINDCLASS (Span* events' arguments) is in
 * use.  The same span again changes nothing; spans it overlaps go (their
 * live objects stay, loose).  A manual span or an unknown class only
 * clears what it overlaps.  0 or -ENOMEM.
 */
int object_table_span(struct object_table *t, uint64_t page,
		      uint64_t npages, uint64_t kindclass);

/* The span that starts at PAGE is freed (nothing if none does). */
int object_table_span_gone(struct object_table *t, uint64_t page);

/* The heap span holding object ID, or NULL.  Good until a span changes. */
const struct ot_span *object_table_span_of(struct object_table *t,
					   uint64_t id);

bool object_table_get(struct object_table *t, uint64_t id, uint64_t *val);
/* Sets ID's value (a new ID or a live one).  0 or -ENOMEM. */
int object_table_put(struct object_table *t, uint64_t id, uint64_t val);
bool object_table_del(struct object_table *t, uint64_t id);

/*
 * Start loading into the cache, for a lookup of ID to come: its page
 * table entry; its span (the entry cached); its slot (both cached).
 */
void object_table_prefetch_page(const struct object_table *t, uint64_t id);
void object_table_prefetch_span(const struct object_table *t, uint64_t id);
void object_table_prefetch(struct object_table *t, uint64_t id);

/*
 * One lookup of ID for the several operations of an event (the replay
 * asked get, span_of and put of one ID: three calls and three memo
 * probes): its span and slot, good until a span changes.  The _at
 * operations do what their namesakes do; a slot taken or freed is done
 * here, inline, the loose hash through the namesake.
 */
struct ot_ref {
	uint64_t id;
	uint64_t *slot;         /* NULL: ID is not a slot base */
	const struct ot_span *span;
};

struct ot_ref object_table_ref(struct object_table *t, uint64_t id);

static inline bool object_table_get_at(struct object_table *t,
				       const struct ot_ref *r, uint64_t *val)
{
	if (r->slot && *r->slot) {
		*val = *r->slot - 1;
		return true;
	}
	return t->loose.len && object_table_get(t, r->id, val);
}

static inline int object_table_put_at(struct object_table *t,
				      const struct ot_ref *r, uint64_t val)
{
	/* A slot is the ID's home unless the loose hash holds it. */
	if (r->slot && val != UINT64_MAX && (*r->slot || !t->loose.len)) {
		t->len += !*r->slot;
		*r->slot = val + 1;
		return 0;
	}
	return object_table_put(t, r->id, val);
}

static inline bool object_table_del_at(struct object_table *t,
				       const struct ot_ref *r)
{
	if (r->slot && *r->slot) {
		*r->slot = 0;
		t->len--;
		return true;
	}
	return t->loose.len && object_table_del(t, r->id);
}

bool object_table_next(const struct object_table *t, struct ot_iter *it,
		       uint64_t *id, uint64_t *val);

#endif /* OBJECT_TABLE_H */
