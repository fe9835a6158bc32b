/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * heap_replay.h - replays the AllocFree events of one process's trace
 * files (one timeline) into a model of its heap, and keeps what the
 * analysis needs: per type, per allocation site and per call stack
 * counts, live objects at the end, object lifetimes, and checkpoints over
 * time (live bytes per type, spans, goroutine stacks).
 *
 * Owns: the live object table (object_table.h: one 64-bit value per live
 * object, in its span's slots), the span and stack tables, type and stack
 * interning across files, the leak rule, the GC cycle estimate
 * (gc_cycles.h).
 * Reads files through trace_reader.h and stack sidecars through
 * stack_sidecar.h; prints nothing.
 *
 * Object size: the slot size of the span that holds the object
 * (go_span_elemsize of the span's size class, or the whole span for a
 * large object), except in the tiny-allocator spans (16-byte noscan
 * class), where several objects share one 16-byte block and the trace has
 * no object's own size (HeapObjectAlloc is [id, type]; the type of
 * make([]byte, n) is uint8 and a string's none): there an object is
 * counted as the part of its block its ID stands for.  IDs are 8 bytes
 * apart and a block has at most one live ID per 8-byte half (the tracer
 * merges later tiny objects into a live half), so an ID in the upper half
 * counts 8 bytes, one in the lower half 16, and 8 once the upper half of
 * its block gets an ID while it lives: each block's bytes are counted
 * once, by the IDs that hold them.  With no span known, the type's size.
 *
 * GC cycles are estimated from the frees (gc_cycles.h): C(t) is the
 * estimated cycle in progress at time t.  An object allocated at a and
 * freed at f survived max(0, C(f) - C(a) - 1) cycles (the sweep of cycle
 * C(f) freed it; each cycle between marked it live); one still live at
 * the end, C(end) - C(a) - 1 (the last cycle may not have swept it yet);
 * an object that existed before the trace counts from its start (C = 0).
 */
#ifndef HEAP_REPLAY_H
#define HEAP_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/stack_sidecar.h"

/* Counts of a type, a site or a stack (bytes = slot bytes). */
struct hr_counts {
	uint64_t allocs, alloc_bytes;   /* HeapObjectAlloc events */
	uint64_t frees, free_bytes;     /* HeapObjectFree of known objects */
	uint64_t exists;                /* first seen as "exists" */
	uint64_t live, live_bytes;      /* at the end of the timeline */
};

/* Leak rule result (see heap_replay.c, "Leak suspects"). */
struct hr_leak {
	bool suspect;
	uint64_t floor_start, live_end; /* objects */
	uint64_t growth_bytes;          /* live bytes gained over the trace */
	unsigned rises, steps;          /* steps (stretches of time) it rose in */
};

/*
 * Lifetimes of the objects of a type or site, in time and in GC cycles.
 * Objects allocated and freed in the trace fill the histograms; those
 * still live at the end only say how many cycles they have survived so
 * far (a lower bound on their lifetime).  Time buckets: 0 for under 1 us,
 * then two per octave of microseconds (bucket 1 + 2*log2(us) + the half);
 * cycle buckets: 0..15 exactly, then one per octave.
 */
#define HR_LIFE_TIME_BUCKETS 96
#define HR_LIFE_CYCLE_BUCKETS 64

struct hr_life {
	uint64_t freed;                 /* objects in the histograms */
	uint64_t time_hist[HR_LIFE_TIME_BUCKETS];
	uint64_t cycle_hist[HR_LIFE_CYCLE_BUCKETS];
	uint64_t live_end;              /* still live, allocated in the trace */
	uint64_t live_cycles_sum;       /* their cycles survived, summed */
	uint64_t live_cycles_max;
};

struct hr_type {
	char *name;                     /* "<notype>" for type ID 0 */
	uint64_t size;                  /* from the type table */
	uint64_t ptr_bytes;             /* from the type table: 0 = noscan */
	struct hr_counts c;
	struct hr_life life;
	struct hr_leak leak;
	uint64_t peak_live_bytes;       /* over the checkpoints */
};

/* An allocation site: the innermost frame of the allocating stacks. */
struct hr_site {
	struct stack_frame frame;       /* strings owned by the replay */
	struct hr_counts c;
	struct hr_life life;
	struct hr_leak leak;
	uint32_t top_type;              /* type index with most alloc bytes */
};

/* A distinct call stack (by content, across files). */
struct hr_stack {
	struct stack_frame *frames;     /* innermost first */
	size_t nframes;
	uint32_t site;
};

/* One (type, stack, slot size) combination; what a live object refers to. */
struct hr_class {
	uint32_t type;
	uint32_t stack;                 /* index + 1; 0 = no stack */
	uint64_t size;
	bool tiny;                      /* in a tiny-allocator block: size is
					   its part of the block (8 or 16) */
	uint64_t allocs, frees, exists, live;
	uint64_t shortlived;            /* allocated, freed having survived 0
					   cycles: by the first GC after it */
	uint64_t survived;              /* survived >= HR_SURVIVED_CYCLES,
					   freed since or live at the end */
	uint64_t survived_before;       /* of survived, those live before the
					   trace began ("exists"): their
					   allocation is not in the trace */
	double live_s;                  /* seconds its objects were live in
					   the trace, summed */
};

/* The cycles an object must survive to count as survived. */
#define HR_SURVIVED_CYCLES 2

/* The process record of the first stack sidecar that has one. */
struct hr_process {
	bool valid;
	char *exe, *go_build_id, *gnu_build_id;
	uint64_t text_start, text_limit, text_offset;
	uint64_t wall_ns, mono_ns;      /* one moment on both clocks */
};

/* State at a checkpoint (generation end, or a time tick; see .c). */
struct hr_point {
	uint64_t t_ns;                  /* since the timeline's first event */
	uint64_t allocs, alloc_bytes;   /* cumulative */
	uint64_t frees;
	uint64_t live, live_bytes;
	uint64_t heap_pages, manual_pages;
	uint64_t stacks, stack_bytes;
	size_t ntypes, nsites;          /* lengths of the arrays below */
	uint64_t *type_live;            /* objects per type index */
	uint64_t *type_live_bytes;
	uint64_t *site_live;
};

/* Events that did not fit the model (clock skew between CPUs, drops). */
struct hr_anomalies {
	uint64_t alloc_of_live;         /* alloc of an ID already live */
	uint64_t free_of_unknown;       /* free of an ID not live */
	uint64_t undefined_type;        /* type ID not in the gen's table */
	uint64_t size_from_type;        /* no span known for an object */
	uint64_t span_free_unknown, stack_free_unknown;
	uint64_t no_stack;              /* allocs without a sidecar stack */
};

#define HR_LIFETIME_BUCKETS 1024

struct heap_replay {
	/* Results; read after heap_replay_finish. */
	struct hr_type *types;
	size_t ntypes;
	struct hr_site *sites;
	size_t nsites;
	struct hr_stack *stacks;
	size_t nstacks;
	struct hr_class *classes;
	size_t nclasses;
	struct hr_point *points;
	size_t npoints;
	struct hr_anomalies anom;

	uint64_t files, generations, events;
	uint64_t t_first_ns, t_last_ns; /* absolute, trace clock */
	unsigned format_version;        /* of the last file read */
	/* --memprofilerate traces (F.sampling): the counts are estimates
	 * scaled from samples at this rate (heap_scale.h); 0: full trace. */
	uint64_t sample_rate;
	bool have_stacks;               /* a sidecar was read */
	struct hr_process proc;
	uint64_t gc_cycles;             /* cycle starts seen */
	bool gc_exact;                  /* the runtime's (F.gc), not estimated */
	const uint64_t *gc_start_ns;    /* [i]: cycle i + 1 began, ns since
					   the first event (gc_cycles of
					   them; after heap_replay_finish) */

	/* Goroutine stacks, spans: now and peak. */
	uint64_t heap_pages, manual_pages, peak_heap_pages, peak_manual_pages;
	uint64_t stacks_live, stack_bytes, peak_stacks, peak_stack_bytes;
	uint64_t stack_allocs, stack_frees, span_allocs, span_frees;

	/* Lifetimes of objects allocated and freed in the trace. */
	uint64_t lifetime_hist[HR_LIFETIME_BUCKETS];
	uint64_t lifetimes;

	struct hr_private *priv;
	char err[256];
};

/* Returns NULL on allocation failure. */
struct heap_replay *heap_replay_new(void);
void heap_replay_free(struct heap_replay *h);

/*
 * Replays PATH as the continuation of the timeline (files of one process,
 * in name order).  With USE_STACKS, PATH's stack sidecar is read if there
 * is one.  Returns 0 or a negative errno, with h->err saying why; what was
 * replayed before an error is kept.
 */
int heap_replay_file(struct heap_replay *h, const char *path,
		     bool use_stacks);

/* Takes the last checkpoint and computes the totals and the leak rule. */
int heap_replay_finish(struct heap_replay *h);

/* Lifetime percentile P (0-100) in ns, from the histogram; 0 if none. */
uint64_t heap_replay_lifetime_pct(const struct heap_replay *h, double p);

/*
 * Percentile P (0-100) of L's freed objects: their lifetime in ns (the
 * middle of its bucket) or the GC cycles they survived (the low end of a
 * bucket past 15).  0 if none.
 */
uint64_t hr_life_time_pct(const struct hr_life *l, double p);
uint64_t hr_life_cycles_pct(const struct hr_life *l, double p);


#endif /* HEAP_REPLAY_H */
