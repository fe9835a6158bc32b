/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * traceaf_events.h - records the BPF programs send to the daemon.
 *
 * Shared by bpf/ and user/: plain fixed-width fields, no pointers, no format
 * knowledge.  The BPF side reports what it saw in the runtime (addresses,
 * type pointers, sizes); the daemon turns that into trace IDs and events.
 */
#ifndef TRACEAF_EVENTS_H
#define TRACEAF_EVENTS_H

#ifdef __BPF__
/* vmlinux.h provides __u64 and friends. */
#else
#include <linux/types.h>
#endif

/* Record kinds, in the order of the experiment's events they become. */
enum taf_rec_kind {
	TAF_REC_HEAP_ALLOC = 1,   /* an object was allocated (mallocgc & co.) */
	TAF_REC_SPAN_SWEEP = 2,   /* a span is about to be swept: frees */
	TAF_REC_SPAN_ALLOC = 3,   /* mheap span initialised */
	TAF_REC_SPAN_FREE = 4,    /* mheap span freed (heap or manual) */
	TAF_REC_STACK_ALLOC = 5,  /* goroutine stack allocated */
	TAF_REC_STACK_FREE = 6,   /* goroutine stack freed */
	TAF_REC_KIND_MAX,
};

/* Header common to every record. */
struct taf_rec_hdr {
	__u64 ts;        /* bpf_ktime_get_ns(): CLOCK_MONOTONIC, ns */
	__u32 pid;       /* process (tgid) */
	__u32 tid;       /* thread: becomes the trace's M */
	__u16 kind;      /* enum taf_rec_kind */
	__u16 len;       /* whole record length in bytes */
	__u32 flags;
};

/* TAF_REC_HEAP_ALLOC: the result of one outermost allocation call. */
struct taf_rec_heap_alloc {
	struct taf_rec_hdr hdr;
	__u64 addr;      /* the object's address (the function's result) */
	__u64 type;      /* *abi.Type argument, 0 when untyped */
	__u64 size;      /* requested size in bytes */
};

/* Role of a probe, passed as the uprobe's BPF cookie (low 8 bits). */
enum taf_probe_role {
	TAF_PROBE_ALLOC_ENTER = 1,  /* entry of an allocation function */
	TAF_PROBE_ALLOC_EXIT = 2,   /* a RET of an allocation function */
};

/* Indexes of the per-kind counters in the `stats` array map. */
enum taf_stat {
	TAF_STAT_EMITTED = 0,           /* records committed, all kinds */
	TAF_STAT_DROPPED_BASE = 1,      /* + kind: ring buffer full */
	TAF_STAT_UNMATCHED_EXIT = 16,   /* exit seen without its entry */
	TAF_STAT_DEPTH_OVERFLOW = 17,   /* nesting deeper than tracked */
	TAF_STAT_MAX = 32,
};

#endif /* TRACEAF_EVENTS_H */
