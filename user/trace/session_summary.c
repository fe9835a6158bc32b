// SPDX-License-Identifier: BSD-3-Clause
/*
 * session_summary.c - the per-process JSON sidecar (session.h,
 * session_summary_write): a part of the session, whose counts, shadow
 * heap and sink it reads.
 */
#include "trace/session.h"
#include "trace/session_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "inspect/go_binary.h"
#include "trace/rec_names.h"
#include "trace/shadow_heap.h"
#include "format/trace_sink.h"
#include "util/json_str.h"

/*
 * "shadow_heap_errors": the operations that did not fit the model, by kind
 * (shadow_heap.h: a free of a slot never allocated means an allocation
 * the probes missed, an allocation of a live slot a missed free).
 */
static void shadow_heap_errors_json(FILE *f, const struct session *s)
{
	const struct shadow_heap_stats *st;
	const char *sep = "";
	int i;

	fprintf(f, ",\n  \"shadow_heap_errors\": {");
	st = s->heap ? shadow_heap_stats(s->heap) : NULL;
	for (i = 1; st && i < SH_ERR_COUNT; i++) {
		if (!st->errors[i])
			continue;
		fprintf(f, "%s\"%s\": %" PRIu64, sep, shadow_heap_err_name(i),
			st->errors[i]);
		sep = ", ";
	}
	fputc('}', f);
}

/* The reads against the runtime's own counts (sample_counts.h). */
static void write_counts_check(FILE *f, const struct sample_reads *r)
{
	const struct sample_counts_totals *t = &r->sc.t;

	fprintf(f, ", \"counts_check\": {\"available\": %s, \"checks\": %" PRIu64
		", \"skipped\": %" PRIu64 ", \"frees_unchecked\": %" PRIu64
		", \"buckets\": %" PRIu64 ", \"runtime_births\": %" PRIu64
		", \"births_missed\": %" PRIu64 ", \"births_extra\": %" PRIu64
		", \"runtime_frees\": %" PRIu64 ", \"frees_missed\": %" PRIu64
		", \"frees_extra\": %" PRIu64 ", \"found_births\": %" PRIu64
		", \"found_frees\": %" PRIu64 ", \"ns_total\": %" PRIu64 "}",
		r->counts_rc == 0 ? "true" : "false", t->checks, t->skipped,
		t->frees_unchecked, t->buckets, t->runtime_births,
		t->births_missed, t->births_extra, t->runtime_frees,
		t->frees_missed, t->frees_extra, t->found_births,
		t->found_frees, t->ns_total);
}

/*
 * --memprofilerate: "engine" ("reads" or "exact"), and the reads' counts
 * (sample_reads.h); with --check-reads, how they compared with the probes.
 */
static void write_reads(FILE *f, const struct session *s)
{
	const struct sample_reads_counts *c = &s->reads.c;

	fprintf(f, ",\n  \"memprofile_engine\": \"%s\"",
		s->sample_reads ? "reads" : "exact");
	if (!session_reads_samples(s))
		return;
	fprintf(f, ",\n  \"reads\": {\"done\": %" PRIu64 ", \"missed\": %" PRIu64
		", \"unreadable\": %" PRIu64 ", \"last_samples\": %" PRIu64
		", \"ns_total\": %" PRIu64 ", \"ns_max\": %" PRIu64
		", \"late\": %" PRIu64 ", \"partial\": %" PRIu64
		", \"done_at_end\": %" PRIu64 ", \"missed_at_end\": %" PRIu64
		", \"done_at_stop\": %" PRIu64 ", \"missed_at_stop\": %" PRIu64
		", \"marks\": %" PRIu64,
		c->reads, c->missed, c->unreadable, c->last_samples,
		c->ns_total, c->ns_max, c->late, c->partial,
		c->reads_end + c->checked_end, c->missed_end,
		c->reads_final, c->missed_final,
		s->counts.records[TAF_REC_GC_MARK]);
	/* Of those, the reads the BPF programs took in the GC pauses. */
	fprintf(f, ", \"in_pause\": %" PRIu64 ", \"in_pause_cut\": %" PRIu64
		", \"in_pause_unreadable\": %" PRIu64
		", \"in_pause_steps_max\": %" PRIu64
		", \"in_pause_taken\": %" PRIu64 ", \"in_pause_ns_total\": %" PRIu64
		", \"in_pause_ns_max\": %" PRIu64
		", \"reborn\": %" PRIu64,
		c->snaps, c->snaps_cut, c->snaps_unread, c->snap_steps_max,
		c->snap_taken, c->snap_ns_total, c->snap_ns_max,
		c->reborn);
	write_counts_check(f, &s->reads);
	if (s->check_reads)
		fprintf(f, ", \"checked\": %" PRIu64 ", \"checked_partial\": %" PRIu64
			", \"check_missing\": %" PRIu64
			", \"check_extra\": %" PRIu64 ", \"check_never_read\": %" PRIu64
			", \"check_unconfirmed\": %zu"
			", \"check_reborn_unfreed\": %" PRIu64
			", \"check_same_freed\": %" PRIu64,
			c->checked, c->checked_partial, c->check_missing,
			c->check_extra,
			c->check_never_read,
			s->reads.unconfirmed.len, c->check_reborn_unfreed,
			c->check_same_freed);
	fputc('}', f);
}

