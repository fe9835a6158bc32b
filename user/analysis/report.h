/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report.h - the analysis subcommands: `traceaf-bpf report` (terminal,
 * --json, --html) and `traceaf-bpf pprof`, and what they share: finding
 * the trace files of FILE|DIR, grouping them by process and replaying
 * each process's files as one timeline (heap_replay.h).
 */
#ifndef REPORT_H
#define REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct heap_replay;

/* One traced process: its files, in name (= time) order, replayed. */
struct report_proc {
	char *name;                 /* "leaky-1234", or the file's name */
	char **files;
	size_t nfiles;
	struct heap_replay *h;
};

/*
 * PATH is a trace file or a directory of them (COMM-PID-TIME-SEQ.trace,
 * see trace_sink.c; other *.trace files each stand alone).  Replays every
 * process; USE_STACKS reads the stack sidecars.  Returns 0 or a negative
 * errno after one line on stderr.
 */
int report_load(const char *path, bool use_stacks, struct report_proc **out,
		size_t *n);
void report_procs_free(struct report_proc *p, size_t n);

/*
 * The time in a trace file's name (COMM-PID-YYYYMMDDTHHMMSSZ-NNNNNN.trace,
 * UTC: when the tracer created the file), in seconds since the epoch.
 * Returns 0, or -ENOENT for a name not made that way.
 */
int report_name_time(const char *path, int64_t *unix_s);

/* argv[0] is the subcommand's name.  Return the exit status. */
int report_main(int argc, char **argv);
int pprof_main(int argc, char **argv);

void report_print_help(void);
void pprof_print_help(void);

#endif /* REPORT_H */
