// SPDX-License-Identifier: BSD-3-Clause
/*
 * alloc_sites_producers.c - producers for the allocation-site analysis
 * (alloc_sites.h): the anchor and early probe sites of one allocation
 * function and where the object, size and type are there (as_analyze,
 * as_values_in). Split from alloc_sites.c so the site planning sits apart
 * from the analyses it uses; shared types are in alloc_sites_impl.h.
 */
#include "inspect/alloc_sites_impl.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inspect/disasm.h"
#include "inspect/go_binary.h"
#include "inspect/go_pclntab.h"

/* --- producers ---------------------------------------------------------- */

static int add_site(struct fn *f, size_t i, enum as_site_kind kind)
{
	struct as_func *o = f->out;
	int32_t *before = malloc(sizeof(int32_t) * (size_t)f->nl);
	size_t nl = (size_t)f->nl;
	struct as_site *s;

	if (!before)
		return -ENOMEM;
	if (o->nsites >= AS_MAX_SITES) {
		free(before);
		return as_refuse(f, "more than %d probe sites", AS_MAX_SITES);
	}
	s = &o->sites[o->nsites++];
	memset(s, 0, sizeof(*s));
	s->addr = f->d.insns[i].addr;
	s->kind = kind;
	s->emulated = f->d.insns[i].cost == UPROBE_EMULATED;
	snprintf(s->text, sizeof(s->text), "%s", f->d.insns[i].text);
	s->sp = f->sp[i];
	as_bwd_in(f, i, f->bwd + i * nl, before);
	s->obj = as_pick(f, before, f->sp[i], s->all_obj, &s->n_obj);
	s->size = as_pick(f, f->fwd_size + i * nl, f->sp[i], s->all_size, &s->n_size);
	s->type = as_pick(f, f->fwd_type + i * nl, f->sp[i], s->all_type, &s->n_type);
	/* Sizes and types are never offset: only exact copies count. */
	if (s->size.add)
		s->size.kind = TAF_LOC_NONE;
	if (s->type.add)
		s->type.kind = TAF_LOC_NONE;
	free(before);
	return 0;
}

/* Whether the object is known before instruction i. */
static bool obj_known(const struct fn *f, size_t i, int32_t *tmp)
{
	as_bwd_in(f, i, f->bwd + i * (size_t)f->nl, tmp);
	return as_pick(f, tmp, f->sp[i], NULL, NULL).kind != TAF_LOC_NONE;
}

/* MOVQ (TLS), R14: g reloaded after systemstack & co., still g. */
bool as_loads_g(const struct insn *in)
{
	static const uint8_t b[] = { 0x64, 0x4c, 0x8b, 0x34, 0x25,
				     0xf8, 0xff, 0xff, 0xff };

	return in->len == sizeof(b) && !memcmp(in->bytes, b, sizeof(b));
}

