// SPDX-License-Identifier: BSD-3-Clause
/* target.c - a live process seen through /proc. */
#include "target.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int read_small_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* Replaces characters unfit for a file name; keeps [A-Za-z0-9._-]. */
static void sanitize_name(char *s)
{
	for (; *s; s++) {
		char c = *s;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
			*s = '_';
	}
}

static int pidfd_open_compat(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	errno = ENOSYS;
	return -1;
#endif
}

void target_names(pid_t pid, char *comm, size_t commlen, char *exe,
		  size_t exelen)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (commlen && read_small_file(path, comm, commlen) == 0)
		comm[strcspn(comm, "\n")] = '\0';
	else if (commlen)
		comm[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = exelen ? readlink(path, exe, exelen - 1) : -1;
	if (exelen)
		exe[n > 0 ? n : 0] = '\0';
}

int target_open(pid_t pid, struct target *t, char *err, size_t errlen)
{
	char path[64], buf[64];
	struct stat st;
	int rc;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->mem_fd = -1;
	t->pidfd = -1;

	if (pid <= 0) {
		snprintf(err, errlen, "invalid PID %d", (int)pid);
		return -EINVAL;
	}
	if (kill(pid, 0) != 0 && errno == ESRCH) {
		snprintf(err, errlen, "no such process: PID %d", (int)pid);
		return -ESRCH;
	}
	/* Hold the process: a pidfd keeps us from following a reused PID. */
	t->pidfd = pidfd_open_compat(pid);
	if (t->pidfd < 0 && errno == ESRCH) {
		snprintf(err, errlen, "no such process: PID %d", (int)pid);
		return -ESRCH;
	}

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (read_small_file(path, buf, sizeof(buf)) == 0) {
		buf[strcspn(buf, "\n")] = '\0';
		buf[sizeof(t->comm) - 1] = '\0';
		memcpy(t->comm, buf, strlen(buf) + 1);
	} else {
		snprintf(t->comm, sizeof(t->comm), "pid");
	}
	sanitize_name(t->comm);

	snprintf(t->exe_path, sizeof(t->exe_path), "/proc/%d/exe", (int)pid);
	if (stat(t->exe_path, &st) != 0) {
		rc = -errno;
		if (rc == -ENOENT)
			snprintf(err, errlen,
				 "PID %d has no executable (kernel thread or exited)",
				 (int)pid);
		else
			snprintf(err, errlen, "cannot open %s: %s", t->exe_path,
				 strerror(errno));
		target_close(t);
		return rc;
	}
	t->exe_dev = st.st_dev;
	t->exe_ino = st.st_ino;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	t->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (t->mem_fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot read memory of PID %d: %s",
			 (int)pid, strerror(errno));
		target_close(t);
		return rc;
	}
	return 0;
}

void target_init_gone(struct target *t, pid_t pid, const char *comm,
		      uint64_t exe_dev, uint64_t exe_ino)
{
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->mem_fd = -1;
	t->pidfd = -1;
	t->gone = true;
	t->exe_dev = exe_dev;
	t->exe_ino = exe_ino;
	snprintf(t->exe_path, sizeof(t->exe_path), "/proc/%d/exe", (int)pid);
	snprintf(t->comm, sizeof(t->comm), "%.15s", comm && *comm ? comm : "pid");
	sanitize_name(t->comm);
}

void target_close(struct target *t)
{
	if (t->mem_fd >= 0)
		close(t->mem_fd);
	if (t->pidfd >= 0)
		close(t->pidfd);
	t->mem_fd = -1;
	t->pidfd = -1;
}

bool target_alive(const struct target *t)
{
	if (t->gone)
		return false;
	if (t->pidfd >= 0) {
		struct pollfd p = { .fd = t->pidfd, .events = POLLIN };

		/* A pidfd polls readable once the process has exited. */
		return poll(&p, 1, 0) == 0;
	}
	return kill(t->pid, 0) == 0 || errno != ESRCH;
}

int target_read(const struct target *t, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;

	if (t->mem_fd < 0)
		return -ESRCH;
	while (done < len) {
		ssize_t n = pread(t->mem_fd, (char *)buf + done, len - done,
				  (off_t)(addr + done));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		done += (size_t)n;
	}
	return 0;
}

int target_read_cb(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return target_read(ctx, addr, buf, len);
}

/*
 * /proc/PID/maps lines: "start-end perms offset dev inode path".  The
 * executable's mappings are recognised by device and inode, which also
 * works when the file was deleted or replaced after the process started.
 */
int target_load_bias(const struct target *t, uint64_t first_load_vaddr,
		     uint64_t first_load_offset, uint64_t *bias)
{
	char path[64], line[4096];
	FILE *f;
	int rc = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)t->pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, end, off, ino;
		unsigned maj, min;
		char perms[8];

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64,
			   &start, &end, perms, &off, &maj, &min, &ino) != 7)
			continue;
		/* Device numbers differ between stat() and maps on overlayfs. */
		if (ino != t->exe_ino)
			continue;
		/*
		 * The mapping at file offset `off` starts at `start`; the page
		 * holding the first segment's offset maps its vaddr.
		 */
		if (off <= first_load_offset) {
			uint64_t runtime = start + (first_load_offset - off);
			uint64_t link = first_load_vaddr;

			*bias = runtime - link;
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}
