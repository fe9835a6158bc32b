// SPDX-License-Identifier: BSD-3-Clause
/*
 * alloc_sites.c - one emulated probe site per allocation path inside the
 * runtime's allocation functions, and where the object, size and type are
 * there (see alloc_sites.h for the rules and why they are sound).
 *
 * Instructions are decoded twice: disasm_function (disasm.h) gives the
 * proven tiling, the kinds, branch targets and what a uprobe costs; a
 * capstone pass with operand details gives what each instruction reads and
 * writes, reduced to the few facts the analyses need (struct isem).
 * Anything not understood is treated as clobbering what it may write, so
 * misreading an instruction can only lose a location, never invent one.
 *
 * The analyses track one value through registers and 8-byte stack slots,
 * with a constant addend (state[l] = d: the content of l plus d is the
 * value), which follows ADDQ $8 / LEAQ 8(R), R' as well as moves.
 */
#include "alloc_sites.h"

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

/* Locations: registers 0..14 (enum taf_reg), then stack slots. */
#define NREGS TAF_REG_COUNT
#define MAX_SLOTS 240

#define ST_TOP INT32_MAX   /* no path seen yet */
#define ST_NONE INT32_MIN  /* does not hold the value on some path */
#define MAX_ADD 4096       /* addends beyond this are not followed */

/* A register equals content(slot) + k (slot M_NONE: unknown, M_TOP: no
 * path seen yet). */
struct mir {
	int16_t slot;
	int16_t k;
};

/* Per-instruction facts from the detailed decode. */
struct isem {
	uint32_t wregs;        /* registers written (bit per enum taf_reg) */
	uint32_t const_regs;   /* ... with a constant (lea rip, mov imm, xor self) */
	uint64_t const_val;    /* the constant (link address for lea rip) */
	int copy;              /* COPY_* below */
	int dreg, sreg;        /* registers of a copy or an add */
	int64_t disp;          /* SP-relative displacement of a copy's slot,
				  or the constant of COPY_ADD */
	int nsw;               /* writes through SP: [SP+sw_disp, +sw_size) */
	int64_t sw_disp[2];
	unsigned sw_size[2];
	bool sw_any;           /* a write through SP that may hit any slot */
	bool other_write;      /* a memory write through another pointer */
	bool lea_sp;           /* takes the address of a stack slot */
	int sp_kind;           /* SP_NONE, SP_DELTA, SP_UNKNOWN */
	int64_t sp_delta;
	bool is_call;
	uint64_t call_target;  /* direct calls */
	int64_t call_args;     /* callee's pclntab args; -1 unknown */
	bool noreturn;         /* call of a function that never returns */
};

enum { COPY_NONE, COPY_RR, COPY_RS, COPY_SR, COPY_ADD };
enum { SP_NONE, SP_DELTA, SP_UNKNOWN };

/* Tags of the value-provenance analysis (RET classes). */
enum { T_TOP = 0, T_OTHER, T_CONST, T_PROD, T_NONHEAP };

struct fn {
	const struct as_env *env;
	struct disasm d;
	struct isem *sem;
	size_t n;                  /* d.n_code */
	int (*succ)[2];            /* -1: none */
	uint16_t *npred;           /* direct predecessors (capped) */
	size_t entry_idx;          /* after the stack check */
	bool *reach;               /* from entry_idx */
	bool cfg_ok;               /* succ, npred and reach are built */
	bool sp_ok;                /* sp[] computed for every reached insn */
	int64_t *sp;               /* SP - SP at entry, per instruction */
	bool escaped;              /* LEAQ off(SP) somewhere reachable */
	bool indirect_jump;        /* reachable jump table: CFG incomplete */
	bool dispatcher;           /* runtime.mallocgc: its indirect calls are
				      the size-class tables of producers */
	int64_t slot_off[MAX_SLOTS]; /* entry-relative offsets of slots */
	int nslots;
	int nl;                    /* NREGS + nslots */
	int32_t *fwd_size, *fwd_type; /* IN states, n * nl */
	int32_t *bwd;              /* OUT states of the result analysis */
	struct mir *mirror;        /* n * NREGS: the slot a register equals
				      (plus k) before each instruction */
	struct as_func *out;       /* producers only */
	char why[200];
};

