// SPDX-License-Identifier: BSD-3-Clause
/*
 * alloc_sites_flow.c - the value analyses of the allocation-site analysis
 * (alloc_sites.h): forward (size, type) and backward (the result) data flow
 * over registers and stack slots with a constant addend, the register
 * mirrors of slots, and the provenance classes of RETs. Split from
 * alloc_sites.c so the data flow sits apart from its clients (producers,
 * callers); shared types are in alloc_sites_impl.h.
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

/* --- the value analyses ------------------------------------------------- */

static int32_t meet(int32_t a, int32_t b)
{
	if (a == ST_TOP)
		return b;
	if (b == ST_TOP || a == b)
		return a;
	return ST_NONE;
}

/* dst = meet(dst, src) element-wise; true when dst changed. */
static bool meet_into(int32_t *dst, const int32_t *src, int n)
{
	bool changed = false;
	int l;

	for (l = 0; l < n; l++) {
		int32_t m = meet(dst[l], src[l]);

		if (m != dst[l]) {
			dst[l] = m;
			changed = true;
		}
	}
	return changed;
}

static int32_t shift(int32_t d, int64_t k)
{
	if (d == ST_TOP || d == ST_NONE)
		return d;
	if (d + k <= -MAX_ADD || d + k >= MAX_ADD)
		return ST_NONE;
	return (int32_t)(d + k);
}

/* What a location known two ways holds: the first fact that is one. */
static int32_t either(int32_t a, int32_t b)
{
	if (a != ST_NONE && a != ST_TOP)
		return a;
	if (b != ST_NONE && b != ST_TOP)
		return b;
	return a == ST_TOP || b == ST_TOP ? ST_TOP : ST_NONE;
}

/* Removes every slot overlapping [lo, hi) (entry-relative). */
static void kill_range(const struct fn *f, int32_t *st, int64_t lo, int64_t hi)
{
	int i;

	for (i = 0; i < f->nslots; i++)
		if (f->slot_off[i] < hi && f->slot_off[i] + 8 > lo)
			st[NREGS + i] = ST_NONE;
}

static void kill_all_slots(const struct fn *f, int32_t *st)
{
	int i;

	for (i = 0; i < f->nslots; i++)
		st[NREGS + i] = ST_NONE;
}

/* What instruction i clobbers (a copy's or add's destination aside). */
static void kill(const struct fn *f, size_t i, int32_t *st)
{
	const struct isem *s = &f->sem[i];
	int64_t sp = f->sp[i];
	int r, k;

	for (r = 0; r < NREGS; r++)
		if (s->wregs >> r & 1)
			st[r] = ST_NONE;
	if (s->is_call) {
		/* The callee's frames and its argument area (or all if unknown). */
		if (s->call_args < 0 || f->escaped)
			kill_all_slots(f, st);
		else
			kill_range(f, st, INT64_MIN / 2, sp + s->call_args);
		return;
	}
	for (k = 0; k < s->nsw; k++)
		kill_range(f, st, sp + s->sw_disp[k], sp + s->sw_disp[k] + s->sw_size[k]);
	if (s->sw_any || (s->other_write && f->escaped))
		kill_all_slots(f, st);
	/* Popping the frame: what lies below SP is no longer ours. */
	if (s->sp_kind == SP_DELTA && s->sp_delta > 0)
		kill_range(f, st, INT64_MIN / 2, sp + s->sp_delta);
}

/* Forward: where the value is after instruction i (content + d = value). */
static void fwd_transfer(const struct fn *f, size_t i, const int32_t *in,
			 int32_t *out)
{
	const struct isem *s = &f->sem[i];
	int64_t sp = f->sp[i];
	int slot;

	memcpy(out, in, sizeof(*out) * (size_t)f->nl);
	switch (s->copy) {
	case COPY_RR:
		out[s->dreg] = in[s->sreg];
		return;
	case COPY_RS:
		slot = as_slot_index(f, sp + s->disp);
		out[s->dreg] = slot >= 0 ? in[slot] : ST_NONE;
		return;
	case COPY_SR:
		kill_range(f, out, sp + s->disp, sp + s->disp + 8);
		slot = as_slot_index(f, sp + s->disp);
		if (slot >= 0)
			out[slot] = in[s->sreg];
		return;
	case COPY_ADD:
		/* dst = src + k: value = src + d = dst - k + d */
		out[s->dreg] = shift(in[s->sreg], -s->disp);
		return;
	}
	kill(f, i, out);
}

