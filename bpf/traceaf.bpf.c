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
#include <bpf/bpf_core_read.h>
#include "traceaf_events.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * Set by the daemon once its sessions are ready and cleared before it
 * detaches: detaching takes a while, and records from a half-detached
 * set of probes (allocations still seen, sweeps no longer) would make the
 * last generation inconsistent.
 */
__u32 tracing_enabled = 0;

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

/*
 * --stacks: set by the loader before load, so without it the verifier
 * drops the stack code and an allocation costs what it did before.
 */
const volatile __u32 capture_stacks = 0;

/*
 * Allocating call stacks (--stacks), deduplicated by content: a record
 * carries a 64-bit hash of its PCs and return address, and the PCs
 * themselves only the first time this process sends that hash, as far
 * as `known_stacks` remembers.  The daemon keeps every stack it was sent
 * by hash, so a hash always means the stack it was first sent with: no
 * kernel stack map whose keys would have to be recycled (it never
 * forgets an entry, so over hours every record ended up carrying its
 * PCs), nothing the daemon reads later that could have changed.  An LRU
 * map: a stack evicted is sent whole once more.  Sized by the loader.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, struct taf_stack_key);
	__type(value, __u8);
} known_stacks SEC(".maps");

/* The walk's PCs, before the record's size is known. */
struct stack_buf {
	__u64 pcs[TAF_STACK_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack_buf);
} stack_scratch SEC(".maps");

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

/*
 * Waking the reader costs the probed thread an irq_work (and an IPI) per
 * record, several times the probe itself, and flag 0 wakes it whenever
 * it has caught up, which a fast reader nearly always has: once per
 * record.  The daemon reads the ring after every poll timeout anyway
 * (user/trace/tracer.c read_ring), so every record is submitted quietly
 * and only one that finds the ring an eighth full wakes the reader
 * before the timeout, long before a burst could fill it.
 */
static __always_inline __u64 submit_flags(void)
{
	__u64 avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	__u64 size = bpf_ringbuf_query(&events, BPF_RB_RING_SIZE);

	return avail >= size / 8 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
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

/* FNV-1a over the PCs and the return address (the daemon's key). */
static __always_inline __u64 stack_hash(const struct stack_buf *b, __u32 n,
					__u64 ret)
{
	__u64 h = 0xcbf29ce484222325ull ^ ret;
	__u32 i;

	for (i = 0; i < TAF_STACK_DEPTH && i < n; i++)
		h = (h ^ b->pcs[i]) * 0x100000001b3ull;
	return h | 1;	/* 0: no stack */
}

static __always_inline void *reserve_alloc(__u32 size)
{
	struct taf_rec_hdr *h = bpf_ringbuf_reserve(&events, size, 0);

	if (!h) {
		stat_inc(TAF_STAT_DROPPED_BASE + TAF_REC_HEAP_ALLOC);
		return NULL;
	}
	fill_hdr(h, TAF_REC_HEAP_ALLOC, size);
	return h;
}

/*
 * Reserves a heap-alloc record, with its call stack under --stacks (RET_AT:
 * where the probed function's return address is).  NULL when the ring is
 * full (counted).
 */
static __always_inline struct taf_rec_heap_alloc *
reserve_heap_alloc(struct pt_regs *ctx, __u64 ret_at)
{
	struct taf_stack_key key = { .pid = bpf_get_current_pid_tgid() >> 32 };
	struct taf_rec_heap_alloc_stack *rs;
	struct taf_rec_heap_alloc_pcs *rp;
	struct stack_buf *b;
	__u32 zero = 0, n = 0;
	__u64 ret = 0;
	__u8 one = 1;
	long len;

	if (!capture_stacks)
		return reserve_alloc(sizeof(struct taf_rec_heap_alloc));
	/* Before reserving: the walk is the slow part, hold no ring space. */
	b = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!b)
		return reserve_alloc(sizeof(struct taf_rec_heap_alloc));
	len = bpf_get_stack(ctx, b->pcs, sizeof(b->pcs), BPF_F_USER_STACK);
	if (len > 0)
		n = (__u32)(len / sizeof(__u64));
	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)ret_at))
		ret = 0;
	key.hash = n ? stack_hash(b, n, ret) : 0;
	if (!n || bpf_map_lookup_elem(&known_stacks, &key)) {
		rs = reserve_alloc(sizeof(*rs));
		if (!rs)
			return NULL;
	} else {
		/* New to this process: the PCs travel in the record. */
		rp = reserve_alloc(sizeof(*rp));
		if (!rp)
			return NULL;
		__builtin_memcpy(rp->pcs, b->pcs, sizeof(rp->pcs));
		rp->nr_pcs = n;
		rp->pad = 0;
		/*
		 * Known from now on, and only now that this record has its
		 * place: a record that finds the hash known is reserved after
		 * this one, and the ring is read in reservation order.
		 */
		bpf_map_update_elem(&known_stacks, &key, &one, BPF_ANY);
		rs = &rp->s;
	}
	rs->a.hdr.flags = TAF_ALLOC_F_STACK;
	rs->stack_hash = key.hash;
	rs->ret = ret;
	return &rs->a;
}

