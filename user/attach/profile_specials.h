/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * profile_specials.h - the heap-profile samples a Go process holds right
 * now, read from its memory: --memprofilerate's picture at attach.
 *
 * Owns: walking mheap_.allspans and each in-use span's specials list for
 * profile specials (runtime/mheap.go: setprofilebucket, specialprofile)
 * and reading each one's bucket (runtime/mprof.go: size, then the stack
 * of return PCs after the struct).  The process keeps running: lists are
 * read as they are, walks are bounded, and a node that does not look
 * like a special ends its list.  Nothing here knows about traces.
 */
#ifndef PROFILE_SPECIALS_H
#define PROFILE_SPECIALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inspect/go_layout.h"
#include "traceaf_events.h"
#include "util/u64_map.h"

struct go_binary;
struct target;

#define PS_MAX_PCS 32

/* One live sample: the address mProf_Malloc was given, the bucket's
 * size (the slot size) and its stack, innermost first (return PCs). */
struct ps_sample {
	bool full;                  /* size and stack read (else addr only) */
	uint64_t addr;
	uint64_t bucket;            /* specialprofile.b */
	uint64_t size;
	uint64_t pcs[PS_MAX_PCS];
	size_t npcs;
	/* ps_walk_ops.alloc_bits: the object's slot is set in its span's
	 * allocBits, so it is the object that was there before the span's
	 * last sweep (traceaf_events.h: TAF_SNAP_OLD). */
	bool old;
};

struct ps_stats {
	uint64_t spans;             /* in-use spans read */
	uint64_t samples;
	uint64_t read_errors;
	uint64_t spans_swept;       /* spans with specials swept under the walk,
				       or whose list could not be read */
	uint64_t list_errors;       /* of those, lists read in part */
};

/* Where a binary's runtime keeps what the walk reads (opaque). */
struct ps_reader {
	struct go_layout l;
	uint64_t mheap;
	size_t span_read;          /* bytes of an mspan holding our fields */
	uint8_t kind;
	/* The spans with specials by the arenas' pageSpecials bitmaps
	 * (else by reading every span of mheap_.allspans). */
	bool by_arenas;
	const struct go_field *arena_list;  /* allArenas, or heapArenas */
	/* Spans checked against mheap_.sweepgen before and after the walk. */
	bool by_sweepgen;
	/* Kept between walks: each arena's heapArena while the arena list
	 * is the same, and the read buffers. */
	uint64_t arena_list_at, l2, *arena_ha;
	size_t narenas, arenas_cap;
	uint8_t *span_buf;
	uint8_t (*node_bufs)[64];
	/* For ps_walk_ops.alloc_bits: the layout knows allocBits and
	 * elemsize. */
	bool has_alloc_bits;
	/* Buckets read so far (a bucket is never freed, nor changes its
	 * size or stack): address -> index + 1 in bkt, each
	 * {size, nstk, stack...}. */
	struct u64_map bkt_index;
	uint64_t (*bkt)[2 + PS_MAX_PCS];
	size_t nbkt, bkt_cap;
};

/* What a walk tells its caller. */
struct ps_walk_ops {
	/* A sample at ADDR (OLD: ps_sample.old): true when its size and
	 * stack are wanted (NULL: all); the others come to `sample` with
	 * `full` false. */
	bool (*want)(void *ctx, uint64_t addr, bool old);
	int (*sample)(void *ctx, const struct ps_sample *s);
	/*
	 * Each span with specials walked, [BASE, LIMIT), before its samples:
	 * VALID false when it was swept (or freed) while the walk ran, or
	 * when it could not be told: its samples are not told then, and
	 * what the caller held in it is unknown, not freed.  NULL: not told.
	 */
	int (*span)(void *ctx, uint64_t base, uint64_t limit, bool valid);
	/*
	 * The heap's sweepgen as marking left it, from the one read as the
	 * walk begins: 0 during a mark; -2 just after one, once gcSweep
	 * moved it on (a span is unswept at that sweepgen, or 3 above it
	 * when cached).
	 */
	int sweepgen_delta;
	/*
	 * Whether a sweep may have begun since the walk did (NULL: assume
	 * so): when not, the spans' sweepgen is not read again after it.
	 */
	bool (*swept_since)(void *ctx);
	/*
	 * Not at a mark: at any time, a span tells if its sweepgen is the
	 * same before and after the walk and it was not being swept (a
	 * sweep that swept it before the walk, or will after, did not
	 * change its list under the walk).
	 */
	bool any_phase;
	/*
	 * Tell each sample whether its slot is set in its span's allocBits
	 * (ps_sample.old).
	 */
	bool alloc_bits;
};

/*
 * profile_specials_read in two steps, for walking one process again
 * and again (--memprofilerate's reads, once per GC cycle): the layout
 * is resolved once.  Same returns; OPS says what the caller is told.
 * profile_specials_close frees what a reader kept between walks.
 */
void profile_specials_close(struct ps_reader *r);
int profile_specials_open(const struct go_binary *bin, uint64_t bias,
			  uint8_t kind, struct ps_reader *r, char *err,
			  size_t errlen);
int profile_specials_walk(const struct target *t, struct ps_reader *r,
			  const struct ps_walk_ops *ops, void *ctx,
			  struct ps_stats *st, char *err, size_t errlen);

/*
 * The size and stack of the bucket at BUCKET into S (whose addr is the
 * caller's): once read, a bucket is known.  0; -EIO when it cannot be
 * read (a wrong pointer: buckets are never freed); -ENOMEM.
 */
int profile_specials_bucket(const struct target *t, struct ps_reader *r,
			    uint64_t bucket, struct ps_sample *s);

/* A bucket's size, nstk and stack as the BPF programs read it (NPCS of
 * them): known from now on.  0 or -ENOMEM. */
int profile_specials_learn_bucket(struct ps_reader *r, uint64_t bucket,
				  uint64_t size, uint64_t nstk,
				  const uint64_t *pcs, size_t npcs);

/*
 * Where the BPF programs' snapshot of the samples (TAF_REC_SNAP) reads in
 * the process R was opened for (the caller
 * adds the budget and epoch): false when this runtime's layout has no
 * arenas' pageSpecials to walk by (the daemon then reads every time).
 */
bool profile_specials_snap_target(const struct ps_reader *r,
				  struct taf_snap_target *out);

/*
 * Calls cb for every profile special of the process (binary `bin`
 * loaded at `bias`; profile special kind `kind`, probe_plan.c knows it
 * per version).  0; -ENOENT with `err` when the binary does not say
 * where mheap_ or the fields are; cb's non-zero return stops the walk.
 */
int profile_specials_read(const struct target *t, const struct go_binary *bin,
			  uint64_t bias, uint8_t kind,
			  int (*cb)(void *ctx, const struct ps_sample *s),
			  void *ctx, struct ps_stats *st, char *err,
			  size_t errlen);

#endif /* PROFILE_SPECIALS_H */
