// SPDX-License-Identifier: BSD-3-Clause
/*
 * exec_catch.c - the thread that stops new Go processes at their exec and
 * owns the ptrace stops while it runs (exec_catch.h says why).
 *
 * The thread waits on one epoll set: the hint ring's and a request
 * eventfd.  A hint is judged at once: an executable the main thread has
 * settled, or one without Go sections (cached by device and inode, so
 * bash or grep cost one look), is left alone; a selected process of a new
 * Go executable is stopped and queued, and the main loop woken.  The main
 * thread's requests (sync, stop, resume, quit) are one at a time: it
 * waits for each answer.
 */
#include "trace/exec_catch.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "attach/target.h"
#include "inspect/go_binary.h"
#include "trace/cli.h"
#include "trace/record_view.h"
#include "util/clock_ns.h"
#include "util/grow.h"

/* What a hint of an executable comes to, remembered by device and inode. */
enum verdict { V_UNKNOWN, V_GO, V_NOT_GO, V_SETTLED };

struct exe_verdict {
	uint64_t dev, ino;
	uint8_t v;
};

/* Executables remembered at most; past it each hint looks again. */
#define MAX_VERDICTS 65536

enum req_kind { REQ_NONE, REQ_SYNC, REQ_FREEZE, REQ_THAW, REQ_QUIT };

struct exec_catch {
	const struct taf_options *opt;
	struct ring_buffer *rb;        /* the hints: read on the thread only */
	int epfd, req_fd, wake_fd;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t answered;
	/* Under mu: */
	struct exec_caught *q;         /* caught, not taken yet, oldest first */
	size_t nq, qcap;
	struct exe_verdict *exes;
	size_t nexes, exes_cap;
	enum req_kind req;
	pid_t req_pid;
	struct frozen *req_fz;
	int req_rc;
	bool req_done;
};

void exec_info_from_rec(const struct taf_rec_exec *r, struct exec_info *ei)
{
	ei->dev = makedev((unsigned)(r->dev >> 20), (unsigned)(r->dev & 0xfffff));
	ei->ino = r->ino;
	ei->ts = r->hdr.ts;
	memcpy(ei->comm, r->comm, sizeof(ei->comm));
	ei->comm[sizeof(ei->comm) - 1] = '\0';
}

/* ---- verdicts (under mu) ---------------------------------------------- */

static struct exe_verdict *verdict_find(struct exec_catch *c, uint64_t dev,
					uint64_t ino)
{
	size_t i;

	for (i = 0; i < c->nexes; i++)
		if (c->exes[i].dev == dev && c->exes[i].ino == ino)
			return &c->exes[i];
	return NULL;
}

static enum verdict verdict_get(struct exec_catch *c, uint64_t dev,
				uint64_t ino)
{
	struct exe_verdict *e;
	enum verdict v;

	pthread_mutex_lock(&c->mu);
	e = verdict_find(c, dev, ino);
	v = e ? e->v : V_UNKNOWN;
	pthread_mutex_unlock(&c->mu);
	return v;
}

/* Records V; a settled executable stays settled. */
static void verdict_put(struct exec_catch *c, uint64_t dev, uint64_t ino,
			enum verdict v)
{
	struct exe_verdict *e;

	pthread_mutex_lock(&c->mu);
	e = verdict_find(c, dev, ino);
	if (e) {
		if (e->v != V_SETTLED)
			e->v = v;
	} else if (c->nexes < MAX_VERDICTS &&
		   GROW(c->exes, c->nexes, c->exes_cap, 64)) {
		c->exes[c->nexes++] = (struct exe_verdict){ dev, ino, v };
	}
	pthread_mutex_unlock(&c->mu);
}

/* ---- hints (on the thread) -------------------------------------------- */

