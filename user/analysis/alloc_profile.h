/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alloc_profile.h - what the analysis hands to the pprof writer: heap
 * samples aggregated by call stack (or by type when no stacks were
 * captured), with the four values Go's own heap profile has and those
 * only a trace of every object can give (README.md, "pprof", defines
 * each), and the binaries the stacks' PCs belong to.
 */
#ifndef ALLOC_PROFILE_H
#define ALLOC_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "format/stack_sidecar.h"

/* Sample.value, in this order; the first four as in Go's heap profiles. */
enum alloc_profile_value {
	AP_ALLOC_OBJECTS,       /* allocated in the trace */
	AP_ALLOC_SPACE,
	AP_INUSE_OBJECTS,       /* live at its end */
	AP_INUSE_SPACE,
	AP_FREED_OBJECTS,       /* freed in the trace */
	AP_FREED_SPACE,
	AP_SHORTLIVED_OBJECTS,  /* allocated, freed by the first GC after */
	AP_SHORTLIVED_SPACE,
	AP_SURVIVED_OBJECTS,    /* survived >= HR_SURVIVED_CYCLES GCs */
	AP_SURVIVED_SPACE,
	AP_LIFETIME_SPACE,      /* live bytes integrated over time, B*s */
	AP_NVALUES,
};

/* An executable, as a profile.proto Mapping. */
struct alloc_profile_mapping {
	const char *file;         /* path; "" if unknown */
	const char *build_id;     /* GNU build ID in hex (what pprof compares
				     with the file's); "" if none */
	uint64_t start, limit;    /* its code at the addresses of the PCs */
	uint64_t offset;          /* file offset of start */
};

struct alloc_profile_sample {
	/* Innermost first.  With no stacks the analysis gives one
	 * pseudo-frame whose func is the type name (file "", line 0). */
	const struct stack_frame *frames;
	size_t nframes;
	const char *type_name;   /* becomes a "type" label; may be NULL */
	uint32_t mapping;        /* index + 1 in mappings; 0 = none */
	int64_t v[AP_NVALUES];
};

struct alloc_profile {
	const struct alloc_profile_sample *samples;
	size_t nsamples;
	const struct alloc_profile_mapping *mappings;
	size_t nmappings;
	const char *const *comments;  /* shown by pprof -comments, -raw */
	size_t ncomments;
	int64_t time_nanos;       /* wall clock of the trace's start, or 0 */
	int64_t duration_nanos;   /* span of the trace's timestamps */
	/* The heap-profile sampling rate of --memprofilerate traces (values
	 * already scaled to estimates, as Go's own heap profiles); 0 or 1: a
	 * full trace. */
	int64_t period;
};

/*
 * Writes P to PATH as a gzip-compressed profile.proto message that
 * `go tool pprof` reads: the sample types of enum alloc_profile_value
 * (default inuse_space, as Go's heap profiles), one Location per PC with
 * the calls inlined there as its Lines, and every Mapping marked as
 * symbolized (the frames are), so pprof does not try to symbolize again
 * but still knows the binary (source and disassembly views).  Returns 0
 * or a negative errno; on failure no partial file is left at PATH.
 */
int pprof_write(const struct alloc_profile *p, const char *path);

#endif /* ALLOC_PROFILE_H */
