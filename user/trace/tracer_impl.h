/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tracer_impl.h - PRIVATE to user/trace/tracer.c, exe_sessions.c,
 * dispatch.c, run_modes.c, progress.c and tracer_say.c: the tracer's
 * state and the functions these files call in one another.  Nothing else
 * includes it; the public entry point is in tracer.h.
 */
#ifndef TRACER_IMPL_H
#define TRACER_IMPL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <bpf/libbpf.h>

#include "tracer.h"
#include "util/clock_ns.h"
#include "inspect/go_binary.h"
#include "attach/freeze.h"
#include "attach/probe_plan.h"
#include "attach/probes.h"
#include "attach/profile_rate.h"
#include "attach/ring_pos.h"
#include "trace/exec_catch.h"
#include "trace/session.h"
#include "util/u64_map.h"

/* Oldest Go whose runtime we know; newer ones are tried with a warning. */
#define GO_MIN_MINOR 21
#define GO_MAX_KNOWN_MINOR 27

/* An executable the probes are attached to (or that was refused). */
struct bin_entry {
	uint64_t dev, ino;
	bool go;              /* a Go program we can trace */
	bool refused;         /* a Go program we cannot (why says why) */
	bool attached;
	bool settled_told;    /* exec_catch_settled was told of it */
	size_t probes;
	struct go_binary *bin;  /* kept open: sessions borrow it */
	char path[4096];        /* where it was found, for --include */
	char why[256];          /* refused: the reason, for its next processes */
	/* --memprofilerate: the constant type each allocation call site
	 * passes (return address -> type, link addresses; 0 = nil), to type
	 * the samples live at attach by their bucket's stack, and the kind
	 * of a profile special in this runtime. */
	struct u64_map sample_types;
	uint8_t prof_kind;
	/* --memprofilerate: its samples are read at each mark (no probe on
	 * mProf_Malloc or freeSpecial); false when the binary has no
	 * gcMarkTinyAllocs to probe, or with --memprofilerate-exact. */
	bool sample_reads;
	/* ... and the BPF programs read them in the GC pauses, at each
	 * mark's end: the probe at each mark's start (gcMarkTinyAllocs) is
	 * held back, attached for a process only when the daemon reads its
	 * samples instead (tracer_mark_probe); LAYOUT is its cookie's. */
	bool mark_held;
	struct probe_site mark_site;
	int layout;
};

/*
 * tracer_open_session's return for a process that runs a Go program the
 * tracer refuses (version, plan, attach): always said, unlike a program
 * that is not Go at all.
 */
#define TRACER_REFUSED_GO (-ENOTSUP)


/* How tracer_discover found a process. */
enum discover_how {
	DISCOVER_SCAN,        /* in /proc at start */
	DISCOVER_EXEC,        /* its exec record, in ring order */
	DISCOVER_RECORD,      /* its first record: it runs a probed executable */
	DISCOVER_HINT,        /* caught at its exec (exec_catch.h): held
				 stopped until its probes are live */
};

/* A traced process: its session, and what the tracer keeps about it. */
struct traced {
	struct session *s;
	pid_t pid;                    /* its target's: the records' key */
	struct profile_rate rate_ctl; /* --memprofilerate: the target's rate
					 while traced */
	bool sink_failure_said;       /* a failed write was reported */
	/* --memprofilerate: the held-back probe at each mark's start,
	 * attached for this process while it needs it (tracer_mark_probe);
	 * times detached; an attach failed. */
	struct probe_link mark_link;
	unsigned mark_detached;
	bool mark_failed;
	bool rate_change_said;        /* the program set its own rate */
	/*
	 * The process is gone; its files are closed once the ring buffer's
	 * consumer has passed exit_ring_pos (ring_pos.h says why).
	 */
	bool exited;
	uint64_t exit_ring_pos;
	bool close_deferred;          /* records were still queued */
	uint64_t records_when_deferred; /* records seen at that moment */
};

