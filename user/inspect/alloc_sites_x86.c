// SPDX-License-Identifier: BSD-3-Clause
/*
 * alloc_sites_x86.c - the x86 semantics of the allocation-site analysis
 * (alloc_sites.h): capstone registers mapped to enum taf_reg, and each
 * instruction reduced to the few facts the analyses need (struct isem).
 * Split from alloc_sites.c so the ISA knowledge sits apart from the
 * analyses; shared types are in alloc_sites_impl.h.
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

/* --- registers ---------------------------------------------------------- */

#define REG_SP 100
#define REG_IP 101

static int reg_of(unsigned r)
{
	switch (r) {
	case X86_REG_RAX: case X86_REG_EAX: case X86_REG_AX: case X86_REG_AL: case X86_REG_AH:
		return TAF_REG_AX;
	case X86_REG_RBX: case X86_REG_EBX: case X86_REG_BX: case X86_REG_BL: case X86_REG_BH:
		return TAF_REG_BX;
	case X86_REG_RCX: case X86_REG_ECX: case X86_REG_CX: case X86_REG_CL: case X86_REG_CH:
		return TAF_REG_CX;
	case X86_REG_RDX: case X86_REG_EDX: case X86_REG_DX: case X86_REG_DL: case X86_REG_DH:
		return TAF_REG_DX;
	case X86_REG_RSI: case X86_REG_ESI: case X86_REG_SI: case X86_REG_SIL:
		return TAF_REG_SI;
	case X86_REG_RDI: case X86_REG_EDI: case X86_REG_DI: case X86_REG_DIL:
		return TAF_REG_DI;
	case X86_REG_RBP: case X86_REG_EBP: case X86_REG_BP: case X86_REG_BPL:
		return TAF_REG_BP;
	case X86_REG_R8: case X86_REG_R8D: case X86_REG_R8W: case X86_REG_R8B: return TAF_REG_R8;
	case X86_REG_R9: case X86_REG_R9D: case X86_REG_R9W: case X86_REG_R9B: return TAF_REG_R9;
	case X86_REG_R10: case X86_REG_R10D: case X86_REG_R10W: case X86_REG_R10B: return TAF_REG_R10;
	case X86_REG_R11: case X86_REG_R11D: case X86_REG_R11W: case X86_REG_R11B: return TAF_REG_R11;
	case X86_REG_R12: case X86_REG_R12D: case X86_REG_R12W: case X86_REG_R12B: return TAF_REG_R12;
	case X86_REG_R13: case X86_REG_R13D: case X86_REG_R13W: case X86_REG_R13B: return TAF_REG_R13;
	case X86_REG_R14: case X86_REG_R14D: case X86_REG_R14W: case X86_REG_R14B: return TAF_REG_R14;
	case X86_REG_R15: case X86_REG_R15D: case X86_REG_R15W: case X86_REG_R15B: return TAF_REG_R15;
	case X86_REG_RSP: case X86_REG_ESP: case X86_REG_SP: case X86_REG_SPL:
		return REG_SP;
	case X86_REG_RIP: case X86_REG_EIP:
		return REG_IP;
	}
	return -1;
}

static bool is_r64(unsigned r)
{
	switch (r) {
	case X86_REG_RAX: case X86_REG_RBX: case X86_REG_RCX: case X86_REG_RDX:
	case X86_REG_RSI: case X86_REG_RDI: case X86_REG_RBP: case X86_REG_R8:
	case X86_REG_R9: case X86_REG_R10: case X86_REG_R11: case X86_REG_R12:
	case X86_REG_R13: case X86_REG_R14: case X86_REG_R15:
		return true;
	}
	return false;
}

static bool is_r32(unsigned r)
{
	switch (r) {
	case X86_REG_EAX: case X86_REG_EBX: case X86_REG_ECX: case X86_REG_EDX:
	case X86_REG_ESI: case X86_REG_EDI: case X86_REG_EBP: case X86_REG_R8D:
	case X86_REG_R9D: case X86_REG_R10D: case X86_REG_R11D: case X86_REG_R12D:
	case X86_REG_R13D: case X86_REG_R14D: case X86_REG_R15D:
		return true;
	}
	return false;
}

static const char *const reg_names[NREGS] = {
	"AX", "BX", "CX", "DX", "SI", "DI", "BP", "R8", "R9", "R10", "R11",
	"R12", "R13", "R14", "R15",
};

