// SPDX-License-Identifier: BSD-3-Clause
/*
 * alloc_sites_chain.c - type chains for full mode (alloc_sites.h,
 * as_find_type_chains).
 *
 * Go 1.27's mallocgc hands small allocations to the size-class producers
 * through its tables (mallocNoScanTable[size](size, typ, needzero)); the
 * producers drop typ before their publicationBarrier, and mallocgc keeps
 * it nowhere.  Its callers do know it, in a few ways: a constant (the
 * compiler's LEAQ type(SB) before newobject or makeslice, rawstring's
 * nil), a package variable (convT64's uint64Type), a slot, or their own
 * argument passed on (makeslice(et) -> mallocgc(mem, et), newarray,
 * growslice's SI, internal/runtime/maps' typ.Group, one load from their
 * own argument).  For the last two the caller's callers are described in
 * turn, level by level, so that the alloc-site probe climbs the frame
 * pointers from the producer to the first call that says where the type
 * is: one trap per allocation.  A call whose type is none of those (a
 * type computed at run time: reflect.New's) gets an ALLOC_ARGS probe on
 * the call itself, so only that path pays a second trap.
 *
 * Sound by construction: an entry says what a register holds at one CALL
 * instruction, the callee is that instruction's direct target, and PASS
 * only claims "at this call, register r is my entry value of q" where the
 * forward analysis proves it on every path and the morestack path (which
 * reloads only the declared arguments before jumping back to the entry)
 * keeps q.  A frame without an entry ends the climb unresolved.
 */
#include "inspect/alloc_sites_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inspect/go_binary.h"
#include "util/grow.h"

/* Go's integer argument registers, in ABI order (abi-internal.md). */
static const int arg_regs[] = {
	TAF_REG_AX, TAF_REG_BX, TAF_REG_CX, TAF_REG_DI, TAF_REG_SI,
	TAF_REG_R8, TAF_REG_R9, TAF_REG_R10, TAF_REG_R11,
};
#define NARGS (sizeof(arg_regs) / sizeof(arg_regs[0]))

struct chain_target {
	uint64_t entry;
	int reg;
};

/* A caller that passes its own q on: it becomes a target (merge_level). */
struct chain_prop {
	uint64_t call;        /* the call described (index found by address) */
	uint64_t entry;       /* the calling function */
	int reg;
	int type_reg;         /* the callee's type register at the call */
	bool capture_ok;      /* an ALLOC_ARGS probe on the call would do */
};

struct chain_ctx {
	const struct as_env *env;
	const struct chain_target *targets;
	size_t ntargets;
	const uint64_t *entries;     /* targets[].entry, for the byte scan */
	bool pass_ok;                /* this level may propose PASS */
	const uint64_t *morestack;
	size_t nmorestack;
	struct as_caller *v;
	size_t n, cap;
	struct chain_prop *p;
	size_t np, pcap;
	unsigned unknown;
	int err;
};

static long find_target(const struct chain_ctx *c, uint64_t entry)
{
	size_t i;

	for (i = 0; i < c->ntargets; i++)
		if (c->targets[i].entry == entry)
			return (long)i;
	return -1;
}

/* PUSHQ BP; MOVQ SP, BP at the entry: the climb can read its frame. */
static bool has_frame_pointer(const struct fn *f)
{
	const struct insn *a = &f->d.insns[f->entry_idx];

	if (f->entry_idx + 1 >= f->n)
		return false;
	return a->len == 1 && a->bytes[0] == 0x55 &&
	       f->d.insns[f->entry_idx + 1].len == 3 &&
	       !memcmp(f->d.insns[f->entry_idx + 1].bytes, "\x48\x89\xe5", 3);
}

/*
 * The registers the morestack path gives back before jumping to the
 * entry (the spilled arguments it reloads): every register if the
 * function has no stack check.
 */
