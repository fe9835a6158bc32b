// SPDX-License-Identifier: BSD-3-Clause
/*
 * session_records.c - what each ring-buffer record does to a session: its
 * length and kind checked, the shadow heap updated, its events appended.
 *
 * The event semantics follow the runtime's own emission points
 * (runtime/traceallocfree.go and its callers), with two deliberate
 * departures that keep every file replayable (alloc and free of each ID
 * pair up), both documented in README.md:
 *   - an object with a malloc header (pointers, 513..32760 bytes, Go
 *     1.22+) is reported at its slot base, where its free is reported; the
 *     runtime reports the address after the header, which it never frees;
 *   - a tiny allocation whose 8-byte ID is already live in its 16-byte
 *     block is not a separate event (counted as tiny_merged); a block whose
 *     upper half was allocated is freed as two IDs.  --tiny-as-runtime
 *     drops this departure (on_tiny_alloc_runtime).
 */
#include "trace/session.h"
#include "trace/session_impl.h"

#include <errno.h>
#include <string.h>

#include "attach/target.h"
#include "trace/alloc_sample.h"
#include "trace/alloc_stacks.h"
#include "inspect/go_sizeclasses.h"
#include "trace/shadow_heap.h"

/* Go's constants on linux/amd64 (runtime/malloc.go). */
#define GO_TINY_SIZE 16

static bool is_tiny_span(const struct sh_span_info *sp)
{
	return sp->kindclass == (GO_TINY_SPANCLASS << 1);
}

/* Go 1.22+ puts an 8-byte type header before pointerful 513..32760-byte
 * objects and returns the address after it (runtime/malloc.go). */
static bool has_malloc_header(const struct session *s, uint64_t size,
			      bool noscan)
{
	return s->go_minor >= 22 && !noscan &&
	       size > GO_MIN_SIZE_FOR_HEADER &&
	       size <= GO_MAX_SMALL_SIZE - GO_MALLOC_HEADER_SIZE;
}

/*
 * --tiny-as-runtime: a tiny object as the runtime's own trace has it.
 * Go 1.24+ emits an alloc for every tiny object at its own address
 * (runtime/malloc.go: mallocgcTiny returns x = c.tiny + off, and
 * postMallocgcDebug calls trace.HeapObjectAlloc(x)), so objects sharing
 * an 8-byte half allocate a live ID again and an upper half is never
 * freed.  Go 1.21-1.23's mallocgc returns before its trace hook when the
 * object fits the current block ("The object fits into existing tiny
 * block"): only the object that opens a block, at its base, is an event.
 * Either way the sweep frees a block once, at its base (on_sweep:
 * tiny_upper stays empty), as mgcsweep.go does.
 */
static int on_tiny_alloc_runtime(struct session *s,
				 const struct taf_rec_heap_alloc *r,
				 const struct alloc_stack_view *st,
				 const struct type_entry *e, uint64_t slot,
				 int live)
{
	if (live == 0)
		shadow_heap_obj_alloc(s->heap, slot, session_type_ref_of(s, e));
	if (s->go_minor <= 23 && r->addr != slot) {
		s->counts.tiny_unreported++;
		return 0;
	}
	return session_emit_alloc(s, r, st, session_heap_object_id(s, r->addr),
				  session_gen_type_id(s, e));
}

/*
 * A tiny object (< 16 B, no pointers) shares a 16-byte block with others:
 * its ID is one of the block's two 8-byte halves, and a half already live
 * is not allocated again (counted as merged).
 */
static int on_tiny_alloc(struct session *s, const struct taf_rec_heap_alloc *r,
			 const struct alloc_stack_view *st,
			 const struct type_entry *e, uint64_t slot, int live)
{
	bool upper = r->addr - slot >= GO_TINY_SIZE / 2;

	if (s->tiny_as_runtime)
		return on_tiny_alloc_runtime(s, r, st, e, slot, live);
	if (!upper && live == 1) {
		s->counts.tiny_merged++;
		return 0;
	}
	if (upper) {
		if (u64_map_get(&s->tiny_upper, slot, NULL)) {
			s->counts.tiny_merged++;
			return 0;
		}
		u64_map_put(&s->tiny_upper, slot, 1);
	}
	if (live == 0)
		shadow_heap_obj_alloc(s->heap, slot, session_type_ref_of(s, e));
	return session_emit_alloc(s, r, st, session_heap_object_id(s, slot) + (upper ? 1 : 0),
			  session_gen_type_id(s, e));
}

