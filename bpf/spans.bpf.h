/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * spans.bpf.h - the heap's spans (sweep, init, free), goroutine stacks
 * and GC cycles: the probes that are not allocations (part of
 * traceaf.bpf.c).
 */
#ifndef TRACEAF_SPANS_BPF_H
#define TRACEAF_SPANS_BPF_H

#include "records.bpf.h"
#include "snap.bpf.h"

/*
 * Before its free loop reads the marks, the sweep marks every unmarked
 * object that has a finalizer special: the finalizer is queued and the
 * object lives one more cycle (runtime/mgcsweep.go, Go 1.21-1.27: "Stop
 * freeing of object if it has a finalizer").  The list is walked here,
 * at the sweep's entry, and those marks set in the record's copy.  The
 * span is locked for sweeping and a finalizer can only be added to a
 * reachable (marked) object, so the part of the list that matters cannot
 * change under the walk.
 */
static __always_inline void mark_finalized(const struct taf_layout *l,
					   __u64 span,
					   struct taf_rec_span_sweep *rec)
{
	__u64 sp = read_field(span, l->span_specials, 8), node[3], off, idx;
	__u32 nbits = (__u32)rec->nbytes * 8, kind_off = l->special_kind_off, i;
	__u8 kind;

	if (kind_off >= sizeof(node))
		return;
	for (i = 0; i < TAF_SWEEP_SPECIALS && sp; i++) {
		/* {next *special; offset uint16|uintptr; kind byte} */
		if (bpf_probe_read_user(node, sizeof(node), (void *)sp))
			break;
		kind = ((__u8 *)node)[kind_off];
		off = l->special_offset_size == 2 ? node[1] & 0xffff : node[1];
		if (kind == l->special_kind_finalizer && rec->elemsize) {
			idx = off / rec->elemsize;
			if (idx < nbits)
				rec->mark_bits[(idx / 8) & (TAF_SPAN_BITMAP_MAX - 1)] |=
					(__u8)(1u << (idx & 7));
		}
		sp = node[0];
	}
	if (sp)
		rec->read_errors |= TAF_SWEEP_SPECIALS_CUT;
}

/*
 * Entry of (*sweepLocked).sweep(preserve bool): AX = sl, and sl.mspan is the
 * span.  Copies the bitmaps the runtime's free loop reads.  Under Green Tea
 * (Go 1.26+, GOEXPERIMENT=greenteagc on 1.25) spans of 16..512-byte objects
 * keep their mark bits inline at the end of the span's page
 * (spanInlineMarkBitsFromBase: base + pageSize - 128, marks at +64) and
 * sweep merges them into gcmarkBits only after the loop, so gcmarkBits is
 * not what decides the frees there (mgcmark_greenteagc.go).
 */