static int plan_sites(struct fn *f)
{
	size_t n = f->n, i, j;
	bool *anchor = calloc(n, 1), *site = calloc(n, 1), *seen = calloc(n, 1),
	     *seen2 = calloc(n, 1), *from_anchor = calloc(n, 1),
	     *stop = calloc(n, 1);
	bool *delegation = calloc(n, 1), *stops = calloc(n, 1),
	     *from_stop = calloc(n, 1);
	uint8_t *cls = calloc(n, 1);
	size_t *cand = calloc(n, sizeof(size_t)), ncand;
	int *stack = malloc(sizeof(int) * (n + 1));
	int32_t *tmp = malloc(sizeof(int32_t) * (size_t)f->nl);
	int rc = 0;

	if (!anchor || !site || !seen || !seen2 || !from_anchor || !stop ||
	    !cls || !cand || !stack || !tmp || !delegation || !stops || !from_stop) {
		rc = -ENOMEM;
		goto out;
	}
	/* Barrier calls, and the first ones on their paths. */
	for (i = 0; i < n; i++)
		anchor[i] = f->reach[i] && f->sem[i].is_call &&
			    f->sem[i].call_target == f->env->barrier;
	for (i = 0; i < n; i++) {
		if (!anchor[i])
			continue;
		as_reach_from(f, i, false, NULL, seen, stack);
		for (j = 0; j < n; j++)
			if (seen[j])
				from_anchor[j] = true;
	}
	for (i = 0; i < n; i++)
		if (anchor[i] && !from_anchor[i]) {
			site[i] = true;
			rc = add_site(f, i, AS_SITE_ANCHOR);
			if (rc)
				goto out;
		}
	for (i = 0; i < n; i++)
		if (anchor[i] && from_anchor[i])
			anchor[i] = false;   /* a later barrier: not a site */

	/*
	 * Delegations: calls of another producer (or of mallocgc's size-class
	 * tables, or persistentalloc) whose result is what the function
	 * returns on every path from them. The callee counts that object (or
	 * it is no heap object): they end a path like a site does.
	 */
	for (i = 0; i < n; i++) {
		const struct isem *sm = &f->sem[i];
		bool deleg;

		if (!f->reach[i] || !sm->is_call)
			continue;
		deleg = sm->call_target ?
			as_in_list(f->env->producers, f->env->nproducers, sm->call_target) ||
			as_in_list(f->env->nonheap, f->env->nnonheap, sm->call_target) :
			f->dispatcher;
		if (deleg && f->bwd[i * (size_t)f->nl + TAF_REG_AX] == 0) {
			delegation[i] = true;
			from_stop[i] = true;
			as_reach_from(f, i, false, NULL, seen, stack);
			for (j = 0; j < n; j++)
				if (seen[j])
					from_stop[j] = true;
		}
	}
	for (i = 0; i < n; i++) {
		stops[i] = site[i] || delegation[i];
		from_stop[i] = from_stop[i] || from_anchor[i];
	}
	rc = as_ret_classes(f, cls, stops);
	if (rc)
		goto out;

	/* Returns of the function's own objects reached without an anchor. */
	as_reach_from(f, f->entry_idx, true, stops, seen, stack);
	for (i = 0; i < n; i++) {
		size_t best = n;

		if (!seen[i] || f->d.insns[i].kind != INSN_RET || cls[i] != AS_RET_OWN)
			continue;
		/* Candidates: emulated, dominate the return among site-free
		 * paths, out of every anchor's reach, not in a loop, and every
		 * path from them returns the object (its location is known). */
		ncand = 0;
		for (j = 0; j < n; j++) {
			size_t k;
			bool other = false;

			if (!seen[j] || j == f->entry_idx ||
			    f->d.insns[j].cost != UPROBE_EMULATED ||
			    f->d.insns[j].kind == INSN_CALL || from_stop[j])
				continue;
			memcpy(stop, stops, n);
			stop[j] = true;
			as_reach_from(f, f->entry_idx, true, stop, seen2, stack);
			if (seen2[i])
				continue;              /* does not dominate */
			as_reach_from(f, j, false, NULL, seen2, stack);
			if (seen2[j])
				continue;              /* in a loop */
			for (k = 0; k < n && !other; k++)
				other = seen2[k] && (site[k] || anchor[k] || delegation[k]);
			if (other || !obj_known(f, j, tmp))
				continue;
			cand[ncand++] = j;
		}
		/* They all dominate the return, so they lie on one chain: take
		 * the latest, the one no other candidate follows. */
		for (j = 0; j < ncand && best == n; j++) {
			size_t k;
			bool later = false;

			as_reach_from(f, cand[j], false, NULL, seen2, stack);
			for (k = 0; k < ncand && !later; k++)
				later = k != j && seen2[cand[k]];
			if (!later)
				best = cand[j];
		}
		if (best == n) {
			rc = as_refuse(f, "no emulated site for the return at %#lx",
				    (unsigned long)f->d.insns[i].addr);
			goto out;
		}
		site[best] = true;
		stops[best] = true;
		rc = add_site(f, best, AS_SITE_EARLY);
		if (rc)
			goto out;
		as_reach_from(f, f->entry_idx, true, stops, seen, stack);
	}

	/* Proof 1: no site follows a site (each fires at most once a call). */
	for (i = 0; i < n; i++) {
		if (!site[i])
			continue;
		as_reach_from(f, i, false, NULL, seen2, stack);
		for (j = 0; j < n; j++)
			if (seen2[j] && site[j]) {
				rc = as_refuse(f, "site %#lx can be followed by site %#lx",
					    (unsigned long)f->d.insns[i].addr,
					    (unsigned long)f->d.insns[j].addr);
				goto out;
			}
	}
	/* Proof 2: the paths that pass neither a site nor a delegation
	 * return a constant (&zerobase) or what another producer or
	 * persistentalloc returned (preMallocgcDebug's x != nil). */
	as_reach_from(f, f->entry_idx, true, stops, seen, stack);
	for (i = 0; i < n; i++) {
		if (!f->reach[i] || f->d.insns[i].kind != INSN_RET)
			continue;
		f->out->n_rets++;
		f->out->n_ret_class[cls[i]]++;
		if (seen[i] && cls[i] == AS_RET_OWN) {
			rc = as_refuse(f, "the return at %#lx passes no site",
				    (unsigned long)f->d.insns[i].addr);
			goto out;
		}
	}
	/* Proof 3: no producer (or unknown function) is called on a path to
	 * a site: its object could be what the site reports. */
	for (i = 0; i < n; i++) {
		bool prod;

		if (!f->reach[i] || !f->sem[i].is_call)
			continue;
		prod = f->sem[i].call_target &&
		       as_in_list(f->env->producers, f->env->nproducers, f->sem[i].call_target);
		if (prod && !as_in_list(f->out->producer_calls, f->out->n_producer_calls,
				     f->sem[i].call_target) &&
		    f->out->n_producer_calls < 16)
			f->out->producer_calls[f->out->n_producer_calls++] =
				f->sem[i].call_target;
		if (!prod && f->d.insns[i].kind != INSN_CALL_IND)
			continue;
		as_reach_from(f, i, false, NULL, seen2, stack);
		for (j = 0; j < n; j++)
			if (seen2[j] && site[j]) {
				rc = as_refuse(f, "a %s call at %#lx precedes site %#lx",
					    prod ? "producer" : "indirect",
					    (unsigned long)f->d.insns[i].addr,
					    (unsigned long)f->d.insns[j].addr);
				goto out;
			}
	}
	if (f->out->nsites == 0)
		rc = as_refuse(f, "no probe site");
	for (i = 0; rc == 0 && i < f->out->nsites; i++) {
		if (f->out->sites[i].obj.kind == TAF_LOC_NONE)
			rc = as_refuse(f, "object not found at site %#lx%s",
				    (unsigned long)f->out->sites[i].addr,
				    f->escaped ? " (the frame's address is taken: every "
				    "call may write any slot)" : "");
		else if (!f->out->sites[i].emulated)
			rc = as_refuse(f, "site %#lx is single-stepped",
				    (unsigned long)f->out->sites[i].addr);
	}
	/* The probes key the pending table by R14 (g): it must stay g. */
	for (i = 0; rc == 0 && i < n; i++)
		if (f->reach[i] && !f->sem[i].is_call && !as_loads_g(&f->d.insns[i]) &&
		    (f->sem[i].wregs >> TAF_REG_R14 & 1))
			rc = as_refuse(f, "R14 written at %#lx",
				    (unsigned long)f->d.insns[i].addr);
out:
	free(delegation);
	free(stops);
	free(from_stop);
	free(anchor);
	free(site);
	free(seen);
	free(seen2);
	free(from_anchor);
	free(stop);
	free(cls);
	free(cand);
	free(stack);
	free(tmp);
	return rc;
}

