/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * session_impl.h - what the parts of a session share: session.c,
 * session_types.c, session_gen.c, session_records.c, session_sampled.c,
 * session_gc.c and session_summary.c; not for other modules (they use
 * session.h, where a session is opaque).
 */
#ifndef SESSION_IMPL_H
#define SESSION_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attach/target.h"
#include "format/gc_sidecar.h"
#include "format/trace_writer.h"
#include "format/type_catalog.h"
#include "trace/session.h"
#include "util/u64_map.h"

struct go_type_reader;
struct shadow_heap;

/* One traced process (session.h); its owner holds a pointer only. */
struct session {
	struct target target;
	struct go_binary *bin;
	struct go_type_reader *types;
	uint64_t load_bias;
	int go_minor;
	struct tw_heap_info info;
	bool info_ready;                 /* min_page_heap_addr known */
	bool exists_pending;             /* rotated: exists before next event */

	struct u64_map type_index;       /* type addr -> catalogue ref, 0: unreadable */
	/* --memprofilerate: (type addr, sampled slot size) -> index + 1 of
	 * an entry with that size (sampled_type). */
	struct u64_map sized_index;
	/* --memprofilerate: live sampled objects, 8-byte ID address ->
	 * type_ref (the shadow heap, which models spans, is not used). */
	struct u64_map sampled;
	uint64_t memprofilerate;         /* 0: full mode */
	bool sampling_due;               /* the current file lacks its F.sampling */
	/* --memprofilerate reads (sample_reads.h): the one waiting to be
	 * applied and their counts; with check_reads, held against the
	 * probes' samples instead of making events.  What types them and
	 * tells a sweep came: the tracer's (session_set_sample_reader). */
	struct sample_reads reads;
	bool sample_reads, check_reads;
	uint64_t pause_budget_ns;    /* the BPF snapshots' budget */
	const struct probes *probes;
	const struct u64_map *sample_types;
	uint8_t prof_kind;
	/*
	 * GC cycle marks (runtime.gcSweep, session_gc.c): those of the
	 * generation being built, and those of the current file, whose F.gc
	 * is rewritten whole after each of its generations.
	 */
	struct gc_mark *gc_pending, *gc_file;
	size_t ngc_pending, gc_pending_cap, ngc_file, gc_file_cap;
	/* Every type read from the target, kept across generations; each
	 * generation marks those it defines (format/type_catalog.h). */
	struct type_catalog catalog;

	struct shadow_heap *heap;
	/*
	 * Tiny blocks (16 B) whose upper 8-byte half holds an object: the
	 * trace's heap IDs have 8-byte resolution, so such a block is two
	 * IDs, and its free must release both.
	 */
	struct u64_map tiny_upper;
	bool tiny_as_runtime;            /* --tiny-as-runtime */

	struct tw_gen *gen;              /* generation under construction */
	uint64_t last_ts;                /* floor for the next generation */
	uint64_t start_ts;               /* records before this are dropped */
	uint64_t stop_ts;                /* and after this, when non-zero */
	bool started;
	struct trace_sink *sink;
	bool sink_failed;
	int sink_error;
	uint64_t gen_cap;                /* cut past this many event bytes */
	uint64_t gen_cap_now;            /* ... or fewer, on a disk nearly full */
	uint64_t gen_base;               /* event bytes of the exists events */

	unsigned sample;                 /* 1 heap allocation in N is kept */
	struct alloc_stacks *stacks;     /* --stacks, else NULL */
	struct session_counts counts;
	uint64_t gen_events[TW_EV_COUNT];    /* in the generation being built */
	uint64_t started_realtime;           /* seconds since the epoch */
};

/* runtime/malloc.go minAlign on linux/amd64: the trace's heap ID unit. */
#define GO_MIN_HEAP_ALIGN 8

/* ---- IDs ------------------------------------------------------------ */

static inline uint64_t session_heap_object_id(const struct session *s,
					      uint64_t addr)
{
	return (addr - s->info.min_page_heap_addr) / s->info.min_heap_align;
}

static inline uint64_t span_id(const struct session *s, uint64_t base)
{
	return (base - s->info.min_page_heap_addr) / s->info.page_size;
}