const char *as_loc_str(const struct taf_loc *l, char *buf, size_t len)
{
	char add[16] = "";

	if (l->add)
		snprintf(add, sizeof(add), "%+d", l->add);
	switch (l->kind) {
	case TAF_LOC_REG:
		snprintf(buf, len, "%s%s", l->reg < NREGS ? reg_names[l->reg] : "?", add);
		break;
	case TAF_LOC_STACK:
		snprintf(buf, len, "%#x(SP)%s", l->off, add);
		break;
	default:
		snprintf(buf, len, "-");
	}
	return buf;
}

const char *as_cval_str(const struct taf_cval *v, char *buf, size_t len)
{
	switch (v->kind) {
	case TAF_CVAL_CONST:
		snprintf(buf, len, "$%#llx", (unsigned long long)v->val);
		break;
	case TAF_CVAL_STACK:
		snprintf(buf, len, "caller %#x(SP)", v->off);
		break;
	case TAF_CVAL_PENDING:
		snprintf(buf, len, "pending");
		break;
	case TAF_CVAL_GLOBAL:
		snprintf(buf, len, "global %#llx", (unsigned long long)v->val);
		break;
	case TAF_CVAL_PASS:
		snprintf(buf, len, "pass");
		break;
	case TAF_CVAL_PASS_DEREF:
		snprintf(buf, len, "pass+deref %#x", v->off);
		break;
	case TAF_CVAL_BOUND:
		snprintf(buf, len, "bound");
		break;
	default:
		snprintf(buf, len, "-");
	}
	return buf;
}

/* --- instruction facts --------------------------------------------------- */

/* Instructions whose first operand is read, not written. */
static bool first_op_read_only(unsigned id)
{
	switch (id) {
	case X86_INS_CMP: case X86_INS_TEST: case X86_INS_BT: case X86_INS_PUSH:
	case X86_INS_CALL: case X86_INS_JMP: case X86_INS_NOP:
	case X86_INS_PREFETCH: case X86_INS_PREFETCHNTA: case X86_INS_PREFETCHT0:
	case X86_INS_PREFETCHT1: case X86_INS_PREFETCHT2: case X86_INS_PREFETCHW:
	case X86_INS_UCOMISD: case X86_INS_UCOMISS: case X86_INS_COMISD:
	case X86_INS_COMISS: case X86_INS_PTEST: case X86_INS_VPTEST:
	case X86_INS_CLFLUSH:
		return true;
	}
	return false;
}

static bool writes_all_operands(unsigned id)
{
	return id == X86_INS_XCHG || id == X86_INS_XADD ||
	       id == X86_INS_CMPXCHG || id == X86_INS_CMPXCHG8B ||
	       id == X86_INS_CMPXCHG16B;
}

static bool is_string_op(unsigned id)
{
	switch (id) {
	case X86_INS_STOSB: case X86_INS_STOSW: case X86_INS_STOSD: case X86_INS_STOSQ:
	case X86_INS_MOVSB: case X86_INS_MOVSW: case X86_INS_MOVSD: case X86_INS_MOVSQ:
		return true;
	}
	return false;
}

static void add_wreg(struct isem *s, unsigned r)
{
	int k = reg_of(r);

	if (k >= 0 && k < NREGS)
		s->wregs |= 1u << k;
	else if (k == REG_SP && s->sp_kind == SP_NONE)
		s->sp_kind = SP_UNKNOWN;
}

static void mem_write(struct isem *s, const cs_x86_op *op)
{
	int base = reg_of(op->mem.base);

	if (op->mem.segment != X86_REG_INVALID) {
		s->other_write = true;    /* fs:/gs: TLS, not the stack */
	} else if (base == REG_SP) {
		if (op->mem.index != X86_REG_INVALID || s->nsw == 2) {
			s->sw_any = true;
		} else {
			s->sw_disp[s->nsw] = op->mem.disp;
			s->sw_size[s->nsw] = op->size ? op->size : 64;
			s->nsw++;
		}
	} else if (base == TAF_REG_BP) {
		s->sw_any = true;         /* the frame pointer points at the frame */
	} else {
		s->other_write = true;
	}
}