/* Backward: where the result is before instruction i, given after. */
static void bwd_transfer(const struct fn *f, size_t i, const int32_t *out,
			 int32_t *in)
{
	const struct isem *s = &f->sem[i];
	int64_t sp = f->sp[i];
	int slot, l;

	if (f->d.insns[i].kind == INSN_RET) {
		for (l = 0; l < f->nl; l++)
			in[l] = ST_NONE;
		in[TAF_REG_AX] = 0;
		return;
	}
	memcpy(in, out, sizeof(*in) * (size_t)f->nl);
	switch (s->copy) {
	case COPY_RR:
		if (s->dreg != s->sreg) {
			in[s->dreg] = ST_NONE;
			in[s->sreg] = either(out[s->dreg], out[s->sreg]);
		}
		return;
	case COPY_RS:
		in[s->dreg] = ST_NONE;
		slot = as_slot_index(f, sp + s->disp);
		if (slot >= 0)
			in[slot] = either(out[s->dreg], out[slot]);
		return;
	case COPY_SR:
		slot = as_slot_index(f, sp + s->disp);
		kill_range(f, in, sp + s->disp, sp + s->disp + 8);
		if (slot >= 0)
			in[s->sreg] = either(out[slot], out[s->sreg]);
		return;
	case COPY_ADD:
		/* result = dst + d = src + k + d */
		if (s->dreg != s->sreg) {
			in[s->dreg] = ST_NONE;
			in[s->sreg] = either(shift(out[s->dreg], s->disp), out[s->sreg]);
		} else {
			in[s->sreg] = shift(out[s->dreg], s->disp);
		}
		return;
	}
	kill(f, i, in);
}

/* Forward analysis of where the entry value of register `reg` is. */
void as_forward(struct fn *f, int reg, int32_t *in)
{
	int32_t *out = malloc(sizeof(*out) * (size_t)f->nl);
	size_t nl = (size_t)f->nl, i;
	bool changed = true;
	int l;

	if (!out)
		return;
	for (i = 0; i < f->n * nl; i++)
		in[i] = ST_TOP;
	for (l = 0; l < f->nl; l++)
		in[f->entry_idx * nl + (size_t)l] = ST_NONE;
	in[f->entry_idx * nl + (size_t)reg] = 0;
	while (changed) {
		changed = false;
		for (i = 0; i < f->n; i++) {
			int k;

			if (!f->reach[i])
				continue;
			fwd_transfer(f, i, in + i * nl, out);
			for (k = 0; k < 2; k++) {
				int j = f->succ[i][k];
				int32_t *nx;

				if (j < 0 || (size_t)j == f->entry_idx)
					continue;
				nx = in + (size_t)j * nl;
				if (meet_into(nx, out, f->nl))
					changed = true;
			}
		}
	}
	free(out);
}

/*
 * Which stack slot each register is a copy of, on every path (forward):
 * the backward analysis loses that a register loaded from a slot still
 * equals it, so at a merge where one path has the value in the register
 * and the other in the slot it would keep neither.
 */
#define M_TOP (-2)
#define M_NONE (-1)

static void mirror_transfer(const struct fn *f, size_t i, const struct mir *in,
			    struct mir *out)
{
	const struct isem *s = &f->sem[i];
	int32_t probe[NREGS + MAX_SLOTS];
	int r, slot = -1;

	memcpy(out, in, sizeof(*out) * NREGS);
	if (s->copy == COPY_RS || s->copy == COPY_SR)
		slot = as_slot_index(f, f->sp[i] + s->disp);
	/* Slots written: registers mirroring them no longer do. */
	for (r = 0; r < f->nl; r++)
		probe[r] = 0;
	if (s->copy == COPY_SR)
		kill_range(f, probe, f->sp[i] + s->disp, f->sp[i] + s->disp + 8);
	else if (s->copy == COPY_NONE)
		kill(f, i, probe);
	for (r = 0; r < NREGS; r++)
		if (out[r].slot >= 0 && probe[out[r].slot] == ST_NONE)
			out[r].slot = M_NONE;
	switch (s->copy) {
	case COPY_RR:
		out[s->dreg] = in[s->sreg].slot >= 0 ? in[s->sreg] :
			       (struct mir){ M_NONE, 0 };
		return;
	case COPY_RS:
		out[s->dreg] = (struct mir){ slot >= 0 ? (int16_t)slot : M_NONE, 0 };
		return;
	case COPY_SR:
		if (slot >= 0)
			out[s->sreg] = (struct mir){ (int16_t)slot, 0 };
		return;
	case COPY_ADD:
		/* dst = src + disp = content(slot) + k + disp */
		if (in[s->sreg].slot >= 0 && in[s->sreg].k + s->disp > -MAX_ADD &&
		    in[s->sreg].k + s->disp < MAX_ADD)
			out[s->dreg] = (struct mir){ in[s->sreg].slot,
						     (int16_t)(in[s->sreg].k + s->disp) };
		else
			out[s->dreg] = (struct mir){ M_NONE, 0 };
		return;
	}
	for (r = 0; r < NREGS; r++)
		if (s->wregs >> r & 1)
			out[r].slot = M_NONE;
}

