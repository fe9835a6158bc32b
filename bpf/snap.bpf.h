/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * snap.bpf.h - --memprofilerate's snapshots: the process's live
 * heap-profile samples, read by the gc_mark and gc_cycle programs
 * (spans.bpf.h) while the world is stopped (part of traceaf.bpf.c).
 *
 * Why here and not in the daemon: both programs run with the world
 * stopped (gcStart's STW for gcMarkTinyAllocs, gcMarkTermination's for
 * gcSweep), so no sweep frees a special and no allocation adds one while
 * the lists are walked: the read is exact by construction.  A read by the
 * daemon instead needs a wake-up and five or six process_vm_readv per GC
 * cycle (about 60 us), races the sweep on short marks, and on a program
 * that GCs hundreds of times a second costs more than the probes it
 * replaces.  Here a small heap costs a few microseconds of the pause.
 *
 * The walk is user/attach/profile_specials.c's by arenas, as one
 * bpf_loop of small steps (one arena's bitmap, one span header, or one
 * node a step) under a time budget: a heap with more samples than the
 * budget reads is cut, the snapshot says so and the daemon reads instead
 * (session_reads.c).  A page a uprobe cannot fault in ends it the same
 * way.  Each sample's allocBits bit goes with it: whether it is the
 * object that was at its address before the last sweep (a read that
 * knows only addresses takes a new sample at a freed one's address for
 * the old one).  The bit is off the heap, in a gcBits arena, so it costs
 * a read of user memory a sample, not the heap page the object is on
 * (on these VMs a first touch of a heap page costs about 1.2 us).
 */
#ifndef TRACEAF_SNAP_BPF_H
#define TRACEAF_SNAP_BPF_H

#include "records.bpf.h"

#define SNAP_PAGES_PER_ARENA 8192
#define SNAP_BITMAP_WORDS (SNAP_PAGES_PER_ARENA / 64)
#define SNAP_ARENAS_MAX (1ull << 22)
#define SNAP_MSPAN_IN_USE 1
#define SNAP_SPAN_HEAD_MAX 256
#define SNAP_STEPS_MAX (1u << 22)
/* Steps between two looks at the clock. */
#define SNAP_CLOCK_EVERY 16

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TAF_SNAP_PROCS);
	__type(key, __u32);
	__type(value, struct taf_snap_target);
} snap_targets SEC(".maps");

/*
 * Where the walk is, between two steps.  It lives in the per-CPU map
 * value, not on the stack: the verifier follows bpf_loop's callback until
 * its states repeat, and values it tracks on the stack (a counter that
 * grows each step) never do.
 */
struct snap_walk {
	__u64 list, narenas, l2;
	__u64 ha;            /* the arena's heapArena */
	__u64 node, base;    /* the list being walked, its span's base */
	__u64 alloc_bits, elemsize;  /* the span's allocBits, slot size */
	__u64 bits;          /* bits of words[word - 1] not visited yet */
	__u64 start, deadline, steps;
	__u32 arena, word;
	__u32 seq, flags;
	__u32 pid;
};

/* Buckets the snapshots have sent, per session (LRU: one forgotten is
 * sent again). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TAF_SNAP_BUCKETS);
	__type(key, struct taf_snap_bucket_key);
	__type(value, __u8);
} snap_buckets SEC(".maps");

/* Per CPU: the record being filled, the arena's bitmap (too big for the
 * BPF stack) and the walk. */
struct snap_scratch {
	struct taf_rec_snap rec;
	__u64 words[SNAP_BITMAP_WORDS];
	__u8 span[SNAP_SPAN_HEAD_MAX];   /* a span header, up to span_head */
	struct taf_rec_snap_bucket bucket;
	struct snap_walk w;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct snap_scratch);
} snap_scratch SEC(".maps");

/* bpf_loop's context: the two map values. */
struct snap_ctx {
	struct snap_scratch *sc;
	const struct taf_snap_target *t;
};

/* Index of the lowest set bit of B (non-zero): de Bruijn, as BPF has no
 * count-trailing-zeros instruction. */