/*
 * --sample N: whether to keep this allocation.  The shadow heap then holds
 * only kept objects, and a sweep frees only what it holds, so no file
 * frees an ID it never allocated.  The objects of a tiny block share its
 * slot: the block is kept or skipped whole, decided at its first object
 * (always at the block's base, runtime/malloc.go mallocgcTiny).
 */
static bool keep_alloc(const struct session *s,
		       const struct taf_rec_heap_alloc *r, uint64_t slot,
		       int live, bool tiny)
{
	if (tiny && live == 1)
		return true;
	if (tiny && r->addr != slot)
		return false;
	return alloc_sampled(slot, r->hdr.ts, s->sample);
}

static int on_heap_alloc(struct session *s, const struct taf_rec_heap_alloc *r,
			 const struct alloc_stack_view *st)
{
	const struct type_entry *e = session_type_lookup(s, r->type);
	bool noscan = !e || e->ptr_bytes == 0;
	struct sh_span_info sp;
	uint64_t slot;
	int live = shadow_heap_obj_slot(s->heap, r->addr, &slot, &sp);
	bool tiny = live >= 0 && is_tiny_span(&sp) && r->size < GO_TINY_SIZE &&
		    noscan;

	if (s->sample > 1 && !keep_alloc(s, r, slot, live, tiny)) {
		s->counts.sampled_out++;
		return 0;
	}
	if (live == SH_SLOT_NO_SPAN) {
		/* Unknown span: the slot base is where the free will be. */
		if (has_malloc_header(s, r->size, noscan))
			slot = r->addr - GO_MALLOC_HEADER_SIZE;
	} else if (tiny) {
		return on_tiny_alloc(s, r, st, e, slot, live);
	}
	shadow_heap_obj_alloc(s->heap, slot, session_type_ref_of(s, e));
	return session_emit_alloc(s, r, st, session_heap_object_id(s, slot), session_gen_type_id(s, e));
}

/* --sample: frees slot if the shadow heap holds it; false if it does not. */
static bool sampled_free(struct session *s, uint64_t slot)
{
	uint64_t base;
	int live = shadow_heap_obj_slot(s->heap, slot, &base, NULL);

	if (live == SH_SLOT_NO_SPAN)
		return shadow_heap_obj_free(s->heap, slot) == SH_OK;
	if (live != 1)
		return false;
	shadow_heap_obj_free(s->heap, slot);
	return true;
}

/*
 * The bitmaps BPF could not read (TAF_SWEEP_*_UNREAD): a page nothing had
 * written yet is not present, and a uprobe cannot fault it in; a read
 * through /proc/PID/mem can (such a page reads as zeros).  They are still
 * what the sweep read: the sweep installs the marks as the span's
 * allocBits and leaves the old allocBits be, and the runtime recycles a
 * gcBits arena only two GC cycles on (runtime/mheap.go: gcBitsArenas).
 * Green Tea's inline marks are cleared by the sweep itself, so they are
 * not read again.  What stays unread counts as all allocated and all
 * marked: nothing is freed that was not.  The record's mark bits already
 * hold the marks the sweep gives finalized objects; the read adds to them.
 */
static const struct taf_rec_span_sweep *
read_unread_bitmaps(struct session *s, const struct taf_rec_span_sweep *r,
		    struct taf_rec_span_sweep *copy)
{
	uint8_t bits[TAF_SPAN_BITMAP_MAX];
	size_t n = r->nbytes <= sizeof(bits) ? r->nbytes : sizeof(bits), i;

	if (!(r->read_errors & (TAF_SWEEP_ALLOC_UNREAD | TAF_SWEEP_MARKS_UNREAD)))
		return r;
	*copy = *r;
	if ((r->read_errors & TAF_SWEEP_ALLOC_UNREAD) && r->alloc_bits_at &&
	    target_read(&s->target, r->alloc_bits_at, copy->alloc_bits, n) == 0) {
		copy->read_errors &= (uint8_t)~TAF_SWEEP_ALLOC_UNREAD;
		s->counts.sweep_bitmaps_read_late++;
	}
	if (!(r->read_errors & TAF_SWEEP_MARKS_UNREAD))
		return copy;
	if (!r->inline_marks && r->mark_bits_at &&
	    target_read(&s->target, r->mark_bits_at, bits, n) == 0) {
		for (i = 0; i < n; i++)
			copy->mark_bits[i] |= bits[i];
		copy->read_errors &= (uint8_t)~TAF_SWEEP_MARKS_UNREAD;
		s->counts.sweep_bitmaps_read_late++;
	} else {
		memset(copy->mark_bits, 0xff, sizeof(copy->mark_bits));
	}
	return copy;
}

