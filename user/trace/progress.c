// SPDX-License-Identifier: BSD-3-Clause
/*
 * progress.c - what the tracer says on stderr about its counts: each
 * session's report when it closes, the progress line (-v, and "done:" at
 * the end), and the lines on dropped and discarded records.
 */
#include "trace/tracer_impl.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "attach/target.h"
#include "trace/alloc_stacks.h"
#include "trace/rec_names.h"
#include "format/trace_sink.h"

/*
 * --memprofilerate: the reads held against the runtime's own per-bucket
 * counts (sample_counts.h): said always, a miss is samples wrong in the
 * trace; or why there was no check.
 */
static void say_counts_check(pid_t pid, const struct sample_reads *rd)
{
	const struct sample_counts_totals *t = &rd->sc.t;

	if (rd->counts_rc < 0) {
		tracer_say("PID %d: --memprofilerate: the reads were not checked against the runtime's counts: %s",
		    (int)pid, rd->counts_err);
		return;
	}
	if (!t->checks) {
		if (rd->counts_rc == 0 && t->skipped)
			tracer_say("PID %d: --memprofilerate: the reads were not checked against the runtime's counts (%llu tries: the next GC came first)",
			    (int)pid, (unsigned long long)t->skipped);
		return;
	}
	tracer_say("PID %d: --memprofilerate: the reads checked %llu times against the runtime's own counts (%llu buckets; %llu samples born and %llu freed by its count, %llu and %llu found): %llu births missed, %llu found that it did not count, %llu frees missed, %llu found that it did not count%s",
	    (int)pid, (unsigned long long)t->checks,
	    (unsigned long long)t->buckets,
	    (unsigned long long)t->runtime_births,
	    (unsigned long long)t->runtime_frees,
	    (unsigned long long)t->found_births,
	    (unsigned long long)t->found_frees,
	    (unsigned long long)t->births_missed,
	    (unsigned long long)t->births_extra,
	    (unsigned long long)t->frees_missed,
	    (unsigned long long)t->frees_extra,
	    t->frees_unchecked ? " (frees not compared after a blocking sweep)" : "");
}

void tracer_add_counts(struct session_counts *a, const struct session_counts *b)
{
	int k;

	for (k = 0; k < TAF_REC_KIND_MAX; k++)
		a->records[k] += b->records[k];
	for (k = 0; k < TW_EV_COUNT; k++)
		a->written[k] += b->written[k];
	a->events += b->events;
	a->exists_events += b->exists_events;
	a->generations += b->generations;
	a->type_errors += b->type_errors;
	a->tiny_merged += b->tiny_merged;
	a->tiny_unreported += b->tiny_unreported;
	a->lost_on_write += b->lost_on_write;
	a->sampled_out += b->sampled_out;
	a->stacks_with += b->stacks_with;
	a->stacks_without += b->stacks_without;
	a->stacks_lost += b->stacks_lost;
	a->stacks_inline += b->stacks_inline;
}