static const __u8 snap_debruijn[64] = {
	0, 1, 48, 2, 57, 49, 28, 3, 61, 58, 50, 42, 38, 29, 17, 4,
	62, 55, 59, 36, 53, 51, 43, 22, 45, 39, 33, 30, 24, 18, 12, 5,
	63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21, 44, 32, 23, 11,
	46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9, 13, 8, 7, 6,
};

static __always_inline __u32 snap_lowest_bit(__u64 b)
{
	return snap_debruijn[(((b & -b) * 0x03f79d71b4cb0a89ull) >> 58) & 63];
}

/* Sends the full or last record; a record the ring has no room for is
 * counted like any other and makes the snapshot unusable. */
static __always_inline void snap_flush(struct snap_scratch *sc, __u32 flags)
{
	struct taf_rec_snap *r = &sc->rec;
	__u32 n = r->n >= TAF_SNAP_BATCH ? TAF_SNAP_BATCH : r->n;
	__u32 size = (__u32)__builtin_offsetof(struct taf_rec_snap, s) +
		     n * (__u32)sizeof(struct taf_snap_sample);

	fill_hdr(&r->hdr, TAF_REC_SNAP, (__u16)size);
	r->hdr.flags = flags;
	r->seq = sc->w.seq++;
	r->steps = sc->w.steps;
	r->ns = r->hdr.ts - sc->w.start;   /* fill_hdr's clock */
	r->n = n;
	if (size > sizeof(*r))
		return;
	if (bpf_ringbuf_output(&events, r, size, BPF_RB_NO_WAKEUP)) {
		stat_inc(TAF_STAT_DROPPED_BASE + TAF_REC_SNAP);
		sc->w.flags |= TAF_SNAP_F_LOST;
	}
	r->n = 0;
}

/*
 * Bucket B, unless this session's snapshots sent it already: its size
 * and stack in a record of its own, before the record of the sample
 * that names it.
 */
static __always_inline int snap_bucket(struct snap_scratch *sc,
				       const struct taf_snap_target *t,
				       __u64 b)
{
	struct taf_snap_bucket_key k = { .pid = sc->w.pid, .epoch = t->epoch,
					 .bucket = b };
	struct taf_rec_snap_bucket *r = &sc->bucket;
	__u64 n, size;
	__u8 one = 1;

	if (!b)
		return -1;
	if (bpf_map_lookup_elem(&snap_buckets, &k))
		return 0;
	if (bpf_probe_read_user(&r->size, 16, (void *)(b + t->bucket_size)))
		return -1;
	n = r->nstk < TAF_SNAP_BUCKET_PCS ? r->nstk : TAF_SNAP_BUCKET_PCS;
	if (n && bpf_probe_read_user(r->pcs, (n * 8) & 0x1ff,
				     (void *)(b + t->bucket_size + 16)))
		return -1;
	size = __builtin_offsetof(struct taf_rec_snap_bucket, pcs) + n * 8;
	fill_hdr(&r->hdr, TAF_REC_SNAP_BUCKET, (__u16)size);
	r->bucket = b;
	if (size > sizeof(*r))
		return -1;
	if (bpf_ringbuf_output(&events, r, size, BPF_RB_NO_WAKEUP)) {
		stat_inc(TAF_STAT_DROPPED_BASE + TAF_REC_SNAP_BUCKET);
		sc->w.flags |= TAF_SNAP_F_LOST;
		return 0;
	}
	bpf_map_update_elem(&snap_buckets, &k, &one, BPF_ANY);
	return 0;
}

/*
 * Whether the object at span offset OFF is the one that was there before
 * its span's last sweep (TAF_SNAP_OLD): its allocBits bit.  A byte that
 * cannot be read is in a page nothing wrote (a fresh gcBits arena): 0.
 */
static __always_inline bool snap_old(const struct snap_walk *w, __u64 off)
{
	__u64 idx;
	__u8 m = 0;

	if (!w->elemsize || !w->alloc_bits)
		return false;
	idx = off / w->elemsize;
	if (bpf_probe_read_user(&m, 1, (void *)(w->alloc_bits + idx / 8)))
		m = 0;
	return m & (1u << (idx & 7));
}

