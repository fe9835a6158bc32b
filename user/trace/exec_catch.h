/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * exec_catch.h - --all: a thread of its own that stops, within a fraction
 * of a millisecond of its exec, every selected Go process whose
 * executable the tracer has not settled yet, and owns every ptrace stop
 * made while it runs.
 *
 * Why a thread: a process of a new executable runs unprobed until the
 * tracer has planned and attached that executable, so it is stopped at
 * its exec hint (bpf/exec.bpf.h) and let go once its probes are live.
 * The main loop read the hints between records, but it can be busy for
 * 10-160 ms (closing a busy process's files, cutting generations): a
 * program that did its work and exited within that (nodeburst: 50 000
 * allocations in ~10 ms) was never stopped, never traced and never
 * mentioned (1 run in 4 of test_all_many_versions, 2026-12-07).  This
 * thread does nothing but wait for hints, so it reacts in ~0.1 ms.
 *
 * Why it owns the stops: ptrace requests on a tracee must come from the
 * thread that attached it.  The main thread's stops and resumes
 * (freeze.h) go through exec_catch_freeze/_thaw while the thread runs;
 * a process the thread already holds is handed over, not stopped twice.
 *
 * Lifecycle: exec_catch_start, then from the main thread only:
 * exec_catch_next (what was caught), exec_catch_sync, _freeze, _thaw,
 * _settled; exec_catch_stop resumes what the main thread never took.
 */
#ifndef EXEC_CATCH_H
#define EXEC_CATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "attach/freeze.h"
#include "traceaf_events.h"

struct taf_options;
struct exec_catch;

/*
 * What an exec record tells about a process: enough to trace it from its
 * records even when it has exited before we get to open it.
 */
struct exec_info {
	uint64_t dev, ino;    /* st_dev encoding */
	uint64_t ts;          /* when it exec'd (the record's time) */
	char comm[16];
};

/* The record's kernel dev_t (major << 20 | minor) made an st_dev. */
void exec_info_from_rec(const struct taf_rec_exec *r, struct exec_info *ei);

/* A process caught at its exec: a selected Go program, new executable. */
struct exec_caught {
	pid_t pid;
	struct exec_info ei;
	struct frozen fz;     /* when stopped: the main thread's to resume
				 (exec_catch_thaw) */
	bool stopped;
	int stop_err;         /* -errno of the stop: -ESRCH, it had exited */
	uint64_t caught_ns;   /* CLOCK_MONOTONIC */
};

/*
 * Starts the thread on the hint ring HINTS_FD (a BPF ringbuf map fd).
 * *WAKE_FD becomes readable when something was caught (the main loop
 * polls it beside the records).  0 or -errno; on failure nothing runs.
 */
int exec_catch_start(struct exec_catch **out, int hints_fd,
		     const struct taf_options *opt, int *wake_fd);

/* Whether something is queued, without a lock or a system call: for the
 * record loop, which asks every 256 records. */
bool exec_catch_pending(struct exec_catch *c);

/* The next caught process, oldest first: true and *OUT, or false. */
bool exec_catch_next(struct exec_catch *c, struct exec_caught *out);

/*
 * Waits until the thread has handled every hint queued now: an exec
 * record read in ring order has its hint's verdict by then (the hint is
 * written first).
 */
void exec_catch_sync(struct exec_catch *c);

/* freeze_process/thaw_process on the thread; a process it holds and the
 * main thread has not taken is handed over as it is. */
int exec_catch_freeze(struct exec_catch *c, pid_t pid, struct frozen *fz);
void exec_catch_thaw(struct exec_catch *c, struct frozen *fz);

/*
 * The main thread is done with this executable (attached, refused, or
 * not Go): its later processes are not stopped.
 */
void exec_catch_settled(struct exec_catch *c, uint64_t dev, uint64_t ino);

/* Stops the thread, resumes what it still holds, frees C (NULL: no-op). */
void exec_catch_stop(struct exec_catch *c);

#endif /* EXEC_CATCH_H */
