/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * disasm.h - x86-64 decoding of one function, and where to put uprobes.
 *
 * Owns: decoding a function's bytes (capstone), proving the decode tiles
 * the function, classifying instructions, predicting what the kernel's x86
 * uprobe code does with a probe on each one, and the two Go-specific
 * questions the planner asks: where is the cheap entry probe site, and
 * where are the RETs.
 *
 * Why the cost matters (DESIGN.md section 3): a probe on an instruction the
 * kernel emulates (push, call rel32, jmp, jcc, nop) costs ~0.6 us here; any
 * other instruction is single-stepped out of line, ~12 us. The rules below
 * follow arch/x86/kernel/uprobes.c: uprobe_init_insn (refusals),
 * branch_setup_xol_ops and push_setup_xol_ops (emulation).
 */
#ifndef DISASM_H
#define DISASM_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

enum insn_kind {
	INSN_OTHER = 0,
	INSN_RET,       /* c3, c2 iw */
	INSN_CALL,      /* e8 rel32 */
	INSN_CALL_IND,  /* ff /2 */
	INSN_JMP,       /* eb rel8, e9 rel32 */
	INSN_JMP_IND,   /* ff /4 */
	INSN_JCC,       /* 70-7f rel8, 0f 80-8f rel32 */
	INSN_PUSH,      /* 50+r, REX.B 41 50+r */
	INSN_NOP,       /* 90, 0f 1f /0 */
	INSN_INT3,      /* cc: Go's padding between functions */
};

enum uprobe_cost {
	UPROBE_EMULATED = 0, /* the kernel emulates it: cheap */
	UPROBE_SSTEP,        /* single-stepped out of line: ~20x dearer */
	UPROBE_REFUSED,      /* uprobe registration fails (-ENOTSUPP) */
};

struct insn {
	uint64_t addr;
	uint8_t len;
	uint8_t bytes[15];
	enum insn_kind kind;
	enum uprobe_cost cost;
	uint64_t target;   /* direct branch/call target, 0 otherwise */
	char text[48];     /* "push rbp", for reports and test messages */
};

struct disasm {
	uint64_t entry;    /* address of the first byte */
	uint64_t end;      /* one past the last byte given */
	uint64_t code_end; /* end without trailing INT3 padding */
	struct insn *insns;
	size_t n;          /* all instructions, padding included */
	size_t n_code;     /* instructions before code_end */
};

/*
 * Decodes [vaddr, vaddr+len) and proves the decode is exact: every byte
 * belongs to exactly one valid instruction, the last one ends at vaddr+len,
 * and every direct branch whose target lies inside the function lands on
 * an instruction boundary (a misaligned decode would not). Trailing INT3
 * bytes are accepted as inter-function padding (code_end excludes them).
 * Returns 0, -EILSEQ (undecodable byte or branch into an instruction; err
 * says where), -ENOMEM. Free with disasm_free.
 */
int disasm_function(const uint8_t *code, size_t len, uint64_t vaddr,
		    struct disasm *out, char *err, size_t errlen);
void disasm_free(struct disasm *d);

/*
 * disasm_function that also hands every instruction, as capstone decoded
 * it, to a caller that wants more than disasm gives (the allocation-site
 * analysis reads capstone's operand details): one decode instead of two.
 * `cs` is the caller's capstone handle (a csh, opened for x86-64 with the
 * details it needs); `cb` gets the index in out->insns (already filled)
 * and the cs_insn, and a non-zero return stops the decode and is returned.
 */
struct disasm_hook {
	size_t cs;
	int (*cb)(void *arg, size_t idx, const void *cs_insn);
	void *arg;
};
int disasm_function_hook(const uint8_t *code, size_t len, uint64_t vaddr,
			 struct disasm *out, char *err, size_t errlen,
			 const struct disasm_hook *hook);

/*
 * Decodes one instruction at code (at most len bytes) and classifies it.
 * Returns its length, or -EILSEQ.
 */
int disasm_one(const uint8_t *code, size_t len, uint64_t addr,
	       struct insn *out);

/* The index of the instruction starting at addr, or -1. */
long disasm_index_of(const struct disasm *d, uint64_t addr);

const char *insn_kind_name(enum insn_kind k);
const char *uprobe_cost_name(enum uprobe_cost c);

/*
 * Entry probe site of a Go function: the first instruction after the stack
 * check prologue (cmd/internal/obj/x86/obj6.go stacksplit):
 *     [MOVQ (TLS), R14]                       ABI0 functions only
 *     CMPQ SP, 16(R14)                        frame <= StackSmall
 *  or LEAQ -n(SP), R12; CMPQ R12, 16(R14)     frame <= StackBig
 *  or MOVQ SP, R12; SUBQ $n, R12; JCS; CMPQ R12, 16(R14)
 *     JLS morestack
 * which is normally PUSHQ BP (emulated). There the arguments are still in
 * their ABI registers and R14 holds g; and unlike the entry itself it runs
 * once per call even when the stack grows (morestack jumps back to the
 * entry). Without a stack check the site is the first instruction.
 */
struct go_entry_site {
	uint64_t addr;
	size_t index;        /* into d->insns */
	bool emulated;       /* cost == UPROBE_EMULATED */
	bool stack_check;    /* a prologue was skipped */
	bool branch_target;  /* some branch in the function jumps to addr:
				the probe could fire more than once a call */
};
int go_entry_probe_site(const struct disasm *d, struct go_entry_site *out);

/*
 * Addresses of the RET instructions (the function's normal exits, where AX
 * holds the first result). *n is set to the number found even when it
 * exceeds max (then -ENOSPC). Tail jumps out of the function are not exits
 * this finds: go_tail_jumps counts them so the planner can refuse.
 */
int go_ret_sites(const struct disasm *d, uint64_t *addrs, size_t max,
		 size_t *n);

/* Direct JMPs leaving [entry, code_end) plus indirect JMPs (jump tables). */
size_t go_tail_jumps(const struct disasm *d, size_t *n_indirect);

#endif /* DISASM_H */
