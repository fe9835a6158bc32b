/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * probe_plan.h - where to put uprobes in one Go executable.
 *
 * Owns: the choice of runtime functions per Go version and of the probed
 * instruction inside each (entry: first kernel-emulated instruction after
 * the stack check; exits: the RETs, read from the disassembly).  Produces a
 * list of sites; attaching them is probes.h's job.
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
};

struct probe_plan {
	struct taf_layout layout;  /* runtime layout the BPF side reads */
	struct probe_site *sites;
	size_t n, cap;
	unsigned funcs;           /* functions hooked */
	unsigned single_stepped;  /* sites on instructions the kernel single-steps */
};

/*
 * Plans every probe for binary `b`: allocations, sweeps, spans and stacks,
 * and fills plan->layout.  Fails (with one line in
 * `err`) when a function the version needs is missing or can't be decoded.
 */
int probe_plan_build(const struct go_binary *b, struct probe_plan *plan,
		     char *err, size_t errlen);
void probe_plan_free(struct probe_plan *plan);

#endif /* PROBE_PLAN_H */