/* Selected, and a Go program the main thread has not settled. */
static bool worth_stopping(struct exec_catch *c, pid_t pid,
			   const struct exec_info *ei)
{
	char path[64], comm[32], exe[4096];
	enum verdict v = verdict_get(c, ei->dev, ei->ino);
	int fd;

	if (v == V_SETTLED || v == V_NOT_GO)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (v == V_UNKNOWN) {
		/* Gone already, or exec'd again: left to the record in order. */
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return false;
		v = go_binary_looks_go(fd) > 0 ? V_GO : V_NOT_GO;
		close(fd);
		verdict_put(c, ei->dev, ei->ino, v);
		if (v != V_GO)
			return false;
	}
	target_names(pid, comm, sizeof(comm), exe, sizeof(exe));
	if (!comm[0])
		snprintf(comm, sizeof(comm), "%s", ei->comm);
	return cli_process_selected(c->opt, pid, comm, exe);
}

static void wake_main(struct exec_catch *c)
{
	uint64_t one = 1;

	if (write(c->wake_fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is full, the main loop is awake. */
	}
}

static int on_hint(void *ctx, void *data, size_t len)
{
	struct exec_catch *c = ctx;
	struct exec_caught k = { 0 };
	struct record_view v;
	bool queued = false;

	if (record_view_decode(data, len, &v) || v.hdr->kind != TAF_REC_EXEC ||
	    !v.exec)
		return 0;
	k.pid = (pid_t)v.hdr->pid;
	if (k.pid == getpid())
		return 0;
	exec_info_from_rec(v.exec, &k.ei);
	if (!worth_stopping(c, k.pid, &k.ei))
		return 0;
	k.stop_err = freeze_process(k.pid, &k.fz);
	k.stopped = k.stop_err == 0;
	k.caught_ns = clock_ns(CLOCK_MONOTONIC);
	pthread_mutex_lock(&c->mu);
	if (GROW(c->q, c->nq, c->qcap, 8)) {
		c->q[c->nq++] = k;
		queued = true;
	}
	pthread_mutex_unlock(&c->mu);
	if (!queued && k.stopped)
		thaw_process(&k.fz);    /* out of memory: as if not caught */
	if (queued)
		wake_main(c);
	return 0;
}

/* ---- requests (on the thread) ----------------------------------------- */

/* A stopped process of the queue, handed over to FZ and dropped from it. */
static bool take_held(struct exec_catch *c, pid_t pid, struct frozen *fz)
{
	bool found = false;
	size_t i;

	pthread_mutex_lock(&c->mu);
	for (i = 0; i < c->nq && !found; i++) {
		if (c->q[i].pid != pid || !c->q[i].stopped)
			continue;
		*fz = c->q[i].fz;
		memmove(&c->q[i], &c->q[i + 1], (c->nq - i - 1) * sizeof(c->q[0]));
		c->nq--;
		found = true;
	}
	pthread_mutex_unlock(&c->mu);
	return found;
}

/* Answers the pending request; false once asked to quit. */
static bool serve(struct exec_catch *c)
{
	enum req_kind kind;
	bool more = true;
	int rc = 0;
	size_t i;

	pthread_mutex_lock(&c->mu);
	kind = c->req_done ? REQ_NONE : c->req;
	pthread_mutex_unlock(&c->mu);
	switch (kind) {
	case REQ_NONE:
		return true;
	case REQ_SYNC:
		break;          /* the hints were read before */
	case REQ_FREEZE:
		if (!take_held(c, c->req_pid, c->req_fz))
			rc = freeze_process(c->req_pid, c->req_fz);
		break;
	case REQ_THAW:
		thaw_process(c->req_fz);
		break;
	case REQ_QUIT:
		pthread_mutex_lock(&c->mu);
		for (i = 0; i < c->nq; i++)
			if (c->q[i].stopped)
				thaw_process(&c->q[i].fz);
		c->nq = 0;
		pthread_mutex_unlock(&c->mu);
		more = false;
		break;
	}
	pthread_mutex_lock(&c->mu);
	c->req_rc = rc;
	c->req_done = true;
	pthread_cond_signal(&c->answered);
	pthread_mutex_unlock(&c->mu);
	return more;
}

static void *catch_main(void *arg)
{
	struct exec_catch *c = arg;
	struct sched_param sp = { .sched_priority = 1 };

	/*
	 * Ahead of the programs it stops, at the lowest real-time priority:
	 * on a host whose cores the traced programs keep busy it waited
	 * 5 ms for a core (2026-12-07); it runs ~0.1 ms per exec of a new
	 * Go executable and sleeps otherwise.  Best effort.
	 */
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);

	for (;;) {
		struct epoll_event ev[2];
		uint64_t n;

		if (epoll_wait(c->epfd, ev, 2, -1) < 0 && errno != EINTR)
			break;
		ring_buffer__consume(c->rb);
		if (read(c->req_fd, &n, sizeof(n)) == sizeof(n) && !serve(c))
			break;
	}
	return NULL;
}

