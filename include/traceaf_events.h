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
	TAF_REC_SAMPLED_FREE = 8, /* --memprofilerate: a sampled object is
				     freed (its profile special: a
				     taf_rec_addr with the address its alloc
				     record had) */
	TAF_REC_GC_CYCLE = 9,     /* runtime.gcSweep began: a GC cycle's mark
				     phase ended, its sweep begins (a
				     taf_rec_addr: addr is gcSweep's mode,
				     runtime/mgc.go gcMode) */
	TAF_REC_GC_MARK = 10,     /* runtime.gcMarkTinyAllocs: a GC cycle's
				     mark phase began, world stopped (a
				     taf_rec_addr: addr is the process's
				     gcSweep count then, `gc_sweeps`): no
				     sweep frees a profile special until
				     that count moves on */
	TAF_REC_SNAP = 11,        /* --memprofilerate: part of the process's
				     heap-profile samples, read by the BPF
				     program at a GC_MARK or GC_CYCLE with
				     the world stopped (taf_rec_snap) */
	TAF_REC_SNAP_BUCKET = 12, /* --memprofilerate: a bucket a snapshot's
				     sample names, new to the process's
				     snapshots (taf_rec_snap_bucket) */
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

/*
 * TAF_REC_HEAP_ALLOC with --stacks (hdr.flags TAF_ALLOC_F_STACK): the
 * allocating call stack as a hash of its user-space PCs (load addresses,
 * innermost first, at most TAF_STACK_DEPTH) and return address.  The
 * first record of a process with a hash (as far as the `known_stacks`
 * map remembers) is a taf_rec_heap_alloc_pcs and carries the PCs; later
 * ones name it by hash only.  The first PC is the probed instruction;
 * when the probe sits where the allocation function has no frame of its
 * own (at a RET, or in a frameless function) the frame-pointer walk
 * skips its caller, so the return address travels along: the daemon
 * puts it back when the walk's second PC is not it.
 */
struct taf_rec_heap_alloc_stack {
	struct taf_rec_heap_alloc a;
	__u64 ret;         /* return address of the probed function, 0 if unread */
	__u64 stack_hash;  /* FNV-1a of PCs and ret; 0: no stack (walk failed) */
};
#define TAF_STACK_DEPTH 64

/* A stack new to the process: the PCs (rec.len tells this kind). */
struct taf_rec_heap_alloc_pcs {
	struct taf_rec_heap_alloc_stack s;
	__u32 nr_pcs;
	__u32 pad;
	__u64 pcs[TAF_STACK_DEPTH];
};

/* `known_stacks` key: a stack hash the process has sent its PCs for. */
struct taf_stack_key {
	__u32 pid;
	__u32 pad;
	__u64 hash;
};

/*
 * Stack hashes the kernel remembers as sent, over all processes: about
 * 100 bytes each, 13 MiB.  A program's distinct allocating stacks are
 * bounded by its code paths (tests/go/churn: ~33 k, a binary tree's
 * left/right paths); beyond this the least recently used are sent whole
 * again.
 */
#define TAF_KNOWN_STACKS 131072

/* Bytes of one span bitmap a sweep record carries: 1024 slots at most
 * (8 KiB span of 8-byte objects). */
#define TAF_SPAN_BITMAP_MAX 128
/* Nodes of a span's specials list span_sweep walks for finalizers: one
 * per finalizer, weak handle, cleanup, heap-profile sample or pin of an
 * object in the span (a longer list sets TAF_SWEEP_SPECIALS_CUT). */
#define TAF_SWEEP_SPECIALS 512
/* taf_rec_span_sweep.read_errors bits. */
#define TAF_SWEEP_ALLOC_UNREAD 0x1   /* alloc bits unreadable: all set */
#define TAF_SWEEP_MARKS_UNREAD 0x2   /* mark bits unreadable: only the
					finalizers' marks are set */
#define TAF_SWEEP_SPECIALS_CUT 0x4   /* specials list unreadable or longer
					than TAF_SWEEP_SPECIALS */