/*
 * The runtime's free loop (runtime/mgcsweep.go, (*sweepLocked).sweep): slot
 * i is freed when it is not marked and was allocated, that is below
 * freeindex or with its alloc bit set.
 */
static int on_sweep(struct session *s, const struct taf_rec_span_sweep *rec)
{
	struct taf_rec_span_sweep copy;
	const struct taf_rec_span_sweep *r = read_unread_bitmaps(s, rec, &copy);
	bool tiny = r->spanclass == GO_TINY_SPANCLASS;
	uint32_t n = r->nelems, i;
	int rc = 0;

	if (r->read_errors)
		s->counts.sweep_read_errors++;
	if (n > (uint32_t)r->nbytes * 8)
		n = (uint32_t)r->nbytes * 8;
	for (i = 0; i < n && rc == 0; i++) {
		bool marked = r->mark_bits[i / 8] & (1u << (i % 8));
		bool allocated = i < r->freeindex ||
				 (r->alloc_bits[i / 8] & (1u << (i % 8)));
		uint64_t slot = r->base + (uint64_t)i * r->elemsize;

		if (marked || !allocated)
			continue;
		rc = session_flush_exists(s);
		if (rc)
			break;
		if (s->sample > 1) {
			/* Only what was kept is freed (keep_alloc). */
			if (!sampled_free(s, slot))
				continue;
		} else {
			shadow_heap_obj_free(s->heap, slot);
		}
		rc = session_emit(s, r->hdr.tid, TW_EV_HEAP_OBJECT_FREE,
				  r->hdr.ts, session_heap_object_id(s, slot), 0, 0);
		if (rc == 0 && tiny && u64_map_del(&s->tiny_upper, slot))
			rc = session_emit(s, r->hdr.tid,
					  TW_EV_HEAP_OBJECT_FREE, r->hdr.ts,
					  session_heap_object_id(s, slot) + 1, 0, 0);
	}
	return rc;
}

/* Forgets the upper halves of a tiny span's blocks when the span goes. */
static void forget_tiny_span(struct session *s, uint64_t base)
{
	struct sh_span_info sp;
	uint64_t a;

	/*
	 * Upper halves are only recorded for live blocks, and a sweep
	 * forgets them as it frees: a span with nothing live has none (a
	 * span freed after its sweep, the common case: 512 lookups saved).
	 */
	if (!s->tiny_upper.len || !shadow_heap_find_span(s->heap, base, &sp) ||
	    !is_tiny_span(&sp) || !sp.nlive)
		return;
	for (a = sp.base; a < sp.base + sp.npages * GO_PAGE_SIZE; a += GO_TINY_SIZE)
		u64_map_del(&s->tiny_upper, a);
}

/*
 * --stacks: the stack an allocation record carries is learnt whatever
 * becomes of the record: a stack comes whole only once.
 */
static void learn_stack(struct session *s, const struct alloc_stack_view *st)
{
	if (s->stacks && st->stack)
		alloc_stacks_record(s->stacks, st->stack->stack_hash, st->pcs,
				    st->nr_pcs, st->stack->ret);
}

