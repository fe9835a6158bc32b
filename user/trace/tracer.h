/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tracer.h - the daemon: one BPF object, the executables it is attached
 * to, and one session per traced process.
 *
 * Owns: the three ways of choosing targets (-p PID, --all, -- CMD), the
 * event loop (ring buffer, generation cuts, progress), process exits, and
 * the final report.  Each executable is planned and attached once, however
 * many processes run it (--all attaches for every process of that file).
 */
#ifndef TRACER_H
#define TRACER_H

#include "trace/cli.h"

/*
 * Runs the tracer until it is stopped; returns the process exit status
 * (0, 1 on error, or the program's own status with -- CMD).
 */
int tracer_run(const struct taf_options *opt);

#endif /* TRACER_H */
