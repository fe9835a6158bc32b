// SPDX-License-Identifier: BSD-3-Clause
/*
 * probe_plan_chain.c - the part of the plan for Go 1.27's size-class
 * dispatch (probe_plan.c's header has the scheme): the producers' size
 * bound, the type chains' callers and the ALLOC_ARGS captures they keep,
 * and the hot callers the BPF side scans before its hash lookup.
 */
#include "probe_plan_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "inspect/go_binary.h"
#include "inspect/go_pclntab.h"
#include "inspect/go_sizeclasses.h"
#include "util/grow.h"

/*
 * The largest request a size-specialised producer serves: the slot size
 * of its class for mallocgcSmall*SC<N>, 15 for mallocgcTinySC<N> (the
 * tiny allocator takes noscan requests below 16 bytes); 0 for the rest.
 */
uint32_t pp_producer_size_max(const char *name)
{
	const char *sc = strrchr(name, 'C');
	char *end;
	unsigned long n;

	if (!sc || sc == name || sc[-1] != 'S' || !sc[1])
		return 0;
	n = strtoul(sc + 1, &end, 10);
	if (*end || n == 0 || n >= GO_NUM_SIZE_CLASSES)
		return 0;
	if (strstr(name, "mallocgcTinySC"))
		return 15;
	if (strstr(name, "mallocgcSmallNoScanSC") || strstr(name, "mallocgcSmallScanNoHeaderSC"))
		return go_class_to_size[n];
	return 0;
}

/*
 * The ALLOC_ARGS probe a caller needs (cv->pre), once per instruction
 * (pre[], *npre of *cap): its cookie names the register of the type.
 */
int pp_add_capture(struct plan_ctx *c, const struct as_caller *cv,
		       uint64_t **pre, size_t *npre, size_t *cap)
{
	struct go_func gf;
	int rc;

	if (!cv->pre || pp_index_of(*pre, *npre, cv->pre) >= 0)
		return 0;
	if (!GROW(*pre, *npre, *cap, 16))
		return -ENOMEM;
	(*pre)[(*npre)++] = cv->pre;
	if (go_pclntab_find_pc(go_binary_pclntab(c->bin), cv->pre, &gf))
		gf.name = cv->func;
	rc = pp_add_site(c->plan, c->bin, cv->pre, TAF_PROBE_ALLOC_ARGS, gf.name,
		      cv->pre_emulated);
	if (rc == 0)
		c->plan->sites[c->plan->n - 1].aux = cv->pre_reg;
	return rc;
}

/*
 * The runtime's functions whose calls of mallocgc (or of the next function
 * down) nearly every table-dispatched allocation passes: their entries go
 * in the plan's hot array first (TAF_HOT_CALLERS), then other runtime
 * functions' PASS entries.
 */
static const char *const hot_funcs[] = {
	"runtime.mallocgc", "runtime.makeslice", "runtime.newobject",
	"runtime.newarray", "runtime.growslice", "runtime.rawstring",
	"runtime.concatstrings", "runtime.rawbyteslice", "runtime.makeslicecopy",
	"runtime.slicebytetostring", "internal/runtime/maps.newarray",
	"internal/runtime/maps.newobject", "internal/runtime/maps.(*Map).growToSmall",
	"runtime.convT", "runtime.convTnoptr",
};

static bool is_hot_func(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(hot_funcs) / sizeof(hot_funcs[0]); i++)
		if (!strcmp(name, hot_funcs[i]))
			return true;
	return false;
}

void pp_add_hot(struct probe_plan *plan, const struct as_caller *a)
{
	struct probe_caller *h;

	if (plan->nhot >= TAF_HOT_CALLERS)
		return;
	h = &plan->hot[plan->nhot++];
	memset(h, 0, sizeof(*h));
	h->ret = a->ret;
	h->val.size = a->size;
	h->val.type = a->type;
}

static bool is_pass(const struct as_caller *a)
{
	return a->type.kind == TAF_CVAL_PASS || a->type.kind == TAF_CVAL_PASS_DEREF;
}

/* The chain's entries worth a place in the hot array, best first. */
static void pick_hot(struct probe_plan *plan, const struct as_caller *cv, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (is_hot_func(cv[i].func) && cv[i].type.kind != TAF_CVAL_PENDING)
			pp_add_hot(plan, &cv[i]);
	for (i = 0; i < n; i++)
		if (!is_hot_func(cv[i].func) && is_pass(&cv[i]) &&
		    (!strncmp(cv[i].func, "runtime.", 8) ||
		     !strncmp(cv[i].func, "internal/runtime/", 17)))
			pp_add_hot(plan, &cv[i]);
}

/*
 * Go 1.27's table dispatch: mallocgc passes its own type on (TAF_CVAL_PASS
 * entries from as_find_callers), so its callers, and theirs where they
 * pass their own argument on, are described for the site probe's climb.
 */
int pp_plan_type_chains(struct plan_ctx *c, const struct as_env *env,
			    uint64_t **pre, size_t *npre, size_t *cap)
{
	struct as_type_target root = { .type_reg = TAF_REG_BX };
	struct as_chain_stats st;
	struct as_caller *cv = NULL;
	size_t ncv = 0, i;
	uint64_t sz;
	int rc;

	if (go_binary_find_func(c->bin, "runtime.mallocgc", &root.entry, &sz))
		return 0;      /* PASS entries then end unresolved: flagged */
	rc = as_find_type_chains(env, &root, 1, TAF_TYPE_HOPS, &cv, &ncv, &st);
	if (rc == 0)
		pick_hot(c->plan, cv, ncv);
	for (i = 0; rc == 0 && i < ncv; i++) {
		rc = pp_add_caller(c->plan, &cv[i]);
		if (!rc)
			rc = pp_add_capture(c, &cv[i], pre, npre, cap);
	}
	c->plan->chain_passers = st.passers;
	c->plan->chain_captured = st.captured;
	c->plan->chain_unknown = st.unknown;
	free(cv);
	return rc;
}

