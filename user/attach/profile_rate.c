// SPDX-License-Identifier: BSD-3-Clause
/*
 * profile_rate.c - setting and restoring a target's runtime.MemProfileRate
 * (--memprofilerate), with a watchdog for when the tracer cannot.
 *
 * The variable is a Go int in the binary's data; it is written with
 * process_vm_writev (root, the same right that lets us read the target).
 * The write is not atomic with respect to the program setting the rate
 * itself; restoring only when the value is still ours leaves a program
 * that changed it in the meantime with its own choice.
 *
 * The watchdog is a child forked before the first write.  It closes every
 * inherited descriptor but its pipe (it must not keep the BPF links, the
 * ring buffer or a trace file alive after the tracer), ignores the
 * terminal's signals, and reads messages: "set" and "restored" per
 * process.  When the pipe reaches EOF, the tracer is gone: every process
 * still "set" gets its old value back, if it is the same process (start
 * time) and still holds our value.
 */
#include "profile_rate.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "inspect/runtime_globals.h"
#include "util/grow.h"

#define VAR_NAME "runtime.MemProfileRate"

enum { MSG_SET = 1, MSG_RESTORED = 2 };

struct guard_msg {
	int32_t pid;
	uint32_t op;
	uint64_t addr;
	int64_t old;
	int64_t rate;
	uint64_t start_time;   /* /proc/PID/stat starttime: against PID reuse */
};

static int guard_fd = -1;
static pid_t guard_pid;

int profile_rate_read(pid_t pid, uint64_t addr, int64_t *val)
{
	struct iovec local = { val, sizeof(*val) };
	struct iovec remote = { (void *)(uintptr_t)addr, sizeof(*val) };

	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != sizeof(*val))
		return errno ? -errno : -EIO;
	return 0;
}

static int write_rate(pid_t pid, uint64_t addr, int64_t val)
{
	struct iovec local = { &val, sizeof(val) };
	struct iovec remote = { (void *)(uintptr_t)addr, sizeof(val) };

	if (process_vm_writev(pid, &local, 1, &remote, 1, 0) != sizeof(val))
		return errno ? -errno : -EIO;
	return 0;
}

/* Field 22 of /proc/PID/stat; 0 when unreadable. */
static uint64_t proc_start_time(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* comm may hold spaces and parentheses: count from the last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	for (field = 2; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	if (sscanf(p, "%llu", &v) != 1)
		return 0;
	return v;
}

/* Puts back what a dead tracer left set. */
static void guard_restore(const struct guard_msg *m)
{
	int64_t cur;

	if (proc_start_time(m->pid) != m->start_time)
		return;      /* gone, or the PID is another process now */
	if (profile_rate_read(m->pid, m->addr, &cur) || cur != m->rate)
		return;
	write_rate(m->pid, m->addr, m->old);
}

static void guard_main(int fd)
{
	struct guard_msg *live = NULL, m;
	size_t n = 0, cap = 0, i;

	for (;;) {
		ssize_t r = read(fd, &m, sizeof(m));

		if (r < 0 && errno == EINTR)
			continue;
		if (r != (ssize_t)sizeof(m))
			break;       /* EOF: the tracer is gone */
		for (i = 0; i < n && live[i].pid != m.pid; i++)
			;
		if (m.op == MSG_RESTORED) {
			if (i < n)
				live[i] = live[--n];
			continue;
		}
		if (i == n) {
			if (!GROW(live, n, cap, 16))
				continue;
			n++;
		}
		live[i] = m;
	}
	for (i = 0; i < n; i++)
		guard_restore(&live[i]);
	_exit(0);
}

int profile_rate_guard_start(void)
{
	int p[2];
	pid_t pid;

	if (guard_fd >= 0)
		return 0;
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (pid == 0) {
		/* Ctrl-C reaches the whole process group: the tracer restores
		 * on its own then, and the watchdog must outlive it. */
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGUSR1, SIG_IGN);
		signal(SIGUSR2, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		prctl(PR_SET_NAME, "traceaf-guard", 0, 0, 0);
		if (dup2(p[0], 3) != 3)
			_exit(1);
		/* Nor the tracer's output: whoever reads it sees EOF when
		 * the tracer exits. */
		{
			int nul = open("/dev/null", O_RDWR);

			if (nul >= 0) {
				dup2(nul, 0);
				dup2(nul, 1);
				dup2(nul, 2);
			}
		}
		syscall(SYS_close_range, 4u, ~0u, 0u);
		guard_main(3);
	}
	close(p[0]);
	guard_fd = p[1];
	guard_pid = pid;
	return 0;
}

pid_t profile_rate_guard_pid(void)
{
	return guard_pid;
}

static void guard_send(const struct profile_rate *pr, uint32_t op)
{
	struct guard_msg m = {
		.pid = pr->pid, .op = op, .addr = pr->addr, .old = pr->old,
		.rate = pr->rate, .start_time = proc_start_time(pr->pid),
	};

	/* A message is smaller than PIPE_BUF: written whole or not at all. */
	if (guard_fd >= 0 && write(guard_fd, &m, sizeof(m)) != (ssize_t)sizeof(m))
		return;
}

/*
 * At exec, before the runtime's schedinit: a binary whose linker found no
 * heap-profile reader has disableMemoryProfiling set, and schedinit would
 * zero the rate we write (runtime/proc.go).  Clear it; the rate such a
 * program would have had is 0, which is what detach puts back.
 */
static int allow_profiling(pid_t pid, const struct go_binary *bin,
			   uint64_t bias, struct profile_rate *pr)
{
	struct iovec local, remote;
	uint64_t link;
	uint8_t v = 0;

	if (go_runtime_global_addr(bin, "runtime.disableMemoryProfiling", &link))
		return -ENOENT;
	local.iov_base = &v;
	local.iov_len = 1;
	remote.iov_base = (void *)(uintptr_t)(link + bias);
	remote.iov_len = 1;
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != 1)
		return -errno;
	if (!v)
		return 0;
	v = 0;
	if (process_vm_writev(pid, &local, 1, &remote, 1, 0) != 1)
		return -errno;
	pr->old = 0;
	return 0;
}

