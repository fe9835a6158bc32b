/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alloc_profile.h - what the analysis hands to the pprof writer: heap
 * samples aggregated by call stack (or by type when no stacks were
 * captured), with the four values Go's own heap profile has.
 */
#ifndef ALLOC_PROFILE_H
#define ALLOC_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "format/stack_sidecar.h"

struct alloc_profile_sample {
	/* Innermost first.  With no stacks the analysis gives one
	 * pseudo-frame whose func is the type name (file "", line 0). */
	const struct stack_frame *frames;
	size_t nframes;
	const char *type_name;   /* becomes a "type" label; may be NULL */
	int64_t alloc_objects, alloc_space;   /* over the whole trace */
	int64_t inuse_objects, inuse_space;   /* live at its end */
};

struct alloc_profile {
	const struct alloc_profile_sample *samples;
	size_t nsamples;
	int64_t time_nanos;       /* wall clock of the trace's start, or 0 */
	int64_t duration_nanos;   /* span of the trace's timestamps */
};

/*
 * Writes P to PATH as a gzip-compressed profile.proto message that
 * `go tool pprof` reads: sample types alloc_objects/count,
 * alloc_space/bytes, inuse_objects/count, inuse_space/bytes (default
 * inuse_space, as Go's heap profiles).  Returns 0 or a negative errno;
 * on failure no partial file is left at PATH.
 */
int pprof_write(const struct alloc_profile *p, const char *path);

#endif /* ALLOC_PROFILE_H */
