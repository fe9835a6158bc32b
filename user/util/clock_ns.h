/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clock_ns.h - a clock in nanoseconds, written once: CLOCK_MONOTONIC is
 * the records' clock (bpf_ktime_get_ns) and the trace's; CLOCK_REALTIME
 * dates the files.
 */
#ifndef CLOCK_NS_H
#define CLOCK_NS_H

#include <stdint.h>
#include <time.h>

/* Clock ID's time in ns; 0 if it cannot be read. */
static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* CLOCK_NS_H */