/*
 * TAF_REC_SPAN_SWEEP: the state of a span as (*sweepLocked).sweep starts,
 * enough to compute which objects the sweep frees the way the runtime's
 * loop does (runtime/mgcsweep.go): slot i is freed when it is not marked
 * and was allocated (i < freeindex or its alloc bit is set).  mark_bits
 * already has the marks the sweep sets before that loop: objects with a
 * finalizer, which live one more cycle.
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
	__u8 read_errors;    /* TAF_SWEEP_*: what could not be read */
	__u32 pad;
	__u64 alloc_bits_at; /* where the bitmaps were read from, for the */
	__u64 mark_bits_at;  /* daemon to read one BPF could not */
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

/*
 * Green Tea GC (Go 1.26 by default, 1.25 by GOEXPERIMENT) keeps the mark
 * bits of spans of 16..512-byte objects inline, in the span's last 64
 * bytes (runtime/mgcmark_greenteagc.go, spanInlineMarkBitsFromBase): where
 * span_sweep finds a span's marks.
 */
#define TAF_INLINE_MARKS(green_tea, elemsize) \
	((green_tea) && (elemsize) >= 16 && (elemsize) <= 512)
#define TAF_INLINE_MARKS_AT(base) ((base) + 8192 - 64)

/*
 * TAF_REC_GC_MARK and TAF_REC_GC_CYCLE hdr.flags: the BPF program read
 * every heap-profile sample of the process just before this record (the
 * TAF_REC_SNAP records before it, all submitted), with the world stopped:
 * no sweep, no allocation under the read, so the daemon need not read.
 */
#define TAF_GC_F_SNAP 0x1

/*
 * TAF_REC_SNAP: a snapshot of the process's live heap-profile samples
 * (runtime/mheap.go specialprofile: the sampled object's address and its
 * bucket), taken by the gc_mark and gc_cycle programs while the world is
 * stopped, by the arenas' pageSpecials bitmaps as the daemon's reads do
 * (user/attach/profile_specials.c).  TAF_SNAP_BATCH samples a record; the
 * last record of a snapshot has TAF_SNAP_F_LAST and is shorter (hdr.len).
 */
#define TAF_SNAP_BATCH 32
#define TAF_SNAP_F_LAST 0x1     /* the snapshot's last record */
#define TAF_SNAP_F_CUT 0x2      /* LAST: the time budget ran out first */
#define TAF_SNAP_F_UNREAD 0x4   /* LAST: some memory could not be read
				   (a page not present: a uprobe cannot
				   fault it in) */
#define TAF_SNAP_F_LOST 0x8     /* LAST: a record did not fit the ring */

struct taf_snap_sample {
	__u64 addr;          /* span base + special.offset */
	__u64 bucket;        /* specialprofile.b, | TAF_SNAP_OLD */
};
/*
 * The object's slot is set in its span's allocBits: the last sweep of
 * the span found it marked (runtime/mgcsweep.go: allocBits becomes that
 * mark's gcmarkBits, and nothing sets it after), so it is the object
 * that was there before that sweep.  Clear, the slot was free after the
 * sweep and was allocated since: a sample a read before that sweep saw
 * at this address was freed by it, and this one is another (the
 * allocator reuses slots, and a large object's freed span is taken
 * again).  Buckets are 8-byte aligned: the flag is bit 0.
 */
#define TAF_SNAP_OLD 0x1ull

/*
 * TAF_REC_SNAP_BUCKET: the size and stack of a bucket (runtime/mprof.go:
 * size and nstk words, then the stack's return PCs), before the first
 * snapshot record that names it.  The snapshots carry what the daemon
 * needs to write them after the process has gone (a program that exits
 * before the daemon caught up): each bucket once, as far as the
 * `snap_buckets` map remembers.  hdr.len holds nstk PCs, at most
 * TAF_SNAP_BUCKET_PCS.
 */
#define TAF_SNAP_BUCKET_PCS 32
struct taf_rec_snap_bucket {
	struct taf_rec_hdr hdr;
	__u64 bucket;
	__u64 size;
	__u64 nstk;          /* the bucket's; pcs holds min(nstk, 32) */
	__u64 pcs[TAF_SNAP_BUCKET_PCS];
};

/* `snap_buckets` key: a bucket sent for a process's session (epoch: the
 * daemon's, so a new session of a reused PID is sent them again). */
struct taf_snap_bucket_key {
	__u32 pid;
	__u32 epoch;
	__u64 bucket;
};
#define TAF_SNAP_BUCKETS 65536