SEC("uprobe")
int alloc_enter(struct pt_regs *ctx)
{
	struct inflight_key key = {
		.pid = bpf_get_current_pid_tgid() >> 32,
		.g = ctx->r14,
	};
	struct inflight_val *cur, val = {};
	__u64 depth;

	if (!tracing_enabled)
		return 0;
	depth = stack_depth(ctx);
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
	__u64 size, type, depth;

	if (!tracing_enabled)
		return 0;
	cur = bpf_map_lookup_elem(&inflight, &key);
	if (!cur)
		return 0;       /* entered before we attached */
	depth = stack_depth(ctx);
	if (cur->depth < depth)
		return 0;               /* a nested call returns */
	if (cur->depth > depth) {
		/* Shallower than the record: its exit was missed. */
		bpf_map_delete_elem(&inflight, &key);
		return 0;
	}
	size = cur->size;
	type = cur->type;
	bpf_map_delete_elem(&inflight, &key);

	/* Zero-sized requests return &zerobase: not a heap object. */
	if (size == 0)
		return 0;

	/* At the RET the return address is at SP. */
	rec = reserve_heap_alloc(ctx, ctx->sp);
	if (!rec)
		return 0;
	rec->addr = ctx->ax;
	rec->type = type;
	rec->size = size;
	bpf_ringbuf_submit(rec, submit_flags());
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
	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec) {
		stat_inc(TAF_STAT_DROPPED_BASE + TAF_REC_SPAN_ALLOC);
		return 0;
	}
	fill_hdr(&rec->hdr, TAF_REC_SPAN_ALLOC, sizeof(*rec));
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
	bpf_ringbuf_submit(rec, submit_flags());
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
	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec) {
		stat_inc(TAF_STAT_DROPPED_BASE + TAF_REC_STACK_ALLOC);
		return 0;
	}
	fill_hdr(&rec->hdr, TAF_REC_STACK_ALLOC, sizeof(*rec));
	rec->lo = ctx->ax;
	rec->hi = ctx->bx;
	bpf_ringbuf_submit(rec, submit_flags());
	return 0;
}

/*
 * Entry of gcSweep(mode gcMode) (runtime/mgc.go): gcMarkTermination calls
 * it once per GC cycle, as the mark phase ends and mheap_.sweepgen moves
 * on; AX = mode (0 background, 1 forced by runtime.GC, 2 forced and
 * blocking).  One trap per cycle.
 */
SEC("uprobe")
int gc_cycle(struct pt_regs *ctx)
{
	if (!tracing_enabled)
		return 0;
	return emit_addr(TAF_REC_GC_CYCLE, ctx->ax);
}

/* Entry of stackfree(stk stack): AX = lo, BX = hi. */
SEC("uprobe")
int stack_free(struct pt_regs *ctx)
{
	if (!tracing_enabled)
		return 0;
	return emit_addr(TAF_REC_STACK_FREE, ctx->ax);
}

