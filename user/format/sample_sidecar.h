/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sample_sidecar.h - F.sampling beside a trace file F written in
 * --memprofilerate mode: one line, "memprofilerate BYTES".
 *
 * The trace format has no place for it, and the analysis must know it to
 * scale samples into estimates (report, pprof) the way the runtime scales
 * its own heap profile.  A trace file without this sidecar is a full
 * trace: every allocation.
 */
#ifndef SAMPLE_SIDECAR_H
#define SAMPLE_SIDECAR_H

#include <stdint.h>

#define SAMPLE_SIDECAR_SUFFIX ".sampling"

/* Writes it for trace file `trace_name` in directory dirfd. 0 or -errno. */
int sample_sidecar_write(int dirfd, const char *trace_name, uint64_t rate);

/*
 * The rate of trace file `trace_path`: 0 and *rate = 0 when there is no
 * sidecar (a full trace), -EINVAL when it is malformed, -errno.
 */
int sample_sidecar_read(const char *trace_path, uint64_t *rate);

#endif /* SAMPLE_SIDECAR_H */
