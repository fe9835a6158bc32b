// SPDX-License-Identifier: BSD-3-Clause
/*
 * disasm.c - decode a Go function, classify its instructions by what a
 * uprobe on them costs, find the entry probe site and the RETs.
 *
 * Capstone gives instruction boundaries and text. The classification reads
 * the bytes itself, because the kernel decides on bytes too: what follows
 * restates the rules of arch/x86/kernel/uprobes.c as of Linux 6.x:
 *  - uprobe_init_insn refuses an instruction with an ES/CS/SS/DS segment
 *    or LOCK prefix, MOV to SS, and the one-byte opcodes a user program
 *    cannot run (int3, in/out, hlt, ... listed in refused_opcode()).
 *  - branch_setup_xol_ops emulates: a NOP whose bytes equal the kernel's
 *    x86_nops[len] (len <= 8), any opcode 0x90 (prefixes allowed), jmp
 *    rel8/rel32 (eb/e9), call rel32 (e8), jcc rel8 (70-7f) and rel32
 *    (0f 80-8f). A 0x66 prefix on those branches makes it refuse the probe
 *    (-ENOTSUPP); other prefixes (f2 "bnd", REX) are ignored.
 *  - push_setup_xol_ops emulates push r64: 50-57 alone, or exactly
 *    41 50-57 (r8-r15). 48 55, 66 55 and push imm/mem are single-stepped.
 *  - Everything else is single-stepped out of line, including ret, pop and
 *    multi-byte NOPs that differ from x86_nops (66 0f 1f 84 00 ...).
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disasm.h"
#include "util/grow.h"

/* Bytes of an instruction, split the way the kernel's decoder splits them. */
struct parts {
	uint8_t prefixes[14];
	int nprefix;
	uint8_t rex;       /* 0 when absent */
	bool vex;          /* c4/c5/62 encodings: never branches or pushes */
	uint8_t op[3];
	int nop;           /* opcode bytes */
	int after_op;      /* index of the byte after the opcode */
	int modrm;         /* -1 when the instruction has no ModRM we look at */
};

static bool is_legacy_prefix(uint8_t b)
{
	switch (b) {
	case 0xf0: case 0xf2: case 0xf3:             /* lock, repne, rep */
	case 0x26: case 0x2e: case 0x36: case 0x3e:  /* es cs ss ds */
	case 0x64: case 0x65:                        /* fs gs */
	case 0x66: case 0x67:                        /* operand, address size */
		return true;
	}
	return false;
}

static void split(const uint8_t *b, int len, struct parts *p)
{
	int i = 0;

	memset(p, 0, sizeof(*p));
	p->modrm = -1;
	while (i < len && is_legacy_prefix(b[i]) &&
	       p->nprefix < (int)sizeof(p->prefixes))
		p->prefixes[p->nprefix++] = b[i++];
	if (i < len && (b[i] & 0xf0) == 0x40)
		p->rex = b[i++];
	if (i < len && (b[i] == 0xc4 || b[i] == 0xc5 || b[i] == 0x62)) {
		p->vex = true;
		return;
	}
	if (i >= len)
		return;
	p->op[p->nop++] = b[i++];
	if (p->op[0] == 0x0f && i < len) {
		p->op[p->nop++] = b[i++];
		if ((p->op[1] == 0x38 || p->op[1] == 0x3a) && i < len)
			p->op[p->nop++] = b[i++];
	}
	p->after_op = i;
	if (i < len)
		p->modrm = b[i];
}

static bool has_prefix(const struct parts *p, uint8_t v)
{
	int i;

	for (i = 0; i < p->nprefix; i++)
		if (p->prefixes[i] == v)
			return true;
	return false;
}

static int modrm_reg(const struct parts *p)
{
	return p->modrm < 0 ? -1 : (p->modrm >> 3) & 7;
}

/*
 * One-byte opcodes the kernel refuses to probe in a 64-bit task (the zeros
 * of its good_insns_64 table): invalid in long mode (06 07 0e 16 17 1e 1f
 * 27 2f 37 3f 60 61 62 82 9a ce d4 d5 d6 ea), privileged or trapping
 * (6c-6f ins/outs, e4-e7 ec-ef in/out, cc int3, cd int n, cf iret, f1 int1,
 * f4 hlt, fa cli, fb sti).
 */