/*
 * A copy of every exec record, in a ring of its own that the daemon reads
 * before the main one: the main ring can hold a second of other
 * processes' records ahead of an exec, and a process whose executable is
 * new runs unprobed until the daemon gets to it (issue 14).
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 << 10);
} exec_hints SEC(".maps");

/*
 * A process exec'd (used with --all, loaded only then): the daemon checks
 * whether it runs Go and attaches to its executable if it is new.
 * tp_btf needs no tracefs, which this kind of machine does not mount.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	struct taf_rec_exec *rec;
	struct inode *inode;

	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec) {
		stat_inc(TAF_STAT_DROPPED_BASE + TAF_REC_EXEC);
		return 0;
	}
	fill_hdr(&rec->hdr, TAF_REC_EXEC, sizeof(*rec));
	inode = BPF_CORE_READ(bprm, file, f_inode);
	rec->ino = BPF_CORE_READ(inode, i_ino);
	rec->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	bpf_get_current_comm(rec->comm, sizeof(rec->comm));
	/*
	 * Best effort: without the hint the main ring's record still counts.
	 * The hint alone wakes the reader at once: under --all a process of
	 * a new executable runs unprobed until the daemon reads it, and an
	 * exec is rare next to allocations (one wakeup per exec costs
	 * nothing).  The record in the main ring is only read in order.
	 */
	bpf_ringbuf_output(&exec_hints, rec, sizeof(*rec), BPF_RB_FORCE_WAKEUP);
	bpf_ringbuf_submit(rec, submit_flags());
	return 0;
}

/* --- allocation sites (user/inspect/alloc_sites.h) -------------------------- */

/* Site descriptors, indexed by TAF_COOKIE_SITE(cookie). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TAF_MAX_ALLOC_SITES);
	__type(key, __u32);
	__type(value, struct taf_alloc_site);
} alloc_sites SEC(".maps");

/* What each call site of a producer knows of the size and type. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 20);
	__type(key, struct taf_caller_key);
	__type(value, struct taf_caller);
} alloc_callers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TAF_MAX_LAYOUTS);
	__type(key, __u32);
	__type(value, struct taf_hot_callers);
} alloc_hot SEC(".maps");

/* The climb's window (TAF_CLIMB_WINDOW): too big for the BPF stack. */
struct climb_window {
	__u64 w[TAF_CLIMB_WINDOW / 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct climb_window);
} climb_scratch SEC(".maps");

/* The entry of the call returning to ret (a link address): 0, or -1. */
static __always_inline int find_caller(__u32 layout, __u64 ret,
				       struct taf_caller *out)
{
	struct taf_caller_key key = { .layout = layout, .ret = ret };
	const struct taf_hot_callers *h = bpf_map_lookup_elem(&alloc_hot, &layout);
	const struct taf_caller *c;
	int i;

	if (h) {
		for (i = 0; i < TAF_HOT_CALLERS; i++) {
			if (i >= h->n)
				break;
			if (h->ret[i] == ret) {
				*out = h->val[i];
				return 0;
			}
		}
	}
	c = bpf_map_lookup_elem(&alloc_callers, &key);
	if (!c)
		return -1;
	*out = *c;
	return 0;
}

/*
 * AX and the type register before a call whose callee loses its type
 * (ALLOC_ARGS), per goroutine and frame (struct taf_pending_key: R14 is g
 * in Go's register ABI; the depth of the calling frame on the goroutine's
 * stack).  Not per thread: the callee's prologue can call morestack,
 * which can preempt the goroutine and resume it on another thread, where
 * a per-thread slot would hold that goroutine's values of an earlier call
 * and give the allocation an earlier type (seen on Go 1.27: reflect.New
 * of an 8-byte type named as the 32-byte type of the call before).  Per
 * frame, so that a capture deeper in the same allocation's path (the
 * callee allocating something else first) cannot stand for this one.
 * Taken when read (one allocation per capture): an entry left by a call
 * whose probe missed the next one is never read for it, the record goes
 * out flagged instead of wrong; an entry evicted (LRU: dead goroutines
 * age out) is such a miss too.
 */
struct pending_val {
	__u64 size;
	__u64 type;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct taf_pending_key);
	__type(value, struct pending_val);
} alloc_pending SEC(".maps");