int profile_rate_set(pid_t pid, const struct go_binary *bin, uint64_t bias,
		     int64_t rate, bool at_exec, struct profile_rate *pr,
		     char *err, size_t errlen)
{
	uint64_t link;
	int rc;

	memset(pr, 0, sizeof(*pr));
	if (go_runtime_global_addr(bin, VAR_NAME, &link)) {
		snprintf(err, errlen, "cannot find %s in the binary", VAR_NAME);
		return -ENOENT;
	}
	pr->pid = pid;
	pr->addr = link + bias;
	pr->rate = rate;
	rc = profile_rate_read(pid, pr->addr, &pr->old);
	if (rc) {
		snprintf(err, errlen, "cannot read %s of PID %d: %s", VAR_NAME,
			 (int)pid, strerror(-rc));
		return rc;
	}
	if (at_exec) {
		rc = allow_profiling(pid, bin, bias, pr);
		if (rc) {
			snprintf(err, errlen, "cannot clear runtime.disableMemoryProfiling of PID %d: %s",
				 (int)pid, strerror(-rc));
			return rc;
		}
	}
	rc = profile_rate_guard_start();
	if (rc) {
		snprintf(err, errlen, "cannot start the rate watchdog: %s",
			 strerror(-rc));
		return rc;
	}
	/* Tell the watchdog first: a kill between the two then still
	 * restores (it finds our value, or leaves the old one alone). */
	guard_send(pr, MSG_SET);
	rc = write_rate(pid, pr->addr, rate);
	if (rc) {
		guard_send(pr, MSG_RESTORED);
		snprintf(err, errlen, "cannot write %s of PID %d: %s", VAR_NAME,
			 (int)pid, strerror(-rc));
		return rc;
	}
	pr->set = true;
	return 0;
}

int profile_rate_restore(struct profile_rate *pr)
{
	int64_t cur;
	int rc;

	if (!pr->set)
		return 0;
	pr->set = false;
	rc = profile_rate_read(pr->pid, pr->addr, &cur);
	if (rc == 0 && cur == pr->rate)
		rc = write_rate(pr->pid, pr->addr, pr->old);
	guard_send(pr, MSG_RESTORED);
	return rc;
}
