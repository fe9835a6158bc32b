// SPDX-License-Identifier: BSD-3-Clause
/* freeze.c - stop every thread of a process for a moment with ptrace. */
#include "freeze.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>

#include "util/grow.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool have_tid(const struct frozen *f, pid_t tid)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->tids[i] == tid)
			return true;
	return false;
}

static int add_tid(struct frozen *f, pid_t tid)
{
	size_t sig_cap = f->cap;

	/* Two arrays in step: the same capacity for both. */
	if (!GROW(f->pending_sig, f->n, sig_cap, 32) ||
	    !GROW(f->tids, f->n, f->cap, 32))
		return -ENOMEM;
	f->tids[f->n] = tid;
	f->pending_sig[f->n] = 0;
	f->n++;
	return 0;
}

/*
 * Seizes and interrupts one thread, then waits for its stop.  A signal that
 * arrives first shows up as a signal-delivery stop: it is remembered and
 * handed back at detach, so the target loses nothing.
 */
static int stop_thread(struct frozen *f, pid_t tid)
{
	int status, rc;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0) != 0)
		return errno == ESRCH ? 0 : -errno; /* thread already gone */
	rc = add_tid(f, tid);
	if (rc) {
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return rc;
	}
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0 && errno != ESRCH)
		return -errno;
	for (;;) {
		pid_t w = waitpid(tid, &status, __WALL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno == ECHILD ? 0 : -errno;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			f->tids[f->n - 1] = 0; /* gone: nothing to detach */
			return 0;
		}
		if (WIFSTOPPED(status)) {
			int sig = WSTOPSIG(status);

			if ((status >> 16) != PTRACE_EVENT_STOP && sig != SIGTRAP)
				f->pending_sig[f->n - 1] = sig;
			return 0;
		}
	}
}

/* One pass over /proc/PID/task; returns how many new threads it stopped. */
static int stop_new_threads(struct frozen *f, int *added)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int rc = 0;

	*added = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)f->pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (tid <= 0 || have_tid(f, tid))
			continue;
		rc = stop_thread(f, tid);
		if (rc)
			break;
		(*added)++;
	}
	closedir(d);
	return rc;
}

int freeze_process(pid_t pid, struct frozen *f)
{
	int rc, added, rounds = 0;

	memset(f, 0, sizeof(*f));
	f->pid = pid;
	/* Threads started while we stop others: scan until none is new. */
	do {
		rc = stop_new_threads(f, &added);
		if (rc) {
			thaw_process(f);
			return rc;
		}
	} while (added && ++rounds < 100);
	if (f->n == 0)
		return -ESRCH;
	f->since = now_ns();
	return 0;
}

void thaw_process(struct frozen *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->tids[i] > 0)
			ptrace(PTRACE_DETACH, f->tids[i], 0,
			       (void *)(long)f->pending_sig[i]);
	free(f->tids);
	free(f->pending_sig);
	memset(f, 0, sizeof(*f));
}