/* g.stack.hi - sp, 0 if unknown (the frame key of alloc_pending). */
static __always_inline __u64 depth_of(struct pt_regs *ctx, __u64 sp)
{
	const struct taf_layout *l = layout_of(ctx);
	__u64 hi = 0;

	if (!l || bpf_probe_read_user(&hi, sizeof(hi),
				      (void *)(ctx->r14 + l->g_stack_hi)))
		return 0;
	return hi > sp ? hi - sp : 0;
}

static __always_inline __u64 reg_value(struct pt_regs *ctx, __u8 reg)
{
	/*
	 * An array, not a switch: clang turns a switch over ctx fields into
	 * arithmetic on the ctx pointer, which the verifier refuses.
	 */
	__u64 r[16] = {
		ctx->ax, ctx->bx, ctx->cx, ctx->dx, ctx->si, ctx->di, ctx->bp,
		ctx->r8, ctx->r9, ctx->r10, ctx->r11, ctx->r12, ctx->r13,
		ctx->r14, ctx->r15, 0,
	};

	return r[reg & 15];
}

/* The site's stack window, read once (taf_alloc_site.win_*). */
struct site_window {
	__u64 w[TAF_SITE_WINDOW / 8];
	__s32 off;
	__s32 len;    /* 0: no window, -1: unreadable */
};

/* 0 and *v set, or -1 when the location is unknown or unreadable. */
static __always_inline int read_loc(struct pt_regs *ctx,
				    const struct taf_loc *l,
				    const struct site_window *win, __u64 *v)
{
	if (l->kind == TAF_LOC_REG) {
		*v = reg_value(ctx, l->reg);
	} else if (l->kind == TAF_LOC_STACK) {
		__s32 rel = l->off - win->off;

		if (win->len > 0 && rel >= 0 && rel + 8 <= win->len) {
			*v = win->w[(rel / 8) & (TAF_SITE_WINDOW / 8 - 1)];
		} else if (bpf_probe_read_user(v, sizeof(*v),
					       (void *)(ctx->sp + (__s64)l->off))) {
			return -1;
		}
	} else {
		return -1;
	}
	*v += (__s64)l->add;
	return 0;
}

/* consume: the last read of this capture (it is taken). */
static __always_inline int read_cval(struct pt_regs *ctx,
				     const struct taf_cval *c, __u64 caller_sp,
				     __u64 bias, bool is_type, bool consume,
				     __u64 *v)
{
	struct taf_pending_key key;
	struct pending_val *p;

	switch (c->kind) {
	case TAF_CVAL_CONST:
		/* A type is a link address; nil stays nil. */
		*v = c->val && is_type ? c->val + bias : c->val;
		return 0;
	case TAF_CVAL_STACK:
		return bpf_probe_read_user(v, sizeof(*v),
					   (void *)(caller_sp + (__s64)c->off)) ? -1 : 0;
	case TAF_CVAL_GLOBAL:
		return bpf_probe_read_user(v, sizeof(*v),
					   (void *)(c->val + bias)) ? -1 : 0;
	case TAF_CVAL_PENDING:
		key.g = ctx->r14;
		key.depth = depth_of(ctx, caller_sp);
		p = bpf_map_lookup_elem(&alloc_pending, &key);
		if (!key.depth || !p)
			return -1;
		*v = is_type ? p->type : p->size;
		if (consume)
			bpf_map_delete_elem(&alloc_pending, &key);
		if (is_type)
			stat_inc(TAF_STAT_TYPE_CAPTURED);
		return 0;
	}
	return -1;
}

/* read_cval, a slot read from the window (at wbase) when it lies there. */
static __always_inline int read_cval_win(struct pt_regs *ctx,
					 const struct taf_cval *c, __u64 caller_sp,
					 __u64 bias, bool is_type, bool consume,
					 const struct climb_window *win, __u64 wbase,
					 __u64 *v)
{
	__u64 rel = caller_sp + (__s64)c->off - wbase;

	if (win && c->kind == TAF_CVAL_STACK &&
	    caller_sp + (__s64)c->off >= wbase &&
	    rel + 8 <= TAF_CLIMB_WINDOW && !(rel & 7)) {
		*v = win->w[(rel / 8) & (TAF_CLIMB_WINDOW / 8 - 1)];
		return 0;
	}
	return read_cval(ctx, c, caller_sp, bias, is_type, consume, v);
}