void as_mirrors(struct fn *f)
{
	struct mir out[NREGS];
	bool changed = true;
	size_t i;
	int r;

	for (i = 0; i < f->n * NREGS; i++)
		f->mirror[i] = (struct mir){ M_TOP, 0 };
	for (r = 0; r < NREGS; r++)
		f->mirror[f->entry_idx * NREGS + r].slot = M_NONE;
	while (changed) {
		changed = false;
		for (i = 0; i < f->n; i++) {
			int k;

			if (!f->reach[i])
				continue;
			mirror_transfer(f, i, f->mirror + i * NREGS, out);
			for (k = 0; k < 2; k++) {
				int j = f->succ[i][k];
				struct mir *nx;

				if (j < 0 || (size_t)j == f->entry_idx)
					continue;
				nx = f->mirror + (size_t)j * NREGS;
				for (r = 0; r < NREGS; r++) {
					struct mir m;

					if (nx[r].slot == M_TOP)
						m = out[r];
					else if (out[r].slot == M_TOP ||
						 (out[r].slot == nx[r].slot && out[r].k == nx[r].k))
						m = nx[r];
					else
						m = (struct mir){ M_NONE, 0 };
					if (m.slot != nx[r].slot || m.k != nx[r].k) {
						nx[r] = m;
						changed = true;
					}
				}
			}
		}
	}
}

static bool valid(int32_t d)
{
	return d != ST_NONE && d != ST_TOP;
}

/* Where the result is before instruction i, with the mirrors applied. */
void as_bwd_in(const struct fn *f, size_t i, const int32_t *out, int32_t *in)
{
	const struct mir *m;
	int r;

	bwd_transfer(f, i, out, in);
	if (!f->mirror)
		return;
	m = f->mirror + i * NREGS;
	for (r = 0; r < NREGS; r++) {
		int sl = m[r].slot;

		if (sl < 0)
			continue;
		/* r = slot + k: result = r + d = slot + (d + k) */
		if (valid(in[r]) && !valid(in[sl]))
			in[sl] = shift(in[r], m[r].k);
		else if (valid(in[sl]) && !valid(in[r]))
			in[r] = shift(in[sl], -m[r].k);
	}
}

/* Backward analysis of where the returned value is (OUT states). */
void as_backward(struct fn *f, int32_t *out)
{
	int32_t *in = malloc(sizeof(*in) * (size_t)f->nl);
	size_t nl = (size_t)f->nl, i;
	bool changed = true;

	if (!in)
		return;
	for (i = 0; i < f->n * nl; i++)
		out[i] = ST_TOP;
	while (changed) {
		changed = false;
		for (i = f->n; i-- > 0;) {
			int32_t *cur = out + i * nl;
			int k;

			if (!f->reach[i])
				continue;
			for (k = 0; k < 2; k++) {
				int j = f->succ[i][k];

				if (j < 0)
					continue;
				as_bwd_in(f, (size_t)j, out + (size_t)j * nl, in);
				if (meet_into(cur, in, f->nl))
					changed = true;
			}
		}
	}
	free(in);
}

bool as_in_list(const uint64_t *v, size_t n, uint64_t x)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

/*
 * Provenance of AX at every RET: forward tags per location, over the paths
 * that do not pass a `stop` instruction (the anchors: what they lead to is
 * counted by them; a RET shared with an anchored path is classed by the
 * other paths to it).
 */