/* ---- the main thread's side ------------------------------------------- */

static int ask(struct exec_catch *c, enum req_kind kind, pid_t pid,
	       struct frozen *fz)
{
	uint64_t one = 1;
	int rc;

	pthread_mutex_lock(&c->mu);
	c->req = kind;
	c->req_pid = pid;
	c->req_fz = fz;
	c->req_done = false;
	pthread_mutex_unlock(&c->mu);
	if (write(c->req_fd, &one, sizeof(one)) != sizeof(one))
		return -errno;
	pthread_mutex_lock(&c->mu);
	while (!c->req_done)
		pthread_cond_wait(&c->answered, &c->mu);
	rc = c->req_rc;
	c->req = REQ_NONE;
	pthread_mutex_unlock(&c->mu);
	return rc;
}

static void catch_free(struct exec_catch *c)
{
	if (c->epfd >= 0)
		close(c->epfd);
	if (c->req_fd >= 0)
		close(c->req_fd);
	if (c->wake_fd >= 0)
		close(c->wake_fd);
	ring_buffer__free(c->rb);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->answered);
	free(c->q);
	free(c->exes);
	free(c);
}

static int watch(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

int exec_catch_start(struct exec_catch **out, int hints_fd,
		     const struct taf_options *opt, int *wake_fd)
{
	struct exec_catch *c = calloc(1, sizeof(*c));
	sigset_t all, old;
	int rc;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->opt = opt;
	c->epfd = c->req_fd = c->wake_fd = -1;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->answered, NULL);
	c->rb = ring_buffer__new(hints_fd, on_hint, c, NULL);
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	c->req_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	c->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!c->rb || c->epfd < 0 || c->req_fd < 0 || c->wake_fd < 0) {
		rc = -errno;
		catch_free(c);
		return rc ? rc : -ENOMEM;
	}
	rc = watch(c->epfd, ring_buffer__epoll_fd(c->rb));
	if (!rc)
		rc = watch(c->epfd, c->req_fd);
	if (rc) {
		catch_free(c);
		return rc;
	}
	/* Signals are the main loop's: the thread never takes one. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = -pthread_create(&c->thread, NULL, catch_main, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		catch_free(c);
		return rc;
	}
	*wake_fd = c->wake_fd;
	*out = c;
	return 0;
}

bool exec_catch_pending(struct exec_catch *c)
{
	return __atomic_load_n(&c->nq, __ATOMIC_RELAXED) != 0;
}

bool exec_catch_next(struct exec_catch *c, struct exec_caught *out)
{
	bool got = false;
	uint64_t n;

	pthread_mutex_lock(&c->mu);
	if (c->nq) {
		*out = c->q[0];
		memmove(&c->q[0], &c->q[1], (c->nq - 1) * sizeof(c->q[0]));
		c->nq--;
		got = true;
	} else if (read(c->wake_fd, &n, sizeof(n)) < 0) {
		/* EAGAIN: nothing to clear. */
	}
	pthread_mutex_unlock(&c->mu);
	return got;
}

void exec_catch_sync(struct exec_catch *c)
{
	ask(c, REQ_SYNC, 0, NULL);
}

int exec_catch_freeze(struct exec_catch *c, pid_t pid, struct frozen *fz)
{
	return ask(c, REQ_FREEZE, pid, fz);
}

void exec_catch_thaw(struct exec_catch *c, struct frozen *fz)
{
	ask(c, REQ_THAW, 0, fz);
}

void exec_catch_settled(struct exec_catch *c, uint64_t dev, uint64_t ino)
{
	verdict_put(c, dev, ino, V_SETTLED);
}

void exec_catch_stop(struct exec_catch *c)
{
	if (!c)
		return;
	ask(c, REQ_QUIT, 0, NULL);
	pthread_join(c->thread, NULL);
	catch_free(c);
}
