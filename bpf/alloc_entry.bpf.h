/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * alloc_entry.bpf.h - an allocation function probed at its entry and its
 * RETs (one the analysis cannot prove, TAF_PROBE_ALLOC_ENTER/EXIT): the
 * arguments kept per goroutine until the outermost call returns (part of
 * traceaf.bpf.c).
 */
#ifndef TRACEAF_ALLOC_ENTRY_BPF_H
#define TRACEAF_ALLOC_ENTRY_BPF_H

#include "records.bpf.h"
#include "alloc_record.bpf.h"

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
	depth = goroutine_depth(ctx, ctx->sp);
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
	depth = goroutine_depth(ctx, ctx->sp);
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

#endif /* TRACEAF_ALLOC_ENTRY_BPF_H */
