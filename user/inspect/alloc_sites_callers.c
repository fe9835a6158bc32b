// SPDX-License-Identifier: BSD-3-Clause
/*
 * alloc_sites_callers.c - callers for the allocation-site analysis
 * (alloc_sites.h): every call of the producers (a byte scan confirmed by
 * decoding the caller, plus the dispatchers' indirect calls) and the size
 * and type there (as_find_callers). Split from alloc_sites.c so the caller
 * scan sits apart from the producer analysis; shared types are in
 * alloc_sites_impl.h.
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
#include "util/grow.h"

/* --- callers ------------------------------------------------------------ */

/* The one instruction control can come to i from, or SIZE_MAX. */
static size_t unique_pred(const struct fn *f, size_t i)
{
	size_t k;

	if (i <= f->entry_idx || f->npred[i] != 1)
		return SIZE_MAX;
	if (f->succ[i - 1][0] == (int)i || f->succ[i - 1][1] == (int)i)
		return i - 1;
	for (k = 0; k < f->n; k++)
		if (f->succ[k][0] == (int)i || f->succ[k][1] == (int)i)
			return f->reach[k] ? k : SIZE_MAX;
	return SIZE_MAX;
}

/*
 * The instruction that last sets register `reg` before instruction c, if
 * every way to c passes one straight-line chain through it, or SIZE_MAX.
 * Functions with jump tables are not trusted (a table could jump into the
 * chain).
 */
size_t as_setter_of(const struct fn *f, size_t c, int reg)
{
	size_t i = c;

	if (f->indirect_jump)
		return SIZE_MAX;
	while ((i = unique_pred(f, i)) != SIZE_MAX) {
		const struct isem *s = &f->sem[i];

		if ((s->const_regs | s->global_regs | s->wregs) >> reg & 1 ||
		    s->dreg == reg)
			return i;
	}
	return SIZE_MAX;
}

/* The constant `reg` holds at c: LEAQ sym(IP), MOVL $imm, XORL. */
bool as_const_at(const struct fn *f, size_t c, int reg, uint64_t *val)
{
	size_t i = as_setter_of(f, c, reg);

	if (i == SIZE_MAX || !(f->sem[i].const_regs >> reg & 1))
		return false;
	*val = f->sem[i].const_val;
	return true;
}

/* The global `reg` was loaded from at c (MOVQ sym(IP), R): its address. */
bool as_global_at(const struct fn *f, size_t c, int reg, uint64_t *addr)
{
	size_t i = as_setter_of(f, c, reg);

	if (i == SIZE_MAX || !(f->sem[i].global_regs >> reg & 1))
		return false;
	*addr = f->sem[i].global_addr;
	return true;
}

/*
 * The emulated instructions from which every way to c goes straight to c
 * without writing AX or BX (a probe there sees the call's arguments),
 * latest first: c itself when it is an emulated (direct) call.
 */
#define MAX_CHAIN 16

static size_t pre_chain(const struct fn *f, size_t c, size_t *chain)
{
	size_t i = c, n = 0;

	if (f->d.insns[c].cost == UPROBE_EMULATED)
		chain[n++] = c;
	if (f->indirect_jump)
		return n;
	while (n < MAX_CHAIN && (i = unique_pred(f, i)) != SIZE_MAX) {
		const struct isem *s = &f->sem[i];

		if (s->is_call || (s->wregs & ((1u << TAF_REG_AX) | (1u << TAF_REG_BX))) ||
		    s->dreg == TAF_REG_AX || s->dreg == TAF_REG_BX)
			break;
		if (f->d.insns[i].cost == UPROBE_EMULATED)
			chain[n++] = i;
	}
	return n;
}

/* The caller's own argument `reg` still in a slot that outlives call c. */
bool as_caller_slot(const struct fn *f, const int32_t *in, size_t c,
			int reg, int32_t *off)
{
	const int32_t *st = in + c * (size_t)f->nl;
	int64_t args = f->sem[c].call_args;
	int i;

	if (st[reg] != 0)
		return false;     /* the argument passed is not the caller's */
	if (args < 0)
		return false;
	for (i = 0; i < f->nslots; i++) {
		int64_t e = f->slot_off[i];

		if (st[NREGS + i] != 0 || e < f->sp[c] + args)
			continue;
		*off = (int32_t)(e - f->sp[c]);
		return true;
	}
	return false;
}

