/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * freeze.h - stop every thread of a process for a moment, then let it go.
 *
 * Owns: ptrace(PTRACE_SEIZE/INTERRUPT/DETACH) of the target's threads.
 * Used to read a consistent picture of the Go heap at attach time.  ptrace
 * rather than SIGSTOP: the stop is invisible to the target's parent (no job
 * control notification), and if the tracer dies mid-freeze the kernel
 * detaches and resumes every thread, where a SIGSTOP would leave the
 * target stopped for good.
 */
#ifndef FREEZE_H
#define FREEZE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct frozen {
	pid_t pid;
	pid_t *tids;
	int *pending_sig;    /* signal to re-deliver at detach, per thread */
	size_t n, cap;
	uint64_t since;      /* CLOCK_MONOTONIC ns when every thread was stopped */
};

/*
 * Stops every thread of `pid`, including threads created while stopping.
 * Returns 0, or -errno (EPERM when another tracer holds the process); on
 * failure nothing stays stopped.
 */
int freeze_process(pid_t pid, struct frozen *f);

/* Resumes every thread stopped by freeze_process. */
void thaw_process(struct frozen *f);

#endif /* FREEZE_H */
