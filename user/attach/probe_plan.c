// SPDX-License-Identifier: BSD-3-Clause
/*
 * probe_plan.c - where the uprobes go in one Go executable.
 *
 * Allocations (alloc_sites.h has the analysis and why it is sound): every
 * heap object is set up by a "producer", a runtime.mallocgc* function that
 * calls publicationBarrier: mallocgc itself up to Go 1.23; from 1.24 the
 * helpers mallocgc dispatches to (mallocgcTiny, mallocgcSmallNoscan,
 * mallocgcSmallScanNoHeader, mallocgcSmallScanHeader, mallocgcLarge); from
 * 1.26 also the size-specialised mallocgcSmallNoScanSC<N>,
 * mallocgcSmallScanNoHeaderSC<N>, mallocgcTinySC<N> the compiler calls
 * directly and their *SlowPath functions. Each producer gets one probe per
 * allocation path, on an instruction the kernel emulates: its CALL
 * publicationBarrier, and for the tiny allocator's fast path a NOP or Jcc
 * on the way to its RET. An allocation is seen exactly once, where it is
 * made, however the functions nest, and nothing is single-stepped.
 *
 * Where a producer no longer holds the requested size or the type at its
 * site (the SC functions and the 1.24+ helpers drop them), its callers
 * do: compiler call sites load constants (MOVL $56, AX; LEAQ type(SB), BX),
 * and mallocgc keeps its own arguments in its frame.  For mallocgc's
 * size-class table dispatch (an indirect CALL, Go 1.27) mallocgc keeps
 * them nowhere: the size is bounded by the producer's size class (which
 * is all the daemon needs of it, TAF_CVAL_BOUND), and the type is
 * mallocgc's own argument, which its callers know (a constant, a global,
 * their own argument passed on: alloc_sites_chain.c), so the site's probe
 * climbs the frame pointers to it (TAF_CVAL_PASS).  Only calls whose type
 * is none of those (reflect's, computed at run time) get an ALLOC_ARGS
 * probe on the call itself, which records the type for that goroutine's
 * frame: two traps on that path alone.
 * The `alloc_callers` map, keyed by return address, tells the BPF side
 * which.
 *
 * Fallback: a producer the analysis refuses (and every producer it calls,
 * so that nesting is still resolved by stack depth) is probed as before:
 * at its entry (the PUSHQ BP after the stack check, emulated) and on every
 * RET (single-stepped, ~12 us). TRACEAF_ALLOC_PROBES=entry-ret plans every
 * allocation that way, on mallocgc and the SC functions.
 *
 * Frees, spans and stacks are seen where the runtime would emit them
 * (runtime/mgcsweep.go, mheap.go, stack.go): the entries of
 * (*sweepLocked).sweep, (*mheap).initSpan, freeSpanLocked and stackfree, and the RETs of stackalloc.
 */
#include "probe_plan.h"
#include "probe_plan_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "inspect/alloc_sites.h"
#include "inspect/disasm.h"
#include "inspect/go_binary.h"
#include "inspect/go_layout.h"
#include "util/grow.h"

static const char *const alloc_prefixes[] = {
	"runtime.mallocgcSmallNoScanSC",
	"runtime.mallocgcSmallScanNoHeaderSC",
	"runtime.mallocgcTinySC",
};

