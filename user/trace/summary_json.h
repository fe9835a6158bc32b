/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * summary_json.h - the honest account of one traced process, written next
 * to its trace files when its session ends: what was seen, written,
 * dropped and lost, per kind, and which files hold it.
 */
#ifndef SUMMARY_JSON_H
#define SUMMARY_JSON_H

#include <stdint.h>

#include "traceaf_events.h"

struct session;

/*
 * Writes COMM-PID-YYYYMMDDTHHMMSSZ.summary.json (the session's start
 * time) in the directory of the session's trace files, with
 * O_EXCL|O_NOFOLLOW, mode 0640.  `bpf_stats` are the probes'
 * counters (drops per record kind; shared by all processes traced by one
 * run), `reason` why tracing ended.  Returns 0 or -errno.
 */
int summary_json_write(const struct session *s,
		       const uint64_t bpf_stats[TAF_STAT_MAX],
		       const char *reason);

#endif /* SUMMARY_JSON_H */