static uint32_t morestack_keeps(const struct fn *f, const uint64_t *ms, size_t nms)
{
	uint32_t keep = 0;
	bool any = false;
	size_t i, k;

	for (i = 0; i < f->d.n_code; i++) {
		const struct insn *in = &f->d.insns[i];

		if (in->kind != INSN_CALL || !as_in_list(ms, nms, in->target))
			continue;
		any = true;
		for (k = i + 1; k < f->n && f->d.insns[k].kind != INSN_JMP; k++)
			keep |= f->sem[k].wregs;
	}
	return any ? keep : ~0u;
}

static struct as_caller *add_caller(struct chain_ctx *c)
{
	struct as_caller *a;

	if (!GROW(c->v, c->n, c->cap, 64))
		return NULL;
	a = &c->v[c->n++];
	memset(a, 0, sizeof(*a));
	return a;
}

static int add_prop(struct chain_ctx *c, const struct chain_prop *p)
{
	if (!GROW(c->p, c->np, c->pcap, 16))
		return -ENOMEM;
	c->p[c->np++] = *p;
	return 0;
}

/* The argument q whose entry value `loc` holds before instruction i. */
static int passed_arg(struct fn *f, int32_t **fw, size_t i, int loc, int *q)
{
	size_t k;
	int rc;

	for (k = 0; k < NARGS; k++) {
		rc = as_forward_once(f, arg_regs[k], &fw[arg_regs[k]]);
		if (rc)
			return rc;
		if (fw[arg_regs[k]] && fw[arg_regs[k]][i * (size_t)f->nl + (size_t)loc] == 0) {
			*q = arg_regs[k];
			return 1;
		}
	}
	return 0;
}

static int chain_cb(const char *name, uint64_t entry, uint64_t size, void *arg)
{
	struct chain_ctx *c = arg;
	const uint8_t *code = go_binary_bytes(c->env->bin, entry, size);
	int32_t *fw[TAF_REG_COUNT] = { NULL };
	bool writes_r14 = false, can_pass;
	uint32_t keep;
	struct fn f;
	size_t i;
	int rc, r;

	if (!code || !as_byte_scan(code, entry, size, c->entries, c->ntargets))
		return 0;
	rc = as_fn_load(&f, c->env, entry, size);
	if (rc && rc != -EINVAL)
		goto out;
	rc = 0;
	if (!f.cfg_ok) {
		c->unknown++;     /* undecodable: its calls stay undescribed */
		goto out;
	}
	for (i = 0; i < f.n; i++)
		if (f.reach[i] && !f.sem[i].is_call && !as_loads_g(&f.d.insns[i]) &&
		    (f.sem[i].wregs >> TAF_REG_R14 & 1))
			writes_r14 = true;
	keep = morestack_keeps(&f, c->morestack, c->nmorestack);
	can_pass = c->pass_ok && has_frame_pointer(&f) &&
		   !as_in_list(c->env->producers, c->env->nproducers, entry);
	for (i = 0; i < f.n; i++) {
		const struct insn *in = &f.d.insns[i];
		struct chain_prop p = { 0 };
		struct as_caller *a;
		long ti;
		uint64_t v;
		size_t k;
		int q = -1, got;

		if (!f.reach[i] || in->kind != INSN_CALL)
			continue;
		ti = find_target(c, in->target);
		if (ti < 0)
			continue;
		r = c->targets[ti].reg;
		a = add_caller(c);
		if (!a) {
			rc = -ENOMEM;
			goto out;
		}
		a->call = in->addr;
		a->ret = in->addr + in->len;
		a->callee = in->target;
		snprintf(a->func, sizeof(a->func), "%s", name);
		if (as_const_at(&f, i, r, &v)) {
			a->type.kind = TAF_CVAL_CONST;
			a->type.val = v;
			continue;
		}
		if (as_global_at(&f, i, r, &v)) {
			a->type.kind = TAF_CVAL_GLOBAL;
			a->type.val = v;
			continue;
		}
		got = passed_arg(&f, fw, i, r, &q);
		if (got < 0) {
			rc = got;
			goto out;
		}
		if (got && as_caller_slot(&f, fw[q], i, r, &a->type.off)) {
			a->type.kind = TAF_CVAL_STACK;
			continue;
		}
		if (got && can_pass && (keep >> q & 1)) {
			a->type.kind = TAF_CVAL_PASS;
		} else if (!got && can_pass &&
			   (k = as_setter_of(&f, i, r)) != SIZE_MAX &&
			   f.sem[k].load && f.sem[k].load_dreg == r) {
			/* r = disp(base) where base is an argument here. */
			got = passed_arg(&f, fw, k, f.sem[k].load_base, &q);
			if (got < 0) {
				rc = got;
				goto out;
			}
			if (got && (keep >> q & 1)) {
				a->type.kind = TAF_CVAL_PASS_DEREF;
				a->type.off = (int32_t)f.sem[k].load_disp;
			}
		}
		p.capture_ok = !writes_r14 && in->cost == UPROBE_EMULATED;
		if (a->type.kind) {
			p.call = a->call;
			p.entry = entry;
			p.reg = q;
			p.type_reg = r;
			rc = add_prop(c, &p);
			if (rc)
				goto out;
			continue;
		}
		if (p.capture_ok) {
			a->type.kind = TAF_CVAL_PENDING;
			a->pre = in->addr;
			a->pre_emulated = true;
			a->pre_reg = (uint8_t)r;
		} else {
			c->n--;   /* no entry: the climb ends there, flagged */
			c->unknown++;
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

static int cmp_prop(const void *a, const void *b)
{
	const struct chain_prop *x = a, *y = b;

	if (x->entry != y->entry)
		return x->entry < y->entry ? -1 : 1;
	return x->call < y->call ? -1 : x->call > y->call;
}

struct chain_state {
	struct chain_target *known;   /* every function made a target */
	size_t nknown, capknown;
	struct chain_target *next;    /* the next level's targets */
	size_t nnext, capnext;
};

static int push_target(struct chain_target **v, size_t *n, size_t *cap,
		       uint64_t entry, int reg)
{
	if (!GROW(*v, *n, *cap, 16))
		return -ENOMEM;
	(*v)[*n].entry = entry;
	(*v)[*n].reg = reg;
	(*n)++;
	return 0;
}

static struct as_caller *caller_at(struct as_caller *v, size_t n, uint64_t call)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].call == call)
			return &v[i];
	return NULL;
}