/* A node of the list: a profile special's sample goes in the record. */
static __always_inline int snap_node(struct snap_scratch *sc,
				     const struct taf_snap_target *t)
{
	struct snap_walk *w = &sc->w;
	struct taf_rec_snap *r = &sc->rec;
	__u64 nb[4] = { 0 }, off, b;
	__u8 kind;
	/* 64-bit: a 32-bit bound is checked on a zero-extended copy the
	 * verifier does not link to the register the call is given. */
	__u64 need = (__u64)t->profile_b + 8;
	__u32 kind_off = t->special_kind_off, n;

	if (need < 16 || need > sizeof(nb) || kind_off >= 32 ||
	    bpf_probe_read_user(nb, need, (void *)w->node))
		return -1;
	off = t->special_offset_size == 2 ? nb[1] & 0xffff : nb[1];
	kind = ((__u8 *)nb)[kind_off & 31];
	if (kind == t->special_kind_profile) {
		n = r->n;
		if (n >= TAF_SNAP_BATCH)
			return -1;
		b = nb[(t->profile_b / 8) & 3];
		if (snap_bucket(sc, t, b))
			return -1;
		r->s[n].addr = w->base + off;
		r->s[n].bucket = b | (snap_old(w, off) ? TAF_SNAP_OLD : 0);
		r->n = n + 1;
		if (n + 1 == TAF_SNAP_BATCH)
			snap_flush(sc, 0);
	}
	w->node = nb[0];
	return 0;
}

/* The span of page PAGE of the arena: its list, if it is in use.  The
 * header is read once, up to the last field wanted (a read costs about
 * the same for 8 bytes as for 200). */
static __always_inline int snap_span(struct snap_scratch *sc,
				     const struct taf_snap_target *t,
				     __u32 page)
{
	struct snap_walk *w = &sc->w;
	__u64 span = 0, head = t->span_head;

	if (bpf_probe_read_user(&span, 8, (void *)(w->ha + t->ha_spans +
						  (__u64)page * 8)) || !span)
		return -1;
	if (head < 8 || head > SNAP_SPAN_HEAD_MAX ||
	    bpf_probe_read_user(sc->span, head, (void *)span))
		return -1;
	if (sc->span[t->span_state & (SNAP_SPAN_HEAD_MAX - 1)] != SNAP_MSPAN_IN_USE)
		return 0;
	/* Pointer fields: 8-byte aligned, below span_head (the daemon
	 * checked both). */
	w->node = *(__u64 *)&sc->span[t->span_specials & (SNAP_SPAN_HEAD_MAX - 8)];
	w->base = *(__u64 *)&sc->span[t->span_start_addr & (SNAP_SPAN_HEAD_MAX - 8)];
	w->elemsize = *(__u64 *)&sc->span[t->span_elemsize & (SNAP_SPAN_HEAD_MAX - 8)];
	w->alloc_bits = *(__u64 *)&sc->span[t->span_alloc_bits & (SNAP_SPAN_HEAD_MAX - 8)];
	return 0;
}

/* The next arena of the list: its heapArena and pageSpecials bitmap. */
static __always_inline int snap_arena(struct snap_scratch *sc,
				      const struct taf_snap_target *t)
{
	struct snap_walk *w = &sc->w;
	__u64 idx = 0;

	if (bpf_probe_read_user(&idx, 8, (void *)(w->list + (__u64)w->arena * 8)))
		return -1;
	w->arena++;
	w->ha = 0;
	if (bpf_probe_read_user(&w->ha, 8, (void *)(w->l2 +
			(idx % SNAP_ARENAS_MAX) * 8)) || !w->ha)
		return -1;
	if (bpf_probe_read_user(sc->words, sizeof(sc->words),
				(void *)(w->ha + t->ha_page_specials)))
		return -1;
	w->word = 0;
	w->bits = 0;
	return 0;
}