int as_analyze(const struct as_env *env, const char *name, uint64_t entry,
	       uint64_t size, struct as_func *out)
{
	struct fn f;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", name);
	out->entry = entry;
	out->size = size;
	rc = as_fn_load(&f, env, entry, size);
	f.out = out;
	f.dispatcher = !strcmp(name, "runtime.mallocgc");
	if (rc == -EINVAL)
		goto refused;
	if (rc)
		goto done;
	if (f.entry_idx == 0) {
		as_refuse(&f, "no stack-check prologue");
		goto refused;
	}
	if (f.indirect_jump) {
		as_refuse(&f, "indirect or tail jump");
		goto refused;
	}
	for (i = 0; i < f.n; i++)
		if (f.reach[i] && f.sem[i].is_call &&
		    f.sem[i].call_target == env->barrier &&
		    (uint32_t)-f.sp[i] > out->frame)
			out->frame = (uint32_t)-f.sp[i];
	f.fwd_size = malloc(sizeof(int32_t) * f.n * (size_t)f.nl + 1);
	f.fwd_type = malloc(sizeof(int32_t) * f.n * (size_t)f.nl + 1);
	f.bwd = malloc(sizeof(int32_t) * f.n * (size_t)f.nl + 1);
	f.mirror = malloc(sizeof(struct mir) * f.n * NREGS + 1);
	if (!f.fwd_size || !f.fwd_type || !f.bwd || !f.mirror) {
		rc = -ENOMEM;
		goto done;
	}
	as_forward(&f, TAF_REG_AX, f.fwd_size);
	as_forward(&f, TAF_REG_BX, f.fwd_type);
	as_mirrors(&f);
	as_backward(&f, f.bwd);
	rc = plan_sites(&f);
	if (rc == -EINVAL)
		goto refused;
	goto done;
refused:
	rc = 0;
	out->status = -EINVAL;
	snprintf(out->why, sizeof(out->why), "%s", f.why);
done:
	as_fn_free(&f);
	return rc;
}