struct taf_rec_snap {
	struct taf_rec_hdr hdr;
	__u32 seq;           /* records of this snapshot before this one */
	__u32 n;             /* samples in this record */
	__u64 steps;         /* LAST: nodes, spans and arenas read */
	__u64 ns;            /* LAST: how long the snapshot took */
	/* runtime.mProfCycle's value as the snapshot began (the heap
	 * profile's cycle, << 1 | flushed), when cycle_read: the daemon's
	 * cross-check with the buckets' own counts (profile_counts.h) needs
	 * the cycle this mark ends. */
	__u32 mprof_cycle;
	__u32 cycle_read;
	struct taf_snap_sample s[TAF_SNAP_BATCH];
};

/*
 * `snap_targets` value, per process (tgid): where its runtime keeps what
 * a snapshot reads (runtime/mheap.go, linux/amd64: one arena L1 entry,
 * 8192 pages of 8 KiB an arena).  Written by the daemon when the
 * process's reads begin; a process without an entry gets no snapshot.
 */
struct taf_snap_target {
	__u64 arena_list;    /* &mheap_.allArenas (heapArenas from 1.25):
				a slice of arena indices */
	__u64 arenas_l2;     /* &mheap_.arenas[0]: *[1 << 22]*heapArena */
	__u64 budget_ns;     /* longest a snapshot may take; then CUT */
	__u32 epoch;         /* the session's, in snap_buckets keys */
	__u32 bucket_size;   /* bucket.size; nstk follows, then the stack */
	__u32 ha_spans;      /* heapArena.spans: [8192]*mspan */
	__u32 ha_page_specials;  /* heapArena.pageSpecials: [1024]uint8 */
	__u16 span_state;    /* mspan.state (1 byte; mSpanInUse is 1) */
	__u16 span_specials; /* mspan.specials */
	__u16 span_start_addr;
	__u16 span_head;     /* bytes of mspan read: past every field above
				and span_alloc_bits, span_elemsize */
	__u8 special_offset_size;  /* special.offset (at 8): 2 or 8 bytes */
	__u8 special_kind_off;
	__u8 special_kind_profile; /* _KindSpecialProfile */
	__u8 profile_b;      /* specialprofile.b: the node is read to b + 8 */
	/* Whether each sample's slot is set in allocBits (TAF_SNAP_OLD):
	 * mspan.allocBits and elemsize (in span_head too). */
	__u16 span_alloc_bits;
	__u16 span_elemsize;
	__u32 pad;
	__u64 mprof_cycle;   /* &runtime.mProfCycle; 0: not read */
};
#define TAF_SNAP_PROCS 16384

/*
 * TAF_REC_EXEC: a process exec'd.  The executable's identity and the new
 * command name travel with it, so a process that is gone by the time the
 * daemon reads this can still be traced from its records.
 */
struct taf_rec_exec {
	struct taf_rec_hdr hdr;
	__u64 dev;           /* executable's super_block s_dev (kernel encoding) */
	__u64 ino;
	char comm[16];
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
	TAF_PROBE_ALLOC_SITE = 8,   /* the one site of an allocation path */
	TAF_PROBE_ALLOC_ARGS = 9,   /* before a call whose type the callee
				       loses: records it (the register is in
				       the cookie's site bits) */
	TAF_PROBE_PROF_MALLOC = 10, /* entry of mProf_Malloc (--memprofilerate) */
	TAF_PROBE_PROF_FREE = 11,   /* entry of freeSpecial (--memprofilerate) */
	TAF_PROBE_SPAN_SET = 12,    /* entry of (*mheap).setSpans, where
				       initSpan is inlined (PGO builds) */
	TAF_PROBE_GC_CYCLE = 13,    /* entry of runtime.gcSweep: once per GC */
	TAF_PROBE_GC_MARK = 14,     /* entry of runtime.gcMarkTinyAllocs:
				       once per GC, as marking starts
				       (--memprofilerate) */
};

#define TAF_COOKIE(role, layout) ((__u64)(role) | ((__u64)(layout) << 8))
#define TAF_COOKIE_ROLE(c) ((c) & 0xff)
#define TAF_COOKIE_LAYOUT(c) (((c) >> 8) & 0xffff)
/* ALLOC_SITE probes: bits 24..55 index the `alloc_sites` map; ALLOC_ARGS
 * probes: they hold the enum taf_reg of the type to record. */
