/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sample_reads.h - --memprofilerate's reads: the runtime's live
 * heap-profile samples (its profile specials), read from the process
 * once per GC cycle as marking ends (and as it starts while the daemon
 * reads), with no probe on any allocation or free path.
 *
 * Why a read at the mark sees every sample: a profile special is freed
 * only by the sweeper (runtime/mgcsweep.go, mProf_Free via freeSpecial),
 * the previous cycle's sweep is finished before marking starts (gcStart:
 * finishsweep_m), and none runs until gcSweep ends the mark.  So every
 * sample is live, its special on its span's list, through at least the
 * mark phase after its allocation; a read during that phase, or with
 * the world stopped at its end, that no gcSweep overtook saw all of
 * them.  A sample new since the last read was allocated in between; one
 * the read lacks was freed by the sweep in between; and one at the
 * address of a sample the last read saw, whose slot is clear in its
 * span's allocBits, was allocated after that sweep freed the other one
 * (allocBits are the sweep's marks, traceaf_events.h TAF_SNAP_OLD).
 *
 * Owns: the keys one read saw and, of those new to the session, the
 * sample itself (typed, with its bucket's PCs); whether the read was
 * consistent; the reads' counts.  The BPF programs (snap.bpf.h) or the
 * daemon (session_reads.c: read_now) read; session_reads.c makes events
 * of it.  With --check-reads the session holds the reads against the
 * exact probes instead.
 */
#ifndef SAMPLE_READS_H
#define SAMPLE_READS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attach/profile_counts.h"
#include "attach/profile_specials.h"
#include "trace/sample_counts.h"
#include "util/u64_map.h"

/* A sample's key: its 8-byte heap ID address (session_sampled.c's). */
static inline uint64_t sample_key(uint64_t addr)
{
	return addr & ~(uint64_t)7;
}

/* A span a partial read tells of: [base, limit). */
struct sample_span {
	uint64_t base, limit;
};

/* A sample the session did not hold yet. */
struct sample_fresh {
	uint64_t key;               /* its 8-byte heap ID address */
	uint64_t addr, size;        /* as mProf_Malloc saw them */
	uint64_t bucket;            /* its bucket's address */
	uint64_t type;              /* load address, 0: nil or unknown */
	bool known;                 /* the call-site table typed it */
	uint32_t npcs;
	uint64_t pcs[PS_MAX_PCS];   /* its bucket's stack, load addresses */
};

struct sample_reads_counts {
	uint64_t reads;             /* consistent reads applied */
	uint64_t missed;            /* reads a gcSweep overtook (or that
				       failed): what was born and freed
				       around them is not in the trace */
	uint64_t late;              /* of those, a gcSweep came before the
				       read began */
	uint64_t partial;           /* reads a gcSweep overtook: applied
				       for the spans it had not swept yet */
	uint64_t unreadable;        /* nodes or buckets a read could not read */
	uint64_t last_samples;      /* samples the last read saw */
	uint64_t ns_total, ns_max;  /* time the reads took */
	/* --check-reads: reads compared, samples the probes held that a
	 * read did not see, samples a read saw that the probes never
	 * allocated before the next mark. */
	uint64_t checked, check_missing, check_extra;
	uint64_t checked_partial;   /* of the reads compared, partial ones */
	/* Reads at a mark's end (births during the mark only), applied or
	 * compared, and missed (a gcSweep came first, or unreadable). */
	uint64_t reads_end, checked_end, missed_end;
	/* The read as the tracer stopped (session_sampled_read_final). */
	uint64_t reads_final, missed_final;
	/* --check-reads: samples the probes saw made that no read ever saw:
	 * born and freed between two reads that told of their span (lost
	 * to reads missed or partial), or made without a special at all
	 * (mProf_Malloc returns early for an M without its profStack yet,
	 * runtime/mprof.go). */
	uint64_t check_never_read;
	/* Reads the BPF programs took with the world stopped (snap.bpf.h):
	 * applied or compared; left to the daemon because --pause-budget
	 * cut them, or because they were not whole (a page not present, a
	 * record lost, a bucket unreadable); the most steps one took. */
	uint64_t snaps, snaps_cut, snaps_unread, snap_steps_max;
	uint64_t snap_ns_total, snap_ns_max;  /* what they added to the pauses */
	uint64_t snap_taken;        /* snapshots ended, whole or not */
	uint64_t snap_suspended;    /* times a cut stopped them, for a while */
	uint64_t reborn;            /* samples at the address of one the last
				       read saw, allocated since the sweep
				       freed that one: a free and a birth */
	/* --check-reads: samples at an address the last read saw, told
	 * reborn though the probes did not free that one since; told the
	 * same though they did. */
	uint64_t check_reborn_unfreed, check_same_freed;
};

struct sample_reads {
	struct ps_reader reader;    /* resolved at the first read */
	int reader_rc;              /* 1: not yet; 0: ready; else -errno */
	char reader_err[160];       /* why it could not be, or a walk failed */
	struct sample_fresh *fresh; /* of those, the new ones */
	size_t nfresh, fresh_cap;
	bool ready;                 /* a read waits for the session */
	bool consistent;
	bool partial;               /* only the spans in `told` tell */
	bool mark_seen;             /* a mark read since the last mark end */
	uint64_t mark_sweeps;       /* its gcSweep count */
	uint64_t sweeps;            /* the read's: the gcSweep count it is at */
	/* The BPF snapshot being received (TAF_REC_SNAP): the next record's
	 * seq, and whether it is whole so far / ended whole. */
	bool snap_asked;            /* the programs take them for this process */
	struct taf_snap_target snap_target;  /* what they were told */
	bool snap_cut;              /* the last one ran out of budget */
	uint32_t snap_cuts_in_row;  /* ... and how many before it did */
	bool snap_off;              /* stopped: the heap was too big */
	/* What a step cost in the last SNAP_STEP_COSTS whole ones (ns), a
	 * ring: their median is the step cost (session_reads.c). */
#define SNAP_STEP_COSTS 16
	uint32_t snap_step_ns[SNAP_STEP_COSTS];
	uint32_t snap_step_costs;   /* how many were ever put in */
	uint64_t snap_last_steps;   /* the last whole one's; 0: none yet */
	bool snap_building, snap_whole;
	uint32_t snap_next;
	struct sample_span *told;   /* partial: the spans not swept, sorted */
	size_t ntold, told_cap;
	struct u64_map seen;        /* the key of every sample the read saw */
	struct u64_map unconfirmed; /* --check-reads: fresh keys the probes
				       have not allocated yet */
	struct u64_map ever;        /* --check-reads: probed samples a read saw */
	struct u64_map never_read;    /* --check-reads: probed, never read */
	/* A gcSweep began since the last read applied (at SWEPT_AT, just
	 * after its mark's end): this read's allocBits tell a sample the
	 * session holds from a new one at its address (REBORN: their keys),
	 * and what the read lacks was freed then. */
	bool swept;
	bool use_old;               /* this read's allocBits tell (not at any time) */
	uint64_t swept_at;
	struct u64_map reborn;
	/* --check-reads: the last applied read's keys, and what the probes
	 * freed since. */
	struct u64_map prev_seen, freed_since;
	uint32_t prev_sweeps;       /* gcSweeps since prev_seen's read: the
				       flags are held against the probes
				       only after one (they tell of the last
				       sweep alone) */
	struct sample_reads_counts c;
	/* The cross-check with the buckets' own counts (after each read in
	 * a mark's-end pause): the runtime's reader (1: not opened yet; 0:
	 * open; else -errno), the mProfCycle the read saw (snap_cycle_read),
	 * the figures. */
	struct profile_counts counts;
	int counts_rc;
	char counts_err[160];
	uint32_t snap_cycle;
	bool snap_cycle_read;
	uint64_t counts_last_ns;    /* when figures were last taken */
	uint64_t counts_cost_ns;    /* ... and what the take cost */
	bool counts_pending;        /* counts holds figures of a cycle whose
				       read is still to come */
	struct sample_counts sc;
};

void sample_reads_init(struct sample_reads *r);
void sample_reads_free(struct sample_reads *r);

/* Starts a read: forgets the last one's samples. */
void sample_reads_begin(struct sample_reads *r);

/* A key the read saw (0 or -ENOMEM). */
int sample_reads_key(struct sample_reads *r, uint64_t key);

/* Room for one more new sample, or NULL (-ENOMEM); filled by the caller. */
struct sample_fresh *sample_reads_fresh(struct sample_reads *r);

/*
 * The type of sample PS by the first call site of its stack in TYPES
 * (return address -> type, link addresses): true and *TYPE (link
 * address, 0: nil) when one is known.
 */
bool sample_stack_type(const struct u64_map *types, uint64_t bias,
		       const struct ps_sample *ps, uint64_t *type);

/* A span the read walked and found not swept under it (0 or -ENOMEM). */
int sample_reads_span(struct sample_reads *r, uint64_t base, uint64_t limit);

/*
 * Whether the read tells of the sample at KEY: always for a whole read;
 * for a partial one, when KEY is in one of its spans not swept.
 */
bool sample_reads_told(const struct sample_reads *r, uint64_t key);

/* Ends the read: CONSISTENT when no gcSweep overtook it; NS it took. */
void sample_reads_end(struct sample_reads *r, bool consistent, uint64_t ns);

#endif /* SAMPLE_READS_H */
