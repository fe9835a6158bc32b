/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * probe_plan_impl.h - PRIVATE to probe_plan.c and probe_plan_chain.c;
 * the interface is probe_plan.h.
 */
#ifndef PROBE_PLAN_IMPL_H
#define PROBE_PLAN_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attach/probe_plan.h"
#include "inspect/alloc_sites.h"

struct plan_ctx {
	struct probe_plan *plan;
	const struct go_binary *bin;
	char *err;
	size_t errlen;
	enum taf_probe_role enter_role;  /* 0: no entry probe */
	enum taf_probe_role exit_role;   /* 0: no exit probes */
};

/* probe_plan.c */
int pp_add_site(struct probe_plan *plan, const struct go_binary *bin,
		uint64_t vaddr, enum taf_probe_role role, const char *func,
		bool emulated);
long pp_index_of(const uint64_t *v, size_t n, uint64_t x);
int pp_add_caller(struct probe_plan *plan, const struct as_caller *a);

/* probe_plan_chain.c */
uint32_t pp_producer_size_max(const char *name);
int pp_add_capture(struct plan_ctx *c, const struct as_caller *cv,
		   uint64_t **pre, size_t *npre, size_t *cap);
void pp_add_hot(struct probe_plan *plan, const struct as_caller *a);
int pp_plan_type_chains(struct plan_ctx *c, const struct as_env *env,
			uint64_t **pre, size_t *npre, size_t *cap);

#endif /* PROBE_PLAN_IMPL_H */
