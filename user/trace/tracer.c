// SPDX-License-Identifier: BSD-3-Clause
/*
 * tracer.c - the daemon: the event loop and tracer_run.
 *
 * Flow: load BPF; depending on the mode, open the target(s), attach each
 * executable once, read each running process's heap (snapshot), then poll
 * the ring buffer, cut generations on the period, finish sessions whose
 * process exited, until stopped; detach, drain, finalize, report.
 *
 * The rest of the tracer: exe_sessions.c (executables, opening and closing
 * sessions), dispatch.c (records to sessions), run_modes.c (-p, --all,
 * -- CMD), progress.c (counts on stderr), tracer_say.c (a line on
 * stderr); tracer_impl.h is shared by them.
 */
#include "trace/tracer_impl.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach/kernel_features.h"
#include "attach/target.h"

/*
 * Signals only set flags; the loop acts on them between polls, so a
 * signal never interrupts a write and never ends the tracer with a file
 * unfinished (README "Signals"):
 *   SIGINT, SIGTERM, SIGHUP  stop: detach, write the last generation,
 *                            close every file, exit 0 (SIGHUP too: a
 *                            closed terminal or ssh session must not
 *                            leave cut files; with -- CMD passed on first)
 *   SIGUSR1                  every session ends its file now; the next
 *                            event starts a new one
 *   SIGUSR2                  counts so far on stderr, per process
 *   SIGPIPE                  ignored (stderr may be a closed pipe)
 */
static volatile sig_atomic_t stop_signal, cut_request, status_request;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		cut_request = 1;
	else if (sig == SIGUSR2)
		status_request = 1;
	else
		stop_signal = sig;
}

static void catch_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 };
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a blocking poll returns at once with EINTR. */
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* ---- the loop --------------------------------------------------------- */

/*
 * Longest wait for records: signals end it early (no SA_RESTART), exits
 * and progress lines are looked at after it.
 */
#define POLL_MS 100

static uint64_t records_of(const struct session *s)
{
	const struct session_counts *c = session_counts(s);
	uint64_t n = 0;
	int k;

	for (k = 0; k < TAF_REC_KIND_MAX; k++)
		n += c->records[k];
	return n;
}

static bool session_over(const struct tracer *t, const struct traced *p)
{
	return !target_alive(session_target(p->s)) ||
	       (t->child_done && p->pid == t->child);
}

/* Finishes sessions whose process is gone; reaps the -- CMD child. */
static void check_exits(struct tracer *t)
{
	bool any = false, waiting = false;
	size_t i;

	if (t->child && !t->child_done) {
		int status;

		if (waitpid(t->child, &status, WNOHANG) == t->child) {
			t->child_done = true;
			t->child_status = WIFEXITED(status) ? WEXITSTATUS(status) :
					  WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
		}
	}
	for (i = 0; i < t->nprocs; i++) {
		struct traced *p = &t->procs[i];

		if (!p->exited && session_over(t, p)) {
			/* Every record it made was reserved below this. */
			p->exited = true;
			p->exit_ring_pos = ring_pos_producer(&t->rpos);
		}
		any |= p->exited;
	}
	if (any || t->child_done) {
		/* What the processes sent before they went belongs to them. */
		tracer_drain(t);
	}
	i = 0;
	while (i < t->nprocs) {
		struct traced *p = &t->procs[i];

		if (!p->exited) {
			i++;
			continue;
		}
		/*
		 * The drain stops at the first record still being written, by
		 * a probe of another process whose CPU was taken away between
		 * reserve and submit (an interrupt; under load, the host
		 * descheduling the vCPU): closing now would drop whatever this
		 * process queued behind that record (ring_pos.h).
		 */
		if (!ring_pos_passed(&t->rpos, p->exit_ring_pos)) {
			waiting = true;
			if (!p->close_deferred) {
				p->close_deferred = true;
				p->records_when_deferred = records_of(p->s);
			}
			i++;
			continue;
		}
		tracer_say("PID %d exited", (int)p->pid);
		if (p->close_deferred && t->opt->verbose)
			tracer_say("PID %d: %llu records came after its exit was seen, queued behind another probe's unfinished record",
			    (int)p->pid,
			    (unsigned long long)(records_of(p->s) -
						 p->records_when_deferred));
		tracer_close_session(t, i, "exit");
		if (!t->opt->all)
			t->stop = true;
	}
	if (t->child_done && !waiting)
		t->stop = true;
}

/*
 * Cuts a generation for every session (NEW_FILE, on SIGUSR1: and ends its
 * file); says when a sink gives up.
 */