static bool refused_opcode(uint8_t op)
{
	switch (op) {
	case 0x06: case 0x07: case 0x0e: case 0x16: case 0x17: case 0x1e:
	case 0x1f: case 0x27: case 0x2f: case 0x37: case 0x3f: case 0x60:
	case 0x61: case 0x62: case 0x6c: case 0x6d: case 0x6e: case 0x6f:
	case 0x82: case 0x9a: case 0xcc: case 0xcd: case 0xce: case 0xcf:
	case 0xd4: case 0xd5: case 0xd6: case 0xe4: case 0xe5: case 0xe6:
	case 0xe7: case 0xea: case 0xec: case 0xed: case 0xee: case 0xef:
	case 0xf1: case 0xf4: case 0xfa: case 0xfb:
		return true;
	}
	return false;
}

/* The kernel's x86_nops[] for 64-bit tasks (arch/x86/include/asm/nops.h). */
static bool is_kernel_nop(const uint8_t *b, int len)
{
	static const uint8_t nops[9][8] = {
		[1] = { 0x90 },
		[2] = { 0x66, 0x90 },
		[3] = { 0x0f, 0x1f, 0x00 },
		[4] = { 0x0f, 0x1f, 0x40, 0x00 },
		[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 },
		[6] = { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
		[7] = { 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 },
		[8] = { 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
	};

	return len >= 1 && len <= 8 && !memcmp(b, nops[len], len);
}

static bool is_cond_jump(const struct parts *p)
{
	if (p->nop == 1)
		return p->op[0] >= 0x70 && p->op[0] <= 0x7f;
	return p->nop == 2 && p->op[0] == 0x0f && p->op[1] >= 0x80 &&
	       p->op[1] <= 0x8f;
}

static enum uprobe_cost uprobe_cost_of(const uint8_t *b, int len,
				       const struct parts *p)
{
	int i;

	/* uprobe_init_insn: is_prefix_bad, insn_masking_exception, tables. */
	for (i = 0; i < p->nprefix; i++)
		switch (p->prefixes[i]) {
		case 0x26: case 0x2e: case 0x36: case 0x3e: case 0xf0:
			return UPROBE_REFUSED;
		}
	if (p->vex)
		return UPROBE_SSTEP;
	if (p->nop == 0)
		return UPROBE_REFUSED;
	if (p->nop == 1 && p->op[0] == 0x8e && modrm_reg(p) == 2)
		return UPROBE_REFUSED; /* mov to ss masks the next trap */
	if (p->nop == 1 && refused_opcode(p->op[0]))
		return UPROBE_REFUSED;

	/* branch_setup_xol_ops. */
	if (is_kernel_nop(b, len))
		return UPROBE_EMULATED;
	if (p->nop == 1 && p->op[0] == 0x90)
		return UPROBE_EMULATED;
	if ((p->nop == 1 && (p->op[0] == 0xeb || p->op[0] == 0xe9 ||
			     p->op[0] == 0xe8)) || is_cond_jump(p))
		return has_prefix(p, 0x66) ? UPROBE_REFUSED : UPROBE_EMULATED;

	/* push_setup_xol_ops. */
	if (p->nop == 1 && p->op[0] >= 0x50 && p->op[0] <= 0x57) {
		if (len == 1)
			return UPROBE_EMULATED;
		if (len == 2 && p->rex == 0x41 && p->nprefix == 0)
			return UPROBE_EMULATED;
	}
	return UPROBE_SSTEP;
}

/*
 * Target of a relative branch: the displacement is what follows the opcode
 * (1, 4, or with a 0x66 prefix 2 bytes, as capstone decodes it).
 */
static uint64_t rel_target(const struct insn *in, const struct parts *p)
{
	const uint8_t *b = in->bytes + p->after_op;
	int n = in->len - p->after_op;
	int64_t d;

	switch (n) {
	case 1: d = (int8_t)b[0]; break;
	case 2: d = (int16_t)(b[0] | b[1] << 8); break;
	case 4: d = (int32_t)(b[0] | b[1] << 8 | b[2] << 16 |
			      (uint32_t)b[3] << 24); break;
	default: return 0;
	}
	return in->addr + in->len + d;
}

static void classify(struct insn *in)
{
	const uint8_t *b = in->bytes;
	int len = in->len;
	struct parts p;

	split(b, len, &p);
	in->kind = INSN_OTHER;
	in->target = 0;
	in->cost = uprobe_cost_of(b, len, &p);
	if (p.vex || p.nop == 0)
		return;

	switch (p.op[0]) {
	case 0xc3: case 0xc2:
		in->kind = INSN_RET;
		return;
	case 0xcc:
		in->kind = INSN_INT3;
		return;
	case 0xe8:
		in->kind = INSN_CALL;
		in->target = rel_target(in, &p);
		return;
	case 0xe9:
	case 0xeb:
		in->kind = INSN_JMP;
		in->target = rel_target(in, &p);
		return;
	case 0xff:
		if (modrm_reg(&p) == 2 || modrm_reg(&p) == 3)
			in->kind = INSN_CALL_IND;
		else if (modrm_reg(&p) == 4 || modrm_reg(&p) == 5)
			in->kind = INSN_JMP_IND;
		return;
	case 0x90:
		/* 41 90 is xchg r8d, eax and f3 90 is pause. */
		if (!(p.rex & 1) && !has_prefix(&p, 0xf3))
			in->kind = INSN_NOP;
		return;
	case 0x0f:
		if (p.nop == 2 && p.op[1] == 0x1f && modrm_reg(&p) == 0)
			in->kind = INSN_NOP;
		else if (is_cond_jump(&p)) {
			in->kind = INSN_JCC;
			in->target = rel_target(in, &p);
		}
		return;
	}
	if (p.op[0] >= 0x70 && p.op[0] <= 0x7f) {
		in->kind = INSN_JCC;
		in->target = rel_target(in, &p);
	} else if (p.op[0] >= 0x50 && p.op[0] <= 0x57) {
		in->kind = INSN_PUSH;
	}
}

static void fill(struct insn *in, const cs_insn *ci)
{
	in->addr = ci->address;
	in->len = (uint8_t)ci->size;
	memcpy(in->bytes, ci->bytes, ci->size);
	/* Long operand strings are cut: the text is for people, not logic. */
	if (snprintf(in->text, sizeof(in->text), "%s%s%s", ci->mnemonic,
		     ci->op_str[0] ? " " : "", ci->op_str) >= (int)sizeof(in->text))
		in->text[sizeof(in->text) - 1] = '\0';
	classify(in);
}

int disasm_one(const uint8_t *code, size_t len, uint64_t addr,
	       struct insn *out)
{
	csh cs;
	cs_insn *ci;
	size_t n;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return -ENOMEM;
	n = cs_disasm(cs, code, len > 15 ? 15 : len, addr, 1, &ci);
	if (n == 1) {
		memset(out, 0, sizeof(*out));
		fill(out, ci);
		cs_free(ci, n);
	}
	cs_close(&cs);
	return n == 1 ? out->len : -EILSEQ;
}

long disasm_index_of(const struct disasm *d, uint64_t addr)
{
	size_t lo = 0, hi = d->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->insns[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->n && d->insns[lo].addr == addr ? (long)lo : -1;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EILSEQ;
}

int disasm_function(const uint8_t *code, size_t len, uint64_t vaddr,
		    struct disasm *out, char *err, size_t errlen)
{
	return disasm_function_hook(code, len, vaddr, out, err, errlen, NULL);
}

int disasm_function_hook(const uint8_t *code, size_t len, uint64_t vaddr,
			 struct disasm *out, char *err, size_t errlen,
			 const struct disasm_hook *hook)
{
	const uint8_t *p = code;
	uint64_t addr = vaddr;
	size_t left = len, cap = len / 3 + 16, i;
	cs_insn *ci;
	csh cs;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->entry = vaddr;
	out->end = vaddr + len;
	if (hook)
		cs = (csh)hook->cs;
	else if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return -ENOMEM;
	ci = cs_malloc(cs);
	out->insns = malloc(cap * sizeof(*out->insns));
	if (!ci || !out->insns) {
		rc = -ENOMEM;
		goto done;
	}
	/* cs_disasm_iter advances p, left and addr by exactly one insn. */
	while (left > 0) {
		uint64_t at = addr;

		if (!cs_disasm_iter(cs, &p, &left, &addr, ci)) {
			rc = fail(err, errlen,
				  "no valid instruction at %#lx (+%#lx): %02x %02x %02x %02x",
				  (unsigned long)at, (unsigned long)(at - vaddr),
				  p[0], left > 1 ? p[1] : 0, left > 2 ? p[2] : 0,
				  left > 3 ? p[3] : 0);
			goto done;
		}
		/* cap starts at len / 3 + 16, never 0. */
		if (!GROW(out->insns, out->n, cap, 16)) {
			rc = -ENOMEM;
			goto done;
		}
		memset(&out->insns[out->n], 0, sizeof(out->insns[0]));
		fill(&out->insns[out->n], ci);
		out->n++;
		if (hook && (rc = hook->cb(hook->arg, out->n - 1, ci)) != 0)
			goto done;
	}

	/* Trailing INT3s are the linker's padding up to the next function. */
	out->n_code = out->n;
	while (out->n_code > 0 && out->insns[out->n_code - 1].kind == INSN_INT3)
		out->n_code--;
	out->code_end = out->n_code ? out->insns[out->n_code - 1].addr +
				      out->insns[out->n_code - 1].len : vaddr;

	/*
	 * The proof of a right decode: a branch into the middle of what we
	 * decoded means we are out of step with the instruction stream.
	 */
	for (i = 0; i < out->n; i++) {
		const struct insn *in = &out->insns[i];

		if (!in->target || in->target < vaddr || in->target >= out->end)
			continue;
		if (disasm_index_of(out, in->target) < 0) {
			rc = fail(err, errlen,
				  "%s at %#lx targets %#lx, inside an instruction",
				  in->text, (unsigned long)in->addr,
				  (unsigned long)in->target);
			goto done;
		}
	}
done:
	if (ci)
		cs_free(ci, 1);
	if (!hook)
		cs_close(&cs);
	if (rc)
		disasm_free(out);
	return rc;
}

void disasm_free(struct disasm *d)
{
	free(d->insns);
	d->insns = NULL;
	d->n = d->n_code = 0;
}

const char *insn_kind_name(enum insn_kind k)
{
	static const char *const names[] = {
		[INSN_OTHER] = "other", [INSN_RET] = "ret",
		[INSN_CALL] = "call", [INSN_CALL_IND] = "call*",
		[INSN_JMP] = "jmp", [INSN_JMP_IND] = "jmp*",
		[INSN_JCC] = "jcc", [INSN_PUSH] = "push",
		[INSN_NOP] = "nop", [INSN_INT3] = "int3",
	};

	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

const char *uprobe_cost_name(enum uprobe_cost c)
{
	switch (c) {
	case UPROBE_EMULATED: return "emulated";
	case UPROBE_SSTEP: return "single-step";
	case UPROBE_REFUSED: return "refused";
	}
	return "?";
}

/* --- Go prologue (cmd/internal/obj/x86/obj6.go stacksplit) ------------ */

static bool bytes_are(const struct insn *in, const uint8_t *b, int n)
{
	return in->len == n && !memcmp(in->bytes, b, n);
}

static bool bytes_start(const struct insn *in, const uint8_t *b, int n)
{
	return in->len >= n && !memcmp(in->bytes, b, n);
}

/* MOVQ (TLS), R14: mov r14, qword ptr fs:[-8]. Only ABI0 code loads g. */
static bool is_load_g(const struct insn *in)
{
	static const uint8_t b[] = { 0x64, 0x4c, 0x8b, 0x34, 0x25,
				     0xf8, 0xff, 0xff, 0xff };
	return bytes_are(in, b, sizeof(b));
}

/* CMPQ SP|R12, 16(R14) (stackguard0) or 24(R14) (stackguard1, CFuncs). */
static bool is_cmp_stackguard(const struct insn *in)
{
	const uint8_t *b = in->bytes;

	return in->len == 4 && (b[0] == 0x49 || b[0] == 0x4d) &&
	       b[1] == 0x3b && b[2] == 0x66 && (b[3] == 0x10 || b[3] == 0x18);
}

/* LEAQ -n(SP), R12 with disp8 or disp32. */
static bool is_lea_r12_sp(const struct insn *in)
{
	static const uint8_t d8[] = { 0x4c, 0x8d, 0x64, 0x24 };
	static const uint8_t d32[] = { 0x4c, 0x8d, 0xa4, 0x24 };

	return (in->len == 5 && bytes_start(in, d8, 4)) ||
	       (in->len == 8 && bytes_start(in, d32, 4));
}

/* MOVQ SP, R12 (either encoding). */
static bool is_mov_r12_sp(const struct insn *in)
{
	static const uint8_t a[] = { 0x49, 0x89, 0xe4 };
	static const uint8_t b[] = { 0x4c, 0x8b, 0xe4 };

	return bytes_are(in, a, 3) || bytes_are(in, b, 3);
}

/* SUBQ $n, R12 (imm8 or imm32). */
static bool is_sub_r12(const struct insn *in)
{
	static const uint8_t i8[] = { 0x49, 0x83, 0xec };
	static const uint8_t i32[] = { 0x49, 0x81, 0xec };

	return (in->len == 4 && bytes_start(in, i8, 3)) ||
	       (in->len == 7 && bytes_start(in, i32, 3));
}

/* Jcc with condition code cc (2 = B/CS, 6 = BE/LS), rel8 or rel32. */
static bool is_jcc(const struct insn *in, uint8_t cc)
{
	return in->kind == INSN_JCC &&
	       ((in->len == 2 && in->bytes[0] == 0x70 + cc) ||
		(in->len == 6 && in->bytes[0] == 0x0f &&
		 in->bytes[1] == 0x80 + cc));
}

/* Index of the first instruction after the prologue, or 0 if none. */
static size_t skip_stack_check(const struct disasm *d)
{
	size_t i = 0, n = d->n_code;

	if (i < n && is_load_g(&d->insns[i]))
		i++;
	if (i < n && (is_mov_r12_sp(&d->insns[i]) ||
		      is_lea_r12_sp(&d->insns[i]))) {
		i++;
		if (i < n && is_sub_r12(&d->insns[i])) {
			i++;
			if (i < n && is_jcc(&d->insns[i], 2))
				i++;
		}
	}
	if (i < n && is_cmp_stackguard(&d->insns[i]) && i + 1 < n &&
	    is_jcc(&d->insns[i + 1], 6))
		return i + 2;
	return 0;
}

int go_entry_probe_site(const struct disasm *d, struct go_entry_site *out)
{
	size_t i, k;

	memset(out, 0, sizeof(*out));
	if (d->n_code == 0)
		return -EINVAL;
	k = skip_stack_check(d);
	if (k >= d->n_code)
		return -EINVAL;
	out->index = k;
	out->addr = d->insns[k].addr;
	out->emulated = d->insns[k].cost == UPROBE_EMULATED;
	out->stack_check = k > 0;
	for (i = 0; i < d->n; i++)
		if (d->insns[i].target == out->addr &&
		    (d->insns[i].kind == INSN_JMP || d->insns[i].kind == INSN_JCC))
			out->branch_target = true;
	return 0;
}

int go_ret_sites(const struct disasm *d, uint64_t *addrs, size_t max,
		 size_t *n)
{
	size_t i, k = 0;

	for (i = 0; i < d->n_code; i++) {
		if (d->insns[i].kind != INSN_RET)
			continue;
		if (k < max)
			addrs[k] = d->insns[i].addr;
		k++;
	}
	*n = k;
	return k > max ? -ENOSPC : 0;
}

size_t go_tail_jumps(const struct disasm *d, size_t *n_indirect)
{
	size_t i, out = 0, ind = 0;

	for (i = 0; i < d->n_code; i++) {
		const struct insn *in = &d->insns[i];

		if (in->kind == INSN_JMP &&
		    (in->target < d->entry || in->target >= d->code_end))
			out++;
		else if (in->kind == INSN_JMP_IND)
			ind++;
	}
	if (n_indirect)
		*n_indirect = ind;
	return out;
}
