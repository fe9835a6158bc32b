// SPDX-License-Identifier: BSD-3-Clause
/*
 * dispatch.c - the ring buffer's record callback: finds the session of a
 * record's PID and hands the record on.
 *
 * Exec records close what was traced under that PID and, with --all, may
 * open a new session; a record from a PID with no session opens one with
 * --all or for the -- CMD child, or is counted as an orphan.  The
 * callback also makes ring_buffer__poll yield every 50 ms.
 */
#include "trace/tracer_impl.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "attach/target.h"

/* ---- records ---------------------------------------------------------- */

/*
 * Called for every record: records come in runs from one process, so the
 * last hit is checked before the scan.
 */
static struct session *find_session(struct tracer *t, pid_t pid)
{
	size_t i;

	if (t->last_sess && t->last_pid == pid)
		return t->last_sess;
	for (i = 0; i < t->nprocs; i++)
		if (t->procs[i].pid == pid) {
			t->last_pid = pid;
			return t->last_sess = t->procs[i].s;
		}
	return NULL;
}

static void ignore_pid(struct tracer *t, pid_t pid)
{
	u64_map_put(&t->ignored, (uint64_t)pid, 1);
}

static bool selected(struct tracer *t, pid_t pid, const struct exec_info *ei)
{
	char comm[32], exe[4096];
	struct bin_entry *be;

	target_names(pid, comm, sizeof(comm), exe, sizeof(exe));
	/* Gone already: what the exec record said. */
	if (ei && !comm[0])
		snprintf(comm, sizeof(comm), "%.15s", ei->comm);
	if (ei && !exe[0] && (be = tracer_bin_find(t, ei->dev, ei->ino)) != NULL)
		snprintf(exe, sizeof(exe), "%s", be->path);
	return cli_process_selected(t->opt, pid, comm, exe);
}

int tracer_freeze(struct tracer *t, pid_t pid, struct frozen *fz)
{
	return t->catch ? exec_catch_freeze(t->catch, pid, fz) :
			  freeze_process(pid, fz);
}

void tracer_thaw(struct tracer *t, struct frozen *fz)
{
	if (t->catch)
		exec_catch_thaw(t->catch, fz);
	else
		thaw_process(fz);
}

/*
 * The executables whose fate is known now (probed, refused, not Go): the
 * exec catcher stops none of their later processes.
 */
static void settle_bins(struct tracer *t)
{
	size_t i;

	for (i = 0; t->catch && i < t->nbins; i++) {
		struct bin_entry *be = &t->bins[i];

		if (be->settled_told || (be->go && !be->attached))
			continue;
		exec_catch_settled(t->catch, be->dev, be->ino);
		be->settled_told = true;
	}
}

/*
 * --all: a process we have not seen is found at start, exec'd (EI; HOW:
 * its exec record in order, or its hint ahead of the ring), or sends its
 * first record (DISCOVER_RECORD: it runs an executable we probe).
 */
void tracer_discover(struct tracer *t, pid_t pid, const struct exec_info *ei,
	      enum discover_how how)
{
	struct session *s;
	char err[512];
	int rc;

	if (pid == getpid() || u64_map_get(&t->ignored, (uint64_t)pid, NULL))
		return;
	if (!selected(t, pid, ei)) {
		ignore_pid(t, pid);
		return;
	}
	if (t->nprocs >= t->opt->max_processes) {
		tracer_say("not tracing PID %d: --max-processes %u reached", (int)pid,
		    t->opt->max_processes);
		ignore_pid(t, pid);
		return;
	}
	/*
	 * DISCOVER_HINT: the process was stopped at its exec (t->held, by
	 * the exec catcher): a new executable takes a while to plan and
	 * attach (0.1-0.5 s, far more for big binaries), and it does
	 * nothing unprobed meanwhile.  take_snapshot reads its heap and
	 * lets it go.
	 */
	rc = tracer_open_session(t, pid, -1, ei == NULL, ei, err, sizeof(err));
	settle_bins(t);
	if (t->held) {
		tracer_thaw(t, t->held);  /* not opened: not snapshotted either */
		t->held = NULL;
	}
	if (rc != 0) {
		/*
		 * A process that sent a record runs a probed Go executable,
		 * a refused one runs Go: not tracing them must be said.
		 * Most other processes are simply not Go (or gone, short
		 * lived): that is only worth saying with -v -v.
		 */
		if (how == DISCOVER_RECORD || rc == TRACER_REFUSED_GO ||
		    t->opt->verbose >= 2)
			tracer_say("not tracing PID %d: %s", (int)pid, err);
		ignore_pid(t, pid);
		return;
	}
	s = t->procs[t->nprocs - 1].s;
	tracer_say("tracing PID %d (%s, %s)", (int)pid, session_target(s)->comm,
	    go_binary_build_info(session_binary(s))->version);
}

/*
 * --all: a process the exec catcher stopped at its exec (or tried to).
 * Only a new executable is caught: one we know is attached (its records
 * queue behind the exec record, which opens the session in order) or
 * refused is left alone.  A PID with a session is left to the record in
 * order too: that session's last records are still queued.
 */
