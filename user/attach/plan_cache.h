/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * plan_cache.h - probe plans kept on disk per executable, so a second
 * attach to the same binary costs only the attach.
 *
 * Owns: the key (what the plan depends on), the file format and the rules
 * of the cache directory.  The plan is a pure function of the executable's
 * bytes, the tracer's own code and the mode (full or --memprofilerate);
 * the key holds all three: the target's Go and GNU build IDs, its size,
 * mtime, device and inode, the tracer's version and its own executable's
 * identity (a rebuilt tracer never reads an older tracer's plan).  The
 * plans of the planning knobs for tests (TRACEAF_ALLOC_PROBES,
 * TRACEAF_ALLOC_REFUSE) are never cached.
 *
 * The directory (default /var/cache/traceaf-bpf) is created 0700; it and
 * every file in it must belong to the effective user and be writable by no
 * one else, and neither is followed through a symbolic link (O_NOFOLLOW),
 * else the cache is not used: a plan says where root puts uprobes, so a
 * file someone else could write is never read.  Files are written to a
 * temporary name and renamed, and carry a checksum: a torn or damaged
 * file is a miss, never a wrong plan.  At most 64 plans are kept: a new
 * one removes the oldest.
 */
#ifndef PLAN_CACHE_H
#define PLAN_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "attach/probe_plan.h"

#define PLAN_CACHE_DEFAULT_DIR "/var/cache/traceaf-bpf"

struct plan_cache_opts {
	const char *dir;      /* NULL: PLAN_CACHE_DEFAULT_DIR */
	bool disabled;        /* --no-cache */
	int verbose;
	bool sampled;         /* probe_plan_build_sampled's plan */
};

/* How the plan came: for -v and the benchmark. */
enum plan_cache_result {
	PLAN_CACHE_OFF = 0,   /* not used (disabled, unsafe dir, test knobs) */
	PLAN_CACHE_HIT,
	PLAN_CACHE_MISS,      /* built, and stored when it could be */
};

/*
 * The plan of `bin` (probe_plan_build or _build_sampled), from the cache
 * when it holds one, else built and stored.  Problems with the cache are
 * never errors: the plan is then built.  Returns what the build returns.
 */
int plan_cache_build(const struct go_binary *bin,
		     const struct plan_cache_opts *o, struct probe_plan *plan,
		     enum plan_cache_result *how, char *err, size_t errlen);

#endif /* PLAN_CACHE_H */