/*
 * The level's PASS proposals, in a fixed order: a function passes one
 * register on (its callers' entries describe that one); a second one
 * makes that call a capture (or undescribed).
 */
static int merge_level(struct chain_state *s, struct chain_prop *p, size_t np,
		       struct as_caller *v, size_t nv, struct as_chain_stats *st)
{
	size_t i, k;
	int rc;

	if (np > 1)
		qsort(p, np, sizeof(*p), cmp_prop);
	for (i = 0; i < np; i++) {
		struct as_caller *a = caller_at(v, nv, p[i].call);
		long found = -1;

		if (!a)
			continue;
		for (k = 0; k < s->nknown && found < 0; k++)
			if (s->known[k].entry == p[i].entry)
				found = (long)k;
		if (found >= 0 && s->known[found].reg == p[i].reg)
			continue;
		if (found >= 0) {
			if (p[i].capture_ok) {
				a->type.kind = TAF_CVAL_PENDING;
				a->type.off = 0;
				a->pre = a->call;
				a->pre_emulated = true;
				a->pre_reg = (uint8_t)p[i].type_reg;
			} else {
				a->type.kind = TAF_CVAL_NONE;
				st->unknown++;
			}
			continue;
		}
		rc = push_target(&s->known, &s->nknown, &s->capknown,
				 p[i].entry, p[i].reg);
		if (!rc)
			rc = push_target(&s->next, &s->nnext, &s->capnext,
					 p[i].entry, p[i].reg);
		if (rc)
			return rc;
		st->passers++;
	}
	return 0;
}

/* Drops the entries merge_level left without a type. */
static size_t drop_untyped(struct as_caller *v, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (v[i].type.kind != TAF_CVAL_NONE)
			v[k++] = v[i];
	return k;
}

