/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sample_counts.h - --memprofilerate's cross-check: the births and frees
 * the reads found, per bucket, held against the runtime's own counts
 * (profile_counts.h) after each read in a mark's-end pause.
 *
 * Why it can be exact: the read in the pause at gcSweep's entry sees
 * every sample allocated before it and no free after the sweep before
 * it, and the runtime's figures after that pause's mProf_NextCycle are
 * of that same instant.  So per bucket, what the reads found (plus what
 * the runtime had counted before the session's first check: samples
 * born and freed before the tracer came) must be what the runtime
 * counted.  A difference is a read's miss, and where it is: samples a
 * gcSweep overtook a read on, or freed by the daemon's late reads a
 * cycle early, or a reused address taken for the old sample.
 *
 * Owns: each held sample's bucket, the per-bucket figures, the
 * comparison's totals.  Knows nothing of how reads are made.
 */
#ifndef SAMPLE_COUNTS_H
#define SAMPLE_COUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/u64_map.h"

struct profile_counts;

/*
 * What the runtime counted before the session's reads began (samples
 * born and freed before the tracer came), per bucket: not known at once
 * (a read the daemon makes during a mark is held against a range: the
 * samples born before the mark, and those born by the end of its read),
 * so kept as the range every check so far allows.  A check whose range
 * misses it is a read's error, by how far.
 */
struct sc_range {
	int64_t lo, hi;
	bool set;
};

struct sc_bucket {
	uint64_t births, frees;      /* the reads found */
	struct sc_range before_b, before_f;
	/* A check after runtime.GC had flushed the sweep's frees: what the
	 * runtime counted then is at most what the reads find by the next
	 * read (that sweep's frees), held against the next check. */
	uint64_t ahead_f;
	bool has_ahead;
};

/* The totals the checks came to. */
struct sample_counts_totals {
	uint64_t checks;             /* checks made */
	uint64_t skipped;            /* not made: the runtime's figures had
				        moved on (the next mark came, or the
				        read could not be made) */
	uint64_t frees_unchecked;    /* checks of births only (a blocking
				        sweep freed after the read) */
	uint64_t buckets;            /* buckets the last check compared */
	/* Summed over buckets and checks: births the runtime counted that
	 * the reads did not find, and found that it did not count; the same
	 * of frees. */
	uint64_t births_missed, births_extra;
	uint64_t frees_missed, frees_extra;
	/* As of the last check: the runtime's counts (all it ever
	 * counted), and what the reads found. */
	uint64_t runtime_births, runtime_frees;
	uint64_t found_births, found_frees;
	uint64_t ns_total;           /* the daemon's time reading the counts */
};

struct sample_counts {
	struct u64_map owner;        /* sample key -> bucket */
	struct u64_map index;        /* bucket -> index + 1 in b */
	struct sc_bucket *b;
	size_t n, cap;
	bool based;                  /* the first check was made */
	struct sample_counts_totals t;
};

/* Which read a check follows: what the runtime's figures then mean. */
enum sc_when {
	SC_END,          /* the BPF programs' read in a mark's-end pause:
			    births and frees exact (frees an upper bound
			    once runtime.GC flushed the sweep's) */
	SC_END_BLOCKING, /* the same, after a blocking sweep: births only */
	SC_MARK,         /* the daemon's whole read during a mark: births
			    between those before the mark and those by the
			    read's end; frees exact (no sweep runs) */
};

void sample_counts_init(struct sample_counts *sc);
void sample_counts_free(struct sample_counts *sc);

/* A read found sample KEY born, of BUCKET (0 or -ENOMEM). */
int sample_counts_born(struct sample_counts *sc, uint64_t key, uint64_t bucket);

/* A read found sample KEY freed. */
void sample_counts_freed(struct sample_counts *sc, uint64_t key);

/*
 * Holds the reads' figures so far against PC's (profile_counts_read,
 * just after the read WHEN says), and sets sc->t.  0 or -ENOMEM.
 */
int sample_counts_compare(struct sample_counts *sc,
			  const struct profile_counts *pc, enum sc_when when);

#endif /* SAMPLE_COUNTS_H */