void tracer_report_session(const struct tracer *t, const struct session *s)
{
	const struct session_counts *c = session_counts(s);
	pid_t pid = session_target(s)->pid;
	unsigned sample = t->opt->sample;
	struct trace_sink_stats ss;

	session_sink_stats(s, &ss);
	if (sample > 1)
		tracer_say("PID %d: --sample %u: %llu of %llu allocations kept, %llu allocation events written",
		    (int)pid, sample,
		    (unsigned long long)(c->records[TAF_REC_HEAP_ALLOC] -
					 c->sampled_out),
		    (unsigned long long)c->records[TAF_REC_HEAP_ALLOC],
		    (unsigned long long)c->written[TW_EV_HEAP_OBJECT_ALLOC -
						   TW_EV_FIRST]);
	if (session_reads(s)) {
		const struct sample_reads_counts *r = &session_reads(s)->c;

		uint64_t tried = r->reads + r->checked + r->missed +
				 r->reads_end + r->checked_end + r->missed_end +
				 r->reads_final + r->missed_final;
		/* The daemon's reads: those in the pauses take it no time. */
		uint64_t by_daemon = tried > r->snaps ? tried - r->snaps : 0;

		if (session_reads(s)->reader_err[0])
			tracer_say("warning: PID %d: reading its heap-profile samples: %s",
			    (int)pid, session_reads(s)->reader_err);
		/* Said always: a missed read is samples not in the trace. */
		tracer_say("PID %d: --memprofilerate: %llu GC marks, %llu reads of the samples as they began (%llu partial: the sweep overtook them in some spans; %llu missed: a sweep came first, or a list could not be read) and %llu as they ended (%llu missed)%s, %.1f ms each on average by the daemon, %.1f ms at most",
		    (int)pid, (unsigned long long)c->records[TAF_REC_GC_MARK],
		    (unsigned long long)(r->reads + r->checked),
		    (unsigned long long)(r->partial + r->checked_partial),
		    (unsigned long long)r->missed,
		    (unsigned long long)(r->reads_end + r->checked_end),
		    (unsigned long long)r->missed_end,
		    r->reads_final ? ", and one as tracing stopped" :
		    r->missed_final ? ", and one missed as tracing stopped" : "",
		    by_daemon ? (double)r->ns_total / 1e6 / (double)by_daemon : 0.0,
		    (double)r->ns_max / 1e6);
		if (r->snaps || r->snaps_cut || r->snaps_unread)
			tracer_say("PID %d: --memprofilerate: %llu of those reads made by the BPF programs in the GC pauses (%.1f us each on average, %.1f us at most, added to the pause), %llu left to the daemon by --pause-budget, %llu because memory could not be read there",
			    (int)pid, (unsigned long long)r->snaps,
			    r->snap_taken ? (double)r->snap_ns_total / 1e3 /
					    (double)r->snap_taken : 0.0,
			    (double)r->snap_ns_max / 1e3,
			    (unsigned long long)r->snaps_cut,
			    (unsigned long long)r->snaps_unread);
		say_counts_check(pid, session_reads(s));
		if (r->checked || r->check_missing || r->check_extra)
			tracer_say("PID %d: --check-reads: %llu reads compared: %llu samples the probes held that a read did not see, %llu a read saw that the probes did not allocate before the next mark, %llu probed that no read ever saw (lost to missed reads, or made without a special)",
			    (int)pid, (unsigned long long)r->checked,
			    (unsigned long long)r->check_missing,
			    (unsigned long long)r->check_extra,
			    (unsigned long long)r->check_never_read);
	}
	if (session_stacks(s))
		tracer_say("PID %d: --stacks: %llu allocations with a stack (%llu sent whole: new to the process, or forgotten by the probes), %llu allocations without stacks",
		    (int)pid,
		    (unsigned long long)c->stacks_with,
		    (unsigned long long)c->stacks_inline,
		    (unsigned long long)c->stacks_without);
	if (c->stacks_lost)
		tracer_say("PID %d: --stacks: %llu stacks not written (sidecar failed, or its trace file was rotated away)",
		    (int)pid,
		    (unsigned long long)c->stacks_lost);
	if (c->tiny_merged)
		tracer_say("PID %d: %llu tiny allocations shared a live 8-byte ID with an earlier one in their block and are not separate events",
		    (int)pid, (unsigned long long)c->tiny_merged);
	if (c->tiny_unreported)
		tracer_say("PID %d: --tiny-as-runtime: %llu tiny allocations into an open block are not events, as in the Go %d.%d runtime's own traces",
		    (int)pid, (unsigned long long)c->tiny_unreported,
		    1, go_binary_build_info(session_binary(s))->minor);
	if (session_inconsistent(s))
		tracer_say("PID %d: %llu of %llu heap operations did not fit the shadow heap (missed or out-of-order events)",
		    (int)pid,
		    (unsigned long long)session_inconsistent(s),
		    (unsigned long long)session_heap_ops(s));
	if (c->sweep_read_errors)
		tracer_say("PID %d: %llu span sweeps read in part (a bitmap or the finalizer list unreadable): frees there may be missed or early",
		    (int)pid,
		    (unsigned long long)c->sweep_read_errors);
	if (c->type_errors)
		tracer_say("PID %d: %llu type descriptors could not be read (events kept without type)",
		    (int)pid, (unsigned long long)c->type_errors);
	if (c->lost_on_write)
		tracer_say("PID %d: %llu events not written: %s", (int)pid,
		    (unsigned long long)c->lost_on_write,
		    strerror(-session_write_error(s)));
	if (ss.files_written) {
		tracer_say("PID %d: %llu events in %llu files",
		    (int)pid, (unsigned long long)c->events,
		    (unsigned long long)ss.files_written);
		tracer_say("last file %s", ss.current_path);
	}
}

/* ---- progress ------------------------------------------------------- */

static void totals(struct tracer *t, struct session_counts *c,
		   uint64_t *bytes, uint64_t *files)
{
	size_t i;

	*c = t->done;
	*bytes = t->done_bytes;
	*files = t->done_files;
	for (i = 0; i < t->nprocs; i++) {
		struct trace_sink_stats ss;

		tracer_add_counts(c, session_counts(t->procs[i].s));
		session_sink_stats(t->procs[i].s, &ss);
		*bytes += ss.bytes_written;
		*files += ss.files_written;
	}
}

static uint64_t dropped_total(struct tracer *t, uint64_t st[TAF_STAT_MAX])
{
	uint64_t dropped = 0;
	int k;

	probes_read_stats(&t->probes, st);
	for (k = 1; k < TAF_REC_KIND_MAX; k++)
		dropped += st[TAF_STAT_DROPPED_BASE + k];
	return dropped;
}

/*
 * --stacks, -v: how many allocations so far came with a stack and how
 * many of those were sent whole (the first of their stack).
 */
