/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gc_sidecar.h - F.gc beside a trace file F: where each GC cycle's mark
 * phase ended.
 *
 * The AllocFree events carry no GC event, and the trace format's own GC
 * events need a P the daemon does not model, so the moments the runtime
 * entered gcSweep (runtime/mgc.go: once per cycle, as marking ends and
 * the sweep of the cycle begins) go beside the file: a first line
 * "traceaf-bpf gc 1", then one line per cycle, "NS MODE": the moment on
 * CLOCK_MONOTONIC in ns (the trace's own clock: its timestamps are these
 * in 64 ns ticks) and gcSweep's mode (0 background, 1 runtime.GC, 2
 * forced and blocking).  A file without it was made by a tracer that had
 * no such probe in the binary: the analysis estimates cycles from sweeps.
 */
#ifndef GC_SIDECAR_H
#define GC_SIDECAR_H

#include <stddef.h>
#include <stdint.h>

#define GC_SIDECAR_SUFFIX ".gc"

struct gc_mark {
	uint64_t ns;
	uint32_t mode;
};

/*
 * Writes (or replaces, whole) the sidecar of trace file TRACE_NAME in
 * directory DIRFD with N marks.  0 or -errno.
 */
int gc_sidecar_write(int dirfd, const char *trace_name,
		     const struct gc_mark *marks, size_t n);

/*
 * The marks of trace file TRACE_PATH, in time order, malloc'd (free
 * *marks).  0 with *n = 0 when there is no sidecar, -EINVAL when it is
 * malformed, -errno.
 */
int gc_sidecar_read(const char *trace_path, struct gc_mark **marks,
		    size_t *n);

#endif /* GC_SIDECAR_H */
