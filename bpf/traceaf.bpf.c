// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * traceaf.bpf.c - uprobes on the Go runtime's allocator.
 *
 * Reports what the runtime did (addresses, type pointers, sizes) and nothing
 * about the trace format: the daemon owns IDs, generations and encoding.
 *
 * Go's register ABI (cmd/compile/abi-internal.md): integer arguments in
 * AX, BX, CX, DI, SI, R8.., results in AX, BX..; R14 holds the current g at
 * function entry and at RET.  The probes sit only at those two places, so
 * R14 identifies the goroutine without reading thread-local storage.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "traceaf_events.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* resized by the loader */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TAF_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/*
 * An allocation in progress on one goroutine.  The runtime's allocation
 * functions nest (mallocgc -> mallocgcSmallNoScanSC3 -> ...SlowPath on Go
 * 1.27, or the compiler calls the SC functions directly): only the outermost
 * call is reported, so each allocation counts once.  Keyed by goroutine, not
 * thread: mallocgc can block (GC assist, gcStart) and resume on another M.
 *
 * Calls are matched by their depth on the goroutine stack, g.stack.hi - SP,
 * the same at the entry site (after the CALL pushed the return address, the
 * PUSHQ BP not yet done) and at the RET.  Unlike a counter this survives a
 * missed exit (an entry seen before the RET probes were attached): a stale
 * record is recognised by its depth and replaced.  Unlike SP itself it
 * survives the stack being copied to a bigger one mid-call (copystack keeps
 * offsets from stack.hi).
 */
struct inflight_key {
	__u32 pid;
	__u32 pad;
	__u64 g;
};

struct inflight_val {
	__u64 size;
	__u64 type;
	__u64 depth;     /* g.stack.hi - SP of the outermost call */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct inflight_key);
	__type(value, struct inflight_val);
} inflight SEC(".maps");

/* Per-binary runtime layouts, indexed by TAF_COOKIE_LAYOUT(cookie). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TAF_MAX_LAYOUTS);
	__type(key, __u32);
	__type(value, struct taf_layout);
} layouts SEC(".maps");

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += 1;
}

static __always_inline void fill_hdr(struct taf_rec_hdr *h, __u16 kind,
				     __u16 len)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	h->ts = bpf_ktime_get_ns();
	h->pid = pid_tgid >> 32;
	h->tid = (__u32)pid_tgid;
	h->kind = kind;
	h->len = len;
	h->flags = 0;
}

static __always_inline const struct taf_layout *layout_of(struct pt_regs *ctx)
{
	__u32 idx = TAF_COOKIE_LAYOUT(bpf_get_attach_cookie(ctx));
	const struct taf_layout *l = bpf_map_lookup_elem(&layouts, &idx);

	return l && l->valid ? l : NULL;
}

/* Reads an unsigned field of 1, 2, 4 or 8 bytes; 0 when unreadable. */
static __always_inline __u64 read_field(__u64 base, __u16 off, __u8 size)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (void *)(base + off)))
		return 0;
	switch (size) {
	case 1: return v & 0xff;
	case 2: return v & 0xffff;
	case 4: return v & 0xffffffff;
	default: return v;
	}
}

/* g.stack.hi - SP: the call's depth on its goroutine stack, 0 if unknown. */
static __always_inline __u64 stack_depth(struct pt_regs *ctx)
{
	const struct taf_layout *l = layout_of(ctx);
	__u64 hi = 0;

	if (!l || bpf_probe_read_user(&hi, sizeof(hi),
				      (void *)(ctx->r14 + l->g_stack_hi)))
		return 0;
	return hi > ctx->sp ? hi - ctx->sp : 0;
}

SEC("uprobe")
int alloc_enter(struct pt_regs *ctx)
{
	struct inflight_key key = {
		.pid = bpf_get_current_pid_tgid() >> 32,
		.g = ctx->r14,
	};
	struct inflight_val *cur, val = {};
	__u64 depth = stack_depth(ctx);

	if (!depth)
		return 0;
	cur = bpf_map_lookup_elem(&inflight, &key);
	/* Deeper than the recorded call: nested inside it. */
	if (cur && cur->depth < depth)
		return 0;
	/* mallocgc(size uintptr, typ *_type, needzero bool): AX, BX. */
	val.size = ctx->ax;
	val.type = ctx->bx;
	val.depth = depth;
	bpf_map_update_elem(&inflight, &key, &val, BPF_ANY);
	return 0;
}