static int refuse(struct fn *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int refuse(struct fn *f, const char *fmt, ...)
{
	va_list ap;

	if (!f->why[0]) {
		va_start(ap, fmt);
		vsnprintf(f->why, sizeof(f->why), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

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

static void describe(struct fn *f, csh cs, size_t i, const cs_insn *ci)
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

/* --- one function: decode, CFG, SP, slots --------------------------------- */

static int slot_index(const struct fn *f, int64_t entry_off)
{
	int i;

	for (i = 0; i < f->nslots; i++)
		if (f->slot_off[i] == entry_off)
			return NREGS + i;
	return -1;
}

static void add_slot(struct fn *f, int64_t entry_off)
{
	if (slot_index(f, entry_off) >= 0 || f->nslots >= MAX_SLOTS)
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
static void reach_from(const struct fn *f, size_t from, bool include_from,
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
			rc = refuse(f, "%s at %#lx changes SP in a way not followed",
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
				rc = refuse(f, "SP differs at %#lx on two paths",
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

static void fn_free(struct fn *f)
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

/*
 * Decodes [entry, entry+size), builds the CFG from the entry probe site,
 * SP offsets and the slot table. Returns 0, -EINVAL (why in f->why: the
 * analyses cannot run), -EFAULT or -ENOMEM.
 */
static int fn_load(struct fn *f, const struct as_env *env, uint64_t entry,
		   uint64_t size)
{
	struct go_entry_site es;
	const uint8_t *code;
	char derr[160];
	csh cs = 0;
	cs_insn *ci = NULL;
	int *stack = NULL;
	size_t i;
	int rc = 0;

	memset(f, 0, sizeof(*f));
	f->env = env;
	code = go_binary_bytes(env->bin, entry, size);
	if (!code)
		return -EFAULT;
	if (disasm_function(code, size, entry, &f->d, derr, sizeof(derr)))
		return refuse(f, "cannot decode: %s", derr);
	f->n = f->d.n_code;
	f->sem = calloc(f->n + 1, sizeof(*f->sem));
	f->succ = calloc(f->n + 1, sizeof(*f->succ));
	f->npred = calloc(f->n + 1, sizeof(*f->npred));
	f->reach = calloc(f->n + 1, 1);
	f->sp = calloc(f->n + 1, sizeof(*f->sp));
	stack = malloc(sizeof(int) * (f->n + 1));
	if (!f->sem || !f->succ || !f->npred || !f->reach || !f->sp || !stack) {
		rc = -ENOMEM;
		goto out;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		rc = -ENOMEM;
		goto out;
	}
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	ci = cs_malloc(cs);
	if (!ci) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < f->n; i++) {
		const struct insn *in = &f->d.insns[i];
		const uint8_t *p = in->bytes;
		size_t left = in->len;
		uint64_t a = in->addr;

		if (!cs_disasm_iter(cs, &p, &left, &a, ci)) {
			rc = refuse(f, "cannot decode %#lx with details",
				    (unsigned long)in->addr);
			goto out;
		}
		describe(f, cs, i, ci);
	}
	if (go_entry_probe_site(&f->d, &es) || !es.stack_check) {
		/* No stack check (NOSPLIT): the analysis starts at the entry. */
		f->entry_idx = 0;
	} else {
		f->entry_idx = es.index;
	}
	build_cfg(f);
	reach_from(f, f->entry_idx, true, NULL, f->reach, stack);
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
	if (ci)
		cs_free(ci, 1);
	if (cs)
		cs_close(&cs);
	free(stack);
	return rc;
}

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
		slot = slot_index(f, sp + s->disp);
		out[s->dreg] = slot >= 0 ? in[slot] : ST_NONE;
		return;
	case COPY_SR:
		kill_range(f, out, sp + s->disp, sp + s->disp + 8);
		slot = slot_index(f, sp + s->disp);
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
		slot = slot_index(f, sp + s->disp);
		if (slot >= 0)
			in[slot] = either(out[s->dreg], out[slot]);
		return;
	case COPY_SR:
		slot = slot_index(f, sp + s->disp);
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
static void forward(struct fn *f, int reg, int32_t *in)
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
		slot = slot_index(f, f->sp[i] + s->disp);
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

static void mirrors(struct fn *f)
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
static void bwd_in(const struct fn *f, size_t i, const int32_t *out, int32_t *in)
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
static void backward(struct fn *f, int32_t *out)
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
				bwd_in(f, (size_t)j, out + (size_t)j * nl, in);
				if (meet_into(cur, in, f->nl))
					changed = true;
			}
		}
	}
	free(in);
}

static bool in_list(const uint64_t *v, size_t n, uint64_t x)
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
static int ret_classes(struct fn *f, uint8_t *ret_class, const bool *stop)
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
				int sl = slot_index(f, f->sp[i] + s->disp);

				tout[s->dreg] = sl >= 0 ? cur[sl] : T_OTHER;
			} else if (s->copy == COPY_SR) {
				int sl = slot_index(f, f->sp[i] + s->disp);

				if (sl >= 0)
					tout[sl] = cur[s->sreg];
			}
			for (l = 0; l < NREGS; l++)
				if (s->const_regs >> l & 1)
					tout[l] = T_CONST;
			if (s->is_call && s->call_target) {
				if (in_list(f->env->producers, f->env->nproducers, s->call_target))
					tout[TAF_REG_AX] = T_PROD;
				else if (in_list(f->env->nonheap, f->env->nnonheap, s->call_target))
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
static struct taf_loc pick(const struct fn *f, const int32_t *st, int64_t sp,
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
		return refuse(f, "more than %d probe sites", AS_MAX_SITES);
	}
	s = &o->sites[o->nsites++];
	memset(s, 0, sizeof(*s));
	s->addr = f->d.insns[i].addr;
	s->kind = kind;
	s->emulated = f->d.insns[i].cost == UPROBE_EMULATED;
	snprintf(s->text, sizeof(s->text), "%s", f->d.insns[i].text);
	s->sp = f->sp[i];
	bwd_in(f, i, f->bwd + i * nl, before);
	s->obj = pick(f, before, f->sp[i], s->all_obj, &s->n_obj);
	s->size = pick(f, f->fwd_size + i * nl, f->sp[i], s->all_size, &s->n_size);
	s->type = pick(f, f->fwd_type + i * nl, f->sp[i], s->all_type, &s->n_type);
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
	bwd_in(f, i, f->bwd + i * (size_t)f->nl, tmp);
	return pick(f, tmp, f->sp[i], NULL, NULL).kind != TAF_LOC_NONE;
}

/* MOVQ (TLS), R14: g reloaded after systemstack & co., still g. */
static bool loads_g(const struct insn *in)
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
		reach_from(f, i, false, NULL, seen, stack);
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
			in_list(f->env->producers, f->env->nproducers, sm->call_target) ||
			in_list(f->env->nonheap, f->env->nnonheap, sm->call_target) :
			f->dispatcher;
		if (deleg && f->bwd[i * (size_t)f->nl + TAF_REG_AX] == 0) {
			delegation[i] = true;
			from_stop[i] = true;
			reach_from(f, i, false, NULL, seen, stack);
			for (j = 0; j < n; j++)
				if (seen[j])
					from_stop[j] = true;
		}
	}
	for (i = 0; i < n; i++) {
		stops[i] = site[i] || delegation[i];
		from_stop[i] = from_stop[i] || from_anchor[i];
	}
	rc = ret_classes(f, cls, stops);
	if (rc)
		goto out;

	/* Returns of the function's own objects reached without an anchor. */
	reach_from(f, f->entry_idx, true, stops, seen, stack);
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
			reach_from(f, f->entry_idx, true, stop, seen2, stack);
			if (seen2[i])
				continue;              /* does not dominate */
			reach_from(f, j, false, NULL, seen2, stack);
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

			reach_from(f, cand[j], false, NULL, seen2, stack);
			for (k = 0; k < ncand && !later; k++)
				later = k != j && seen2[cand[k]];
			if (!later)
				best = cand[j];
		}
		if (best == n) {
			rc = refuse(f, "no emulated site for the return at %#lx",
				    (unsigned long)f->d.insns[i].addr);
			goto out;
		}
		site[best] = true;
		stops[best] = true;
		rc = add_site(f, best, AS_SITE_EARLY);
		if (rc)
			goto out;
		reach_from(f, f->entry_idx, true, stops, seen, stack);
	}

	/* Proof 1: no site follows a site (each fires at most once a call). */
	for (i = 0; i < n; i++) {
		if (!site[i])
			continue;
		reach_from(f, i, false, NULL, seen2, stack);
		for (j = 0; j < n; j++)
			if (seen2[j] && site[j]) {
				rc = refuse(f, "site %#lx can be followed by site %#lx",
					    (unsigned long)f->d.insns[i].addr,
					    (unsigned long)f->d.insns[j].addr);
				goto out;
			}
	}
	/* Proof 2: the paths that pass neither a site nor a delegation
	 * return a constant (&zerobase) or what another producer or
	 * persistentalloc returned (preMallocgcDebug's x != nil). */
	reach_from(f, f->entry_idx, true, stops, seen, stack);
	for (i = 0; i < n; i++) {
		if (!f->reach[i] || f->d.insns[i].kind != INSN_RET)
			continue;
		f->out->n_rets++;
		f->out->n_ret_class[cls[i]]++;
		if (seen[i] && cls[i] == AS_RET_OWN) {
			rc = refuse(f, "the return at %#lx passes no site",
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
		       in_list(f->env->producers, f->env->nproducers, f->sem[i].call_target);
		if (prod && !in_list(f->out->producer_calls, f->out->n_producer_calls,
				     f->sem[i].call_target) &&
		    f->out->n_producer_calls < 16)
			f->out->producer_calls[f->out->n_producer_calls++] =
				f->sem[i].call_target;
		if (!prod && f->d.insns[i].kind != INSN_CALL_IND)
			continue;
		reach_from(f, i, false, NULL, seen2, stack);
		for (j = 0; j < n; j++)
			if (seen2[j] && site[j]) {
				rc = refuse(f, "a %s call at %#lx precedes site %#lx",
					    prod ? "producer" : "indirect",
					    (unsigned long)f->d.insns[i].addr,
					    (unsigned long)f->d.insns[j].addr);
				goto out;
			}
	}
	if (f->out->nsites == 0)
		rc = refuse(f, "no probe site");
	for (i = 0; rc == 0 && i < f->out->nsites; i++) {
		if (f->out->sites[i].obj.kind == TAF_LOC_NONE)
			rc = refuse(f, "object not found at site %#lx%s",
				    (unsigned long)f->out->sites[i].addr,
				    f->escaped ? " (the frame's address is taken: every "
				    "call may write any slot)" : "");
		else if (!f->out->sites[i].emulated)
			rc = refuse(f, "site %#lx is single-stepped",
				    (unsigned long)f->out->sites[i].addr);
	}
	/* The probes key the pending table by R14 (g): it must stay g. */
	for (i = 0; rc == 0 && i < n; i++)
		if (f->reach[i] && !f->sem[i].is_call && !loads_g(&f->d.insns[i]) &&
		    (f->sem[i].wregs >> TAF_REG_R14 & 1))
			rc = refuse(f, "R14 written at %#lx",
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
	rc = fn_load(&f, env, entry, size);
	f.out = out;
	f.dispatcher = !strcmp(name, "runtime.mallocgc");
	if (rc == -EINVAL)
		goto refused;
	if (rc)
		goto done;
	if (f.entry_idx == 0) {
		refuse(&f, "no stack-check prologue");
		goto refused;
	}
	if (f.indirect_jump) {
		refuse(&f, "indirect or tail jump");
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
	forward(&f, TAF_REG_AX, f.fwd_size);
	forward(&f, TAF_REG_BX, f.fwd_type);
	mirrors(&f);
	backward(&f, f.bwd);
	rc = plan_sites(&f);
	if (rc == -EINVAL)
		goto refused;
	goto done;
refused:
	rc = 0;
	out->status = -EINVAL;
	snprintf(out->why, sizeof(out->why), "%s", f.why);
done:
	fn_free(&f);
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

	rc = fn_load(&f, env, entry, size);
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
	forward(&f, TAF_REG_AX, f.fwd_size);
	forward(&f, TAF_REG_BX, f.fwd_type);
	mirrors(&f);
	backward(&f, f.bwd);
	for (i = 0; i < f.n && rc == 0; i++) {
		struct as_values v;

		if (!f.reach[i] || f.d.insns[i].addr < lo || f.d.insns[i].addr >= hi)
			continue;
		memset(&v, 0, sizeof(v));
		v.pc = f.d.insns[i].addr;
		v.sp = f.sp[i];
		bwd_in(&f, i, f.bwd + i * nl, before);
		pick(&f, before, f.sp[i], v.obj, &v.n_obj);
		pick(&f, f.fwd_size + i * nl, f.sp[i], v.size, &v.n_size);
		pick(&f, f.fwd_type + i * nl, f.sp[i], v.type, &v.n_type);
		rc = cb(&v, arg);
	}
done:
	free(before);
	fn_free(&f);
	return rc;
}

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
 * The constant register `reg` holds at instruction c, if every way to c
 * passes one straight-line chain that sets it: LEAQ sym(IP), MOVL $imm,
 * XORL. Functions with jump tables are not trusted (a table could jump
 * into the chain).
 */
static bool const_at(const struct fn *f, size_t c, int reg, uint64_t *val)
{
	size_t i = c;

	if (f->indirect_jump)
		return false;
	while ((i = unique_pred(f, i)) != SIZE_MAX) {
		const struct isem *s = &f->sem[i];

		if (s->const_regs >> reg & 1) {
			*val = s->const_val;
			return true;
		}
		if (s->wregs >> reg & 1 || s->dreg == reg)
			return false;
	}
	return false;
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
static bool caller_slot(const struct fn *f, const int32_t *in, size_t c,
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

static bool byte_scan(const uint8_t *code, uint64_t entry, uint64_t size,
		      const uint64_t *targets, size_t ntargets)
{
	uint64_t k;

	for (k = 0; k + 5 <= size; k++) {
		int32_t rel;

		if (code[k] != 0xe8)
			continue;
		rel = (int32_t)(code[k + 1] | code[k + 2] << 8 | code[k + 3] << 16 |
				(uint32_t)code[k + 4] << 24);
		if (in_list(targets, ntargets, entry + k + 5 + (int64_t)rel))
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
	if (!code || (!dispatcher && !byte_scan(code, entry, size, c->targets, c->ntargets)))
		return 0;
	rc = fn_load(&f, c->env, entry, size);
	if (rc && rc != -EINVAL)
		goto out;
	if (rc == -EINVAL && !f.cfg_ok) {
		/* Undecodable: its calls cannot be described (they become
		 * records without a type at run time); skip. */
		rc = 0;
		goto out;
	}
	rc = 0;
	if (f.sp_ok && !f.indirect_jump) {
		fs = malloc(sizeof(int32_t) * f.n * (size_t)f.nl + 1);
		ft = malloc(sizeof(int32_t) * f.n * (size_t)f.nl + 1);
		if (!fs || !ft) {
			rc = -ENOMEM;
			goto out;
		}
		forward(&f, TAF_REG_AX, fs);
		forward(&f, TAF_REG_BX, ft);
	}
	for (i = 0; i < f.n; i++)
		if (f.reach[i] && !f.sem[i].is_call && !loads_g(&f.d.insns[i]) &&
		    (f.sem[i].wregs >> TAF_REG_R14 & 1))
			writes_r14 = true;
	for (i = 0; i < f.n; i++) {
		const struct insn *in = &f.d.insns[i];
		struct as_caller *a;
		uint64_t v;

		if (!f.reach[i])
			continue;
		if (!(in->kind == INSN_CALL && in_list(c->targets, c->ntargets, in->target)) &&
		    !(in->kind == INSN_CALL_IND && dispatcher))
			continue;
		if (c->n == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 64;
			struct as_caller *nv = realloc(c->v, cap * sizeof(*nv));

			if (!nv) {
				rc = -ENOMEM;
				goto out;
			}
			c->v = nv;
			c->cap = cap;
		}
		a = &c->v[c->n++];
		memset(a, 0, sizeof(*a));
		a->call = in->addr;
		a->ret = in->addr + in->len;
		a->callee = in->kind == INSN_CALL ? in->target : 0;
		snprintf(a->func, sizeof(a->func), "%s", name);
		if (const_at(&f, i, TAF_REG_AX, &v)) {
			a->size.kind = TAF_CVAL_CONST;
			a->size.val = v;
		} else if (fs && caller_slot(&f, fs, i, TAF_REG_AX, &a->size.off)) {
			a->size.kind = TAF_CVAL_STACK;
		}
		if (const_at(&f, i, TAF_REG_BX, &v)) {
			a->type.kind = TAF_CVAL_CONST;
			a->type.val = v;
		} else if (ft && caller_slot(&f, ft, i, TAF_REG_BX, &a->type.off)) {
			a->type.kind = TAF_CVAL_STACK;
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
		if (!a->size.kind)
			a->size.kind = TAF_CVAL_PENDING;
		if (!a->type.kind)
			a->type.kind = TAF_CVAL_PENDING;
	}
out:
	free(fs);
	free(ft);
	fn_free(&f);
	if (rc)
		c->err = rc;
	return rc;
}

int as_find_callers(const struct as_env *env, const uint64_t *targets,
		    size_t ntargets, const char *const *dispatchers,
		    size_t ndispatchers, struct as_caller **out, size_t *n)
{
	struct callers_ctx c = { .env = env, .targets = targets,
				 .ntargets = ntargets, .dispatchers = dispatchers,
				 .ndispatchers = ndispatchers };
	int rc;

	*out = NULL;
	*n = 0;
	rc = go_binary_foreach_func(env->bin, "", callers_cb, &c);
	if (rc || c.err) {
		free(c.v);
		return c.err ? c.err : rc;
	}
	*out = c.v;
	*n = c.n;
	return 0;
}

/* --- which functions ---------------------------------------------------- */

int as_env_init(struct as_env *env, const struct go_binary *bin)
{
	static const char *const nonheap[] = {
		"runtime.persistentalloc", "runtime.preMallocgcDebug",
	};
	uint64_t size, e;
	size_t i;

	memset(env, 0, sizeof(*env));
	env->bin = bin;
	if (go_binary_find_func(bin, "runtime.publicationBarrier", &env->barrier, &size))
		return -ENOENT;
	for (i = 0; i < sizeof(nonheap) / sizeof(nonheap[0]); i++)
		if (!go_binary_find_func(bin, nonheap[i], &e, &size))
			env->nonheap[env->nnonheap++] = e;
	return 0;
}

static bool calls_target(const struct go_binary *bin, uint64_t entry,
			 uint64_t size, uint64_t target)
{
	const uint8_t *code = go_binary_bytes(bin, entry, size);
	struct disasm d;
	bool found;
	size_t i;

	if (!code || !byte_scan(code, entry, size, &target, 1))
		return false;
	if (disasm_function(code, size, entry, &d, NULL, 0))
		return true;    /* undecodable: say yes, the analysis refuses it */
	found = false;
	for (i = 0; i < d.n_code && !found; i++)
		found = d.insns[i].kind == INSN_CALL && d.insns[i].target == target;
	disasm_free(&d);
	return found;
}

struct collect {
	const struct go_binary *bin;
	uint64_t target;
	char **names;
	uint64_t *entries;
	size_t n, cap;
	int err;
};

static int collect_cb(const char *name, uint64_t entry, uint64_t size, void *arg)
{
	struct collect *c = arg;

	if (!calls_target(c->bin, entry, size, c->target))
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 32;
		char **nn = realloc(c->names, cap * sizeof(*nn));
		uint64_t *ne;

		if (!nn)
			return c->err = -ENOMEM;
		c->names = nn;
		ne = realloc(c->entries, cap * sizeof(*ne));
		if (!ne)
			return c->err = -ENOMEM;
		c->entries = ne;
		c->cap = cap;
	}
	c->names[c->n] = strdup(name);
	if (!c->names[c->n])
		return c->err = -ENOMEM;
	c->entries[c->n++] = entry;
	return 0;
}

void as_names_free(char **names, size_t n)
{
	size_t i;

	for (i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

int as_find_producers(const struct go_binary *bin, char ***names,
		      uint64_t **entries, size_t *n)
{
	struct collect c = { .bin = bin };
	uint64_t size;
	int rc;

	*names = NULL;
	*entries = NULL;
	*n = 0;
	if (go_binary_find_func(bin, "runtime.publicationBarrier", &c.target, &size))
		return -ENOENT;
	rc = go_binary_foreach_func(bin, "runtime.mallocgc", collect_cb, &c);
	if (rc || c.err) {
		as_names_free(c.names, c.n);
		free(c.entries);
		return c.err ? c.err : rc;
	}
	*names = c.names;
	*entries = c.entries;
	*n = c.n;
	return 0;
}

int as_barrier_callers(const struct go_binary *bin, char ***names, size_t *n)
{
	struct collect c = { .bin = bin };
	uint64_t size;
	int rc;

	*names = NULL;
	*n = 0;
	if (go_binary_find_func(bin, "runtime.publicationBarrier", &c.target, &size))
		return -ENOENT;
	rc = go_binary_foreach_func(bin, "", collect_cb, &c);
	free(c.entries);
	if (rc || c.err) {
		as_names_free(c.names, c.n);
		return c.err ? c.err : rc;
	}
	*names = c.names;
	*n = c.n;
	return 0;
}
