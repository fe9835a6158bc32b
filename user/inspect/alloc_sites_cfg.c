// SPDX-License-Identifier: BSD-3-Clause
/*
 * alloc_sites_cfg.c - one function for the allocation-site analysis
 * (alloc_sites.h): decode it, build the CFG over direct branches, the SP
 * offset at every instruction and the 8-byte stack slots it uses
 * (struct fn, alloc_sites_impl.h). Split from alloc_sites.c so the
 * per-function setup sits apart from the analyses run on it.
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

/* --- one function: decode, CFG, SP, slots --------------------------------- */

int as_slot_index(const struct fn *f, int64_t entry_off)
{
	int i;

	for (i = 0; i < f->nslots; i++)
		if (f->slot_off[i] == entry_off)
			return NREGS + i;
	return -1;
}

static void add_slot(struct fn *f, int64_t entry_off)
{
	if (as_slot_index(f, entry_off) >= 0 || f->nslots >= MAX_SLOTS)
		return;
	f->slot_off[f->nslots++] = entry_off;
}

static void add_succ(struct fn *f, size_t i, long j)
{
	int k;

	/* Branches back into the stack check (morestack) are not followed:
	 * the registers come back as they were at the entry. */
	if (j < 0 || (size_t)j <= f->entry_idx)
		return;
	for (k = 0; k < 2; k++)
		if (f->succ[i][k] < 0) {
			f->succ[i][k] = (int)j;
			if (f->npred[j] < UINT16_MAX)
				f->npred[j]++;
			return;
		}
}

static void build_cfg(struct fn *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		f->succ[i][0] = f->succ[i][1] = -1;
	for (i = 0; i < f->n; i++) {
		const struct insn *in = &f->d.insns[i];
		long t;

		switch (in->kind) {
		case INSN_RET:
		case INSN_INT3:
		case INSN_JMP_IND:
			break;
		case INSN_JMP:
			t = disasm_index_of(&f->d, in->target);
			if (t >= 0 && (size_t)t < f->n)
				add_succ(f, i, t);
			break;
		case INSN_JCC:
			t = disasm_index_of(&f->d, in->target);
			if (t >= 0 && (size_t)t < f->n)
				add_succ(f, i, t);
			if (i + 1 < f->n)
				add_succ(f, i, (long)i + 1);
			break;
		case INSN_CALL:
		case INSN_CALL_IND:
			if (!f->sem[i].noreturn && i + 1 < f->n)
				add_succ(f, i, (long)i + 1);
			break;
		default:
			/* UD2 ends a path too. */
			if (in->len == 2 && in->bytes[0] == 0x0f && in->bytes[1] == 0x0b)
				break;
			if (i + 1 < f->n)
				add_succ(f, i, (long)i + 1);
		}
	}
}

/* Marks what is reachable from `from` avoiding `stop`; `from` itself only
 * when include_from (else only if a path comes back to it). */
void as_reach_from(const struct fn *f, size_t from, bool include_from,
		const bool *stop, bool *seen, int *stack)
{
	size_t top = 0, i;
	int k;

	memset(seen, 0, f->n);
	if (include_from) {
		seen[from] = true;
		stack[top++] = (int)from;
	} else {
		for (k = 0; k < 2; k++) {
			int j = f->succ[from][k];

			if (j >= 0 && !seen[j] && !(stop && stop[j])) {
				seen[j] = true;
				stack[top++] = j;
			}
		}
	}
	while (top) {
		i = (size_t)stack[--top];
		for (k = 0; k < 2; k++) {
			int j = f->succ[i][k];

			if (j >= 0 && !seen[j] && !(stop && stop[j])) {
				seen[j] = true;
				stack[top++] = j;
			}
		}
	}
}

static int sp_offsets(struct fn *f)
{
	bool *known = calloc(f->n, 1);
	int *work = malloc(sizeof(int) * (f->n + 1));
	size_t top = 0;
	int rc = 0;

	if (!known || !work) {
		rc = -ENOMEM;
		goto out;
	}
	f->sp[f->entry_idx] = 0;
	known[f->entry_idx] = true;
	work[top++] = (int)f->entry_idx;
	while (top) {
		size_t i = (size_t)work[--top];
		const struct isem *s = &f->sem[i];
		int64_t after = f->sp[i];
		int k;

		if (s->sp_kind == SP_UNKNOWN) {
			rc = as_refuse(f, "%s at %#lx changes SP in a way not followed",
				    f->d.insns[i].text, (unsigned long)f->d.insns[i].addr);
			goto out;
		}
		if (s->sp_kind == SP_DELTA)
			after += s->sp_delta;
		for (k = 0; k < 2; k++) {
			int j = f->succ[i][k];

			if (j < 0)
				continue;
			if (!known[j]) {
				known[j] = true;
				f->sp[j] = after;
				work[top++] = j;
			} else if (f->sp[j] != after) {
				rc = as_refuse(f, "SP differs at %#lx on two paths",
					    (unsigned long)f->d.insns[j].addr);
				goto out;
			}
		}
	}
	f->sp_ok = true;
out:
	free(known);
	free(work);
	return rc;
}

