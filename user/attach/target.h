/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * target.h - a live process seen from outside: existence, executable,
 * load address, memory.
 *
 * Owns: /proc/PID lookups and reads of the target's memory.  Everything is
 * read through /proc/PID (exe, maps, mem), so a process in another mount
 * namespace, or whose binary was deleted or replaced on disk, still works.
 */
#ifndef TARGET_H
#define TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct target {
	pid_t pid;
	int mem_fd;          /* /proc/PID/mem, O_RDONLY */
	int pidfd;           /* readable once the process exits; -1 if unsupported */
	char comm[32];       /* /proc/PID/comm, sanitised for file names */
	char exe_path[64];   /* "/proc/PID/exe": what uprobes attach through */
	uint64_t exe_dev;    /* identity of the executable, to share probes */
	uint64_t exe_ino;
	bool gone;           /* exited before it was opened */
};

/*
 * Opens PID.  Fails with -ESRCH when there is no such process, -EACCES/-EPERM
 * when its memory can't be read, and fills `err` with one line saying so.
 */
int target_open(pid_t pid, struct target *t, char *err, size_t errlen);
void target_close(struct target *t);

/*
 * A process that exited before we could open it, known from its records:
 * memory reads fail, target_alive() says no.  `comm` may be NULL.
 */
void target_init_gone(struct target *t, pid_t pid, const char *comm,
		      uint64_t exe_dev, uint64_t exe_ino);

/*
 * PID's command name (/proc/PID/comm, unsanitised) and executable (the
 * /proc/PID/exe link), each "" when the process is gone or unreadable:
 * what --include and --exclude match.  No process is opened.
 */
void target_names(pid_t pid, char *comm, size_t commlen, char *exe,
		  size_t exelen);

/* True while the process has not exited (zombies count as exited). */
bool target_alive(const struct target *t);

/* Reads target memory; returns 0 when all `len` bytes were read. */
int target_read(const struct target *t, uint64_t addr, void *buf, size_t len);

/* Callback form of target_read for readers that take a context pointer. */
int target_read_cb(void *ctx, uint64_t addr, void *buf, size_t len);

/*
 * Load bias of the main executable: runtime address = link address + bias.
 * `first_load_vaddr` and `first_load_offset` describe the executable's first
 * PT_LOAD segment.  Returns 0 on success (bias 0 for non-PIE binaries).
 */
int target_load_bias(const struct target *t, uint64_t first_load_vaddr,
		     uint64_t first_load_offset, uint64_t *bias);

#endif /* TARGET_H */