static int record(struct session *s, const struct record_view *v)
{
	const struct taf_rec_hdr *h = v->hdr;
	/* Without --stacks a record's stack is not looked at. */
	static const struct alloc_stack_view no_stack;
	const struct alloc_stack_view *st = s->stacks ? &v->stack : &no_stack;

	if (h->kind == TAF_REC_HEAP_ALLOC)
		learn_stack(s, st);
	if (!s->started || h->ts < s->start_ts) {
		/* Before the snapshot: its effect is already in the shadow. */
		s->counts.before_start++;
		return 0;
	}
	if (s->stop_ts && h->ts > s->stop_ts) {
		s->counts.after_stop++;
		return 0;
	}
	/* A kind this build does not know: counted, not an event. */
	if (!v->body) {
		if (h->kind < TAF_REC_KIND_MAX)
			s->counts.records[h->kind]++;
		return 0;
	}
	/* Not an event: it goes to the next generation's file's F.gc. */
	if (h->kind == TAF_REC_GC_CYCLE) {
		int rc;

		s->counts.records[h->kind]++;
		rc = session_gc_mark(s, v->addr);
		if (rc || !session_reads_samples(s))
			return rc;
		/* --memprofilerate: the births of the mark just ended. */
		if (!s->gen && session_ensure_generation(s, v) != 0)
			return 0;
		return session_sampled_read_end(s, v->addr);
	}
	/* Not an event either, but a read's may be (session_sampled.c). */
	if (h->kind == TAF_REC_GC_MARK && !session_reads_samples(s)) {
		s->counts.records[h->kind]++;
		return 0;
	}
	/* Part of the read the next GC record applies (session_reads.c). */
	if (h->kind == TAF_REC_SNAP || h->kind == TAF_REC_SNAP_BUCKET) {
		s->counts.records[h->kind]++;
		if (!session_reads_samples(s))
			return 0;
		/* Opened by a snapshot's sample when the heap base cannot be
		 * read any more (else -EAGAIN: by the next record). */
		if (h->kind == TAF_REC_SNAP && !s->gen &&
		    session_ensure_generation(s, v) == -ENOMEM)
			return -ENOMEM;
		return h->kind == TAF_REC_SNAP ? session_sampled_snap(s, v->snap) :
		       session_sampled_snap_bucket(s, v->snap_bucket);
	}
	if (!s->gen && session_ensure_generation(s, v) != 0)
		return 0;
	if (h->kind < TAF_REC_KIND_MAX)
		s->counts.records[h->kind]++;
	/* A sweep changes the shadow heap only where it frees (on_sweep). */
	if (h->kind != TAF_REC_SPAN_SWEEP && h->kind != TAF_REC_EXEC &&
	    session_flush_exists(s))
		return -ENOMEM;

	switch (h->kind) {
	case TAF_REC_HEAP_ALLOC:
		if (h->flags & TAF_ALLOC_F_SAMPLED)
			return session_sampled_alloc(s, v->heap_alloc, st);
		return on_heap_alloc(s, v->heap_alloc, st);
	case TAF_REC_SAMPLED_FREE:
		return session_sampled_free(s, v->addr);
	case TAF_REC_GC_MARK:
		return session_sampled_read(s, v->addr);
	case TAF_REC_SPAN_SWEEP:
		return on_sweep(s, v->sweep);
	case TAF_REC_SPAN_ALLOC: {
		const struct taf_rec_span_alloc *r = v->span_alloc;
		uint32_t kc = span_kindclass(r->alloc_type, r->spanclass);

		forget_tiny_span(s, r->base);
		shadow_heap_span_alloc(s->heap, r->base, r->npages, kc,
				       r->alloc_type == 0 ?
				       go_span_elemsize(r->spanclass, r->npages) : 0);
		return session_emit(s, h->tid, TW_EV_SPAN_ALLOC, h->ts,
				    span_id(s, r->base), r->npages, kc);
	}
	case TAF_REC_SPAN_FREE: {
		const struct taf_rec_addr *r = v->addr;

		forget_tiny_span(s, r->addr);
		shadow_heap_span_free(s->heap, r->addr);
		return session_emit(s, h->tid, TW_EV_SPAN_FREE, h->ts,
				    span_id(s, r->addr), 0, 0);
	}
	case TAF_REC_STACK_ALLOC: {
		const struct taf_rec_stack_alloc *r = v->stack_alloc;

		shadow_heap_stack_alloc(s->heap, r->lo, r->hi - r->lo);
		return session_emit(s, h->tid, TW_EV_GOROUTINE_STACK_ALLOC,
				    h->ts, stack_id(s, r->lo),
				    stack_order(r->hi - r->lo), 0);
	}
	case TAF_REC_STACK_FREE: {
		const struct taf_rec_addr *r = v->addr;

		shadow_heap_stack_free(s->heap, r->addr);
		return session_emit(s, h->tid, TW_EV_GOROUTINE_STACK_FREE,
				    h->ts, stack_id(s, r->addr), 0, 0);
	}
	default:
		return 0;
	}
}

int session_record(struct session *s, const struct record_view *v)
{
	int rc = record(s, v);

	/*
	 * Cut by size too (session.h SESSION_GEN_SIZE_DEFAULT, less on a
	 * disk nearly full: session_gen.c gen_cap_for_room), counting
	 * only the events after a file's exists events: those repeat the
	 * live heap, which may itself be larger than the cap, and every
	 * generation must hold some events of its own.
	 */
	if (s->gen_cap_now && s->gen &&
	    tw_gen_event_bytes(s->gen) - s->gen_base >= s->gen_cap_now)
		session_cut(s);
	return rc;
}