/*
 * A type the call site passes on (TAF_CVAL_PASS): climb the frame
 * pointers until an entry says where the type is.  `callee` is the base
 * of the frame the described call made, `caller` the base of the frame
 * that made it ([callee] holds it, [callee + 8] is the call's return
 * address).  Every frame on the way must be described: a return address
 * without an entry ends the climb unresolved, never at some outer
 * frame's type.
 */
static __always_inline int climb_type(struct pt_regs *ctx, __u64 callee,
				      __u64 caller, const struct taf_cval *first,
				      const struct climb_window *win, bool have_win,
				      __u32 layout, __u64 bias, __u64 *type)
{
	struct taf_cval c = *first;
	struct taf_caller e;
	__u64 deref = 0, fr[2], v, base = callee;
	bool have_deref = false;
	int i;

	for (i = 0; i < TAF_TYPE_HOPS; i++) {
		__u64 rel = caller - base;

		if (c.kind == TAF_CVAL_PASS_DEREF) {
			if (have_deref)
				return -1;   /* the plan makes chains of one */
			have_deref = true;
			deref = (__u64)(__s64)c.off;
		} else if (c.kind != TAF_CVAL_PASS) {
			break;
		}
		/* The caller's own frame: its BP and its return address. */
		if (!caller)
			return -1;
		if (have_win && caller >= base && rel + 16 <= sizeof(win->w) && !(rel & 7)) {
			fr[0] = win->w[(rel / 8) & (TAF_CLIMB_WINDOW / 8 - 1)];
			fr[1] = win->w[(rel / 8 + 1) & (TAF_CLIMB_WINDOW / 8 - 1)];
		} else if (bpf_probe_read_user(fr, sizeof(fr), (void *)caller)) {
			return -1;
		}
		if (find_caller(layout, fr[1] - bias, &e))
			return -1;
		c = e.type;
		callee = caller;
		caller = fr[0];
	}
	if (c.kind == TAF_CVAL_PASS || c.kind == TAF_CVAL_PASS_DEREF)
		return -1;           /* more hops than TAF_TYPE_HOPS */
	/* The SP of the frame that made the last call was callee + 16. */
	if (read_cval_win(ctx, &c, callee + 16, bias, true, true,
			  have_win ? win : NULL, base, &v))
		return -1;
	if (have_deref && (!v || bpf_probe_read_user(&v, sizeof(v),
						     (void *)(v + deref))))
		return -1;
	*type = v;
	return 0;
}

/*
 * The one probe of an allocation path (TAF_PROBE_ALLOC_SITE): the object,
 * the requested size and the type where the site descriptor says, or,
 * for what the producer no longer holds, from its call site.
 */