int pp_add_site(struct probe_plan *plan, const struct go_binary *bin,
		    uint64_t vaddr, enum taf_probe_role role,
		    const char *func, bool emulated)
{
	struct probe_site *s;
	uint64_t off;
	int rc;

	rc = go_binary_vaddr_to_offset(bin, vaddr, &off);
	if (rc)
		return rc;
	if (!GROW(plan->sites, plan->n, plan->cap, 32))
		return -ENOMEM;
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
		rc = pp_add_site(c->plan, c->bin, es.addr, c->enter_role, name,
			      es.emulated);
	for (i = 0; rc == 0 && c->exit_role && i < nrets; i++) {
		long idx = disasm_index_of(&d, rets[i]);

		rc = pp_add_site(c->plan, c->bin, rets[i], c->exit_role,
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

/*
 * A probe on the entry of NAME with ROLE that a binary may lack (inlined
 * away): one where it cannot be planned is traced without it.
 */
static int plan_optional(struct plan_ctx *c, enum taf_probe_role role,
			 const char *name)
{
	size_t n = c->plan->n;
	int rc;

	c->enter_role = role;
	c->exit_role = 0;
	rc = plan_named(c, name);
	if (rc) {
		c->plan->n = n;
		c->err[0] = '\0';
	}
	return rc == -ENOMEM ? rc : 0;
}

/*
 * The GC cycle marker (runtime.gcSweep's entry, TAF_PROBE_GC_CYCLE), in
 * both modes: one trap per cycle, and the analysis counts lifetimes in
 * exact cycles instead of estimating them from sweeps.
 */
static int plan_gc_cycle(struct plan_ctx *c)
{
	return plan_optional(c, TAF_PROBE_GC_CYCLE, "runtime.gcSweep");
}

/*
 * The mark-phase marker (runtime.gcMarkTinyAllocs' entry,
 * TAF_PROBE_GC_MARK), --memprofilerate: gcStart calls it once per cycle,
 * world stopped, as marking begins; the daemon reads the profile
 * specials then.  Without it --memprofilerate falls back to its exact
 * probes (exe_sessions.c).
 */
static int plan_gc_mark(struct plan_ctx *c)
{
	return plan_optional(c, TAF_PROBE_GC_MARK, "runtime.gcMarkTinyAllocs");
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
bool probe_plan_green_tea(const struct go_build_info *bi)
{
	if (bi->major != 1)
		return false;
	if (bi->minor >= 26)
		return !go_build_info_has_experiment(bi, "nogreenteagc");
	if (bi->minor == 25)
		return go_build_info_has_experiment(bi, "greenteagc");
	return false;
}

/* _KindSpecialFinalizer (runtime/mheap.go): 1 up to Go 1.24, 2 from
 * 1.25, where _KindSpecialTinyBlock took 1. */
uint8_t probe_plan_finalizer_kind(int minor)
{
	return minor >= 25 ? 2 : 1;
}

/*
 * Finalizers: (*sweepLocked).sweep marks an unmarked object that has a
 * finalizer special (the finalizer is queued, the object lives one more
 * cycle) before its free loop reads the marks (runtime/mgcsweep.go, Go
 * 1.21-1.27), so span_sweep walks mspan.specials for them.  `special` is
 * {next *special; offset uint16|uintptr; kind byte} (runtime/mheap.go);
 * _KindSpecialFinalizer is 1 up to Go 1.24 and 2 from 1.25, where
 * _KindSpecialTinyBlock took 1.  A layout that is not that shape leaves
 * span_specials 0: no walk, and an object its finalizer revives is freed
 * a cycle early in the trace, then again when the runtime frees it.
 */
static void plan_finalizer_layout(const struct go_layout *g,
				  const struct go_build_info *bi,
				  struct taf_layout *l)
{
	if (bi->major != 1 || !go_field_present(&g->mspan_specials) ||
	    g->mspan_specials.off > 0xffff || g->special_offset.off != 8 ||
	    (g->special_offset.size != 2 && g->special_offset.size != 8) ||
	    l->special_kind_off < 10 || l->special_kind_off >= 24)
		return;
	l->span_specials = (uint16_t)g->mspan_specials.off;
	l->special_offset_size = (uint8_t)g->special_offset.size;
	l->special_kind_finalizer = probe_plan_finalizer_kind(bi->minor);
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
	    field16(&g.mspan_spanclass, "mspan.spanclass", &l->span_spanclass, err, errlen) ||
	    field16(&g.mspan_state, "mspan.state", &l->span_state, err, errlen))
		return -ENOENT;
	if (g.g_stack.off < 0 || g.g_stack.off + 16 > 0xffff) {
		snprintf(err, errlen, "offset of g.stack unknown for this Go version");
		return -ENOENT;
	}
	/* runtime.stack is {lo, hi uintptr}. */
	l->g_stack_hi = (uint16_t)(g.g_stack.off + 8);
	l->nelems_size = (uint8_t)g.mspan_nelems.size;
	l->freeindex_size = (uint8_t)g.mspan_freeindex.size;
	l->green_tea = probe_plan_green_tea(go_binary_build_info(bin));
	/* special.kind: the finalizer walk's and --memprofilerate's (0: not
	 * known; it follows `next`, so it is never at 0). */
	if (go_field_present(&g.special_kind) && g.special_kind.off <= 0xffff)
		l->special_kind_off = (uint16_t)g.special_kind.off;
	plan_finalizer_layout(&g, go_binary_build_info(bin), l);
	l->valid = 1;
	return 0;
}

/* The scheme from before the site analysis: entry + RETs, outermost call. */
static int plan_alloc_entry_ret(struct plan_ctx *c)
{
	size_t i;
	int rc;

	rc = plan_named(c, "runtime.mallocgc");
	for (i = 0; rc == 0 && i < sizeof(alloc_prefixes) / sizeof(alloc_prefixes[0]); i++)
		rc = go_binary_foreach_func(c->bin, alloc_prefixes[i], plan_func, c);
	return rc;
}

long pp_index_of(const uint64_t *v, size_t n, uint64_t x)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == x)
			return (long)i;
	return -1;
}

/* The one stack read that covers every stack location of a site. */
static void set_window(struct taf_alloc_site *a)
{
	const struct taf_loc *l[3] = { &a->obj, &a->size, &a->type };
	int32_t lo = INT32_MAX, hi = INT32_MIN;
	size_t i;

	for (i = 0; i < 3; i++) {
		if (l[i]->kind != TAF_LOC_STACK)
			continue;
		if (l[i]->off < lo)
			lo = l[i]->off;
		if (l[i]->off + 8 > hi)
			hi = l[i]->off + 8;
	}
	a->win_off = a->win_len = 0;
	if (lo > hi || hi - lo > TAF_SITE_WINDOW)
		return;
	for (i = 0; i < 3; i++)
		if (l[i]->kind == TAF_LOC_STACK && (l[i]->off - lo) % 8)
			return;
	a->win_off = lo;
	a->win_len = (uint32_t)(hi - lo);
}

static int add_asite(struct probe_plan *plan, const struct as_site *s,
		     const char *func, uint32_t *idx)
{
	struct taf_alloc_site *a;

	if (plan->nasites % 16 == 0) {
		struct taf_alloc_site *n = realloc(plan->asites,
						   (plan->nasites + 16) * sizeof(*n));

		if (!n)
			return -ENOMEM;
		plan->asites = n;
	}
	a = &plan->asites[plan->nasites];
	memset(a, 0, sizeof(*a));
	a->obj = s->obj;
	a->size = s->size;
	a->type = s->type;
	a->ret_off = (int32_t)-s->sp;
	a->addr = s->addr;
	a->size_max = pp_producer_size_max(func);
	set_window(a);
	*idx = (uint32_t)plan->nasites++;
	return 0;
}

int pp_add_caller(struct probe_plan *plan, const struct as_caller *a)
{
	struct probe_caller *pc;

	if (plan->ncallers % 64 == 0) {
		struct probe_caller *n = realloc(plan->callers,
						 (plan->ncallers + 64) * sizeof(*n));

		if (!n)
			return -ENOMEM;
		plan->callers = n;
	}
	pc = &plan->callers[plan->ncallers++];
	memset(pc, 0, sizeof(*pc));
	pc->ret = a->ret;
	pc->val.size = a->size;
	pc->val.type = a->type;
	return 0;
}

/*
 * Producers probed at their sites, the refused ones at entry + RETs.
 * -ENOENT when the binary has no producers to analyse (then the caller
 * plans entry + RETs for everything).
 */
static int plan_alloc_sites(struct plan_ctx *c)
{
	static const char *const dispatchers[] = { "runtime.mallocgc" };
	const char *refuse = getenv(PROBE_PLAN_REFUSE_ENV);
	struct probe_plan *plan = c->plan;
	struct as_env env;
	struct as_func *fa = NULL;
	struct as_caller *cv = NULL;
	char **names = NULL;
	uint64_t *entries = NULL, *sizes = NULL, *need = NULL, *pre = NULL;
	bool *fallback = NULL, changed;
	size_t n = 0, i, k, nneed = 0, ncv = 0, npre = 0, cappre = 0;
	int rc;

	if (as_env_init(&env, c->bin))
		return -ENOENT;
	rc = as_find_producers(c->bin, &names, &entries, &n);
	if (rc || n == 0) {
		rc = rc ? rc : -ENOENT;
		goto out;
	}
	env.producers = entries;
	env.nproducers = n;
	fa = calloc(n, sizeof(*fa));
	sizes = calloc(n, sizeof(*sizes));
	fallback = calloc(n, sizeof(*fallback));
	need = calloc(n, sizeof(*need));
	if (!fa || !sizes || !fallback || !need) {
		rc = -ENOMEM;
		goto out;
	}
	plan->alloc_producers = (unsigned)n;
	for (i = 0; i < n; i++) {
		uint64_t e;

		if (go_binary_find_func(c->bin, names[i], &e, &sizes[i]) || e != entries[i]) {
			/* Listed by the pclntab under a name .symtab gives
			 * another function: analyse what the pclntab says. */
			struct go_func gf;

			if (go_pclntab_find_pc(go_binary_pclntab(c->bin), entries[i], &gf)) {
				rc = -ENOENT;
				goto out;
			}
			sizes[i] = gf.size;
		}
		rc = as_analyze(&env, names[i], entries[i], sizes[i], &fa[i]);
		if (rc)
			goto out;
		if (refuse && refuse[0] && strstr(names[i], refuse) && fa[i].status == 0) {
			fa[i].status = -EINVAL;
			snprintf(fa[i].why, sizeof(fa[i].why), "refused by %s",
				 PROBE_PLAN_REFUSE_ENV);
		}
		fallback[i] = fa[i].status != 0;
		if (fallback[i] && !plan->alloc_why[0])
			snprintf(plan->alloc_why, sizeof(plan->alloc_why), "%s: %s",
				 names[i], fa[i].why);
	}
	/* A fallback producer's callees fall back too: the depth matching of
	 * entry + RET probes must see the whole nest. */
	do {
		changed = false;
		for (i = 0; i < n; i++) {
			if (!fallback[i])
				continue;
			for (k = 0; k < fa[i].n_producer_calls; k++) {
				long j = pp_index_of(entries, n, fa[i].producer_calls[k]);

				if (j >= 0 && !fallback[j]) {
					fallback[j] = true;
					changed = true;
				}
			}
		}
	} while (changed);

	for (i = 0; i < n; i++) {
		if (fallback[i]) {
			c->enter_role = TAF_PROBE_ALLOC_ENTER;
			c->exit_role = TAF_PROBE_ALLOC_EXIT;
			rc = plan_func(names[i], entries[i], sizes[i], c);
			if (rc)
				goto out;
			plan->alloc_fallback++;
			continue;
		}
		for (k = 0; k < fa[i].nsites; k++) {
			const struct as_site *s = &fa[i].sites[k];
			uint32_t idx;

			rc = add_asite(plan, s, names[i], &idx);
			if (!rc)
				rc = pp_add_site(plan, c->bin, s->addr, TAF_PROBE_ALLOC_SITE,
					      names[i], s->emulated);
			if (rc)
				goto out;
			plan->sites[plan->n - 1].aux = idx;
			if ((s->size.kind == TAF_LOC_NONE || s->type.kind == TAF_LOC_NONE) &&
			    pp_index_of(need, nneed, entries[i]) < 0)
				need[nneed++] = entries[i];
		}
		plan->funcs++;
		plan->alloc_anchored++;
	}

	/* Their call sites, and the ALLOC_ARGS probes some of them need. */
	if (nneed) {
		bool chains = false;

		env.type_chains = true;
		rc = as_find_callers(&env, need, nneed, dispatchers,
				     sizeof(dispatchers) / sizeof(dispatchers[0]),
				     &cv, &ncv);
		if (rc)
			goto out;
		for (i = 0; i < ncv; i++) {
			if (cv[i].size.kind == TAF_CVAL_NONE && cv[i].type.kind == TAF_CVAL_NONE)
				continue;
			chains |= cv[i].type.kind == TAF_CVAL_PASS;
			if (cv[i].type.kind == TAF_CVAL_PASS)
				pp_add_hot(plan, &cv[i]);
			rc = pp_add_caller(plan, &cv[i]);
			if (!rc)
				rc = pp_add_capture(c, &cv[i], &pre, &npre, &cappre);
			if (rc)
				goto out;
		}
		if (chains)
			rc = pp_plan_type_chains(c, &env, &pre, &npre, &cappre);
		if (rc)
			goto out;
	}
	rc = 0;
out:
	as_names_free(names, n);
	free(entries);
	free(sizes);
	free(fallback);
	free(need);
	free(fa);
	free(cv);
	free(pre);
	return rc;
}

int probe_plan_build(const struct go_binary *bin, struct probe_plan *plan,
		     char *err, size_t errlen)
{
	struct plan_ctx c = { plan, bin, err, errlen, TAF_PROBE_ALLOC_ENTER,
			      TAF_PROBE_ALLOC_EXIT };
	const char *mode = getenv(PROBE_PLAN_MODE_ENV);
	size_t i;
	int rc;

	memset(plan, 0, sizeof(*plan));
	err[0] = '\0';
	rc = plan_layout(bin, &plan->layout, err, errlen);
	if (rc)
		return rc;
	if (mode && !strcmp(mode, "entry-ret")) {
		rc = -ENOENT;
	} else {
		rc = plan_alloc_sites(&c);
		if (rc && rc != -ENOENT && !err[0])
			snprintf(err, errlen, "cannot plan the allocation probes: %s",
				 strerror(-rc));
	}
	if (rc == -ENOENT) {
		/* Nothing analysable: entry + RETs, as before. */
		plan->n = 0;
		plan->single_stepped = 0;
		plan->funcs = 0;
		plan->nasites = plan->ncallers = 0;
		plan->alloc_anchored = plan->alloc_fallback = 0;
		plan->nhot = 0;
		err[0] = '\0';
		c.enter_role = TAF_PROBE_ALLOC_ENTER;
		c.exit_role = TAF_PROBE_ALLOC_EXIT;
		rc = plan_alloc_entry_ret(&c);
	}
	for (i = 0; rc == 0 && i < sizeof(fixed_funcs) / sizeof(fixed_funcs[0]); i++) {
		c.enter_role = fixed_funcs[i].enter;
		c.exit_role = fixed_funcs[i].exit;
		rc = plan_named(&c, fixed_funcs[i].name);
		/*
		 * A PGO build (the toolchain's own compile, a service with
		 * default.pgo) inlines initSpan into allocSpan; its one callee
		 * setSpans sees the same span, fully set up.
		 */
		if (rc == -ENOENT && fixed_funcs[i].enter == TAF_PROBE_SPAN_INIT) {
			err[0] = '\0';
			c.enter_role = TAF_PROBE_SPAN_SET;
			rc = plan_named(&c, "runtime.(*mheap).setSpans");
			if (rc)
				snprintf(err, errlen, "runtime.(*mheap).initSpan is inlined and setSpans not found: no place to see span allocations");
		}
	}
	if (rc == 0)
		rc = plan_gc_cycle(&c);
	if (rc)
		probe_plan_free(plan);
	return rc;
}

/*
 * --memprofilerate: where a special's kind byte is (runtime/mheap.go,
 * `type special struct { next *special; offset uint16|uintptr; kind byte }`:
 * plan_layout took it from DWARF or the per-version table) and the kind
 * of a heap-profile special,
 * a constant that moved as kinds were added: 2 up to Go 1.22, 3 in
 * 1.23-1.24, 4 from 1.25.
 */
static int plan_special_layout(const struct go_binary *bin,
			       struct taf_layout *l, char *err, size_t errlen)
{
	const struct go_build_info *bi = go_binary_build_info(bin);
	int minor = bi->major == 1 ? bi->minor : 99;

	/* plan_layout set it from DWARF or the per-version table. */
	if (!l->special_kind_off) {
		snprintf(err, errlen, "offset of special.kind unknown for %s",
			 bi->version);
		return -ENOENT;
	}
	l->prof_malloc_has_mp = minor >= 23;
	l->special_kind_profile = minor >= 25 ? 4 : minor >= 23 ? 3 : 2;
	return 0;
}

/*
 * Functions that take an allocation's type, and in which register
 * (runtime/malloc.go, slice.go: newobject(typ), newarray(typ, n),
 * makeslice(et, len, cap), makeslicecopy(et, ...), growslice(oldPtr,
 * newLen, oldCap, num, et), mallocgc(size, typ, needzero)); the producers
 * are added with BX.
 */
static const struct {
	const char *name;
	int reg;
} type_takers[] = {
	{ "runtime.mallocgc", TAF_REG_BX },
	{ "runtime.newobject", TAF_REG_AX },
	{ "runtime.newarray", TAF_REG_AX },
	{ "runtime.makeslice", TAF_REG_AX },
	{ "runtime.makeslicecopy", TAF_REG_AX },
	{ "runtime.growslice", TAF_REG_SI },
};

/* The alloc_callers entries the PROF_MALLOC probe reads types from. */
static int plan_sample_types(struct plan_ctx *c)
{
	struct probe_plan *plan = c->plan;
	struct as_type_target *tt = NULL;
	struct as_caller *cv = NULL;
	struct as_env env;
	char **names = NULL;
	uint64_t *entries = NULL, *inner = NULL;
	size_t n = 0, ntt = 0, ninner = 0, ncv = 0, i;
	int rc;

	if (as_env_init(&env, c->bin))
		return 0;     /* no analysis: records go out without types */
	rc = as_find_producers(c->bin, &names, &entries, &n);
	if (rc)
		n = 0;
	env.producers = entries;
	env.nproducers = n;
	tt = calloc(n + sizeof(type_takers) / sizeof(type_takers[0]), sizeof(*tt));
	inner = calloc(n + 1, sizeof(*inner));
	if (!tt || !inner) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < sizeof(type_takers) / sizeof(type_takers[0]); i++) {
		uint64_t e, sz;

		if (go_binary_find_func(c->bin, type_takers[i].name, &e, &sz))
			continue;
		tt[ntt].entry = e;
		tt[ntt++].type_reg = type_takers[i].reg;
		if (!strcmp(type_takers[i].name, "runtime.mallocgc"))
			inner[ninner++] = e;
	}
	for (i = 0; i < n; i++) {
		/* mallocgcSmallNoscanReuse(c, span, ...) takes no type. */
		if (strstr(names[i], "Reuse"))
			continue;
		tt[ntt].entry = entries[i];
		tt[ntt++].type_reg = TAF_REG_BX;
		inner[ninner++] = entries[i];
	}
	rc = as_find_type_sources(&env, tt, ntt, inner, ninner, &cv, &ncv);
	for (i = 0; rc == 0 && i < ncv; i++)
		rc = pp_add_caller(plan, &cv[i]);
out:
	as_names_free(names, n);
	free(entries);
	free(tt);
	free(inner);
	free(cv);
	return rc;
}