static void take_one(struct tracer *t, struct exec_caught *k)
{
	if (t->closing || tracer_bin_find(t, k->ei.dev, k->ei.ino) ||
	    find_session(t, k->pid)) {
		if (k->stopped)
			tracer_thaw(t, &k->fz);
		return;
	}
	/* The exec record, when its turn comes, is this one: skip it. */
	u64_map_put(&t->early, (uint64_t)k->pid, k->ei.ts);
	u64_map_del(&t->ignored, (uint64_t)k->pid);
	if (!k->stopped && k->stop_err == -ESRCH) {
		/* A Go program of a new executable, selected, and gone
		 * within a fraction of a millisecond: said, not silent. */
		tracer_say("PID %d (%s) exited %.1f ms after its exec, before it could be stopped for its executable's probes: not traced",
		    (int)k->pid, k->ei.comm,
		    (k->caught_ns - k->ei.ts) / 1e6);
		ignore_pid(t, k->pid);
		return;
	}
	t->held = k->stopped ? &k->fz : NULL;
	tracer_discover(t, k->pid, &k->ei, DISCOVER_HINT);
	if (t->held) {
		/* Not opened (tracer_discover's early returns). */
		tracer_thaw(t, t->held);
		t->held = NULL;
	}
}

void tracer_take_caught(struct tracer *t)
{
	struct exec_caught k;

	while (t->catch && exec_catch_next(t->catch, &k))
		take_one(t, &k);
}

/* True (and forgotten) when the exec record was handled from its hint. */
static bool handled_early(struct tracer *t, const struct taf_rec_hdr *h)
{
	uint64_t ts;

	if (!u64_map_get(&t->early, h->pid, &ts) || ts != h->ts)
		return false;
	u64_map_del(&t->early, h->pid);
	return true;
}

/* Processes every record queued now. */
void tracer_drain(struct tracer *t)
{
	t->draining = true;
	t->yield_poll = false;
	ring_buffer__consume(t->rb);
	t->draining = false;
}

int tracer_on_record(void *ctx, void *data, size_t len)
{
	struct tracer *t = ctx;
	const struct taf_rec_hdr *h;
	struct record_view v;
	struct session *s;
	char err[512];

	/* Decoded once: every stage after this one reads the view. */
	if (record_view_decode(data, len, &v)) {
		t->malformed_records++;
		return 0;
	}
	h = v.hdr;
	/*
	 * ring_buffer__poll drains for as long as producers keep up: hand
	 * control back every 50 ms so generations are cut, exits noticed
	 * and signals obeyed (the record itself is consumed already).
	 */
	if (!t->draining && ++t->since_clock_check >= 256) {
		t->since_clock_check = 0;
		if (tracer_now_ns() - t->poll_started > 50000000ull)
			t->yield_poll = true;
		/* A process caught at its exec waits stopped for none of
		 * the backlog (exec_catch.h); nothing queued costs no
		 * system call here. */
		if (t->catch && exec_catch_pending(t->catch))
			tracer_take_caught(t);
	}
	if (h->kind == TAF_REC_EXEC && t->catch && v.exec &&
	    !u64_map_get(&t->early, h->pid, NULL)) {
		struct exec_info ei;

		/* Its hint was written first: the catcher's verdict on it
		 * comes before the record is handled in order. */
		exec_info_from_rec(v.exec, &ei);
		if (!tracer_bin_find(t, ei.dev, ei.ino)) {
			exec_catch_sync(t->catch);
			tracer_take_caught(t);
		}
	}
	if (h->kind == TAF_REC_EXEC && handled_early(t, h))
		return 0;
	s = find_session(t, (pid_t)h->pid);
	if (h->kind == TAF_REC_EXEC) {
		/* The exec the -- CMD child stopped at (--memprofilerate)
		 * opened its session already: not a new image. */
		if (s && t->child_opened_at_exec && (pid_t)h->pid == t->child) {
			t->child_opened_at_exec = false;
			return 0;
		}
		/* A new image: whatever we traced under this PID is over. */
		if (s) {
			size_t i;

			for (i = 0; i < t->nprocs; i++)
				if (t->procs[i].s == s)
					tracer_close_session(t, i, "exec");
			if (!t->opt->all) {
				tracer_say("PID %d exec'd another program: tracing stops",
				    (int)h->pid);
				t->stop = true;
			}
		}
		u64_map_del(&t->ignored, h->pid);
		if (v.exec) {
			struct exec_info ei;

			exec_info_from_rec(v.exec, &ei);
			if (t->opt->all)
				tracer_discover(t, (pid_t)h->pid, &ei, DISCOVER_EXEC);
			else if (t->child && (pid_t)h->pid == t->child)
				t->child_exec = ei;
		}
		return 0;
	}
	if (!s) {
		if (t->opt->all) {
			tracer_discover(t, (pid_t)h->pid, NULL, DISCOVER_RECORD);
		} else if (t->child && (pid_t)h->pid == t->child &&
			   !u64_map_get(&t->ignored, h->pid, NULL)) {
			/* -- CMD: the program's first record; its heap was empty. */
			if (tracer_open_session(t, t->child, t->child, false,
					 t->child_exec.ino ? &t->child_exec : NULL,
					 err, sizeof(err)) != 0) {
				tracer_say("%s", err);
				ignore_pid(t, t->child);
			}
		}
		s = find_session(t, (pid_t)h->pid);
		if (!s) {
			t->orphan_records++;
			return 0;
		}
	}
	session_record(s, &v);
	/* A mark's end may have found the heap too big to read in a pause. */
	if (h->kind == TAF_REC_GC_CYCLE && t->opt->memprofilerate) {
		tracer_mark_probe(t, s);
		tracer_watch_rate(t, s);
	}
	return t->yield_poll ? -ECANCELED : 0;
}