SEC("uprobe")
int span_sweep(struct pt_regs *ctx)
{
	const struct taf_layout *l;
	struct taf_rec_span_sweep *rec;
	__u64 span = 0, marks, allocs;
	__u32 n;

	if (!tracing_enabled)
		return 0;
	l = layout_of(ctx);
	if (!l)
		return 0;
	if (bpf_probe_read_user(&span, sizeof(span), (void *)ctx->ax) || !span)
		return 0;

	rec = reserve_rec(TAF_REC_SPAN_SWEEP, sizeof(*rec));
	if (!rec)
		return 0;
	rec->base = read_field(span, l->span_start_addr, 8);
	rec->npages = read_field(span, l->span_npages, 8);
	rec->elemsize = read_field(span, l->span_elemsize, 8);
	rec->nelems = read_field(span, l->span_nelems, l->nelems_size);
	rec->freeindex = read_field(span, l->span_freeindex, l->freeindex_size);
	rec->spanclass = read_field(span, l->span_spanclass, 1);
	rec->read_errors = 0;
	rec->pad = 0;
	allocs = read_field(span, l->span_alloc_bits, 8);
	marks = read_field(span, l->span_gcmark_bits, 8);
	rec->inline_marks = TAF_INLINE_MARKS(l->green_tea, rec->elemsize);
	if (rec->inline_marks)
		marks = TAF_INLINE_MARKS_AT(rec->base);

	n = (rec->nelems + 7) / 8;
	if (n > TAF_SPAN_BITMAP_MAX)
		n = TAF_SPAN_BITMAP_MAX;
	if (n == 0)
		n = 1;
	rec->nbytes = n;
	rec->alloc_bits_at = allocs;
	rec->mark_bits_at = marks;
	/*
	 * A bitmap page nothing has written yet (a fresh gcBits arena: an
	 * unmarked large object's byte) is not present, and a uprobe cannot
	 * fault it in; the daemon reads it then (session_records.c).
	 */
	if (bpf_probe_read_user(rec->alloc_bits, n & 0xff, (void *)allocs)) {
		__builtin_memset(rec->alloc_bits, 0xff, sizeof(rec->alloc_bits));
		rec->read_errors |= TAF_SWEEP_ALLOC_UNREAD;
	}
	if (bpf_probe_read_user(rec->mark_bits, n & 0xff, (void *)marks)) {
		__builtin_memset(rec->mark_bits, 0, sizeof(rec->mark_bits));
		rec->read_errors |= TAF_SWEEP_MARKS_UNREAD;
	}
	if (l->span_specials)
		mark_finalized(l, span, rec);
	bpf_ringbuf_submit(rec, submit_flags());
	return 0;
}

/*
 * Entry of (*mheap).initSpan(s, typ spanAllocType, spanclass, base,
 * npages[, scav]): AX=h BX=s CX=typ DI=spanclass SI=base R8=npages.  The
 * runtime emits SpanAlloc at the end of allocSpan, right after this call.
 */
SEC("uprobe")
int span_init(struct pt_regs *ctx)
{
	struct taf_rec_span_alloc *rec;

	if (!tracing_enabled)
		return 0;
	rec = reserve_rec(TAF_REC_SPAN_ALLOC, sizeof(*rec));
	if (!rec)
		return 0;
	rec->base = ctx->si;
	rec->npages = ctx->r8;
	rec->alloc_type = ctx->cx & 0xff;
	rec->spanclass = ctx->di & 0xff;
	__builtin_memset(rec->pad, 0, sizeof(rec->pad));
	bpf_ringbuf_submit(rec, submit_flags());
	return 0;
}

/*
 * Entry of (*mheap).setSpans(base, npage, s): AX=h BX=base CX=npage DI=s.
 * Its one caller is initSpan, after it set s.spanclass and s.state
 * (runtime/mheap.go); where initSpan is inlined (PGO builds: the Go
 * toolchain's own compile) this sees the same span as span_init.
 */
SEC("uprobe")
int span_set(struct pt_regs *ctx)
{
	const struct taf_layout *l;
	struct taf_rec_span_alloc *rec;
	__u64 s = ctx->di;

	if (!tracing_enabled)
		return 0;
	l = layout_of(ctx);
	if (!l || !s)
		return 0;
	rec = reserve_rec(TAF_REC_SPAN_ALLOC, sizeof(*rec));
	if (!rec)
		return 0;
	rec->base = ctx->bx;
	rec->npages = ctx->cx;
	/* mSpanInUse (1): a heap span; mSpanManual (2): spanAllocType
	 * non-zero, which the daemon reads as manual. */
	rec->alloc_type = read_field(s, l->span_state, 1) == 1 ? 0 : 1;
	rec->spanclass = read_field(s, l->span_spanclass, 1);
	__builtin_memset(rec->pad, 0, sizeof(rec->pad));
	bpf_ringbuf_submit(rec, 0);
	return 0;
}

