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
	TAF_REC_EXEC = 7,         /* a process exec'd (--all): header only */
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

/* Bytes of one span bitmap a sweep record carries: 1024 slots at most
 * (8 KiB span of 8-byte objects). */
#define TAF_SPAN_BITMAP_MAX 128

/*
 * TAF_REC_SPAN_SWEEP: the state of a span as (*sweepLocked).sweep starts,
 * enough to compute which objects the sweep frees the way the runtime's
 * loop does (runtime/mgcsweep.go): slot i is freed when it is not marked
 * and was allocated (i < freeindex or its alloc bit is set).
 */
struct taf_rec_span_sweep {
	struct taf_rec_hdr hdr;
	__u64 base;          /* mspan.startAddr */
	__u64 npages;
	__u64 elemsize;
	__u32 nelems;
	__u32 freeindex;
	__u8 spanclass;
	__u8 inline_marks;   /* marks came from Green Tea's inline bits */
	__u8 nbytes;         /* bytes valid in each bitmap */
	__u8 read_errors;    /* bitmaps that could not be read */
	__u32 pad;
	__u8 alloc_bits[TAF_SPAN_BITMAP_MAX];
	__u8 mark_bits[TAF_SPAN_BITMAP_MAX];
};

/* TAF_REC_SPAN_ALLOC: (*mheap).initSpan's arguments. */
struct taf_rec_span_alloc {
	struct taf_rec_hdr hdr;
	__u64 base;
	__u64 npages;
	__u8 alloc_type;     /* spanAllocType: 0 heap, else manual */
	__u8 spanclass;
	__u8 pad[6];
};

/* TAF_REC_SPAN_FREE, TAF_REC_STACK_FREE: one address. */
struct taf_rec_addr {
	struct taf_rec_hdr hdr;
	__u64 addr;          /* span base, or stack lo */
};

/* TAF_REC_STACK_ALLOC: stackalloc's result. */
struct taf_rec_stack_alloc {
	struct taf_rec_hdr hdr;
	__u64 lo;
	__u64 hi;
};

/*
 * Role of a probe: the low 8 bits of the uprobe's BPF cookie.  Bits 8..23
 * hold the index of the binary's layout in the `layouts` map.
 */
enum taf_probe_role {
	TAF_PROBE_ALLOC_ENTER = 1,  /* entry of an allocation function */
	TAF_PROBE_ALLOC_EXIT = 2,   /* a RET of an allocation function */
	TAF_PROBE_SWEEP = 3,        /* entry of (*sweepLocked).sweep */
	TAF_PROBE_SPAN_INIT = 4,    /* entry of (*mheap).initSpan */
	TAF_PROBE_SPAN_FREE = 5,    /* entry of (*mheap).freeSpanLocked */
	TAF_PROBE_STACK_ALLOC = 6,  /* a RET of stackalloc */
	TAF_PROBE_STACK_FREE = 7,   /* entry of stackfree */
};

#define TAF_COOKIE(role, layout) ((__u64)(role) | ((__u64)(layout) << 8))
#define TAF_COOKIE_ROLE(c) ((c) & 0xff)
#define TAF_COOKIE_LAYOUT(c) (((c) >> 8) & 0xffff)
#define TAF_MAX_LAYOUTS 256

/*
 * What the BPF programs need to know of one binary's runtime: field
 * offsets and sizes in runtime.mspan and runtime.g (they change between Go
 * versions).
 */
struct taf_layout {
	__u16 span_start_addr;
	__u16 span_npages;
	__u16 span_nelems;
	__u16 span_freeindex;
	__u16 span_elemsize;
	__u16 span_alloc_bits;
	__u16 span_gcmark_bits;
	__u16 span_spanclass;
	__u16 g_stack_hi;        /* runtime.g.stack.hi */
	__u8 nelems_size;        /* 2 (Go 1.22+) or 8 */
	__u8 freeindex_size;
	__u8 green_tea;          /* small spans keep marks inline (Go 1.26+) */
	__u8 valid;
};

/* Indexes of the per-kind counters in the `stats` array map. */
enum taf_stat {
	TAF_STAT_EMITTED = 0,           /* records committed, all kinds */
	TAF_STAT_DROPPED_BASE = 1,      /* + kind: ring buffer full */
	TAF_STAT_UNMATCHED_EXIT = 16,   /* exit seen without its entry */
	TAF_STAT_MAX = 32,
};

#endif /* TRACEAF_EVENTS_H */