int session_summary_write(const struct session *s,
			  const uint64_t bpf_stats[TAF_STAT_MAX],
			  const char *reason, int64_t rate_before)
{
	const struct go_build_info *bi = go_binary_build_info(s->bin);
	struct trace_sink_stats ss;
	char path[512], stamp[32];
	time_t start = (time_t)s->started_realtime;
	struct tm tm;
	FILE *f;
	int fd, k, rc = 0;

	errno = 0;
	gmtime_r(&start, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(path, sizeof(path), "%s-%d-%s.summary.json",
		 s->target.comm, (int)s->target.pid, stamp);
	/* Through the sink's directory: the same checked directory as the traces. */
	fd = openat(trace_sink_dirfd(s->sink), path,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	trace_sink_get_stats(s->sink, &ss);

	fprintf(f, "{\n  \"pid\": %d,\n  \"comm\": ", (int)s->target.pid);
	json_str(f, s->target.comm);
	fprintf(f, ",\n  \"go_version\": ");
	json_str(f, bi->version);
	fprintf(f, ",\n  \"started\": ");
	json_str(f, stamp);
	fprintf(f, ",\n  \"ended_because\": ");
	json_str(f, reason);

	fprintf(f, ",\n  \"records_received\": {");
	for (k = 1; k < TAF_REC_KIND_MAX; k++)
		fprintf(f, "%s\"%s\": %" PRIu64, k > 1 ? ", " : "",
			taf_rec_names[k].key, s->counts.records[k]);
	fprintf(f, "},\n  \"records_dropped_ring_buffer_full\": {");
	for (k = 1; k < TAF_REC_KIND_MAX; k++)
		fprintf(f, "%s\"%s\": %" PRIu64, k > 1 ? ", " : "",
			taf_rec_names[k].key, bpf_stats[TAF_STAT_DROPPED_BASE + k]);
	/* How alloc records got their types (bpf/alloc_site.bpf.h alloc_site):
	 * climbing the frames (Go 1.27's table dispatch), of which missed;
	 * from an ALLOC_ARGS capture (a second trap); none at all. */
	fprintf(f, "},\n  \"alloc_types\": {\"by_climb\": %" PRIu64
		", \"climb_missed\": %" PRIu64 ", \"captured\": %" PRIu64
		", \"without_size_or_type\": %" PRIu64 "}",
		bpf_stats[TAF_STAT_TYPE_CHAIN], bpf_stats[TAF_STAT_TYPE_CHAIN_MISS],
		bpf_stats[TAF_STAT_TYPE_CAPTURED], bpf_stats[TAF_STAT_ALLOC_NO_TYPE]);
	fprintf(f, ",\n  \"records_before_snapshot\": %" PRIu64,
		s->counts.before_start);

	fprintf(f, ",\n  \"events_written\": {");
	for (k = 0; k < TW_EV_COUNT; k++)
		fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "",
			tw_event_name(TW_EV_FIRST + k), s->counts.written[k]);
	fprintf(f, "},\n  \"events_written_total\": %" PRIu64,
		s->counts.events);
	fprintf(f, ",\n  \"events_lost_on_write\": %" PRIu64,
		s->counts.lost_on_write);
	fprintf(f, ",\n  \"write_error\": ");
	json_str(f, s->sink_failed ? strerror(-s->sink_error) : "");
	fprintf(f, ",\n  \"sample_rate\": %u", s->sample);
	/* --memprofilerate: what the runtime's sampler ran at, and what the
	 * target had before (restored at detach). */
	fprintf(f, ",\n  \"memprofilerate\": %" PRIu64, s->memprofilerate);
	if (s->memprofilerate) {
		fprintf(f, ",\n  \"memprofilerate_before\": %" PRId64,
			rate_before);
		fprintf(f, ",\n  \"samples_untyped\": %" PRIu64,
			s->counts.samples_untyped);
		fprintf(f, ",\n  \"sample_frees_of_earlier_samples\": %" PRIu64,
			s->counts.sample_frees_unknown);
		write_reads(f, s);
	}
	fprintf(f, ",\n  \"allocations_seen\": %" PRIu64,
		s->counts.records[TAF_REC_HEAP_ALLOC]);
	fprintf(f, ",\n  \"allocations_sampled_out\": %" PRIu64,
		s->counts.sampled_out);
	fprintf(f, ",\n  \"allocations_written\": %" PRIu64,
		s->counts.written[TW_EV_HEAP_OBJECT_ALLOC - TW_EV_FIRST]);
	fprintf(f, ",\n  \"tiny_allocations_merged\": %" PRIu64,
		s->counts.tiny_merged);
	fprintf(f, ",\n  \"tiny_as_runtime\": %s",
		s->tiny_as_runtime ? "true" : "false");
	fprintf(f, ",\n  \"tiny_allocations_unreported\": %" PRIu64,
		s->counts.tiny_unreported);
	fprintf(f, ",\n  \"shadow_heap_inconsistent\": %" PRIu64,
		session_inconsistent(s));
	fprintf(f, ",\n  \"shadow_heap_operations\": %" PRIu64,
		session_heap_ops(s));
	shadow_heap_errors_json(f, s);
	/* Sweeps whose bitmaps or finalizer list could not be read whole,
	 * and bitmaps the daemon read where BPF could not. */
	fprintf(f, ",\n  \"sweeps_read_in_part\": %" PRIu64,
		s->counts.sweep_read_errors);
	fprintf(f, ",\n  \"sweep_bitmaps_read_late\": %" PRIu64,
		s->counts.sweep_bitmaps_read_late);
	fprintf(f, ",\n  \"type_errors\": %" PRIu64, s->counts.type_errors);
	/* --stacks: sent_whole are records that carried their PCs (no
	 * room in the stack map), counted within with_stack. */
	if (s->stacks)
		fprintf(f, ",\n  \"stacks\": {\"with_stack\": %" PRIu64
			", \"sent_whole\": %" PRIu64 ", \"without_stack\": %"
			PRIu64 ", \"lost\": %" PRIu64 "}",
			s->counts.stacks_with, s->counts.stacks_inline,
			s->counts.stacks_without, s->counts.stacks_lost);
	fprintf(f, ",\n  \"generations\": %" PRIu64, s->counts.generations);
	fprintf(f, ",\n  \"files_written\": %" PRIu64, ss.files_written);
	fprintf(f, ",\n  \"bytes_written\": %" PRIu64, ss.bytes_written);
	fprintf(f, ",\n  \"last_file\": ");
	json_str(f, ss.current_path);
	fprintf(f, "\n}\n");

	if (fflush(f) != 0 || ferror(f))
		rc = errno ? -errno : -EIO;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	if (rc)
		unlinkat(trace_sink_dirfd(s->sink), path, 0);
	return rc;
}