static inline uint64_t stack_id(const struct session *s, uint64_t lo)
{
	return (lo - s->info.min_page_heap_addr) / s->info.fixed_stack;
}

/* runtime.traceCompressStackSize: sys.Len64(size), i.e. log2(size) + 1. */
static inline uint64_t stack_order(uint64_t size)
{
	return size ? 64 - (uint64_t)__builtin_clzll(size) : 0;
}

/* traceSpanTypeAndClass: spanclass << 1 for heap spans, 1 for manual ones. */
static inline uint32_t span_kindclass(uint8_t alloc_type, uint8_t spanclass)
{
	return alloc_type == 0 ? (uint32_t)spanclass << 1 : 1;
}

/* session.c */
int session_read_min_page_heap_addr(struct session *s, uint64_t *out);

/* session_types.c */
const struct type_entry *session_type_lookup(struct session *s, uint64_t addr);
uint32_t session_type_ref_of(const struct session *s,
			     const struct type_entry *e);
uint64_t session_gen_type_id(struct session *s, const struct type_entry *e);

/* session_gen.c */
int session_flush_exists(struct session *s);
int session_emit(struct session *s, uint64_t thread, enum tw_event ev,
		 uint64_t ts, uint64_t a, uint64_t b, uint64_t c);
int session_emit_alloc(struct session *s, const struct taf_rec_heap_alloc *r,
		       const struct alloc_stack_view *st, uint64_t id,
		       uint64_t type_id);
int session_ensure_generation(struct session *s, const struct record_view *v);

/* session_sampled.c (--memprofilerate) */
int session_sampled_alloc(struct session *s, const struct taf_rec_heap_alloc *r,
			  const struct alloc_stack_view *st);
int session_sampled_free(struct session *s, const struct taf_rec_addr *r);
/* fn for every live sample (ID address, type_ref); stops at non-zero. */
int session_sampled_for_each(struct session *s,
			     int (*fn)(void *arg, uint64_t addr, uint32_t type_ref),
			     void *arg);
void session_sampling_gen_written(struct session *s);
/* The sink started a file (trace_sink_on_new_file; ctx: the session). */
void session_sampling_new_file(void *ctx, const char *name);
/*
 * session_reads.c, --memprofilerate: reads the samples at this GC_MARK
 * record and makes events at the mark: HeapObjectFree for the samples
 * the read lacks, HeapObjectAlloc for those new to it; with
 * --check-reads it only holds the read against the probes' samples
 * (sample_reads_counts).
 */
int session_sampled_read(struct session *s, const struct taf_rec_addr *mark);
/* Whether the session reads its samples at the marks (either engine). */
static inline bool session_reads_samples(const struct session *s)
{
	return s->sample_reads || s->check_reads;
}
/* ... and at the mark's end (TAF_REC_GC_CYCLE): the births since. */
int session_sampled_read_end(struct session *s, const struct taf_rec_addr *end);
/* A part of the snapshot the BPF programs took for the GC record that
 * follows it (TAF_REC_SNAP): what that record's read is made of. */
int session_sampled_snap(struct session *s, const struct taf_rec_snap *r);
/* A bucket the next snapshot records name (TAF_REC_SNAP_BUCKET). */
int session_sampled_snap_bucket(struct session *s,
				const struct taf_rec_snap_bucket *r);
/* session_sampled.c: a sample's type entry (by type and slot size) and
 * its value in s->sampled (type_ref; stack reference above). */
const struct type_entry *session_sampled_type(struct session *s,
					      const struct taf_rec_heap_alloc *r);
uint64_t session_sampled_value(struct session *s, const struct type_entry *e,
			       uint32_t stack_ref);

/* session_gc.c: GC cycle marks (TAF_REC_GC_CYCLE) and each file's F.gc */
int session_gc_mark(struct session *s, const struct taf_rec_addr *r);
void session_gc_new_file(void *ctx, const char *name);
void session_gc_gen_written(struct session *s);
void session_gc_gen_dropped(struct session *s);
void session_gc_free(struct session *s);

#endif /* SESSION_IMPL_H */