int as_ret_classes(struct fn *f, uint8_t *ret_class, const bool *stop)
{
	size_t n = f->n, i, nl = (size_t)f->nl;
	uint8_t *tin = malloc(n * nl), *tout = malloc(nl);
	int32_t *probe = malloc(sizeof(int32_t) * nl);
	bool changed = true;

	if (!tin || !tout || !probe) {
		free(tin);
		free(tout);
		free(probe);
		return -ENOMEM;
	}
	memset(tin, T_TOP, n * nl);
	memset(tin + f->entry_idx * nl, T_OTHER, nl);
	while (changed) {
		changed = false;
		for (i = 0; i < n; i++) {
			const struct isem *s = &f->sem[i];
			uint8_t *cur = tin + i * nl;
			size_t l;
			int k;

			if (!f->reach[i] || (stop && stop[i]))
				continue;
			memcpy(tout, cur, nl);
			/* What the instruction clobbers, by the same rules. */
			for (l = 0; l < nl; l++)
				probe[l] = 0;
			if (s->copy == COPY_NONE)
				kill(f, i, probe);
			else if (s->copy == COPY_SR)
				kill_range(f, probe, f->sp[i] + s->disp, f->sp[i] + s->disp + 8);
			else if (s->dreg >= 0)
				probe[s->dreg] = ST_NONE;
			for (l = 0; l < nl; l++)
				if (probe[l] == ST_NONE)
					tout[l] = T_OTHER;
			if (s->copy == COPY_RR) {
				tout[s->dreg] = cur[s->sreg];
			} else if (s->copy == COPY_RS) {
				int sl = as_slot_index(f, f->sp[i] + s->disp);

				tout[s->dreg] = sl >= 0 ? cur[sl] : T_OTHER;
			} else if (s->copy == COPY_SR) {
				int sl = as_slot_index(f, f->sp[i] + s->disp);

				if (sl >= 0)
					tout[sl] = cur[s->sreg];
			}
			for (l = 0; l < NREGS; l++)
				if (s->const_regs >> l & 1)
					tout[l] = T_CONST;
			if (s->is_call && s->call_target) {
				if (as_in_list(f->env->producers, f->env->nproducers, s->call_target))
					tout[TAF_REG_AX] = T_PROD;
				else if (as_in_list(f->env->nonheap, f->env->nnonheap, s->call_target))
					tout[TAF_REG_AX] = T_NONHEAP;
			} else if (s->is_call && f->dispatcher) {
				/* mallocNoScanTable[size](...), mallocScanTable:
				 * the size-specialised producers count it. */
				tout[TAF_REG_AX] = T_PROD;
			}
			for (k = 0; k < 2; k++) {
				int j = f->succ[i][k];
				uint8_t *nx;

				if (j < 0 || (size_t)j == f->entry_idx)
					continue;
				nx = tin + (size_t)j * nl;
				for (l = 0; l < nl; l++) {
					uint8_t m = nx[l] == T_TOP ? tout[l] :
						    tout[l] == T_TOP || tout[l] == nx[l] ? nx[l] :
						    T_OTHER;

					if (m != nx[l]) {
						nx[l] = m;
						changed = true;
					}
				}
			}
		}
	}
	for (i = 0; i < n; i++) {
		uint8_t t = tin[i * nl + TAF_REG_AX];

		if (!f->reach[i] || f->d.insns[i].kind != INSN_RET)
			continue;
		ret_class[i] = t == T_CONST ? AS_RET_CONST :
			       t == T_PROD ? AS_RET_DELEGATED :
			       t == T_NONHEAP ? AS_RET_PERSISTENT : AS_RET_OWN;
	}
	free(tin);
	free(tout);
	free(probe);
	return 0;
}

/* Every location of st (SP-relative at sp); the best first: registers. */
struct taf_loc as_pick(const struct fn *f, const int32_t *st, int64_t sp,
		    struct taf_loc *all, unsigned *nall)
{
	struct taf_loc best = { 0 };
	int l;

	if (nall)
		*nall = 0;
	for (l = 0; l < f->nl; l++) {
		struct taf_loc c = { 0 };

		if (st[l] == ST_NONE || st[l] == ST_TOP)
			continue;
		if (l < NREGS) {
			if (l == TAF_REG_BP)
				continue;
			c.kind = TAF_LOC_REG;
			c.reg = (uint8_t)l;
		} else {
			int64_t off = f->slot_off[l - NREGS] - sp;

			/* Below SP is not ours; keep to what BPF can address. */
			if (off < 0 || off > 0xffff)
				continue;
			c.kind = TAF_LOC_STACK;
			c.off = (int32_t)off;
		}
		c.add = (int16_t)st[l];
		if (all && *nall < 8)
			all[(*nall)++] = c;
		if (best.kind == TAF_LOC_NONE)
			best = c;
	}
	return best;
}
