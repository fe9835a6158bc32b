/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * records.bpf.h - what every probe of traceaf.bpf.c shares: the switch
 * that turns them on, the one ring buffer, the counters, the per-binary
 * runtime layouts, and the helpers that fill and submit a record.
 */
#ifndef TRACEAF_RECORDS_BPF_H
#define TRACEAF_RECORDS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "traceaf_events.h"

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
 *
 * Asking the ring how full it is costs two helper calls (~30 ns on these
 * VMs, a twentieth of an allocation probe), so each CPU asks once every
 * WAKE_CHECK_EVERY records: between two checks a CPU adds at most 32
 * records of at most 600 bytes (with --stacks PCs), 19 KB, against a
 * mark of 128 KB in the smallest ring (--ringbuf-size 1).
 */
#define WAKE_CHECK_EVERY 32

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} wake_check SEC(".maps");

static __always_inline __u64 submit_flags(void)
{
	__u32 zero = 0, *n = bpf_map_lookup_elem(&wake_check, &zero);
	__u64 avail, size;

	if (n && (++*n & (WAKE_CHECK_EVERY - 1)))
		return BPF_RB_NO_WAKEUP;
	avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	size = bpf_ringbuf_query(&events, BPF_RB_RING_SIZE);
	return avail >= size / 8 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline const struct taf_layout *layout_of(struct pt_regs *ctx)
{
	__u32 idx = TAF_COOKIE_LAYOUT(bpf_get_attach_cookie(ctx));
	const struct taf_layout *l = bpf_map_lookup_elem(&layouts, &idx);

	return l && l->valid ? l : NULL;
}

/*
 * g.stack.hi - sp: how deep a frame is on its goroutine's stack (R14 is g
 * in Go's register ABI), 0 if unknown.  With g it tells one call of a
 * goroutine from another: the entry probes' nesting (alloc_entry.bpf.h),
 * the values captured before a call (alloc_site.bpf.h, alloc_pending).
 */
static __always_inline __u64 goroutine_depth(struct pt_regs *ctx, __u64 sp)
{
	const struct taf_layout *l = layout_of(ctx);
	__u64 hi = 0;

	if (!l || bpf_probe_read_user(&hi, sizeof(hi),
				      (void *)(ctx->r14 + l->g_stack_hi)))
		return 0;
	return hi > sp ? hi - sp : 0;
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

/*
 * A record of KIND, SIZE bytes (a constant: the verifier wants one),
 * reserved in the ring with its header filled; NULL when the ring is
 * full, counted as a drop of KIND.  The caller fills the body and
 * submits it.
 */
static __always_inline void *reserve_rec(__u16 kind, __u32 size)
{
	struct taf_rec_hdr *h = bpf_ringbuf_reserve(&events, size, 0);

	if (!h) {
		stat_inc(TAF_STAT_DROPPED_BASE + kind);
		return NULL;
	}
	fill_hdr(h, kind, size);
	return h;
}

static __always_inline int emit_addr(__u16 kind, __u64 addr)
{
	struct taf_rec_addr *rec = reserve_rec(kind, sizeof(*rec));

	if (!rec)
		return 0;
	rec->addr = addr;
	bpf_ringbuf_submit(rec, submit_flags());
	return 0;
}

#endif /* TRACEAF_RECORDS_BPF_H */
