// SPDX-License-Identifier: BSD-3-Clause
/*
 * probe_plan.c - where the allocation uprobes go in one Go executable.
 *
 * Every heap object the runtime hands out comes back from one of:
 *   runtime.mallocgc                       all versions (newobject,
 *                                          makeslice, growslice... call it)
 *   runtime.mallocgcSmallNoScanSC<N>       Go 1.26+ with size-specialised
 *   runtime.mallocgcSmallScanNoHeaderSC<N> malloc (default in 1.27): the
 *   runtime.mallocgcTinySC<N>              compiler calls them directly for
 *                                          new(T) of small fixed sizes
 *                                          (cmd/compile ssagen/ssa.go)
 * They nest (mallocgc dispatches to the SC functions through
 * mallocNoScanTable; the SC functions call their *SlowPath), and the BPF
 * side counts each allocation once, at the outermost return.  The inner
 * helpers (mallocgcTiny, mallocgcSmallNoscan, ..., *SlowPath) are only
 * reached through these, so they need no probes.
 *
 * In each function: one probe at the entry site (the PUSHQ BP after the
 * stack check, which the kernel emulates) and one on every RET (AX holds
 * the result there).
 *
 * Frees, spans and stacks are seen where the runtime would emit them
 * (runtime/mgcsweep.go, mheap.go, stack.go): the entries of
 * (*sweepLocked).sweep, (*mheap).initSpan, freeSpanLocked and stackfree, and the RETs of stackalloc.
 */
#include "probe_plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "disasm.h"
#include "go_binary.h"
#include "go_layout.h"

static const char *const alloc_prefixes[] = {
	"runtime.mallocgcSmallNoScanSC",
	"runtime.mallocgcSmallScanNoHeaderSC",
	"runtime.mallocgcTinySC",
};

