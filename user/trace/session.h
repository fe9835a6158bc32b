/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * session.h - one traced process, from ring-buffer records to trace files.
 *
 * Owns: the mapping from runtime addresses to the experiment's IDs (the
 * info batch), the type cache (type pointer -> name, size, ptrBytes, read
 * once from the target), the shadow heap (what is live, so every file can
 * start with "exists" events), the generation under construction and the
 * file sink.  Records come in; whole generations go out.  What a session
 * holds is its own (session_impl.h); its owner, the tracer, sees this
 * API only.
 */
#ifndef SESSION_H
#define SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attach/probes.h"
#include "trace/record_view.h"
#include "trace/sample_reads.h"
#include "format/trace_writer.h"
#include "traceaf_events.h"

struct alloc_stacks;
struct go_binary;
struct target;
struct trace_sink_stats;

/* A traced process; what it holds is its own (session_impl.h). */
struct session;

/*
 * Trace timestamps are ticks of 64 ns (the frequency batch says 1e9/64 per
 * second), the runtime's own unit on amd64 (runtime/tracetime.go:
 * traceTimeDiv, cputicks/64): a thread's delta between two allocations
 * (~1 us traced) then fits one varint byte instead of two.  The session
 * keeps nanoseconds; ns / SESSION_TICK_NS is an event's trace timestamp
 * (before the writer's clamping to non-decreasing per thread).
 */
#define SESSION_TICK_NS 64

/*
 * A generation is also cut once its encoded events pass this many bytes
 * (and a quarter of --rotate-size, at least 64 KiB), so that a file ends
 * within about one generation of --rotate-size and a failed write loses
 * one such generation at most.  8 MiB is some 1.5 M events (fullwork:
 * 5.5 bytes each): a 1 s generation of a target at the probes' rate stays
 * below it, and the daemon's memory for the generation being built
 * stays bounded with long periods or bursts.
 */
#define SESSION_GEN_SIZE_DEFAULT (8ull << 20)
#define SESSION_GEN_SIZE_MIN (64ull << 10)

struct session_opts {
	const char *dir;
	uint64_t rotate_size;
	uint64_t gen_size;   /* --generation-size: cut past it; 0: never */
	unsigned keep_files;
	unsigned sample;     /* --sample: keep 1 heap allocation in N (0, 1: all) */
	bool stacks;         /* --stacks: stack sidecars */
	struct known_stacks known_stacks; /* the probes' (PID, stack hash) map */
	uint64_t memprofilerate; /* --memprofilerate: the runtime samples */
	bool sample_reads;   /* --memprofilerate: read, not probed (sample_reads.h) */
	bool check_reads;    /* --check-reads: reads held against the probes */
	uint64_t pause_budget_ns; /* --pause-budget: the BPF reads' bound in a
				     GC pause (0: the daemon reads) */
	bool tiny_as_runtime; /* --tiny-as-runtime: on_tiny_alloc_runtime */
};

struct session_counts {
	uint64_t records[TAF_REC_KIND_MAX];  /* records received, per kind */
	uint64_t before_start;               /* records older than the snapshot */
	uint64_t after_stop;                 /* records newer than the stop */
	uint64_t events;                     /* trace events written */
	uint64_t exists_events;              /* of which snapshot ("exists") */
	uint64_t generations;
	uint64_t type_errors;                /* type pointers we couldn't read */
	uint64_t tiny_merged;                /* tiny allocs sharing a live ID */
	uint64_t tiny_unreported;            /* --tiny-as-runtime, Go <= 1.23:
						tiny allocs into an open block */
	uint64_t lost_on_write;              /* events in generations not written */
	uint64_t sweep_read_errors;          /* sweeps read in part (TAF_SWEEP_*) */
	uint64_t sweep_bitmaps_read_late;    /* bitmaps BPF could not read that
						the daemon read */
	uint64_t written[TW_EV_COUNT];       /* events written, per trace event */
	uint64_t sampled_out;                /* allocations --sample skipped */
	/* --memprofilerate: samples whose type the frames did not give, and
	 * frees of profile specials of objects sampled before we came. */
	uint64_t samples_untyped, sample_frees_unknown;
	/* --stacks: allocations written with a stack in a sidecar, without
	 * one (unreadable), with one but not written. */
	uint64_t stacks_with, stacks_without, stacks_lost;
	uint64_t stacks_inline;  /* records that carried their PCs (first of a stack) */
};


/*
 * A new session in *OUT for an opened target (the session takes ownership
 * of it, and closes it if this fails) and a binary (borrowed: it must
 * outlive the session).  Reads the heap base from the target when it
 * can; otherwise (the process is gone, or its heap does not exist yet)
 * from the first record.  No generation exists until session_begin().
 */
int session_start(struct session **out, struct target *t,
		  struct go_binary *bin, uint64_t load_bias,
		  const struct session_opts *o, char *err, size_t errlen);

/* Seeds the shadow heap with what exists when tracing begins. */
int session_seed_span(struct session *s, uint64_t base, uint64_t npages,
		      uint8_t alloc_type, uint8_t spanclass);
