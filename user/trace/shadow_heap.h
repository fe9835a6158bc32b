/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shadow_heap.h - the daemon's model of one target's live memory: spans,
 * heap objects (by slot) and goroutine stacks.
 *
 * Why: every rotated trace file must stand alone, so it starts with the
 * "exists" events (Span, HeapObject, GoroutineStack) that the runtime's
 * traceSnapshotMemory (runtime/traceallocfree.go) would write for the state
 * the target is in at that moment.  That function writes:
 *   - Span [id, npages, kindclass] for every span that is not dead: in-use
 *     heap spans (kindclass = spanclass << 1) and manual spans (kindclass 1:
 *     stacks, workbufs);
 *   - HeapObject [id, type] for every allocated slot of an in-use heap span,
 *     at the slot's base address;
 *   - GoroutineStack [id, order] for every goroutine's stack.
 * This module replays the event stream to know that state, and counts every
 * event that does not fit it (the project requires < 0.1 % of events).
 *
 * Owns: its own memory only.  Knows nothing of IDs, types' names, BPF or the
 * wire format: type_ref is an opaque non-zero number chosen by the caller
 * (0 = no type), addresses are target addresses.
 *
 * Objects are modelled by slot, as the runtime does: slot index =
 * (addr - span base) / elemsize.  Two runtime facts make an alloc event's
 * address differ from its slot base (Go 1.23-1.27, runtime/malloc.go):
 *   - tiny allocations (< 16 B, no pointers) share 16-byte blocks in the
 *     tiny span class (size class 2, noscan): the runtime emits an alloc for
 *     each tiny object at its own address (the first one at the block's
 *     base) and a single free, at the block's base, from the sweeper;
 *   - objects with a malloc header (scan objects > 512 B in small size
 *     classes) are reported at slot base + 8, and freed at the slot base.
 * Both land on the right slot.  An interior alloc into a live slot is the
 * next tiny object of a block (consistent) in a tiny span, a missed free
 * elsewhere.
 *
 * What an inconsistent operation does to the state (the return value names
 * the kind, and stats.errors[kind] counts it):
 *   SH_ERR_BAD_ARG          nothing recorded (unaligned or zero-sized span,
 *                           address beyond 48 bits, heap span whose slots
 *                           don't fit, stack at 0).
 *   SH_ERR_SPAN_OVERLAP     span_alloc over live span(s): they die first,
 *                           with their objects (once per dead span); the
 *                           new span is recorded.
 *   SH_ERR_SPAN_FREE_UNKNOWN  nothing changes.
 *   SH_ERR_FALLBACK_STALE   span_alloc over fallback objects (objects once
 *                           allocated where no span was known): they are
 *                           dropped, counted once per object; the span is
 *                           recorded.
 *   SH_ERR_OBJ_NO_SPAN      alloc where no span is known: the object is kept
 *                           in a fallback hash keyed by its exact address
 *                           (so the model loses nothing), and iterates too.
 *   SH_ERR_OBJ_ALLOC_LIVE   alloc of a live slot (or of a live fallback
 *                           address): it stays live, its type becomes the
 *                           new one (the free of the old object was missed).
 *   SH_ERR_OBJ_TINY_NO_BLOCK  interior alloc into a dead slot of a tiny span
 *                           (the block's first alloc was missed): the slot
 *                           becomes live with this type.
 *   SH_ERR_OBJ_NOT_IN_SLOT  alloc/free inside a known span but in no slot
 *                           (manual span, tail after the last slot): nothing.
 *   SH_ERR_OBJ_FREE_DEAD    free of a dead slot: nothing.
 *   SH_ERR_OBJ_FREE_INTERIOR  free of a live slot not at its base: the slot
 *                           is freed (the sweeper only reports slot bases).
 *   SH_ERR_OBJ_FREE_UNKNOWN free in no known span and not in the fallback
 *                           (neither at addr nor at addr + 8, where a
 *                           headered object's alloc would be): nothing.
 *   SH_ERR_STACK_DUP        stack_alloc of a live stack: size updated.
 *   SH_ERR_STACK_FREE_UNKNOWN  nothing changes.
 * Stacks are not tied to spans: a span free does not free stacks in it
 * (the runtime frees a stack before the span that holds it, stack.go).
 * A negative return is -ENOMEM: the operation left the state unchanged
 * and is counted in stats.oom.
 *
 * Types: with SH_F_RUNTIME_TYPES, a type is kept only where the runtime's
 * snapshot reports one (typePointersOfUnchecked, runtime/mbitmap.go): scan
 * spans whose objects have a header or are large, i.e. heap span, not
 * noscan, elemsize > 512; everywhere else the slot iterates with type 0,
 * exactly like traceSnapshotMemory, and the model needs no type arrays for
 * most spans.  Without the flag every slot keeps its alloc's type_ref (the
 * first one's for a tiny block).
 *
 * Memory bound (what shadow_heap_mem_bytes() reports: requested sizes plus
 * 16 bytes of malloc overhead per block; a test checks it against both the
 * formula and mallinfo2):
 *   0.125 bytes per slot of a live span (1 live bit; spans of <= 128 slots
 *   keep it inline),
 *   + 4 bytes per slot of a live span that has held a typed object,
 *   + 152 bytes per span (a 64-byte record in a table that doubles, so up to
 *     128 at the peak number of live spans, plus bitmap rounding and malloc
 *     overhead; the table starts at 256 entries and never shrinks, and the
 *     part of it never handed out is never touched, so in RSS it is 64),
 *   + the page map: 32 KiB per 64 MiB region and 16 KiB per 128 GiB region
 *     of address space that ever held a span (a Go heap is made of 64 MiB
 *     arenas, so this is 4 bytes per 8 KiB page of heap),
 *   + 43 bytes per fallback object, per page holding fallback objects and
 *     per stack (hash maps at >= 3/8 load after growth, 16 bytes an entry,
 *     sized for their peak),
 *   + a fixed 16.4 KiB (the first level of the page map and the counters).
 * Per live object, for full spans: 16-byte objects 0.125 + 152/512 = 0.42
 * bytes (4.42 typed); 1024-byte objects 0.125 + 152/8 = 19.1 bytes (23.1
 * typed), under 2.3 % of the memory they describe.  With SH_F_RUNTIME_TYPES
 * only spans of > 512-byte scan objects pay the 4 bytes per slot.
 *
 * Not thread-safe: one model per traced process, fed by one thread.
 * Callbacks must not modify the model they iterate.
 */
#ifndef SHADOW_HEAP_H
#define SHADOW_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SH_PAGE_SHIFT 13           /* runtime pageSize = 8 KiB */
#define SH_PAGE_SIZE (1ull << SH_PAGE_SHIFT)
#define SH_ADDR_BITS 48            /* amd64 heapAddrBits */
#define SH_TINY_BLOCK 16           /* runtime maxTinySize */
#define SH_MALLOC_HEADER 8         /* runtime mallocHeaderSize */
#define SH_MIN_SIZE_FOR_HEADER 512 /* runtime minSizeForMallocHeader */

/* Keep and report types only where traceSnapshotMemory reports them. */
#define SH_F_RUNTIME_TYPES 0x1u

enum sh_op {
	SH_OP_SPAN_ALLOC,
	SH_OP_SPAN_FREE,
	SH_OP_OBJ_ALLOC,
	SH_OP_OBJ_FREE,
	SH_OP_STACK_ALLOC,
	SH_OP_STACK_FREE,
	SH_OP_COUNT
};

enum sh_err {
	SH_OK = 0,
	SH_ERR_BAD_ARG,
	SH_ERR_SPAN_OVERLAP,
	SH_ERR_SPAN_FREE_UNKNOWN,
	SH_ERR_FALLBACK_STALE,
	SH_ERR_OBJ_NO_SPAN,
	SH_ERR_OBJ_ALLOC_LIVE,
	SH_ERR_OBJ_TINY_NO_BLOCK,
	SH_ERR_OBJ_NOT_IN_SLOT,
	SH_ERR_OBJ_FREE_DEAD,
	SH_ERR_OBJ_FREE_INTERIOR,
	SH_ERR_OBJ_FREE_UNKNOWN,
	SH_ERR_STACK_DUP,
	SH_ERR_STACK_FREE_UNKNOWN,
	SH_ERR_COUNT
};

struct shadow_heap_stats {
	uint64_t ops[SH_OP_COUNT];     /* operations fed, per kind */
	uint64_t errors[SH_ERR_COUNT]; /* inconsistencies, per kind ([0] unused) */
	uint64_t oom;                  /* operations refused for lack of memory */
};

struct sh_span_info {
	uint64_t base;
	uint64_t npages;
	uint32_t kindclass;
	uint32_t nelems;     /* slots; 0 for manual spans */
	uint64_t elemsize;   /* 0 for manual spans */
	uint32_t nlive;      /* live slots */
};

struct shadow_heap;

/* flags: SH_F_*.  Returns NULL when out of memory. */
struct shadow_heap *shadow_heap_new(unsigned flags);
void shadow_heap_free(struct shadow_heap *h);

/*
 * Updates.  Each returns SH_OK (0) when the operation fits the model, an
 * enum sh_err (> 0) naming the inconsistency, or -ENOMEM.
 *
 * kindclass: spanclass << 1 for heap spans, 1 for manual spans.  elemsize:
 * the slot size of a heap span (class size, or npages * 8192 for a large
 * span: one slot), ignored for manual spans.
 */
int shadow_heap_span_alloc(struct shadow_heap *h, uint64_t base,
			   uint64_t npages, uint32_t kindclass,
			   uint64_t elemsize);
int shadow_heap_span_free(struct shadow_heap *h, uint64_t base);
/*
 * The attach snapshot's objects of one heap span at once: slot i is live
 * when i < freeindex or bit i of the runtime's allocBits is set (LSB
 * first, nelems bits).  The same as shadow_heap_obj_alloc(slot, 0) for
 * each live slot, at a word's cost instead of an object's: a 1 GiB heap
 * of 64-byte objects is 16.8 M calls, all while the target is stopped.
 * Returns the number of live slots, or -ENOENT when the span at base is
 * not a fresh heap span of at least nelems slots without types (then the caller
 * records its objects one by one).
 */
int shadow_heap_span_seed_live(struct shadow_heap *h, uint64_t base,
			       const uint8_t *alloc_bits, uint32_t nelems,
			       uint32_t freeindex);
int shadow_heap_obj_alloc(struct shadow_heap *h, uint64_t addr,
			  uint32_t type_ref);
int shadow_heap_obj_free(struct shadow_heap *h, uint64_t addr);
int shadow_heap_stack_alloc(struct shadow_heap *h, uint64_t lo,
			    uint64_t size);
int shadow_heap_stack_free(struct shadow_heap *h, uint64_t lo);

/* The span containing addr (any byte of any of its pages). */
bool shadow_heap_find_span(const struct shadow_heap *h, uint64_t addr,
			   struct sh_span_info *out);

/*
 * Iteration, for the exists events at the start of a file.  A callback
 * returning non-zero stops the walk, and the walk returns that value;
 * otherwise 0, or -ENOMEM when a temporary sort buffer (fallback objects,
 * stacks) could not be allocated.
 *   spans:   every live span, heap and manual, in address order;
 *   objects: every live slot (at its base) and fallback object (at its
 *            address), in address order, with its type_ref;
 *   stacks:  every live stack, in address order.
 */
/*
 * The slot holding addr, with one page-map lookup: *slot_base gets its base
 * address (addr itself when there is none) and *span (may be NULL) the
 * span's description.  Returns 1 when the slot is live, 0 when not,
 * SH_SLOT_NONE when addr is in a known span but in no slot (manual span,
 * tail), SH_SLOT_NO_SPAN when no span holds addr.
 */
#define SH_SLOT_NONE (-1)
#define SH_SLOT_NO_SPAN (-2)
int shadow_heap_obj_slot(const struct shadow_heap *h, uint64_t addr,
			 uint64_t *slot_base, struct sh_span_info *span);

typedef int (*sh_span_fn)(void *ctx, const struct sh_span_info *s);
typedef int (*sh_obj_fn)(void *ctx, uint64_t addr, uint32_t type_ref);
typedef int (*sh_stack_fn)(void *ctx, uint64_t lo, uint64_t size);

int shadow_heap_for_each_span(const struct shadow_heap *h, sh_span_fn fn,
			      void *ctx);
int shadow_heap_for_each_object(const struct shadow_heap *h, sh_obj_fn fn,
				void *ctx);
int shadow_heap_for_each_stack(const struct shadow_heap *h, sh_stack_fn fn,
			       void *ctx);

uint64_t shadow_heap_live_objects(const struct shadow_heap *h);
uint64_t shadow_heap_live_spans(const struct shadow_heap *h);
uint64_t shadow_heap_live_stacks(const struct shadow_heap *h);
uint64_t shadow_heap_fallback_objects(const struct shadow_heap *h);

/* Bytes the model holds (see the bound above); temporary buffers excluded. */
size_t shadow_heap_mem_bytes(const struct shadow_heap *h);

const struct shadow_heap_stats *shadow_heap_stats(const struct shadow_heap *h);
/* Sum of stats.errors: the events that did not fit the model. */
uint64_t shadow_heap_inconsistent(const struct shadow_heap *h);
/* Sum of stats.ops. */
uint64_t shadow_heap_ops(const struct shadow_heap *h);

const char *shadow_heap_err_name(int err);
const char *shadow_heap_op_name(int op);

#endif /* SHADOW_HEAP_H */