struct callers_ctx {
	const struct as_env *env;
	const uint64_t *targets;
	size_t ntargets;
	const char *const *dispatchers;
	size_t ndispatchers;
	struct as_caller *v;
	size_t n, cap;
	int err;
};

/*
 * The forward state of `reg` (as_forward), computed on the first call that
 * needs it: most calls load constants, and the data flow was a third of
 * the planning time on the toolchain's compile when done for every
 * function up front. *st stays NULL where slots cannot be trusted (no SP
 * offsets, or a jump table). 0 or -ENOMEM.
 */
int as_forward_once(struct fn *f, int reg, int32_t **st)
{
	if (*st || !f->sp_ok || f->indirect_jump)
		return 0;
	*st = malloc(sizeof(int32_t) * f->n * (size_t)f->nl + 1);
	if (!*st)
		return -ENOMEM;
	as_forward(f, reg, *st);
	return 0;
}

bool as_byte_scan(const uint8_t *code, uint64_t entry, uint64_t size,
	       const uint64_t *targets, size_t ntargets)
{
	uint64_t k;

	for (k = 0; k + 5 <= size; k++) {
		int32_t rel;

		if (code[k] != 0xe8)
			continue;
		rel = (int32_t)(code[k + 1] | code[k + 2] << 8 | code[k + 3] << 16 |
				(uint32_t)code[k + 4] << 24);
		if (as_in_list(targets, ntargets, entry + k + 5 + (int64_t)rel))
			return true;
	}
	return false;
}