static void cut_generations(struct tracer *t, bool new_file)
{
	size_t i;

	for (i = 0; i < t->nprocs; i++) {
		struct traced *p;
		int err;

		/* Encoding a busy process's generation takes ms: what the
		 * exec catcher holds stopped first. */
		tracer_take_caught(t);
		p = &t->procs[i];
		if (new_file)
			session_rotate(p->s);
		else
			session_cut(p->s);
		/* Failed here, or in a cut by size (session_record). */
		err = session_write_error(p->s);
		if (err && !p->sink_failure_said) {
			p->sink_failure_said = true;
			/*
			 * Nothing more can be kept: say so now, and
			 * stop making the target pay for probes.
			 */
			tracer_say("PID %d: cannot write trace files: %s; %s",
			    (int)p->pid, strerror(-err),
			    t->opt->all ? "its later events are counted as lost" :
			    "stopping (files written so far are valid)");
			if (!t->opt->all)
				t->stop = true;
		}
	}
}

/*
 * The probes submit quietly (bpf/records.bpf.h submit_flags): a wakeup
 * comes only once the ring is an eighth full, so the poll mostly ends by
 * its timeout and the ring is read then, whatever woke us.  The timeout
 * ends at the next cut: the records of a generation are read before it
 * is cut, and a cut is not late by a whole poll.
 */
static int read_ring(struct tracer *t, uint64_t next_cut)
{
	uint64_t now = tracer_now_ns();
	int timeout = POLL_MS, rc;

	if (next_cut > now && (next_cut - now) / 1000000 < POLL_MS)
		timeout = (int)((next_cut - now) / 1000000);
	else if (next_cut <= now)
		timeout = 0;
	t->poll_started = now;
	t->yield_poll = false;
	if (t->catch) {
		/* The records, or a process the exec catcher stopped. */
		struct epoll_event ev[2];

		if (epoll_wait(t->wait_fd, ev, 2, timeout) < 0)
			return -errno;
		tracer_take_caught(t);
		return ring_buffer__consume(t->rb);
	}
	rc = ring_buffer__poll(t->rb, timeout);
	if (rc >= 0 && !t->yield_poll)
		rc = ring_buffer__consume(t->rb);
	return rc;
}

static void run_loop(struct tracer *t)
{
	uint64_t start = tracer_now_ns(), next_cut, next_progress;
	int forwarded = 0;

	next_cut = start + t->opt->gen_period_ns;
	next_progress = start + 1000000000ull;
	while (!t->stop) {
		uint64_t now;
		int rc;

		rc = read_ring(t, next_cut);
		if (rc < 0 && rc != -EINTR && rc != -ECANCELED) {
			tracer_say("reading the ring buffer failed: %s", strerror(-rc));
			break;
		}
		if (stop_signal) {
			/* -- CMD: the program decides when it is done. */
			if (t->child && !t->child_done && forwarded < 1) {
				kill(t->child, stop_signal);
				stop_signal = 0;
				forwarded++;
			} else {
				break;
			}
		}
		now = tracer_now_ns();
		if (cut_request || now >= next_cut) {
			bool new_file = cut_request;

			cut_request = 0;
			cut_generations(t, new_file);
			if (new_file)
				tracer_say("SIGUSR1: current files ended (traced processes: %zu); the next events start new ones",
				    t->nprocs);
			next_cut = now + t->opt->gen_period_ns;
		}
		if (status_request) {
			status_request = 0;
			tracer_print_status(t);
		}
		if (t->opt->verbose && now >= next_progress) {
			tracer_print_progress(t, "", true);
			next_progress = now + 1000000000ull;
		}
		if (t->opt->duration_ns && now - start >= t->opt->duration_ns)
			break;
		check_exits(t);
	}
}

/*
 * --all: the exec hints (a copy of each exec record, bpf/exec.bpf.h) are
 * read by a thread of their own (exec_catch.h); the loop waits on the
 * records and on that thread's wake-up together.
 */
static void stop_catcher(struct tracer *t)
{
	exec_catch_stop(t->catch);
	t->catch = NULL;
	if (t->wait_fd >= 0)
		close(t->wait_fd);
	t->wait_fd = -1;
}