#define TAF_COOKIE_SITE(c) (((c) >> 24) & 0xffffffff)
#define TAF_COOKIE_WITH_SITE(c, site) ((c) | ((__u64)(site) << 24))
#define TAF_MAX_ALLOC_SITES 4096
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
	__u16 span_state;        /* mspan.state (SPAN_SET probes) */
	__u8 nelems_size;        /* 2 (Go 1.22+) or 8 */
	__u8 freeindex_size;
	__u8 green_tea;          /* small spans keep marks inline (Go 1.26+) */
	__u8 valid;
	/*
	 * --memprofilerate (runtime/mprof.go, mheap.go): mProf_Malloc takes
	 * (p, size) in AX, BX up to Go 1.22 and (mp, p, size) in AX, BX, CX
	 * from 1.23; freeSpecial(s *special, p, size) sees a special whose
	 * kind byte follows its offset (a uint16 up to 1.23, then a uintptr).
	 */
	__u8 prof_malloc_has_mp;
	__u8 special_kind_profile;   /* _KindSpecialProfile */
	__u16 special_kind_off;
	/*
	 * Finalizers (span_sweep): mspan.specials, the size of
	 * special.offset (at 8, after `next`: 2 up to Go 1.23, 8 from 1.24)
	 * and _KindSpecialFinalizer (1 up to Go 1.24, 2 from 1.25).
	 * span_specials 0: not known, the list is not walked.
	 */
	__u16 span_specials;
	__u8 special_offset_size;
	__u8 special_kind_finalizer;
	__u64 prof_malloc_site;      /* link address of mProf_Malloc's probe:
					the load bias is ctx->ip - this */
};

/*
 * Where an alloc-site probe finds a value (user/inspect/alloc_sites.h): in a
 * register at the probed instruction, or in the 8-byte stack slot at
 * SP + off there.  Registers in pt_regs order of the fields used.
 */
enum taf_reg {
	TAF_REG_AX = 0, TAF_REG_BX, TAF_REG_CX, TAF_REG_DX, TAF_REG_SI,
	TAF_REG_DI, TAF_REG_BP, TAF_REG_R8, TAF_REG_R9, TAF_REG_R10,
	TAF_REG_R11, TAF_REG_R12, TAF_REG_R13, TAF_REG_R14, TAF_REG_R15,
	TAF_REG_COUNT,
};

enum taf_loc_kind {
	TAF_LOC_NONE = 0,   /* not known at the site */
	TAF_LOC_REG = 1,    /* register `reg` */
	TAF_LOC_STACK = 2,  /* *(u64 *)(SP + off) */
};

/* The value is the location's content plus `add` (an object with a
 * malloc header is set up from its slot base and returned 8 bytes on). */
struct taf_loc {
	__u8 kind;
	__u8 reg;
	__s16 add;
	__s32 off;
};

/*
 * An allocation site probe (TAF_PROBE_ALLOC_SITE): the `alloc_sites` map
 * entry its cookie names.  Where size or type is not known inside the
 * producer (TAF_LOC_NONE), the probe reads the return address at
 * SP + ret_off and looks the call site up in `alloc_callers`.
 */
struct taf_alloc_site {
	struct taf_loc obj;
	struct taf_loc size;
	struct taf_loc type;
	__s32 ret_off;     /* SP-relative offset of the return address */
	__u32 layout;      /* index of the binary's layout (callers key) */
	__u64 addr;        /* link address of the probed instruction: the
			      load bias is ctx->ip - addr */
	/* One read of [SP + win_off, + win_len) serves every TAF_LOC_STACK
	 * location above (win_len 0: read each on its own); at most
	 * TAF_SITE_WINDOW bytes, 8-byte aligned offsets. */
	__s32 win_off;
	__u32 win_len;
	/* The largest request this producer serves (its size class's slot
	 * size; 15 for the tiny allocator), 0 if none is fixed: the size of
	 * a record whose call site says TAF_CVAL_BOUND. */
	__u32 size_max;
	__u32 pad;
};
#define TAF_SITE_WINDOW 128