int as_values_in(const struct as_env *env, uint64_t entry, uint64_t size,
		 uint64_t lo, uint64_t hi,
		 int (*cb)(const struct as_values *v, void *arg), void *arg)
{
	struct as_func dummy;
	int32_t *before = NULL;
	struct fn f;
	size_t i, nl;
	int rc;

	rc = as_fn_load(&f, env, entry, size);
	f.out = &dummy;
	if (rc)
		goto done;
	nl = (size_t)f.nl;
	f.fwd_size = malloc(sizeof(int32_t) * f.n * nl + 1);
	f.fwd_type = malloc(sizeof(int32_t) * f.n * nl + 1);
	f.bwd = malloc(sizeof(int32_t) * f.n * nl + 1);
	f.mirror = malloc(sizeof(struct mir) * f.n * NREGS + 1);
	before = malloc(sizeof(int32_t) * nl + 1);
	if (!f.fwd_size || !f.fwd_type || !f.bwd || !f.mirror || !before) {
		rc = -ENOMEM;
		goto done;
	}
	as_forward(&f, TAF_REG_AX, f.fwd_size);
	as_forward(&f, TAF_REG_BX, f.fwd_type);
	as_mirrors(&f);
	as_backward(&f, f.bwd);
	for (i = 0; i < f.n && rc == 0; i++) {
		struct as_values v;

		if (!f.reach[i] || f.d.insns[i].addr < lo || f.d.insns[i].addr >= hi)
			continue;
		memset(&v, 0, sizeof(v));
		v.pc = f.d.insns[i].addr;
		v.sp = f.sp[i];
		as_bwd_in(&f, i, f.bwd + i * nl, before);
		as_pick(&f, before, f.sp[i], v.obj, &v.n_obj);
		as_pick(&f, f.fwd_size + i * nl, f.sp[i], v.size, &v.n_size);
		as_pick(&f, f.fwd_type + i * nl, f.sp[i], v.type, &v.n_type);
		rc = cb(&v, arg);
	}
done:
	free(before);
	as_fn_free(&f);
	return rc;
}