static int callers_cb(const char *name, uint64_t entry, uint64_t size, void *arg)
{
	struct callers_ctx *c = arg;
	const uint8_t *code = go_binary_bytes(c->env->bin, entry, size);
	bool dispatcher = false;
	int32_t *fs = NULL, *ft = NULL;
	struct {
		size_t caller, n, pick;
		size_t chain[MAX_CHAIN];
	} pend[64];
	size_t npend = 0;
	bool writes_r14 = false;
	struct fn f;
	size_t i, k;
	int rc;

	for (k = 0; k < c->ndispatchers; k++)
		dispatcher |= !strcmp(name, c->dispatchers[k]);
	if (!code || (!dispatcher && !as_byte_scan(code, entry, size, c->targets, c->ntargets)))
		return 0;
	rc = as_fn_load(&f, c->env, entry, size);
	if (rc && rc != -EINVAL)
		goto out;
	if (rc == -EINVAL && !f.cfg_ok) {
		/* Undecodable: its calls cannot be described (they become
		 * records without a type at run time); skip. */
		rc = 0;
		goto out;
	}
	rc = 0;
	for (i = 0; i < f.n; i++)
		if (f.reach[i] && !f.sem[i].is_call && !as_loads_g(&f.d.insns[i]) &&
		    (f.sem[i].wregs >> TAF_REG_R14 & 1))
			writes_r14 = true;
	for (i = 0; i < f.n; i++) {
		const struct insn *in = &f.d.insns[i];
		struct as_caller *a;
		uint64_t v;

		if (!f.reach[i])
			continue;
		if (!(in->kind == INSN_CALL && as_in_list(c->targets, c->ntargets, in->target)) &&
		    !(in->kind == INSN_CALL_IND && dispatcher))
			continue;
		if (!GROW(c->v, c->n, c->cap, 64)) {
			rc = -ENOMEM;
			goto out;
		}
		a = &c->v[c->n++];
		memset(a, 0, sizeof(*a));
		a->call = in->addr;
		a->ret = in->addr + in->len;
		a->callee = in->kind == INSN_CALL ? in->target : 0;
		snprintf(a->func, sizeof(a->func), "%s", name);
		if (as_const_at(&f, i, TAF_REG_AX, &v)) {
			a->size.kind = TAF_CVAL_CONST;
			a->size.val = v;
		} else if ((rc = as_forward_once(&f, TAF_REG_AX, &fs)) != 0) {
			goto out;
		} else if (fs && as_caller_slot(&f, fs, i, TAF_REG_AX, &a->size.off)) {
			a->size.kind = TAF_CVAL_STACK;
		}
		if (as_const_at(&f, i, TAF_REG_BX, &v)) {
			a->type.kind = TAF_CVAL_CONST;
			a->type.val = v;
		} else if ((rc = as_forward_once(&f, TAF_REG_BX, &ft)) != 0) {
			goto out;
		} else if (ft && as_caller_slot(&f, ft, i, TAF_REG_BX, &a->type.off)) {
			a->type.kind = TAF_CVAL_STACK;
		}
		/*
		 * Full mode's type chains (as_find_type_chains): what the
		 * dispatcher passes on unchanged is its own argument, found
		 * by climbing to its caller; the size its producers serve is
		 * bounded by their size class (TAF_CVAL_BOUND).
		 */
		if (dispatcher && c->env->type_chains) {
			size_t at = i * (size_t)f.nl;

			if (!a->type.kind && ft && ft[at + TAF_REG_BX] == 0)
				a->type.kind = TAF_CVAL_PASS;
			if (!a->size.kind && (rc = as_forward_once(&f, TAF_REG_AX, &fs)) != 0)
				goto out;
			if (!a->size.kind && fs && fs[at + TAF_REG_AX] == 0)
				a->size.kind = TAF_CVAL_BOUND;
		}
		if (a->size.kind && a->type.kind)
			continue;
		/* ALLOC_ARGS keys its record by R14 (g), which ABIInternal code
		 * never writes; code that does gets no such probe. */
		if (writes_r14)
			continue;
		if (npend < sizeof(pend) / sizeof(pend[0])) {
			pend[npend].caller = c->n - 1;
			pend[npend].n = pre_chain(&f, i, pend[npend].chain);
			npend++;
		}
	}
	/*
	 * ALLOC_ARGS probes: each call takes the latest instruction of its
	 * chain, unless an instruction chosen for another call lies on its
	 * chain (it fires on this call's way anyway: mallocgc's noscan and
	 * tiny dispatch share the Jcc before them); then the earliest such.
	 */
	for (i = 0; i < npend; i++)
		pend[i].pick = pend[i].n ? pend[i].chain[0] : SIZE_MAX;
	for (i = 0; i < npend; i++) {
		size_t k, m;

		for (m = pend[i].n; m-- > 0;) {
			bool chosen = false;

			for (k = 0; k < npend && !chosen; k++)
				chosen = pend[k].pick == pend[i].chain[m];
			if (chosen) {
				pend[i].pick = pend[i].chain[m];
				break;
			}
		}
	}
	for (i = 0; i < npend; i++) {
		struct as_caller *a = &c->v[pend[i].caller];

		if (pend[i].pick == SIZE_MAX)
			continue;     /* unknown at run time: flagged records */
		a->pre = f.d.insns[pend[i].pick].addr;
		a->pre_emulated = true;
		a->pre_reg = TAF_REG_BX;
		if (!a->size.kind)
			a->size.kind = TAF_CVAL_PENDING;
		if (!a->type.kind)
			a->type.kind = TAF_CVAL_PENDING;
	}
out:
	free(fs);
	free(ft);
	as_fn_free(&f);
	if (rc)
		c->err = rc;
	return rc;
}

/*
 * Appends the n callers of v to *out (cap *cap), taking v's memory when
 * *out is empty. 0 or -ENOMEM.
 */
int as_callers_join(struct as_caller **out, size_t *nout, size_t *cap,
			struct as_caller *v, size_t n, size_t vcap)
{
	if (!*out) {
		*out = v;
		*nout = n;
		*cap = vcap;
		return 0;
	}
	if (*nout + n > *cap) {
		struct as_caller *nv = realloc(*out, (*nout + n) * sizeof(*nv));

		if (!nv) {
			free(v);
			return -ENOMEM;
		}
		*out = nv;
		*cap = *nout + n;
	}
	if (n)   /* memcpy from NULL is undefined even for 0 bytes */
		memcpy(*out + *nout, v, n * sizeof(*v));
	*nout += n;
	free(v);
	return 0;
}

