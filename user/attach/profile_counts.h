/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * profile_counts.h - the runtime's own count of heap-profile samples, per
 * bucket (runtime/mprof.go memRecord), read from the process: what
 * --memprofilerate's reads are held against, to say what they missed.
 *
 * What the counts mean.  mProf_Malloc adds each sample to its bucket's
 * future[(C+2) % 3].allocs and mProf_Free (the sweeper) each free to
 * future[(C+1) % 3].frees, C being the profile cycle (mProfCycle.value
 * >> 1); gcMarkTermination moves C on with the world stopped, just after
 * gcSweep's entry (where the reads are taken); mProf_Flush and
 * mProf_PostSweep move whole cycles into `active`.  So, C being the
 * cycle now:
 *   births = active + every future but (C+2) % 3: the samples allocated
 *            before the mark that last moved C ended;
 *   frees  = active + every future but (C+1) % 3: those freed before it
 *            (plus the sweep since, once runtime.GC's PostSweep flushed
 *            it: `window` is then 0);
 *   window = future[(C+1) % 3].allocs: those allocated during the cycle
 *            that mark ended;
 *   allocs_all, frees_all = every word: all allocated and freed so far
 *            (during a mark no sweep frees: frees_all is then exact).
 * Each stays put until C moves again (a flush only moves counts between
 * the words summed), so a read made right after a mark's end is held
 * against exact figures.
 *
 * Owns: the bucket list (mbuckets, by allnext: new buckets are pushed at
 * its head, none is ever freed), each bucket's memRecord address, and a
 * read of all of them consistent with one cycle.  Knows nothing of
 * samples or traces.
 */
#ifndef PROFILE_COUNTS_H
#define PROFILE_COUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct go_binary;
struct go_layout;
struct mem_batch;
struct target;

/* mProfCycleWrap (runtime/mprof.go): the cycle wraps at a multiple of 3. */
#define PC_CYCLE_WRAP (3u * (2u << 24))

/* One bucket's counts, as of the last read. */
struct pc_bucket {
	uint64_t bucket;            /* its address */
	uint64_t rec;               /* its memRecord's */
	uint64_t births, frees, window;
	uint64_t sweeping;          /* future[(C+1) % 3].frees: the sweep's
				       frees so far (0 once PostSweep flushed) */
	uint64_t allocs_all, frees_all;  /* every word: as the read went */
};

struct profile_counts {
	uint64_t mbuckets;          /* &runtime.mbuckets, runtime address */
	uint64_t mprof_cycle;       /* &runtime.mProfCycle */
	uint32_t allnext, nstk;     /* bucket field offsets; the stack
				       follows nstk */
	uint32_t cycle_bytes;       /* a memRecordCycle: 32 to 1.26, 16 in
				       1.27 (no byte counts) */
	uint64_t head;              /* the list's head as last walked */
	struct pc_bucket *b;        /* every bucket, newest last */
	size_t n, cap;
	uint32_t cycle;             /* the last read's C */
	struct mem_batch *batch;
	uint8_t *buf[2];            /* the records, read twice */
	size_t buf_cap;
};

/*
 * Resolves where BIN's runtime keeps the buckets and the cycle (BIAS:
 * its load bias; L: its resolved layout).  0, or -ENOENT with a reason
 * in ERR.
 */
int profile_counts_open(const struct go_binary *bin, uint64_t bias,
			const struct go_layout *l, struct profile_counts *pc,
			char *err, size_t errlen);
void profile_counts_close(struct profile_counts *pc);

/*
 * Reads every bucket's counts (new buckets first learned from the
 * list's head): twice, and a bucket whose sums differ (a flush moving
 * them under the read) again, until two agree.  0 with pc->cycle set;
 * -EAGAIN when the cycle moved under the read; -EIO when memory could
 * not be read; -ENOMEM.
 */
int profile_counts_read(const struct target *t, struct profile_counts *pc);

/*
 * The counts of a memRecord's words (REC: 4 cycles, active then future,
 * of CYCLE_BYTES each, allocs and frees their first two words) at
 * cycle C: the sums above.
 */
void profile_counts_sum(const uint8_t *rec, uint32_t cycle_bytes, uint32_t c,
			struct pc_bucket *out);

#endif /* PROFILE_COUNTS_H */
