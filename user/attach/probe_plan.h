/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * probe_plan.h - where to put uprobes in one Go executable.
 *
 * Owns: the choice of runtime functions per Go version and of the probed
 * instruction inside each.  Allocations: one site per allocation path
 * inside the function that produces the object (alloc_sites.h), all on
 * instructions the kernel emulates, with where the object, size and type
 * are there; a function the analysis refuses falls back to entry + RET
 * probes (the RETs are single-stepped).  Produces a list of sites;
 * attaching them is probes.h's job.
 */
#ifndef PROBE_PLAN_H
#define PROBE_PLAN_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "traceaf_events.h"

struct go_binary;

struct probe_site {
	uint64_t vaddr;           /* link-time address of the instruction */
	uint64_t file_off;        /* file offset, what uprobes take */
	enum taf_probe_role role;
	char func[96];            /* runtime function it belongs to */
	bool emulated;            /* the kernel emulates the instruction */
	uint32_t aux;             /* ALLOC_SITE: index into plan->asites;
				     ALLOC_ARGS: the type register */
};

/* A call site of a producer, for the `alloc_callers` map. */
struct probe_caller {
	uint64_t ret;             /* link address the call returns to */
	struct taf_caller val;
};

struct probe_plan {
	struct taf_layout layout;  /* runtime layout the BPF side reads */
	struct probe_site *sites;
	size_t n, cap;
	unsigned funcs;           /* functions hooked */
	unsigned single_stepped;  /* sites on instructions the kernel single-steps */

	/* Allocations (TAF_PROBE_ALLOC_SITE / _ARGS); asites[].layout is
	 * filled in by probes_attach. */
	struct taf_alloc_site *asites;
	size_t nasites;
	struct probe_caller *callers;
	size_t ncallers;
	unsigned alloc_producers;  /* producer functions found */
	unsigned alloc_anchored;   /* ... probed at their sites */
	unsigned alloc_fallback;   /* ... probed at entry + RETs */
	char alloc_why[256];       /* first reason a producer fell back */
	/* Type chains (Go 1.27's table dispatch, as_find_type_chains):
	 * functions that pass a type on, calls given an ALLOC_ARGS probe,
	 * calls left undescribed. */
	unsigned chain_passers, chain_captured, chain_unknown;
	/* The callers most climbs pass, also in callers[] (alloc_hot). */
	struct probe_caller hot[TAF_HOT_CALLERS];
	unsigned nhot;
	bool sampled;              /* probe_plan_build_sampled's plan */
};

/*
 * TRACEAF_ALLOC_PROBES=entry-ret in the environment plans the allocation
 * probes as before the site analysis (entry + every RET of mallocgc and
 * the mallocgc*SC* functions): for comparisons and as an escape hatch.
 */
#define PROBE_PLAN_MODE_ENV "TRACEAF_ALLOC_PROBES"
/*
 * TRACEAF_ALLOC_REFUSE=SUBSTRING treats the producers whose name contains
 * it as refused by the analysis, to exercise the per-function fallback.
 */
#define PROBE_PLAN_REFUSE_ENV "TRACEAF_ALLOC_REFUSE"

/*
 * Plans every probe for binary `b`: allocations, sweeps, spans and stacks,
 * and fills plan->layout.  Fails (with one line in
 * `err`) when a function the version needs is missing or can't be decoded.
 */
struct go_build_info;
/* Whether the binary's GC keeps small spans' mark bits inline (Green
 * Tea: Go 1.26 by default, 1.25 by GOEXPERIMENT). */
bool probe_plan_green_tea(const struct go_build_info *bi);
/* Its runtime's _KindSpecialFinalizer, by Go 1.MINOR. */
uint8_t probe_plan_finalizer_kind(int minor);

int probe_plan_build(const struct go_binary *b, struct probe_plan *plan,
		     char *err, size_t errlen);

/*
 * --memprofilerate: only where the runtime samples its heap profile (the
 * entry of mProf_Malloc) and frees a sampled object (freeSpecial), plus
 * the call sites the PROF_MALLOC probe reads an allocation's type from
 * (plan->callers). Nothing on the allocation fast path, no span, sweep
 * or stack probes.
 */
int probe_plan_build_sampled(const struct go_binary *b,
			     struct probe_plan *plan, char *err, size_t errlen);
void probe_plan_free(struct probe_plan *plan);

#endif /* PROBE_PLAN_H */