int as_find_callers(const struct as_env *env, const uint64_t *targets,
		    size_t ntargets, const char *const *dispatchers,
		    size_t ndispatchers, struct as_caller **out, size_t *n)
{
	unsigned nw = as_par_workers(), w;
	struct callers_ctx c[8];
	void *ctx[8] = { 0 };
	size_t cap = 0;
	int rc, err = 0;

	*out = NULL;
	*n = 0;
	for (w = 0; w < nw; w++) {
		c[w] = (struct callers_ctx){ .env = env, .targets = targets,
					     .ntargets = ntargets,
					     .dispatchers = dispatchers,
					     .ndispatchers = ndispatchers };
		ctx[w] = &c[w];
	}
	rc = as_par_foreach_func(env->bin, callers_cb, ctx, nw);
	for (w = 0; w < nw; w++) {
		if (!err)
			err = c[w].err;
		if (!err)
			err = as_callers_join(out, n, &cap, c[w].v, c[w].n, c[w].cap);
		else
			free(c[w].v);
	}
	if (rc || err) {
		free(*out);
		*out = NULL;
		*n = 0;
		return err ? err : rc;
	}
	as_callers_sort(*out, *n);
	return 0;
}

/* --- type sources for sampled mode ----------------------------------------- */

/*
 * The function's own argument (the forward state `st` of its entry
 * register) in a slot that outlives call c: the slot's SP-relative offset
 * at c.  Unlike caller_slot the call need not pass it on.
 */
static bool own_slot(const struct fn *f, const int32_t *in, size_t c,
		     int32_t *off)
{
	const int32_t *st = in + c * (size_t)f->nl;
	int64_t args = f->sem[c].call_args;
	int i;

	if (args < 0)
		return false;
	for (i = 0; i < f->nslots; i++) {
		int64_t e = f->slot_off[i];

		if (st[NREGS + i] != 0 || e < f->sp[c] + args)
			continue;
		*off = (int32_t)(e - f->sp[c]);
		return true;
	}
	return false;
}

struct tsrc_ctx {
	const struct as_env *env;
	const struct as_type_target *targets;
	size_t ntargets;
	uint64_t *entries;           /* targets[].entry, for the byte scan */
	const uint64_t *inner;
	size_t ninner;
	struct as_caller *v;
	size_t n, cap;
	int err;
};

static long target_index(const struct tsrc_ctx *c, uint64_t entry)
{
	size_t i;

	for (i = 0; i < c->ntargets; i++)
		if (c->targets[i].entry == entry)
			return (long)i;
	return -1;
}

static int tsrc_add(struct tsrc_ctx *c, const char *name,
		    const struct insn *in, const struct taf_cval *type)
{
	struct as_caller *a;

	if (!GROW(c->v, c->n, c->cap, 64))
		return -ENOMEM;
	a = &c->v[c->n++];
	memset(a, 0, sizeof(*a));
	a->call = in->addr;
	a->ret = in->addr + in->len;
	a->callee = in->kind == INSN_CALL ? in->target : 0;
	a->type = *type;
	snprintf(a->func, sizeof(a->func), "%s", name);
	return 0;
}