int session_seed_object(struct session *s, uint64_t slot, uint64_t type_addr);
/* A span's untyped objects at once (heap_snapshot_cb.span_objects): the
 * count seeded, or -ENOTSUP to take them one by one (--sample, a span the
 * shadow heap does not hold as fresh). */
int session_seed_span_objects(struct session *s, uint64_t base,
			      const uint8_t *bits, uint32_t nelems,
			      uint32_t freeindex);
int session_seed_stack(struct session *s, uint64_t lo, uint64_t hi);
/*
 * --memprofilerate: a heap-profile sample the runtime held at attach
 * (its address as mProf_Malloc saw it, its slot size, its type if the
 * stack told: `known`, 0 = nil), its BUCKET (held against the
 * runtime's counts, sample_counts.h, as a sample the reads found) and
 * the bucket's NPCS return PCS (load addresses, innermost first): with
 * --stacks its exists events name that stack in the sidecar.
 */
int session_seed_sample(struct session *s, uint64_t addr, uint64_t size,
			uint64_t type, bool known, uint64_t bucket,
			const uint64_t *pcs, uint32_t npcs);

/*
 * Starts the first generation at `ts` (CLOCK_MONOTONIC ns): it opens with
 * exists events for what the shadow heap holds; records stamped earlier
 * are dropped, the snapshot already describes their effect.
 */
int session_begin(struct session *s, uint64_t ts);

/* Records stamped after `ts` are dropped from now on (tracing stops). */
void session_stop(struct session *s, uint64_t ts);

/*
 * --memprofilerate: what the session's reads of its samples need from
 * the tracer (session_reads.c): the probes (their gc_sweeps count), the
 * executable's call-site types (return address -> type, link
 * addresses) and the kind of a profile special in its runtime.  All
 * borrowed.
 */
void session_set_sample_reader(struct session *s, const struct probes *probes,
			       const struct u64_map *sample_types,
			       uint8_t prof_kind);
/*
 * --memprofilerate: one last read of the samples as the tracer stops
 * while the process runs: what was made since the last GC mark (0, or
 * -errno of a write).
 */
int session_sampled_read_final(struct session *s);
/* The reads and their counts; NULL when the session reads no samples. */
const struct sample_reads *session_reads(const struct session *s);
/*
 * --memprofilerate: whether the session needs the probe at each mark's
 * start (the daemon reads its samples then, or may have to soon), HAS
 * saying whether it is attached now (session_reads.c says when).
 */
bool session_wants_mark_probe(const struct session *s, bool has);

/* Feeds one ring-buffer record, decoded (record_view_decode). */
int session_record(struct session *s, const struct record_view *v);

/*
 * Ends the current generation: encodes it and appends it to the current file
 * (or a new one).  Empty generations are skipped.  Returns 0 or -errno of a
 * failed write; after one, later generations are counted as lost.
 */
int session_cut(struct session *s);

/*
 * Cuts the current generation and ends the file (SIGUSR1): the next event
 * starts a new file, with the shadow heap's exists events, as a rotation
 * by size does.  Returns what session_cut returned.
 */
int session_rotate(struct session *s);

/*
 * --stacks: completes the current trace file's sidecar and updates the
 * stacks_* counts (after the last session_cut).
 */
void session_stacks_close(struct session *s);

/* Cuts the last generation, closes everything and frees S. */
void session_finish(struct session *s);

/* Replay inconsistencies the shadow heap saw, and operations fed. */
uint64_t session_inconsistent(const struct session *s);
uint64_t session_heap_ops(const struct session *s);

/*
 * What the session's owner reads of it: the process, its executable and
 * where that is loaded, the counts so far, the --stacks state (NULL
 * without), the sink's files so far, and the -errno of the write that
 * failed (0: none; after one, later generations are counted as lost).
 */
const struct target *session_target(const struct session *s);
struct go_binary *session_binary(const struct session *s);
uint64_t session_load_bias(const struct session *s);
const struct session_counts *session_counts(const struct session *s);
struct alloc_stacks *session_stacks(const struct session *s);
void session_sink_stats(const struct session *s, struct trace_sink_stats *st);
int session_write_error(const struct session *s);

/*
 * Writes COMM-PID-YYYYMMDDTHHMMSSZ.summary.json (the session's start
 * time) in the directory of the session's trace files, with
 * O_EXCL|O_NOFOLLOW, mode 0640: the honest account of the process, what
 * was seen, written, dropped and lost, per kind, and which files hold
 * it (session_summary.c).  `bpf_stats` are the probes' counters (drops
 * per record kind; shared by all processes traced by one run), `reason`
 * why tracing ended, `rate_before` (--memprofilerate) the target's
 * runtime.MemProfileRate before it was traced.  Returns 0 or -errno.
 */
int session_summary_write(const struct session *s,
			  const uint64_t bpf_stats[TAF_STAT_MAX],
			  const char *reason, int64_t rate_before);

#endif /* SESSION_H */