/* A size or type as the call site of a producer knows it. */
enum taf_cval_kind {
	TAF_CVAL_NONE = 0,
	TAF_CVAL_CONST = 1,    /* val; a type is a link address (+ bias) */
	TAF_CVAL_STACK = 2,    /* *(u64 *)(caller's SP + off) */
	TAF_CVAL_PENDING = 3,  /* what the ALLOC_ARGS probe before the call
				  recorded on this thread for this goroutine
				  (R14) */
	TAF_CVAL_GLOBAL = 4,   /* *(u64 *)(val + bias): a package variable
				  (--memprofilerate's type sources) */
	/*
	 * Type chains (full mode, Go 1.27's size-class dispatch): the
	 * callee's type is this function's own type argument as it was
	 * passed in: the entry of the call that made this frame (one frame
	 * up) says where that is; _DEREF: it is the 8 bytes at off from it
	 * (typ.Group of a map type).
	 */
	TAF_CVAL_PASS = 5,
	TAF_CVAL_PASS_DEREF = 6,
	/* A size: the requested size is at most the producer site's
	 * size_max, which then stands for it (see TAF_ALLOC_F_SIZE_MAX). */
	TAF_CVAL_BOUND = 7,
};

struct taf_cval {
	__u8 kind;
	__u8 pad[3];
	__s32 off;
	__u64 val;
};

struct taf_caller_key {
	__u32 layout;
	__u32 pad;
	__u64 ret;         /* link address the call returns to */
};

struct taf_caller {
	struct taf_cval size;
	struct taf_cval type;
};

/*
 * The call sites nearly every climb passes (mallocgc's dispatch,
 * makeslice's, newarray's... call of mallocgc), per layout in the
 * `alloc_hot` map: found by a scan of a few words instead of a hash
 * lookup each.  Also in alloc_callers, so a full array loses nothing.
 */
#define TAF_HOT_CALLERS 16
struct taf_hot_callers {
	__u64 ret[TAF_HOT_CALLERS];
	struct taf_caller val[TAF_HOT_CALLERS];
	__u32 n;
	__u32 pad;
};

/* One read of the stack above the producer's frame serves the first
 * frames of a climb (bytes from the producer's BP). */
#define TAF_CLIMB_WINDOW 256

/* TAF_REC_HEAP_ALLOC hdr.flags */
#define TAF_ALLOC_F_NO_SIZE 1   /* size unknown (0) */
#define TAF_ALLOC_F_NO_TYPE 2   /* type unknown (0); not the same as nil */
#define TAF_ALLOC_F_STACK 4     /* a taf_rec_heap_alloc_stack (--stacks) */
#define TAF_ALLOC_F_SAMPLED 8   /* seen by mProf_Malloc: a runtime heap
				   profile sample (--memprofilerate); size
				   is the slot size the runtime samples */
#define TAF_ALLOC_F_SIZE_MAX 16 /* size is the producer's largest request,
				   not the request: the same side of every
				   bound the daemon compares it with (tiny:
				   < 16; malloc header: > 512) */

/*
 * Frames an alloc-site probe climbs for a type (TAF_CVAL_PASS): SC
 * producer <- mallocgc <- newarray <- maps.newarray <- growToSmall <-
 * mapassign_fast64 <- the compiled call site is six.
 */
#define TAF_TYPE_HOPS 6

/*
 * alloc_pending (ALLOC_ARGS): per goroutine and frame, the frame's depth
 * on its stack (g.stack.hi - SP at the call), which a stack copy keeps.
 */
struct taf_pending_key {
	__u64 g;
	__u64 depth;
};

/* Frames of the allocating stack a PROF_MALLOC probe looks at for the
 * type: mProf_Malloc <- profilealloc <- producer <- mallocgc <- ... */
#define TAF_PROF_FRAMES 7

/* Indexes of the per-kind counters in the `stats` array map. */
enum taf_stat {
	TAF_STAT_DROPPED_BASE = 1,      /* + kind: ring buffer full */
	TAF_STAT_ALLOC_NO_TYPE = 18,    /* alloc-site records whose size or
					   type was unknown (flags) */
	TAF_STAT_ALLOC_NO_OBJ = 19,     /* alloc sites whose object could not
					   be read: no record */
	TAF_STAT_TYPE_CHAIN = 20,       /* records whose type came by climbing
					   frames (TAF_CVAL_PASS) */
	TAF_STAT_TYPE_CHAIN_MISS = 21,  /* ... where the climb found no type
					   (counted in ALLOC_NO_TYPE too) */
	TAF_STAT_TYPE_CAPTURED = 22,    /* ... whose type an ALLOC_ARGS probe
					   recorded (two traps) */
	TAF_STAT_MAX = 32,
};

#endif /* TRACEAF_EVENTS_H */