/* One step: 0 to go on, 1 to stop (done, cut or failed: w->flags). */
static long snap_step(__u64 i, struct snap_ctx *c)
{
	struct snap_scratch *sc = c->sc;
	const struct taf_snap_target *t = c->t;
	struct snap_walk *w = &sc->w;
	int rc = 0;

	w->steps++;
	if (!(w->steps % SNAP_CLOCK_EVERY) &&
	    bpf_ktime_get_ns() > w->deadline) {
		w->flags |= TAF_SNAP_F_CUT;
		return 1;
	}
	if (w->node) {
		rc = snap_node(sc, t);
	} else if (w->bits) {
		__u32 bit = snap_lowest_bit(w->bits);

		w->bits &= w->bits - 1;
		rc = snap_span(sc, t, (w->word - 1) * 64 + bit);
	} else if (w->ha && w->word < SNAP_BITMAP_WORDS) {
		/* The next word of the bitmap, a step each (a loop here is
		 * more than the verifier will follow), but eight words with
		 * no page set are one step: most of a small heap's arena. */
		__u32 wi = w->word & (SNAP_BITMAP_WORDS - 1);
		const __u64 *g = &sc->words[wi & ~7u];

		if (!(wi & 7) && !(g[0] | g[1] | g[2] | g[3] | g[4] | g[5] |
				   g[6] | g[7])) {
			w->word = wi + 8;
			return 0;
		}
		w->bits = sc->words[wi];
		w->word = wi + 1;
	} else if (w->arena < w->narenas) {
		rc = snap_arena(sc, t);
	} else {
		return 1;   /* every arena read */
	}
	if (rc) {
		w->flags |= TAF_SNAP_F_UNREAD;
		return 1;
	}
	return 0;
}

/*
 * Reads every profile special of the calling process, if it asked for
 * snapshots, each sample with its slot's allocBits bit (TAF_SNAP_OLD):
 * true when the whole heap was read and every record sent (the caller's
 * GC record then says TAF_GC_F_SNAP).
 */
static __always_inline bool snap_take(__u32 pid)
{
	const struct taf_snap_target *t = bpf_map_lookup_elem(&snap_targets, &pid);
	__u32 zero = 0;
	struct snap_scratch *sc;
	struct snap_ctx c;
	struct snap_walk *w;
	__u64 slice[2] = { 0 }, l2 = 0;

	if (!t)
		return false;   /* not asked: full mode, -exact, a big heap */
	sc = bpf_map_lookup_elem(&snap_scratch, &zero);
	if (!sc)
		return false;
	c.sc = sc;
	c.t = t;
	w = &sc->w;
	__builtin_memset(w, 0, sizeof(*w));
	w->pid = pid;
	sc->rec.n = 0;
	w->start = bpf_ktime_get_ns();
	w->deadline = w->start + t->budget_ns;
	if (bpf_probe_read_user(slice, sizeof(slice), (void *)t->arena_list) ||
	    bpf_probe_read_user(&l2, 8, (void *)t->arenas_l2) || !l2 ||
	    slice[1] > SNAP_ARENAS_MAX)
		w->flags |= TAF_SNAP_F_UNREAD;
	/* Read with the world stopped, before gcMarkTermination moves it
	 * on: which cycle of the buckets' counts this read ends. */
	sc->rec.cycle_read = t->mprof_cycle &&
		!bpf_probe_read_user(&sc->rec.mprof_cycle, 4,
				     (void *)t->mprof_cycle);
	w->l2 = l2;
	w->list = slice[0];
	w->narenas = slice[1];
	if (!w->flags)
		bpf_loop(SNAP_STEPS_MAX, snap_step, &c, 0);
	/* bpf_loop ran out of steps before the walk did: cut too. */
	if (!w->flags && (w->node || w->bits || w->arena < w->narenas ||
			  (w->ha && w->word < SNAP_BITMAP_WORDS)))
		w->flags |= TAF_SNAP_F_CUT;
	snap_flush(sc, TAF_SNAP_F_LAST | w->flags);
	return !w->flags;
}

#endif /* TRACEAF_SNAP_BPF_H */
