/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * heap_replay_impl.h - the replay's private state, shared by its files:
 * heap_replay.c (interning, events, files), heap_replay_points.c
 * (checkpoints, the leak rule), heap_replay_objects.c (object sizes,
 * lifetimes in time and GC cycles) and heap_replay_spans.c (spans and
 * goroutine stacks).  Included by those files only.
 */
#ifndef HEAP_REPLAY_IMPL_H
#define HEAP_REPLAY_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "format/gc_sidecar.h"
#include "analysis/gc_cycles.h"
#include "analysis/heap_replay.h"
#include "format/trace_reader.h"
#include "analysis/object_table.h"
#include "util/u64_map.h"

#define TICK_NS 100000000ull          /* checkpoint inside long gens */
#define MAX_POINTS 256
#define LEAK_STEPS 8                  /* stretches of time the leak rule takes */
#define TIME_BITS 40
#define TIME_MAX ((1ull << TIME_BITS) - 1)

/*
 * Small dense keys (a generation's type IDs, a sidecar's stack IDs: 1, 2,
 * .. in order) map through an array, the rest through a u64_map: two
 * lookups per allocation that were hash probes.
 */
#define HR_DENSE_MAX 65536

struct hr_dense {
	uint64_t *v;                  /* [key]: value + 1; 0 = none */
	size_t cap, hi;               /* hi: above every key set */
	struct u64_map big;           /* keys >= HR_DENSE_MAX */
};

/*
 * The classes asked for last, by a hash of their key: the same few
 * (type, stack, size) come again and again, and a probe of class_keys
 * was 5 % of `report`.
 */
#define HR_CLASS_MEMO 256

struct hr_class_memo {
	uint64_t key;                 /* 0: empty */
	uint32_t idx;
};

struct hr_private {
	struct object_table objects;  /* id -> class << 40 | t_us */
	struct u64_map spans;         /* id + 1 -> npages << 16 | kindclass */
	struct u64_map gstacks;       /* id + 1 -> order */
	struct u64_map type_names;    /* name hash -> type index + 1 */
	struct u64_map class_keys;    /* packed class -> class index + 1 */
	struct hr_class_memo class_memo[HR_CLASS_MEMO];
	struct u64_map stack_keys;    /* frames hash -> stack index + 1 */
	struct u64_map site_keys;     /* frame hash -> site index + 1 */
	struct hr_dense gen_types;    /* trace type id -> idx | size << 20 */
	struct hr_dense file_stacks;  /* sidecar stack id -> stack + 1 */
	struct stack_sidecar *sidecar;
	bool sidecar_bad;             /* a lookup found it malformed */
	uint64_t *site_live;          /* per site, now */
	size_t site_live_cap;
	size_t types_cap, sites_cap, stacks_cap, classes_cap;
	uint64_t min_gap_ns, last_point_ns;
	bool started;
	struct trace_heap_info info;
	struct gc_cycles gc;
	/* The current file's GC cycle marks (F.gc), fed to gc in time order
	 * as the events pass them. */
	struct gc_mark *gc_marks;
	size_t ngc_marks, gc_next;
	uint64_t gc_next_ns;          /* marks[gc_next].ns, or UINT64_MAX:
					 one compare per event */
};

static inline uint64_t rel_ns(const struct heap_replay *h, uint64_t ns)
{
	return ns > h->t_first_ns ? ns - h->t_first_ns : 0;
}

/* heap_replay.c */
int hr_intern_class(struct heap_replay *h, uint32_t type, uint32_t stack,
		    uint64_t size, bool tiny, uint32_t *idx);

/* heap_replay_objects.c */
/*
 * Size of heap object ID, in span S (NULL: none known), of a type of
 * TYPE_SIZE bytes (heap_replay.h); *TINY says it is in a tiny block,
 * *TINY_UPPER in its upper half.
 */
uint64_t hr_object_size(struct heap_replay *h, const struct ot_span *s,
			uint64_t id, uint64_t type_size, bool *tiny,
			bool *tiny_upper);
/* The upper half of LOWER_ID's tiny block got an ID: LOWER_ID counts 8. */
int hr_tiny_split(struct heap_replay *h, uint64_t lower_id);
/*
 * Object ID of class CLS, allocated at BORN (us since the start, + 1; 0:
 * it existed before the trace), was freed at NOW_US; SWEPT: by a sweep
 * (not an alloc over a live ID).  Counts its lifetime and cycles.
 */
int hr_object_freed(struct heap_replay *h, uint32_t cls, uint64_t born,
		    uint64_t now_us, uint64_t id, bool swept);
/* Lifetimes and cycles of the objects live at the end. */
void hr_objects_finish(struct heap_replay *h);

/* Bucket of heap_replay.lifetime_hist for a lifetime of V ns. */
unsigned hr_lifetime_bucket(uint64_t v);

/* heap_replay_spans.c: Span* and GoroutineStack* events. */
int hr_span_event(struct heap_replay *h, const struct trace_event *e);
int hr_stack_event(struct heap_replay *h, const struct trace_event *e);

/* heap_replay_points.c */
void hr_fold_counts(struct heap_replay *h);
int hr_take_point(struct heap_replay *h, uint64_t t_ns);
int hr_gen_end_point(struct heap_replay *h);
void hr_leak_rule(struct heap_replay *h, struct hr_leak *lk, bool site,
		  size_t idx, uint64_t live_bytes_end);

#endif /* HEAP_REPLAY_IMPL_H */
