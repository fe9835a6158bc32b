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
 */
#include "probe_plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "disasm.h"
#include "go_binary.h"

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
};

/* Plans entry and exit probes of one allocation function. */
static int plan_alloc_func(const char *name, uint64_t entry, uint64_t size,
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
	rc = add_site(c->plan, c->bin, es.addr, TAF_PROBE_ALLOC_ENTER, name,
		      es.emulated);
	for (i = 0; rc == 0 && i < nrets; i++) {
		long idx = disasm_index_of(&d, rets[i]);

		rc = add_site(c->plan, c->bin, rets[i], TAF_PROBE_ALLOC_EXIT,
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

int probe_plan_build(const struct go_binary *bin, struct probe_plan *plan,
		     char *err, size_t errlen)
{
	struct plan_ctx c = { plan, bin, err, errlen };
	uint64_t entry, size;
	size_t i;
	int rc;

	memset(plan, 0, sizeof(*plan));
	err[0] = '\0';
	rc = go_binary_find_func(bin, "runtime.mallocgc", &entry, &size);
	if (rc) {
		snprintf(err, errlen, "runtime.mallocgc not found in the binary");
		return rc;
	}
	rc = plan_alloc_func("runtime.mallocgc", entry, size, &c);
	for (i = 0; rc == 0 && i < sizeof(alloc_prefixes) / sizeof(alloc_prefixes[0]); i++)
		rc = go_binary_foreach_func(bin, alloc_prefixes[i],
					    plan_alloc_func, &c);
	if (rc)
		probe_plan_free(plan);
	return rc;
}

void probe_plan_free(struct probe_plan *plan)
{
	free(plan->sites);
	memset(plan, 0, sizeof(*plan));
}