struct tracer {
	bool reads_realtime;        /* SCHED_FIFO asked for (exe_sessions.c) */
	const struct taf_options *opt;
	struct probes probes;
	struct ring_buffer *rb;       /* the records */
	/* --all: the thread that stops new Go processes at their exec and
	 * owns the ptrace stops (NULL without it); the loop waits on
	 * wait_fd, an epoll set of rb's and the thread's wake-up. */
	struct exec_catch *catch;
	int wait_fd;
	/* PID -> exec time of an exec already handled from its hint. */
	struct u64_map early;
	struct frozen *held;          /* a process stopped since its exec */
	struct ring_pos rpos;         /* where producers and we are in rb */

	struct bin_entry *bins;
	size_t nbins, bins_cap;

	struct traced *procs;
	size_t nprocs, procs_cap;
	struct session *last_sess;    /* find_session's last hit, */
	pid_t last_pid;               /* and its PID */
	struct u64_map ignored;       /* PIDs not to look at again */

	pid_t child;                  /* -- CMD */
	struct exec_info child_exec;  /* its exec, once seen */
	bool child_opened_at_exec;    /* its session opened at the exec stop
					 (--memprofilerate): its exec record
					 is still to come */
	bool child_done;
	int child_status;

	uint64_t poll_started;        /* when the current poll began */
	bool yield_poll;              /* ask ring_buffer__poll to return */
	bool draining;                /* consume everything, no yielding */
	unsigned since_clock_check;
	struct session_counts done;   /* sums over finished sessions */
	uint64_t done_bytes, done_files;
	bool write_failed;            /* some session could not write */
	unsigned processes_seen;
	/* Records of a PID with no session: never traced, or closed. */
	uint64_t orphan_records;
	uint64_t malformed_records;   /* shorter than their kind: refused */
	bool stop;
	bool closing;                 /* past the loop: no new sessions */
};

/*
 * What every file of the tracer calls: kept out of tracer.c, whose loop
 * calls those files, so that they do not call one another in a circle.
 * CLOCK_MONOTONIC in ns, the records' clock (bpf_ktime_get_ns).
 */
static inline uint64_t tracer_now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* tracer_say.c: "traceaf-bpf: " FMT "\n" on stderr. */
void tracer_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* exe_sessions.c: executables and the session table */
struct bin_entry *tracer_bin_find(struct tracer *t, uint64_t dev, uint64_t ino);
struct bin_entry *tracer_bin_add(struct tracer *t, uint64_t dev, uint64_t ino);
int tracer_attach_binary(struct tracer *t, struct bin_entry *be,
		  const struct go_binary *bin, const char *path,
		  pid_t pid, char *err, size_t errlen);
int tracer_open_session(struct tracer *t, pid_t pid, pid_t attach_pid,
		 bool snapshot, const struct exec_info *ei, char *err,
		 size_t errlen);
void tracer_close_session(struct tracer *t, size_t i, const char *reason);
void tracer_mark_probe(struct tracer *t, struct session *s);
void tracer_watch_rate(struct tracer *t, struct session *s);

/* dispatch.c: records to sessions */
void tracer_discover(struct tracer *t, pid_t pid, const struct exec_info *ei,
	      enum discover_how how);
void tracer_drain(struct tracer *t);
int tracer_on_record(void *ctx, void *data, size_t len);
/* --all: what the exec catcher stopped, opened (or let go) now. */
void tracer_take_caught(struct tracer *t);
/* freeze_process and thaw_process, on the exec catcher's thread while it
 * runs (ptrace requests must come from the thread that attached). */
int tracer_freeze(struct tracer *t, pid_t pid, struct frozen *fz);
void tracer_thaw(struct tracer *t, struct frozen *fz);

/* run_modes.c: -p PID, --all, -- CMD */
int tracer_start_pid(struct tracer *t);
int tracer_start_all(struct tracer *t);
int tracer_start_cmd(struct tracer *t);

/* progress.c: counts and lines on stderr */
void tracer_add_counts(struct session_counts *a, const struct session_counts *b);
void tracer_report_session(const struct tracer *t, const struct session *s);
void tracer_print_progress(struct tracer *t, const char *prefix, bool rss);
void tracer_print_drops(struct tracer *t);
void tracer_print_status(struct tracer *t);

#endif /* TRACER_IMPL_H */