static int tsrc_cb(const char *name, uint64_t entry, uint64_t size, void *arg)
{
	struct tsrc_ctx *c = arg;
	const uint8_t *code = go_binary_bytes(c->env->bin, entry, size);
	bool inner = as_in_list(c->inner, c->ninner, entry);
	int32_t *fw[TAF_REG_COUNT] = { NULL };
	struct fn f;
	size_t i;
	int rc, r;

	if (!code || (!inner && !as_byte_scan(code, entry, size, c->entries,
					      c->ntargets)))
		return 0;
	rc = as_fn_load(&f, c->env, entry, size);
	if (rc && rc != -EINVAL)
		goto out;
	rc = 0;
	if (!f.cfg_ok)
		goto out;     /* undecodable: its calls give no type */
	for (i = 0; i < f.n; i++) {
		const struct insn *in = &f.d.insns[i];
		struct taf_cval t = { 0 };
		long ti;
		uint64_t v;

		if (!f.reach[i] ||
		    (in->kind != INSN_CALL && in->kind != INSN_CALL_IND))
			continue;
		ti = in->kind == INSN_CALL ? target_index(c, in->target) : -1;
		if (ti < 0 && !inner)
			continue;
		if (ti >= 0 && as_const_at(&f, i, c->targets[ti].type_reg, &v)) {
			t.kind = TAF_CVAL_CONST;
			t.val = v;
		} else if (ti >= 0 && as_global_at(&f, i, c->targets[ti].type_reg, &v)) {
			t.kind = TAF_CVAL_GLOBAL;
			t.val = v;
		}
		/* A slot needs SP offsets and a complete CFG. */
		r = ti >= 0 ? c->targets[ti].type_reg : TAF_REG_BX;
		if (!t.kind && f.sp_ok && !f.indirect_jump && !fw[r]) {
			fw[r] = malloc(sizeof(int32_t) * f.n * (size_t)f.nl + 1);
			if (!fw[r]) {
				rc = -ENOMEM;
				goto out;
			}
			as_forward(&f, r, fw[r]);
		}
		if (!t.kind && ti >= 0 && fw[r] &&
		    as_caller_slot(&f, fw[r], i, r, &t.off))
			t.kind = TAF_CVAL_STACK;
		/* mallocgc's and a producer's own type (BX at entry) kept
		 * across this call. */
		if (!t.kind && inner && fw[TAF_REG_BX] == NULL && f.sp_ok &&
		    !f.indirect_jump) {
			fw[TAF_REG_BX] = malloc(sizeof(int32_t) * f.n * (size_t)f.nl + 1);
			if (!fw[TAF_REG_BX]) {
				rc = -ENOMEM;
				goto out;
			}
			as_forward(&f, TAF_REG_BX, fw[TAF_REG_BX]);
		}
		if (!t.kind && inner && fw[TAF_REG_BX] &&
		    own_slot(&f, fw[TAF_REG_BX], i, &t.off))
			t.kind = TAF_CVAL_STACK;
		if (t.kind) {
			rc = tsrc_add(c, name, in, &t);
			if (rc)
				goto out;
		}
	}
out:
	for (r = 0; r < TAF_REG_COUNT; r++)
		free(fw[r]);
	as_fn_free(&f);
	if (rc)
		c->err = rc;
	return rc;
}

int as_find_type_sources(const struct as_env *env,
			 const struct as_type_target *targets, size_t ntargets,
			 const uint64_t *inner, size_t ninner,
			 struct as_caller **out, size_t *n)
{
	unsigned nw = as_par_workers(), w;
	struct tsrc_ctx c[8];
	void *ctx[8] = { 0 };
	uint64_t *entries;
	size_t i, cap = 0;
	int rc, err = 0;

	*out = NULL;
	*n = 0;
	entries = calloc(ntargets + 1, sizeof(*entries));
	if (!entries)
		return -ENOMEM;
	for (i = 0; i < ntargets; i++)
		entries[i] = targets[i].entry;
	for (w = 0; w < nw; w++) {
		c[w] = (struct tsrc_ctx){ .env = env, .targets = targets,
					  .ntargets = ntargets, .entries = entries,
					  .inner = inner, .ninner = ninner };
		ctx[w] = &c[w];
	}
	rc = as_par_foreach_func(env->bin, tsrc_cb, ctx, nw);
	free(entries);
	for (w = 0; w < nw; w++) {
		if (!err)
			err = c[w].err;
		if (!err)
			err = as_callers_join(out, n, &cap, c[w].v, c[w].n, c[w].cap);
		else
			free(c[w].v);
	}
	if (rc || err) {
		free(*out);
		*out = NULL;
		*n = 0;
		return err ? err : rc;
	}
	as_callers_sort(*out, *n);
	return 0;
}