static int start_catcher(struct tracer *t)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int wake, rc;

	rc = exec_catch_start(&t->catch, probes_exec_hints_fd(&t->probes),
			      t->opt, &wake);
	if (rc)
		return rc;
	t->wait_fd = epoll_create1(EPOLL_CLOEXEC);
	if (t->wait_fd < 0)
		goto fail;
	ev.data.fd = ring_buffer__epoll_fd(t->rb);
	if (epoll_ctl(t->wait_fd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		goto fail;
	ev.data.fd = wake;
	if (epoll_ctl(t->wait_fd, EPOLL_CTL_ADD, wake, &ev))
		goto fail;
	return 0;
fail:
	rc = -errno;
	stop_catcher(t);
	return rc;
}

int tracer_run(const struct taf_options *opt)
{
	struct tracer t = { 0 };
	char err[512];
	bool failed = false;
	int rc, code = 0;

	t.opt = opt;
	u64_map_init(&t.ignored);
	u64_map_init(&t.early);
	catch_signals();

	if (opt->pid && kill(opt->pid, 0) != 0 && errno == ESRCH) {
		tracer_say("no such process: PID %d", (int)opt->pid);
		return 1;
	}
	if (geteuid() != 0) {
		tracer_say("must run as root (needs CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE to attach uprobes and read the target)");
		return 1;
	}
	/* -- CMD reads only its own child: no CAP_SYS_PTRACE needed. */
	if (kf_check(opt->pid || opt->all, err, sizeof(err))) {
		tracer_say("%s", err);
		return 1;
	}
	/* Exec is watched in every mode: -p stops when its target exec's. */
	rc = probes_load(&t.probes, (uint64_t)opt->ringbuf_mb << 20, true,
			 opt->all, opt->stacks ? TAF_KNOWN_STACKS : 0,
			 err, sizeof(err));
	if (rc) {
		tracer_say("%s", err);
		return 1;
	}
	probes_enable(&t.probes, true);
	t.rb = ring_buffer__new(probes_ringbuf_fd(&t.probes), tracer_on_record, &t, NULL);
	if (!t.rb) {
		tracer_say("cannot open the BPF ring buffer: %s", strerror(errno));
		probes_destroy(&t.probes);
		return 1;
	}
	t.wait_fd = -1;
	if (opt->all && (rc = start_catcher(&t)) != 0)
		tracer_say("warning: cannot start the thread that stops new programs at their exec (%s): a program with a new executable runs unprobed until its exec record's turn",
		    strerror(-rc));
	rc = ring_pos_open(&t.rpos, probes_ringbuf_fd(&t.probes));
	if (rc)
		tracer_say("warning: cannot map the ring buffer's positions (%s): a process's last records may be lost when it exits under load",
		    strerror(-rc));

	if (opt->pid)
		rc = tracer_start_pid(&t);
	else if (opt->all)
		rc = tracer_start_all(&t);
	else
		rc = tracer_start_cmd(&t);
	if (rc) {
		failed = true;
		goto out;
	}
	run_loop(&t);

out:
	t.closing = true;
	/* Resumes what it still holds; later stops are the main thread's. */
	stop_catcher(&t);
	/*
	 * Stop recording, then detach (slow: one RCU grace period per uprobe
	 * link), then drain what was queued before the stop.  Records stamped
	 * after the stop would come from a half-detached set of probes.
	 */
	probes_enable(&t.probes, false);
	{
		uint64_t stop = tracer_now_ns();
		size_t i;

		for (i = 0; i < t.nprocs; i++)
			session_stop(t.procs[i].s, stop);
	}
	tracer_drain(&t);
	probes_detach(&t.probes);
	tracer_drain(&t);
	while (t.nprocs) {
		if (session_write_error(t.procs[t.nprocs - 1].s))
			failed = true;
		tracer_close_session(&t, t.nprocs - 1,
			      stop_signal ? "signal" : "stopped");
	}
	if (!failed || t.processes_seen) {
		tracer_print_progress(&t, "done: ", false);
		if (t.done.tiny_merged && t.processes_seen > 1)
			tracer_say("%llu tiny allocations shared a live 8-byte ID with an earlier one in their block and are not separate events",
			    (unsigned long long)t.done.tiny_merged);
		tracer_print_drops(&t);
	}
	ring_buffer__free(t.rb);
	ring_pos_close(&t.rpos);
	probes_destroy(&t.probes);
	free(t.procs);
	{
		size_t i;

		for (i = 0; i < t.nbins; i++) {
			go_binary_close(t.bins[i].bin);
			u64_map_free(&t.bins[i].sample_types);
		}
	}
	free(t.bins);
	u64_map_free(&t.ignored);
	u64_map_free(&t.early);

	if (t.child) {
		if (!t.child_done) {
			int status;

			/* Stopped before the program ended: let it run on. */
			if (waitpid(t.child, &status, WNOHANG) == t.child)
				t.child_status = WIFEXITED(status) ?
					WEXITSTATUS(status) : 128 + WTERMSIG(status);
			else
				return failed ? 1 : 0;
		}
		return t.child_status;
	}
	if (failed || t.write_failed)
		code = 1;
	return code;
}
