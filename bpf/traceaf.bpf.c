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
 */
struct inflight_key {
	__u32 pid;
	__u32 pad;
	__u64 g;
};

struct inflight_val {
	__u64 size;
	__u64 type;
	__u32 depth;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct inflight_key);
	__type(value, struct inflight_val);
} inflight SEC(".maps");

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += 1;
}

SEC("uprobe")
int alloc_enter(struct pt_regs *ctx)
{
	struct inflight_key key = {
		.pid = bpf_get_current_pid_tgid() >> 32,
		.g = ctx->r14,
	};
	struct inflight_val *cur, val = {};

	cur = bpf_map_lookup_elem(&inflight, &key);
	if (cur) {
		cur->depth++;
		return 0;
	}
	/* mallocgc(size uintptr, typ *_type, needzero bool): AX, BX. */
	val.size = ctx->ax;
	val.type = ctx->bx;
	val.depth = 1;
	bpf_map_update_elem(&inflight, &key, &val, BPF_ANY);
	return 0;
}

SEC("uprobe")
int alloc_exit(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct inflight_key key = {
		.pid = pid_tgid >> 32,
		.g = ctx->r14,
	};
	struct taf_rec_heap_alloc *rec;
	struct inflight_val *cur;
	__u64 size, type;

	cur = bpf_map_lookup_elem(&inflight, &key);
	if (!cur) {
		/* Entered before we attached. */
		stat_inc(TAF_STAT_UNMATCHED_EXIT);
		return 0;
	}
	if (cur->depth > 1) {
		cur->depth--;
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
	rec->hdr.ts = bpf_ktime_get_ns();
	rec->hdr.pid = pid_tgid >> 32;
	rec->hdr.tid = (__u32)pid_tgid;
	rec->hdr.kind = TAF_REC_HEAP_ALLOC;
	rec->hdr.len = sizeof(*rec);
	rec->hdr.flags = 0;
	rec->addr = ctx->ax;
	rec->type = type;
	rec->size = size;
	bpf_ringbuf_submit(rec, 0);
	stat_inc(TAF_STAT_EMITTED);
	return 0;
}