static int add_site(struct probe_plan *plan, const struct go_binary *bin,
		    uint64_t vaddr, enum taf_probe_role role,
		    const char *func, bool emulated)
{
	struct probe_site *s;
	uint64_t off;
	int rc;

	rc = go_binary_vaddr_to_offset(bin, vaddr, &off);
	if (rc)
		return rc;
	if (plan->n == plan->cap) {
		size_t cap = plan->cap ? plan->cap * 2 : 32;
		struct probe_site *ns = realloc(plan->sites, cap * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		plan->sites = ns;
		plan->cap = cap;
	}
	s = &plan->sites[plan->n++];
	memset(s, 0, sizeof(*s));
	s->vaddr = vaddr;
	s->file_off = off;
	s->role = role;
	s->emulated = emulated;
	snprintf(s->func, sizeof(s->func), "%s", func);
	if (!emulated)
		plan->single_stepped++;
	return 0;
}

struct plan_ctx {
	struct probe_plan *plan;
	const struct go_binary *bin;
	char *err;
	size_t errlen;
	enum taf_probe_role enter_role;  /* 0: no entry probe */
	enum taf_probe_role exit_role;   /* 0: no exit probes */
};

/* Plans the entry and/or exit probes of one function. */
static int plan_func(const char *name, uint64_t entry, uint64_t size,
		     void *arg)
{
	struct plan_ctx *c = arg;
	struct go_entry_site es;
	struct disasm d;
	const uint8_t *code;
	uint64_t rets[64];
	size_t nrets = 0, i, indirect = 0;
	char derr[256];
	int rc;

	code = go_binary_bytes(c->bin, entry, size);
	if (!code) {
		snprintf(c->err, c->errlen, "cannot read the code of %s", name);
		return -EFAULT;
	}
	rc = disasm_function(code, size, entry, &d, derr, sizeof(derr));
	if (rc) {
		snprintf(c->err, c->errlen, "cannot decode %s: %s", name, derr);
		return rc;
	}
	rc = go_entry_probe_site(&d, &es);
	if (rc) {
		snprintf(c->err, c->errlen, "no entry probe site in %s", name);
		goto out;
	}
	if (es.branch_target) {
		/* A loop back to the site would count one call twice. */
		snprintf(c->err, c->errlen,
			 "entry site of %s is a branch target", name);
		rc = -EINVAL;
		goto out;
	}
	rc = go_ret_sites(&d, rets, sizeof(rets) / sizeof(rets[0]), &nrets);
	if (rc || nrets == 0) {
		snprintf(c->err, c->errlen, "no usable return in %s", name);
		rc = rc ? rc : -ENOENT;
		goto out;
	}
	/*
	 * A tail jump would leave the function without passing a RET: the
	 * depth count of that goroutine would never come back to zero.
	 */
	if (go_tail_jumps(&d, &indirect) != 0) {
		snprintf(c->err, c->errlen,
			 "%s leaves through a tail jump; exits cannot be probed",
			 name);
		rc = -EINVAL;
		goto out;
	}
	rc = 0;
	if (c->enter_role)
		rc = add_site(c->plan, c->bin, es.addr, c->enter_role, name,
			      es.emulated);
	for (i = 0; rc == 0 && c->exit_role && i < nrets; i++) {
		long idx = disasm_index_of(&d, rets[i]);

		rc = add_site(c->plan, c->bin, rets[i], c->exit_role,
			      name, idx >= 0 &&
			      d.insns[idx].cost == UPROBE_EMULATED);
	}
	if (rc == 0)
		c->plan->funcs++;
	else if (!c->err[0])
		snprintf(c->err, c->errlen, "cannot place probes in %s: %s",
			 name, strerror(-rc));
out:
	disasm_free(&d);
	return rc;
}

/* The runtime functions with a fixed role, besides the allocators. */
static const struct {
	const char *name;
	enum taf_probe_role enter, exit;
} fixed_funcs[] = {
	{ "runtime.(*sweepLocked).sweep", TAF_PROBE_SWEEP, 0 },
	{ "runtime.(*mheap).initSpan", TAF_PROBE_SPAN_INIT, 0 },
	/*
	 * freeSpan is inlined into its callers; it and freeManual, the two
	 * places that emit SpanFree natively, are the only callers of this.
	 */
	{ "runtime.(*mheap).freeSpanLocked", TAF_PROBE_SPAN_FREE, 0 },
	{ "runtime.stackalloc", 0, TAF_PROBE_STACK_ALLOC },
	{ "runtime.stackfree", TAF_PROBE_STACK_FREE, 0 },
};

static int plan_named(struct plan_ctx *c, const char *name)
{
	uint64_t entry, size;
	int rc;

	rc = go_binary_find_func(c->bin, name, &entry, &size);
	if (rc) {
		snprintf(c->err, c->errlen, "%s not found in the binary", name);
		return rc;
	}
	return plan_func(name, entry, size, c);
}

static int field16(const struct go_field *f, const char *name, uint16_t *out,
		   char *err, size_t errlen)
{
	if (f->off < 0 || f->off > 0xffff) {
		snprintf(err, errlen, "offset of %s unknown for this Go version",
			 name);
		return -ENOENT;
	}
	*out = (uint16_t)f->off;
	return 0;
}

/*
 * Green Tea GC keeps small spans' mark bits inline: default from Go 1.26
 * (GOEXPERIMENT=nogreenteagc turns it off), opt-in on Go 1.25
 * (GOEXPERIMENT=greenteagc).  The build info records only non-default
 * experiments.
 */
static bool uses_green_tea(const struct go_build_info *bi)
{
	if (bi->major != 1)
		return false;
	if (bi->minor >= 26)
		return !go_build_info_has_experiment(bi, "nogreenteagc");
	if (bi->minor == 25)
		return go_build_info_has_experiment(bi, "greenteagc");
	return false;
}

static int plan_layout(const struct go_binary *bin, struct taf_layout *l,
		       char *err, size_t errlen)
{
	struct go_layout g;
	int rc;

	memset(l, 0, sizeof(*l));
	rc = go_layout_resolve(bin, &g, NULL, NULL);
	if (rc < 0) {
		snprintf(err, errlen, "no runtime layout for %s (no DWARF and no table entry)",
			 go_binary_build_info(bin)->version);
		return rc;
	}
	if (field16(&g.mspan_start_addr, "mspan.startAddr", &l->span_start_addr, err, errlen) ||
	    field16(&g.mspan_npages, "mspan.npages", &l->span_npages, err, errlen) ||
	    field16(&g.mspan_nelems, "mspan.nelems", &l->span_nelems, err, errlen) ||
	    field16(&g.mspan_freeindex, "mspan.freeindex", &l->span_freeindex, err, errlen) ||
	    field16(&g.mspan_elemsize, "mspan.elemsize", &l->span_elemsize, err, errlen) ||
	    field16(&g.mspan_alloc_bits, "mspan.allocBits", &l->span_alloc_bits, err, errlen) ||
	    field16(&g.mspan_gcmark_bits, "mspan.gcmarkBits", &l->span_gcmark_bits, err, errlen) ||
	    field16(&g.mspan_spanclass, "mspan.spanclass", &l->span_spanclass, err, errlen))
		return -ENOENT;
	if (g.g_stack.off < 0 || g.g_stack.off + 16 > 0xffff) {
		snprintf(err, errlen, "offset of g.stack unknown for this Go version");
		return -ENOENT;
	}
	/* runtime.stack is {lo, hi uintptr}. */
	l->g_stack_hi = (uint16_t)(g.g_stack.off + 8);
	l->nelems_size = (uint8_t)g.mspan_nelems.size;
	l->freeindex_size = (uint8_t)g.mspan_freeindex.size;
	l->green_tea = uses_green_tea(go_binary_build_info(bin));
	l->valid = 1;
	return 0;
}

int probe_plan_build(const struct go_binary *bin, struct probe_plan *plan,
		     char *err, size_t errlen)
{
	struct plan_ctx c = { plan, bin, err, errlen, TAF_PROBE_ALLOC_ENTER,
			      TAF_PROBE_ALLOC_EXIT };
	size_t i;
	int rc;

	memset(plan, 0, sizeof(*plan));
	err[0] = '\0';
	rc = plan_layout(bin, &plan->layout, err, errlen);
	if (rc)
		return rc;
	rc = plan_named(&c, "runtime.mallocgc");
	for (i = 0; rc == 0 && i < sizeof(alloc_prefixes) / sizeof(alloc_prefixes[0]); i++)
		rc = go_binary_foreach_func(bin, alloc_prefixes[i], plan_func, &c);
	for (i = 0; rc == 0 && i < sizeof(fixed_funcs) / sizeof(fixed_funcs[0]); i++) {
		c.enter_role = fixed_funcs[i].enter;
		c.exit_role = fixed_funcs[i].exit;
		rc = plan_named(&c, fixed_funcs[i].name);
	}
	if (rc)
		probe_plan_free(plan);
	return rc;
}

void probe_plan_free(struct probe_plan *plan)
{
	free(plan->sites);
	memset(plan, 0, sizeof(*plan));
}