void as_fn_free(struct fn *f)
{
	disasm_free(&f->d);
	free(f->sem);
	free(f->succ);
	free(f->npred);
	free(f->reach);
	free(f->sp);
	free(f->fwd_size);
	free(f->fwd_type);
	free(f->bwd);
	free(f->mirror);
	memset(f, 0, sizeof(*f));
}

struct describe_ctx {
	struct fn *f;
	csh cs;
	size_t cap;            /* of f->sem */
};

/* Room for n facts in f->sem, the new ones zero. 0 or -ENOMEM. */
static int sem_reserve(struct describe_ctx *c, size_t n)
{
	struct fn *f = c->f;
	size_t cap = c->cap ? c->cap : 256;
	struct isem *v;

	if (n <= c->cap)
		return 0;
	while (cap < n)
		cap *= 2;
	v = realloc(f->sem, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memset(v + c->cap, 0, (cap - c->cap) * sizeof(*v));
	f->sem = v;
	c->cap = cap;
	return 0;
}

/* Per instruction, from disasm_function_hook: its facts (as_describe). */
static int describe_cb(void *arg, size_t i, const void *ci)
{
	struct describe_ctx *c = arg;

	if (sem_reserve(c, i + 2))
		return -ENOMEM;
	as_describe(c->f, c->cs, i, ci);
	return 0;
}

/*
 * Decodes [entry, entry+size), builds the CFG from the entry probe site,
 * SP offsets and the slot table. Returns 0, -EINVAL (why in f->why: the
 * analyses cannot run), -EFAULT or -ENOMEM.
 *
 * One capstone pass with operand details gives both the instruction list
 * (disasm.h) and the facts of each (as_describe): decoding twice was half
 * of the planning time on big binaries.
 */
int as_fn_load(struct fn *f, const struct as_env *env, uint64_t entry,
	    uint64_t size)
{
	struct describe_ctx dc = { .f = f };
	struct disasm_hook hook = { .cb = describe_cb, .arg = &dc };
	struct go_entry_site es;
	const uint8_t *code;
	char derr[160];
	int *stack = NULL;
	size_t i;
	int rc = 0;

	memset(f, 0, sizeof(*f));
	f->env = env;
	code = go_binary_bytes(env->bin, entry, size);
	if (!code)
		return -EFAULT;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &dc.cs) != CS_ERR_OK)
		return -ENOMEM;
	cs_option(dc.cs, CS_OPT_DETAIL, CS_OPT_ON);
	hook.cs = (size_t)dc.cs;
	rc = disasm_function_hook(code, size, entry, &f->d, derr, sizeof(derr),
				  &hook);
	cs_close(&dc.cs);
	if (rc == -ENOMEM)
		return rc;
	if (rc)
		return as_refuse(f, "cannot decode: %s", derr);
	f->n = f->d.n_code;
	/* Past the code (padding) the facts are zero, as before. */
	if (sem_reserve(&dc, f->n + 1))
		return -ENOMEM;
	memset(f->sem + f->n, 0, (dc.cap - f->n) * sizeof(*f->sem));
	f->succ = calloc(f->n + 1, sizeof(*f->succ));
	f->npred = calloc(f->n + 1, sizeof(*f->npred));
	f->reach = calloc(f->n + 1, 1);
	f->sp = calloc(f->n + 1, sizeof(*f->sp));
	stack = malloc(sizeof(int) * (f->n + 1));
	if (!f->sem || !f->succ || !f->npred || !f->reach || !f->sp || !stack) {
		rc = -ENOMEM;
		goto out;
	}
	if (go_entry_probe_site(&f->d, &es) || !es.stack_check) {
		/* No stack check (NOSPLIT): the analysis starts at the entry. */
		f->entry_idx = 0;
	} else {
		f->entry_idx = es.index;
	}
	build_cfg(f);
	as_reach_from(f, f->entry_idx, true, NULL, f->reach, stack);
	f->cfg_ok = true;
	for (i = 0; i < f->n; i++) {
		const struct insn *in = &f->d.insns[i];

		if (!f->reach[i])
			continue;
		if (in->kind == INSN_JMP_IND)
			f->indirect_jump = true;
		if (in->kind == INSN_JMP &&
		    (in->target < f->d.entry || in->target >= f->d.code_end))
			f->indirect_jump = true;    /* a tail jump: also an exit */
		if (f->sem[i].lea_sp)
			f->escaped = true;
	}
	rc = sp_offsets(f);
	if (rc)
		goto out;
	for (i = 0; i < f->n; i++) {
		const struct isem *s = &f->sem[i];

		if (f->reach[i] && (s->copy == COPY_RS || s->copy == COPY_SR))
			add_slot(f, f->sp[i] + s->disp);
	}
	f->nl = NREGS + f->nslots;
out:
	free(stack);
	return rc;
}