static int scan_level(const struct as_env *env, const struct chain_target *t,
		      size_t nt, bool pass_ok, const uint64_t *ms, size_t nms,
		      struct as_caller **v, size_t *nv, struct chain_prop **p,
		      size_t *np, unsigned *unknown)
{
	unsigned nw = as_par_workers(), w;
	struct chain_ctx c[8];
	void *ctx[8];
	uint64_t *entries = calloc(nt + 1, sizeof(*entries));
	size_t i, cap = 0;
	int rc, err = 0;

	*v = NULL;
	*nv = 0;
	*p = NULL;
	*np = 0;
	if (!entries)
		return -ENOMEM;
	for (i = 0; i < nt; i++)
		entries[i] = t[i].entry;
	for (w = 0; w < nw; w++) {
		c[w] = (struct chain_ctx){ .env = env, .targets = t, .ntargets = nt,
					   .entries = entries, .pass_ok = pass_ok,
					   .morestack = ms, .nmorestack = nms };
		ctx[w] = &c[w];
	}
	rc = as_par_foreach_func(env->bin, chain_cb, ctx, nw);
	free(entries);
	for (w = 0; w < nw; w++) {
		*unknown += c[w].unknown;
		if (!err)
			err = c[w].err;
		if (!err)
			err = as_callers_join(v, nv, &cap, c[w].v, c[w].n, c[w].cap);
		else
			free(c[w].v);
		if (!err && c[w].np) {
			struct chain_prop *n2 = realloc(*p, (*np + c[w].np) * sizeof(**p));

			if (!n2) {
				err = -ENOMEM;
			} else {
				*p = n2;
				memcpy(*p + *np, c[w].p, c[w].np * sizeof(**p));
				*np += c[w].np;
			}
		}
		free(c[w].p);
	}
	return err ? err : rc;
}

int as_find_type_chains(const struct as_env *env,
			const struct as_type_target *roots, size_t nroots,
			unsigned max_hops, struct as_caller **out, size_t *n,
			struct as_chain_stats *st)
{
	static const char *const morestack_names[] = {
		"runtime.morestack.abi0", "runtime.morestack_noctxt.abi0",
		"runtime.morestack", "runtime.morestack_noctxt",
	};
	struct chain_state s = { 0 };
	struct chain_target *level = NULL;
	uint64_t ms[4];
	size_t nlevel = 0, nms = 0, cap = 0, lcap = 0, i;
	unsigned depth;
	int rc = 0;

	*out = NULL;
	*n = 0;
	memset(st, 0, sizeof(*st));
	for (i = 0; i < sizeof(morestack_names) / sizeof(morestack_names[0]); i++) {
		uint64_t e, sz;

		if (!go_binary_find_func(env->bin, morestack_names[i], &e, &sz))
			ms[nms++] = e;
	}
	for (i = 0; i < nroots && rc == 0; i++) {
		rc = push_target(&s.known, &s.nknown, &s.capknown,
				 roots[i].entry, roots[i].type_reg);
		if (!rc)
			rc = push_target(&level, &nlevel, &lcap, roots[i].entry,
					 roots[i].type_reg);
	}
	/* Level d's entries are read at the climb's step d. */
	for (depth = 1; rc == 0 && nlevel && depth <= max_hops; depth++) {
		struct as_caller *v;
		struct chain_prop *p;
		size_t nv, np;

		rc = scan_level(env, level, nlevel, depth < max_hops, ms, nms,
				&v, &nv, &p, &np, &st->unknown);
		if (!rc) {
			s.nnext = 0;
			rc = merge_level(&s, p, np, v, nv, st);
		}
		free(p);
		if (!rc) {
			for (i = 0; i < nv; i++)
				st->captured += v[i].type.kind == TAF_CVAL_PENDING &&
						v[i].pre == v[i].call;
			nv = drop_untyped(v, nv);
			rc = as_callers_join(out, n, &cap, v, nv, nv);
		} else {
			free(v);
		}
		st->levels++;
		free(level);
		level = s.next;
		nlevel = s.nnext;
		lcap = s.capnext;
		s.next = NULL;
		s.nnext = s.capnext = 0;
	}
	free(level);
	free(s.known);
	free(s.next);
	if (rc) {
		free(*out);
		*out = NULL;
		*n = 0;
		return rc;
	}
	as_callers_sort(*out, *n);
	return 0;
}