static bool sp_mem(const cs_x86_op *op)
{
	return op->type == X86_OP_MEM && op->mem.base == X86_REG_RSP &&
	       op->mem.index == X86_REG_INVALID &&
	       op->mem.segment == X86_REG_INVALID;
}

/* Callee's _func.args from the pclntab (Go 1.18+ layout); -1 if unknown. */
static int64_t callee_args(const struct go_binary *bin, uint64_t target)
{
	const struct go_pclntab *t = go_binary_pclntab(bin);
	uint64_t lo = 0, hi;

	if (!t || (t->magic != GO_PCLNTAB_MAGIC_118 &&
		   t->magic != GO_PCLNTAB_MAGIC_120))
		return -1;
	hi = t->nfunc;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		const uint8_t *e = t->data + t->pcln_off + mid * 8;
		uint64_t entry;

		if (t->pcln_off + mid * 8 + 8 > t->len)
			return -1;
		entry = t->text_start + (e[0] | e[1] << 8 | e[2] << 16 | (uint64_t)e[3] << 24);
		if (entry == target) {
			uint64_t fo = t->pcln_off + (e[4] | e[5] << 8 | e[6] << 16 | (uint64_t)e[7] << 24);
			const uint8_t *p = t->data + fo + 8;
			int32_t args;

			if (fo + 12 > t->len)
				return -1;
			args = (int32_t)(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24);
			return args < 0 ? -1 : args;
		}
		if (entry < target)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* Functions after whose call no instruction of the caller runs. */
static bool is_noreturn(const char *name)
{
	static const char *const exact[] = {
		"runtime.throw", "runtime.fatal", "runtime.fatalthrow",
		"runtime.fatalpanic", "runtime.gopanic", "runtime.panicmem",
		"runtime.panicmemAddr", "runtime.panicdivide", "runtime.panicshift",
		"runtime.panicwrap", "runtime.panicnildottype",
		"runtime.panicdottypeE", "runtime.panicdottypeI",
		"runtime.panicunsafeslicelen", "runtime.panicunsafeslicenilptr",
		"runtime.panicunsafestringlen", "runtime.panicunsafestringnilptr",
		"runtime.panicrangestate", "runtime.panicoverflow",
		"runtime.panicfloat", "runtime.panicnilmap",
		/* Go 1.26+: every bounds check panics through these. */
		"runtime.panicBounds", "runtime.panicBounds64",
	};
	size_t i;

	if (!strncmp(name, "runtime.panicIndex", 18) ||
	    !strncmp(name, "runtime.panicSlice", 18) ||
	    !strncmp(name, "runtime.goPanicIndex", 20) ||
	    !strncmp(name, "runtime.goPanicSlice", 20) ||
	    !strncmp(name, "runtime.panicExtend", 19))
		return true;
	for (i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(name, exact[i]))
			return true;
	return false;
}

void as_describe(struct fn *f, csh cs, size_t i, const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;
	struct isem *s = &f->sem[i];
	const struct insn *in = &f->d.insns[i];
	cs_regs rr, rw;
	uint8_t nr = 0, nw = 0, k;
	unsigned id = ci->id;

	memset(s, 0, sizeof(*s));
	s->call_args = -1;
	s->dreg = s->sreg = -1;

	/* Stack pointer arithmetic Go emits: prologue, epilogue, calls. */
	if (id == X86_INS_PUSH) {
		s->sp_kind = SP_DELTA;
		s->sp_delta = -8;
		s->sw_disp[0] = -8;
		s->sw_size[0] = 8;
		s->nsw = 1;
		return;
	}
	if (id == X86_INS_POP) {
		s->sp_kind = SP_DELTA;
		s->sp_delta = 8;
		if (x->op_count == 1 && x->operands[0].type == X86_OP_REG)
			add_wreg(s, x->operands[0].reg);
		else
			s->sp_kind = SP_UNKNOWN;
		return;
	}
	if ((id == X86_INS_SUB || id == X86_INS_ADD) && x->op_count == 2 &&
	    x->operands[0].type == X86_OP_REG &&
	    x->operands[0].reg == X86_REG_RSP &&
	    x->operands[1].type == X86_OP_IMM) {
		s->sp_kind = SP_DELTA;
		s->sp_delta = id == X86_INS_SUB ? -x->operands[1].imm :
						   x->operands[1].imm;
		return;
	}
	if (in->kind == INSN_CALL || in->kind == INSN_CALL_IND) {
		struct go_func gf;

		s->is_call = true;
		s->wregs = ((1u << NREGS) - 1) & ~(1u << TAF_REG_R14);
		if (in->kind == INSN_CALL) {
			s->call_target = in->target;
			s->call_args = callee_args(f->env->bin, in->target);
			if (!go_pclntab_find_pc(go_binary_pclntab(f->env->bin),
						in->target, &gf) &&
			    gf.entry == in->target) {
				s->noreturn = is_noreturn(gf.name);
				/*
				 * runtime.gcWriteBarrier<N> (asm_amd64.s) does not
				 * follow the ABI: it returns a buffer in R11 and
				 * clobbers no other general register and nothing in
				 * the caller's frame.
				 */
				if (!strncmp(gf.name, "runtime.gcWriteBarrier", 22)) {
					s->wregs = 1u << TAF_REG_R11;
					s->call_args = 0;
				}
			}
		}
		return;
	}
	if (in->kind == INSN_RET || in->kind == INSN_JMP || in->kind == INSN_JCC ||
	    in->kind == INSN_NOP || in->kind == INSN_INT3)
		return;

	if (is_string_op(id)) {
		s->sw_any = true;
		s->other_write = true;
	}

	/* 8-byte moves between registers and stack slots. */
	if (id == X86_INS_MOV && x->op_count == 2) {
		const cs_x86_op *d = &x->operands[0], *r = &x->operands[1];

		if (d->type == X86_OP_REG && r->type == X86_OP_REG &&
		    is_r64(d->reg) && is_r64(r->reg)) {
			s->copy = COPY_RR;
			s->dreg = reg_of(d->reg);
			s->sreg = reg_of(r->reg);
		} else if (d->type == X86_OP_REG && is_r64(d->reg) &&
			   sp_mem(r) && r->size == 8) {
			s->copy = COPY_RS;
			s->dreg = reg_of(d->reg);
			s->disp = r->mem.disp;
		} else if (sp_mem(d) && d->size == 8 && r->type == X86_OP_REG &&
			   is_r64(r->reg)) {
			s->copy = COPY_SR;
			s->sreg = reg_of(r->reg);
			s->disp = d->mem.disp;
		}
	}
	/* dst = src + constant, 64 bits: ADDQ $k, R; SUBQ $k, R; LEAQ k(R'), R. */
	if ((id == X86_INS_ADD || id == X86_INS_SUB) && x->op_count == 2 &&
	    x->operands[0].type == X86_OP_REG && is_r64(x->operands[0].reg) &&
	    x->operands[1].type == X86_OP_IMM &&
	    x->operands[1].imm > -MAX_ADD && x->operands[1].imm < MAX_ADD) {
		s->copy = COPY_ADD;
		s->dreg = s->sreg = reg_of(x->operands[0].reg);
		s->disp = id == X86_INS_ADD ? x->operands[1].imm : -x->operands[1].imm;
	}
	if ((id == X86_INS_INC || id == X86_INS_DEC) && x->op_count == 1 &&
	    x->operands[0].type == X86_OP_REG && is_r64(x->operands[0].reg)) {
		s->copy = COPY_ADD;
		s->dreg = s->sreg = reg_of(x->operands[0].reg);
		s->disp = id == X86_INS_INC ? 1 : -1;
	}
	if (id == X86_INS_LEA && x->op_count == 2 && x->operands[1].type == X86_OP_MEM) {
		const cs_x86_op *m = &x->operands[1];
		int b = reg_of(m->mem.base);
		int d = x->operands[0].type == X86_OP_REG ? reg_of(x->operands[0].reg) : -1;

		if (b == REG_SP || b == TAF_REG_BP)
			s->lea_sp = true;
		if (b == REG_IP && d >= 0 && d < NREGS && is_r64(x->operands[0].reg) &&
		    m->mem.index == X86_REG_INVALID) {
			s->const_regs |= 1u << d;
			s->const_val = in->addr + in->len + m->mem.disp;
		}
		if (b >= 0 && b < NREGS && m->mem.index == X86_REG_INVALID &&
		    m->mem.segment == X86_REG_INVALID && d >= 0 && d < NREGS &&
		    is_r64(x->operands[0].reg) &&
		    m->mem.disp > -MAX_ADD && m->mem.disp < MAX_ADD) {
			s->copy = COPY_ADD;
			s->dreg = d;
			s->sreg = b;
			s->disp = m->mem.disp;
		}
	}
	/* MOVQ sym(IP), R: a package variable's value (runtime.convT64's
	 * uint64Type): read at run time, it is the type the call passes. */
	if (id == X86_INS_MOV && x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
	    is_r64(x->operands[0].reg) && reg_of(x->operands[0].reg) >= 0 &&
	    reg_of(x->operands[0].reg) < NREGS &&
	    x->operands[1].type == X86_OP_MEM &&
	    reg_of(x->operands[1].mem.base) == REG_IP &&
	    x->operands[1].mem.index == X86_REG_INVALID && x->operands[1].size == 8) {
		s->global_regs |= 1u << reg_of(x->operands[0].reg);
		s->global_addr = in->addr + in->len + x->operands[1].mem.disp;
	}
	/* MOVQ disp(R'), R: a field of what R' points to (type chains). */
	if (id == X86_INS_MOV && x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
	    is_r64(x->operands[0].reg) && reg_of(x->operands[0].reg) >= 0 &&
	    reg_of(x->operands[0].reg) < NREGS &&
	    x->operands[1].type == X86_OP_MEM && x->operands[1].size == 8 &&
	    reg_of(x->operands[1].mem.base) >= 0 &&
	    reg_of(x->operands[1].mem.base) < NREGS &&
	    reg_of(x->operands[1].mem.base) != TAF_REG_BP &&
	    reg_of(x->operands[1].mem.base) != TAF_REG_R14 &&
	    x->operands[1].mem.index == X86_REG_INVALID &&
	    x->operands[1].mem.segment == X86_REG_INVALID &&
	    x->operands[1].mem.disp >= 0 && x->operands[1].mem.disp < MAX_ADD) {
		s->load = true;
		s->load_dreg = reg_of(x->operands[0].reg);
		s->load_base = reg_of(x->operands[1].mem.base);
		s->load_disp = x->operands[1].mem.disp;
	}
	if (id == X86_INS_MOV && x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
	    x->operands[1].type == X86_OP_IMM && reg_of(x->operands[0].reg) >= 0 &&
	    reg_of(x->operands[0].reg) < NREGS &&
	    (is_r64(x->operands[0].reg) || is_r32(x->operands[0].reg))) {
		s->const_regs |= 1u << reg_of(x->operands[0].reg);
		s->const_val = is_r32(x->operands[0].reg) ?
			       (uint32_t)x->operands[1].imm : (uint64_t)x->operands[1].imm;
	}
	if (id == X86_INS_XOR && x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
	    x->operands[1].type == X86_OP_REG &&
	    reg_of(x->operands[0].reg) == reg_of(x->operands[1].reg) &&
	    reg_of(x->operands[0].reg) >= 0 && reg_of(x->operands[0].reg) < NREGS &&
	    (is_r64(x->operands[0].reg) || is_r32(x->operands[0].reg))) {
		s->const_regs |= 1u << reg_of(x->operands[0].reg);
		s->const_val = 0;
	}

	/* Everything an instruction may write, conservatively. */
	if (cs_regs_access(cs, ci, rr, &nr, rw, &nw) == CS_ERR_OK)
		for (k = 0; k < nw; k++)
			add_wreg(s, rw[k]);
	for (k = 0; k < x->op_count; k++) {
		const cs_x86_op *op = &x->operands[k];
		bool w = (op->access & CS_AC_WRITE) || writes_all_operands(id) ||
			 (k == 0 && !first_op_read_only(id));

		if (op->type == X86_OP_REG && w)
			add_wreg(s, op->reg);
		else if (op->type == X86_OP_MEM && w && id != X86_INS_LEA)
			mem_write(s, op);
	}
	/* A copy or add must write only its destination. */
	if (s->copy == COPY_SR) {
		if (s->wregs || s->nsw != 1 || s->sw_any || s->other_write)
			s->copy = COPY_NONE;  /* more effects than understood */
		return;
	}
	if (s->copy && (s->wregs & ~(1u << s->dreg) || s->nsw || s->sw_any ||
			s->other_write))
		s->copy = COPY_NONE;
}