SEC("uprobe")
int alloc_site(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 idx = TAF_COOKIE_SITE(cookie);
	const struct taf_alloc_site *s;
	struct taf_rec_heap_alloc *rec;
	struct site_window win;
	__u64 obj = 0, size = 0, type = 0;
	__u32 flags = 0, wlen;
	int hs, ht;

	if (!tracing_enabled)
		return 0;
	s = bpf_map_lookup_elem(&alloc_sites, &idx);
	if (!s)
		return 0;
	win.off = s->win_off;
	wlen = s->win_len;
	if (wlen > TAF_SITE_WINDOW)
		wlen = 0;
	win.len = (__s32)wlen;
	if (wlen && bpf_probe_read_user(win.w, wlen, (void *)(ctx->sp + (__s64)win.off)))
		win.len = -1;
	if (read_loc(ctx, &s->obj, &win, &obj) || !obj) {
		stat_inc(TAF_STAT_ALLOC_NO_OBJ);
		return 0;
	}
	hs = read_loc(ctx, &s->size, &win, &size);
	ht = read_loc(ctx, &s->type, &win, &type);
	if (hs || ht) {
		struct taf_caller c;
		__u64 ret = 0, ret_at = ctx->sp + (__s64)s->ret_off;
		__u64 bias = ctx->ip - s->addr;
		struct climb_window *win;
		bool have_win;
		__u32 zero = 0;

		/*
		 * The producer's frame, with mallocgc's and its callers'
		 * above it, in one read when BP is the frame whose return
		 * address is wanted ([BP] is then the caller's BP): the
		 * climb reads its first frames from there, and slots of the
		 * caller's frame (mallocgc's arguments, Go 1.24+) come from
		 * it too: on a loaded machine each read costs about what a
		 * hash lookup does.
		 */
		win = bpf_map_lookup_elem(&climb_scratch, &zero);
		have_win = win && ctx->bp + 8 == ret_at &&
			   !bpf_probe_read_user(win->w, sizeof(win->w), (void *)ctx->bp);
		if (have_win)
			ret = win->w[1];
		else if (bpf_probe_read_user(&ret, sizeof(ret), (void *)ret_at))
			ret = 0;
		if (ret && !find_caller(s->layout, ret - bias, &c)) {
			struct taf_cval ct = c.type;
			bool tp = ht && ct.kind == TAF_CVAL_PENDING;

			if (hs && c.size.kind == TAF_CVAL_BOUND) {
				size = s->size_max;
				hs = size ? 0 : -1;
				flags |= hs ? 0 : TAF_ALLOC_F_SIZE_MAX;
			} else if (hs) {
				hs = read_cval_win(ctx, &c.size, ret_at + 8,
						   bias, false, !tp,
						   have_win ? win : NULL,
						   ctx->bp, &size);
			}
			if (ht && (ct.kind == TAF_CVAL_PASS ||
				   ct.kind == TAF_CVAL_PASS_DEREF)) {
				/* Only from the producer's own frame. */
				ht = -1;
				if (have_win)
					ht = climb_type(ctx, ctx->bp, win->w[0], &ct,
							win, have_win, s->layout,
							bias, &type);
				stat_inc(ht ? TAF_STAT_TYPE_CHAIN_MISS
					    : TAF_STAT_TYPE_CHAIN);
			} else if (ht) {
				ht = read_cval_win(ctx, &ct, ret_at + 8,
						   bias, true, true,
						   have_win ? win : NULL,
						   ctx->bp, &type);
			}
		}
		if (hs) {
			size = 0;
			flags |= TAF_ALLOC_F_NO_SIZE;
		}
		if (ht) {
			type = 0;
			flags |= TAF_ALLOC_F_NO_TYPE;
		}
		if (flags & (TAF_ALLOC_F_NO_SIZE | TAF_ALLOC_F_NO_TYPE))
			stat_inc(TAF_STAT_ALLOC_NO_TYPE);
	}

	rec = reserve_heap_alloc(ctx, ctx->sp + (__s64)s->ret_off);
	if (!rec)
		return 0;
	rec->hdr.flags |= flags;
	rec->addr = obj;
	rec->type = type;
	rec->size = size;
	bpf_ringbuf_submit(rec, submit_flags());
	return 0;
}

/*
 * Before a call whose callee loses its type (TAF_PROBE_ALLOC_ARGS):
 * remember AX (a producer's size) and the type register the cookie names
 * (BX for mallocgc and the producers, AX for newobject, SI for
 * growslice) for this goroutine's frame.  The probe sits in the body,
 * where SP is the frame's SP at the call.
 */
SEC("uprobe")
int alloc_args(struct pt_regs *ctx)
{
	struct taf_pending_key key = { .g = ctx->r14 };
	struct pending_val v;

	if (!tracing_enabled)
		return 0;
	key.depth = depth_of(ctx, ctx->sp);
	if (!key.depth)
		return 0;
	v.size = ctx->ax;
	v.type = reg_value(ctx, (__u8)TAF_COOKIE_SITE(bpf_get_attach_cookie(ctx)));
	bpf_map_update_elem(&alloc_pending, &key, &v, BPF_ANY);
	return 0;
}

/* --- --memprofilerate: the runtime's own heap-profile samples ----------------- */