SEC("uprobe")
int alloc_exit(struct pt_regs *ctx)
{
	struct inflight_key key = {
		.pid = bpf_get_current_pid_tgid() >> 32,
		.g = ctx->r14,
	};
	struct taf_rec_heap_alloc *rec;
	struct inflight_val *cur;
	__u64 size, type, depth = stack_depth(ctx);

	cur = bpf_map_lookup_elem(&inflight, &key);
	if (!cur) {
		/* Entered before we attached. */
		stat_inc(TAF_STAT_UNMATCHED_EXIT);
		return 0;
	}
	if (cur->depth < depth)
		return 0;               /* a nested call returns */
	if (cur->depth > depth) {
		/* Shallower than the record: its exit was missed. */
		bpf_map_delete_elem(&inflight, &key);
		stat_inc(TAF_STAT_UNMATCHED_EXIT);
		return 0;
	}
	size = cur->size;
	type = cur->type;
	bpf_map_delete_elem(&inflight, &key);

	/* Zero-sized requests return &zerobase: not a heap object. */
	if (size == 0)
		return 0;

	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec) {
		stat_inc(TAF_STAT_DROPPED_BASE + TAF_REC_HEAP_ALLOC);
		return 0;
	}
	fill_hdr(&rec->hdr, TAF_REC_HEAP_ALLOC, sizeof(*rec));
	rec->addr = ctx->ax;
	rec->type = type;
	rec->size = size;
	bpf_ringbuf_submit(rec, 0);
	stat_inc(TAF_STAT_EMITTED);
	return 0;
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
	const struct taf_layout *l = layout_of(ctx);
	struct taf_rec_span_sweep *rec;
	__u64 span = 0, marks, allocs;
	__u32 n;

	if (!l)
		return 0;
	if (bpf_probe_read_user(&span, sizeof(span), (void *)ctx->ax) || !span)
		return 0;

	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec) {
		stat_inc(TAF_STAT_DROPPED_BASE + TAF_REC_SPAN_SWEEP);
		return 0;
	}
	fill_hdr(&rec->hdr, TAF_REC_SPAN_SWEEP, sizeof(*rec));
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
	rec->inline_marks = l->green_tea && rec->elemsize >= 16 &&
			    rec->elemsize <= 512;
	if (rec->inline_marks)
		marks = rec->base + 8192 - 64;

	n = (rec->nelems + 7) / 8;
	if (n > TAF_SPAN_BITMAP_MAX)
		n = TAF_SPAN_BITMAP_MAX;
	if (n == 0)
		n = 1;
	rec->nbytes = n;
	if (bpf_probe_read_user(rec->alloc_bits, n & 0xff, (void *)allocs)) {
		__builtin_memset(rec->alloc_bits, 0xff, sizeof(rec->alloc_bits));
		rec->read_errors |= 1;
	}
	if (bpf_probe_read_user(rec->mark_bits, n & 0xff, (void *)marks)) {
		/* Unknown marks: assume all live, so nothing is freed. */
		__builtin_memset(rec->mark_bits, 0xff, sizeof(rec->mark_bits));
		rec->read_errors |= 2;
	}
	bpf_ringbuf_submit(rec, 0);
	stat_inc(TAF_STAT_EMITTED);
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

	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec) {
		stat_inc(TAF_STAT_DROPPED_BASE + TAF_REC_SPAN_ALLOC);
		return 0;
	}
	fill_hdr(&rec->hdr, TAF_REC_SPAN_ALLOC, sizeof(*rec));
	rec->base = ctx->si;
	rec->npages = ctx->r8;
	rec->alloc_type = ctx->cx & 0xff;
	rec->spanclass = ctx->di & 0xff;
	__builtin_memset(rec->pad, 0, sizeof(rec->pad));
	bpf_ringbuf_submit(rec, 0);
	stat_inc(TAF_STAT_EMITTED);
	return 0;
}

static __always_inline int emit_addr(__u16 kind, __u64 addr)
{
	struct taf_rec_addr *rec;

	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec) {
		stat_inc(TAF_STAT_DROPPED_BASE + kind);
		return 0;
	}
	fill_hdr(&rec->hdr, kind, sizeof(*rec));
	rec->addr = addr;
	bpf_ringbuf_submit(rec, 0);
	stat_inc(TAF_STAT_EMITTED);
	return 0;
}

/* Entry of (*mheap).freeSpanLocked(s, typ): BX = s. */
SEC("uprobe")
int span_free(struct pt_regs *ctx)
{
	const struct taf_layout *l = layout_of(ctx);
	__u64 base;

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

	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec) {
		stat_inc(TAF_STAT_DROPPED_BASE + TAF_REC_STACK_ALLOC);
		return 0;
	}
	fill_hdr(&rec->hdr, TAF_REC_STACK_ALLOC, sizeof(*rec));
	rec->lo = ctx->ax;
	rec->hi = ctx->bx;
	bpf_ringbuf_submit(rec, 0);
	stat_inc(TAF_STAT_EMITTED);
	return 0;
}

/* Entry of stackfree(stk stack): AX = lo, BX = hi. */
SEC("uprobe")
int stack_free(struct pt_regs *ctx)
{
	return emit_addr(TAF_REC_STACK_FREE, ctx->ax);
}

/*
 * A process exec'd (used with --all, loaded only then): the daemon checks
 * whether it runs Go and attaches to its executable if it is new.
 * tp_btf needs no tracefs, which this kind of machine does not mount.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	struct taf_rec_hdr *rec;

	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec) {
		stat_inc(TAF_STAT_DROPPED_BASE + TAF_REC_EXEC);
		return 0;
	}
	fill_hdr(rec, TAF_REC_EXEC, sizeof(*rec));
	bpf_ringbuf_submit(rec, 0);
	return 0;
}