/* Entry of (*mheap).freeSpanLocked(s, typ): BX = s. */
SEC("uprobe")
int span_free(struct pt_regs *ctx)
{
	const struct taf_layout *l;
	__u64 base;

	if (!tracing_enabled)
		return 0;
	l = layout_of(ctx);
	if (!l)
		return 0;
	base = read_field(ctx->bx, l->span_start_addr, 8);
	if (!base)
		return 0;
	return emit_addr(TAF_REC_SPAN_FREE, base);
}

/* A RET of stackalloc(n uint32) stack: AX = lo, BX = hi. */
SEC("uprobe")
int stack_alloc(struct pt_regs *ctx)
{
	struct taf_rec_stack_alloc *rec;

	if (!tracing_enabled)
		return 0;
	rec = reserve_rec(TAF_REC_STACK_ALLOC, sizeof(*rec));
	if (!rec)
		return 0;
	rec->lo = ctx->ax;
	rec->hi = ctx->bx;
	bpf_ringbuf_submit(rec, submit_flags());
	return 0;
}

/*
 * gcSweep entries per process (tgid): --memprofilerate's reads compare
 * it before and after walking the profile specials; a sweep in between
 * may have freed what they walked.  The daemon deletes a process's
 * entry when its session ends.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} gc_sweeps SEC(".maps");

/*
 * Entry of gcSweep(mode gcMode) (runtime/mgc.go): gcMarkTermination calls
 * it once per GC cycle with the world stopped, as the mark phase ends and
 * before mheap_.sweepgen moves on; AX = mode (0 background, 1 forced by
 * runtime.GC, 2 forced and blocking).  One trap per cycle.  For
 * --memprofilerate the samples are read here too (snap.bpf.h): the
 * daemon is woken only when they could not be.
 */
SEC("uprobe")
int gc_cycle(struct pt_regs *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct taf_rec_addr *rec;
	__u64 one = 1, *n;
	bool snap;

	if (!tracing_enabled)
		return 0;
	n = bpf_map_lookup_elem(&gc_sweeps, &pid);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&gc_sweeps, &pid, &one, BPF_NOEXIST);
	snap = snap_take(pid);
	rec = reserve_rec(TAF_REC_GC_CYCLE, sizeof(*rec));
	if (!rec)
		return 0;
	rec->addr = ctx->ax;
	rec->hdr.flags = snap ? TAF_GC_F_SNAP : 0;
	bpf_ringbuf_submit(rec, submit_flags());
	return 0;
}

/*
 * Entry of gcMarkTinyAllocs() (runtime/mgc.go): gcStart calls it once
 * per cycle with the world stopped, just after the phase became _GCmark
 * and the previous cycle's sweep was finished.  Until the next gcSweep,
 * profile specials are only added, never freed.  The samples are read
 * now (snap.bpf.h); when they could not be, the daemon reads them during
 * the mark (--memprofilerate), so it is woken at once.
 */
SEC("uprobe")
int gc_mark(struct pt_regs *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct taf_rec_addr *rec;
	__u64 *n, sweeps;
	bool snap;

	if (!tracing_enabled)
		return 0;
	n = bpf_map_lookup_elem(&gc_sweeps, &pid);
	sweeps = n ? *n : 0;
	snap = snap_take(pid);
	rec = reserve_rec(TAF_REC_GC_MARK, sizeof(*rec));
	if (!rec)
		return 0;
	rec->addr = sweeps;
	rec->hdr.flags = snap ? TAF_GC_F_SNAP : 0;
	bpf_ringbuf_submit(rec, snap ? submit_flags() : BPF_RB_FORCE_WAKEUP);
	return 0;
}

/* Entry of stackfree(stk stack): AX = lo, BX = hi. */
SEC("uprobe")
int stack_free(struct pt_regs *ctx)
{
	if (!tracing_enabled)
		return 0;
	return emit_addr(TAF_REC_STACK_FREE, ctx->ax);
}

#endif /* TRACEAF_SPANS_BPF_H */