/*
 * Entry of mProf_Malloc([mp,] p, size): the runtime picked this object for
 * its heap profile (malloc*.go: c.nextSample ran out).  Only sampled
 * allocations get here, so the allocation fast path carries no probe.
 *
 * The type is not an argument.  The frames below know it: walking frame
 * pointers up from profilealloc, each return address is looked up in
 * `alloc_callers`, which for sampled mode holds the call sites that pass a
 * type (compiler calls of newobject, makeslice, growslice, the SC
 * functions: constants; mallocgc's and the producers' own argument kept in
 * their frame across a call: a slot).  The innermost hit wins, so a nil
 * type the runtime passes (growslice of pointer-free elements) is found
 * as nil before the user's call site with the element type.
 */
SEC("uprobe")
int prof_malloc(struct pt_regs *ctx)
{
	__u32 lidx = TAF_COOKIE_LAYOUT(bpf_get_attach_cookie(ctx));
	struct taf_caller_key key = { .layout = lidx };
	const struct taf_layout *l;
	struct taf_rec_heap_alloc *rec;
	__u64 x, size, bias, ret = 0, sp, bp, type = 0, ax, bx, cx;
	__u32 flags = TAF_ALLOC_F_SAMPLED | TAF_ALLOC_F_NO_TYPE;
	int i;

	if (!tracing_enabled)
		return 0;
	l = layout_of(ctx);
	if (!l)
		return 0;
	ax = ctx->ax;
	bx = ctx->bx;
	cx = ctx->cx;
	/* Loaded before the choice: the verifier refuses a ctx pointer
	 * picked by a branch. */
	asm volatile("" : "+r"(ax), "+r"(bx), "+r"(cx));
	x = l->prof_malloc_has_mp ? bx : ax;
	size = l->prof_malloc_has_mp ? cx : bx;
	if (!x)
		return 0;
	bias = ctx->ip - l->prof_malloc_site;
	/* At the entry site SP still points at the return address. */
	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)ctx->sp))
		ret = 0;
	sp = ctx->sp + 8;
	bp = ctx->bp;
	for (i = 0; i < TAF_PROF_FRAMES && ret; i++) {
		const struct taf_caller *c;

		key.ret = ret - bias;
		c = bpf_map_lookup_elem(&alloc_callers, &key);
		if (c && read_cval(ctx, &c->type, sp, bias, true, false, &type) == 0) {
			flags &= ~TAF_ALLOC_F_NO_TYPE;
			break;
		}
		/* The caller's frame: [BP] its BP, [BP+8] its return address,
		 * and its SP at the call is BP + 16. */
		if (!bp || bpf_probe_read_user(&ret, sizeof(ret), (void *)(bp + 8)))
			break;
		sp = bp + 16;
		if (bpf_probe_read_user(&bp, sizeof(bp), (void *)bp))
			break;
	}
	if (flags & TAF_ALLOC_F_NO_TYPE) {
		type = 0;
		stat_inc(TAF_STAT_ALLOC_NO_TYPE);
	}
	rec = reserve_heap_alloc(ctx, ctx->sp);
	if (!rec)
		return 0;
	rec->hdr.flags |= flags;
	rec->addr = x;
	rec->type = type;
	rec->size = size;
	bpf_ringbuf_submit(rec, submit_flags());
	return 0;
}

/*
 * Entry of freeSpecial(s *special, p unsafe.Pointer, size uintptr): the
 * sweeper frees the specials of a dead object (runtime/mgcsweep.go).
 * Only profile specials (one per sampled object) are ours; p is "the
 * exact byte for which the special was set up", span base + offset, that
 * is the address mProf_Malloc was given (after a malloc header, or inside
 * a tiny block): the alloc record's address.
 */
SEC("uprobe")
int prof_free(struct pt_regs *ctx)
{
	const struct taf_layout *l;
	__u64 s = ctx->ax, p = ctx->bx;

	if (!tracing_enabled)
		return 0;
	l = layout_of(ctx);
	if (!l || !s || !p)
		return 0;
	if (read_field(s, l->special_kind_off, 1) != l->special_kind_profile)
		return 0;
	return emit_addr(TAF_REC_SAMPLED_FREE, p);
}