static void print_stack_counts(struct tracer *t)
{
	uint64_t seen = 0, whole = 0, unknown = 0;
	size_t i;

	/* Live sessions only: a -v line is about the run going on. */
	for (i = 0; i < t->nprocs; i++) {
		struct alloc_stacks *as = session_stacks(t->procs[i].s);
		struct alloc_stacks_counts c;

		if (!as)
			continue;
		alloc_stacks_get_counts(as, &c);
		seen += c.seen;
		whole += c.inline_pcs;
		unknown += c.unknown;
	}
	tracer_say("stacks: %llu allocations with a stack record, %llu sent whole (%.2f%%), %llu by a hash never sent whole",
	    (unsigned long long)seen, (unsigned long long)whole,
	    seen ? 100.0 * (double)whole / (double)seen : 0.0,
	    (unsigned long long)unknown);
}

/* The daemon's resident memory in KiB (/proc/self/statm), 0 if unknown. */
static uint64_t rss_kib(void)
{
	unsigned long size, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE) / 1024;
}

/*
 * The allocations a count stands for: the probes' records, or, where no
 * probe records them (--memprofilerate's reads), the events written.
 */
static uint64_t allocations(const struct session_counts *c)
{
	return c->records[TAF_REC_HEAP_ALLOC] ? c->records[TAF_REC_HEAP_ALLOC] :
		c->written[TW_EV_HEAP_OBJECT_ALLOC - TW_EV_FIRST];
}

void tracer_print_progress(struct tracer *t, const char *prefix, bool rss)
{
	uint64_t st[TAF_STAT_MAX], bytes, files, dropped;
	struct session_counts c;
	char more[64] = "";

	totals(t, &c, &bytes, &files);
	dropped = dropped_total(t, st);
	/* -v: long runs must show the daemon's memory staying flat. */
	if (rss)
		snprintf(more, sizeof(more), "; daemon RSS %llu KiB",
			 (unsigned long long)rss_kib());
	if (rss && t->opt->stacks)
		print_stack_counts(t);
	tracer_say("%s%llu allocations, %llu events in %llu generations, %llu bytes in %llu files, %llu dropped%s",
	    prefix, (unsigned long long)allocations(&c),
	    (unsigned long long)c.events, (unsigned long long)c.generations,
	    (unsigned long long)bytes, (unsigned long long)files,
	    (unsigned long long)dropped, more);
}

/*
 * SIGUSR2: where the tracer stands, without stopping it: the totals line,
 * one line per traced process, and the drops so far.
 */
void tracer_print_status(struct tracer *t)
{
	size_t i;

	tracer_print_progress(t, "status: ", true);
	for (i = 0; i < t->nprocs; i++) {
		const struct session *s = t->procs[i].s;
		const struct session_counts *c = session_counts(s);
		struct trace_sink_stats ss;

		session_sink_stats(s, &ss);
		tracer_say("status: PID %d (%s): %llu allocations, %llu events in %llu files, last file %s",
		    (int)t->procs[i].pid, session_target(s)->comm,
		    (unsigned long long)allocations(c),
		    (unsigned long long)c->events,
		    (unsigned long long)ss.files_written,
		    ss.current_path[0] ? ss.current_path : "(no file yet)");
	}
	tracer_print_drops(t);
}

void tracer_print_drops(struct tracer *t)
{
	uint64_t st[TAF_STAT_MAX];
	int k;

	dropped_total(t, st);
	if (st[TAF_STAT_ALLOC_NO_OBJ])
		tracer_say("lost %llu allocations: the probe could not read the object's address from the target's stack",
		    (unsigned long long)st[TAF_STAT_ALLOC_NO_OBJ]);
	if (st[TAF_STAT_ALLOC_NO_TYPE])
		tracer_say("%llu allocations recorded without size or type (not readable at the probe)",
		    (unsigned long long)st[TAF_STAT_ALLOC_NO_TYPE]);
	if (st[TAF_STAT_TYPE_CHAIN_MISS])
		tracer_say("... of which %llu found no type climbing the caller frames (a call path the plan did not describe)",
		    (unsigned long long)st[TAF_STAT_TYPE_CHAIN_MISS]);
	for (k = 1; k < TAF_REC_KIND_MAX; k++)
		if (st[TAF_STAT_DROPPED_BASE + k])
			tracer_say("dropped %llu %s records: ring buffer full (try --ringbuf-size)",
			    (unsigned long long)st[TAF_STAT_DROPPED_BASE + k],
			    taf_rec_names[k].name);
	if (t->malformed_records)
		tracer_say("discarded %llu malformed records (shorter than their kind; a probe and daemon of different builds?)",
		    (unsigned long long)t->malformed_records);
	if (t->orphan_records)
		tracer_say("discarded %llu records of processes not traced (not selected, over --max-processes, or gone before they could be opened; -v -v says which)",
		    (unsigned long long)t->orphan_records);
}