int probe_plan_build_sampled(const struct go_binary *bin,
			     struct probe_plan *plan, char *err, size_t errlen)
{
	struct plan_ctx c = { plan, bin, err, errlen, TAF_PROBE_PROF_MALLOC, 0 };
	int rc;

	memset(plan, 0, sizeof(*plan));
	err[0] = '\0';
	rc = plan_layout(bin, &plan->layout, err, errlen);
	if (rc)
		return rc;
	rc = plan_special_layout(bin, &plan->layout, err, errlen);
	if (rc)
		return rc;
	plan->sampled = true;
	rc = plan_named(&c, "runtime.mProf_Malloc");
	if (rc == 0) {
		plan->layout.prof_malloc_site = plan->sites[plan->n - 1].vaddr;
		c.enter_role = TAF_PROBE_PROF_FREE;
		rc = plan_named(&c, "runtime.freeSpecial");
	}
	if (rc == 0) {
		rc = plan_sample_types(&c);
		if (rc && !err[0])
			snprintf(err, errlen, "cannot find the allocation types: %s",
				 strerror(-rc));
	}
	if (rc == 0)
		rc = plan_gc_cycle(&c);
	if (rc == 0)
		rc = plan_gc_mark(&c);
	if (rc)
		probe_plan_free(plan);
	return rc;
}

void probe_plan_free(struct probe_plan *plan)
{
	free(plan->sites);
	free(plan->asites);
	free(plan->callers);
	memset(plan, 0, sizeof(*plan));
}
