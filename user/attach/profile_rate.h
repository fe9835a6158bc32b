/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * profile_rate.h - the target's runtime.MemProfileRate while
 * --memprofilerate is attached, and putting it back.
 *
 * Owns: finding the variable (runtime_globals.h: DWARF, symbols, or the
 * code of runtime.profilealloc in a stripped binary), writing the rate
 * into the live process and the old value back at detach, and a watchdog
 * process that writes it back when the tracer dies without doing so
 * (SIGKILL, crash).  The runtime notices the change by itself: from Go
 * 1.24 every P compares its cached rate on each allocation
 * (malloc.go: `MemProfileRate != c.memProfRate`); up to 1.23 a P takes the
 * new rate at its next sample, after at most its current sampling
 * distance (about the old rate in bytes).
 */
#ifndef PROFILE_RATE_H
#define PROFILE_RATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct go_binary;

/* Where one process's MemProfileRate is and what it was. */
struct profile_rate {
	pid_t pid;
	uint64_t addr;       /* runtime address of runtime.MemProfileRate */
	int64_t old;         /* value before we set it */
	int64_t rate;        /* value we set */
	bool set;
};

/*
 * Starts the watchdog (once per tracer; later calls are no-ops).  It holds
 * no BPF object or trace file, only a pipe from the tracer.  0 or -errno.
 */
int profile_rate_guard_start(void);

/* The watchdog's PID, 0 when none runs (for tests and -v). */
pid_t profile_rate_guard_pid(void);

/*
 * Sets PID's runtime.MemProfileRate (binary `bin` loaded at `bias`) to
 * `rate`, remembering the old value in *pr and with the watchdog.
 * AT_EXEC: the process is stopped right after its exec, before the
 * runtime initialised (-- CMD): also clear disableMemoryProfiling, which
 * schedinit would otherwise act on, and remember 0 as the old rate.
 * 0, or -errno with one line in err.
 */
int profile_rate_set(pid_t pid, const struct go_binary *bin, uint64_t bias,
		     int64_t rate, bool at_exec, struct profile_rate *pr,
		     char *err, size_t errlen);

/*
 * Writes the old value back if the variable still holds ours (a program
 * that set its own rate meanwhile keeps it).  Returns 0, or -ESRCH when
 * the process is gone, -errno otherwise.  No-op when nothing was set.
 */
int profile_rate_restore(struct profile_rate *pr);

/* Reads PID's current value (tests, -v). */
int profile_rate_read(pid_t pid, uint64_t addr, int64_t *val);

#endif /* PROFILE_RATE_H */
