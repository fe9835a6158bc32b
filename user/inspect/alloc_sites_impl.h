/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alloc_sites_impl.h - PRIVATE to the alloc_sites_*.c files (and
 * alloc_sites.c); nothing else may include it. The public interface is
 * alloc_sites.h.
 *
 * Holds what the parts of the allocation-site analysis share: the location
 * encoding, the per-instruction facts (struct isem), the per-function state
 * (struct fn) and the prototypes of the functions one part calls in
 * another. The parts:
 *  - alloc_sites_par.c        the callers scans on several threads
 *  - alloc_sites_x86.c        registers and instruction facts (capstone)
 *  - alloc_sites_cfg.c        one function: decode, CFG, SP, slots
 *  - alloc_sites_flow.c       the value analyses (data flow)
 *  - alloc_sites_producers.c  producers: probe sites and their values
 *  - alloc_sites_callers.c    callers of the producers
 *  - alloc_sites.c            which functions to analyse
 *  - alloc_sites_refuse.c     as_refuse(), which every part calls
 */
#ifndef ALLOC_SITES_IMPL_H
#define ALLOC_SITES_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <capstone/capstone.h>

#include "inspect/alloc_sites.h"
#include "inspect/disasm.h"

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
	uint32_t global_regs;  /* ... with the 8 bytes of a global (mov rip) */
	uint64_t global_addr;  /* the global's link address */
	bool load;             /* MOVQ disp(base), load_dreg: an 8-byte
				  load through a general register (a map
				  type's Group field) */
	int load_dreg, load_base;
	int64_t load_disp;
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

/* alloc_sites_refuse.c: F is not analysed, FMT says why (the first
 * reason is kept).  Returns -EINVAL. */
int as_refuse(struct fn *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* alloc_sites_x86.c */
void as_describe(struct fn *f, csh cs, size_t i, const cs_insn *ci);

/* alloc_sites_cfg.c */
int as_slot_index(const struct fn *f, int64_t entry_off);
void as_reach_from(const struct fn *f, size_t from, bool include_from,
		const bool *stop, bool *seen, int *stack);
void as_fn_free(struct fn *f);
int as_fn_load(struct fn *f, const struct as_env *env, uint64_t entry,
	    uint64_t size);

/* alloc_sites_flow.c */
void as_forward(struct fn *f, int reg, int32_t *in);
void as_mirrors(struct fn *f);
void as_bwd_in(const struct fn *f, size_t i, const int32_t *out, int32_t *in);
void as_backward(struct fn *f, int32_t *out);
bool as_in_list(const uint64_t *v, size_t n, uint64_t x);
int as_ret_classes(struct fn *f, uint8_t *ret_class, const bool *stop);
struct taf_loc as_pick(const struct fn *f, const int32_t *st, int64_t sp,
		    struct taf_loc *all, unsigned *nall);

/* alloc_sites_producers.c */
bool as_loads_g(const struct insn *in);

/* alloc_sites_callers.c */
/* The instruction that last sets reg before instruction c on the one
 * straight-line way to it, or SIZE_MAX. */
size_t as_setter_of(const struct fn *f, size_t c, int reg);
/* reg at c: a constant (LEAQ sym(IP), MOVL $imm, XORL), or loaded from
 * a global (its link address). */
bool as_const_at(const struct fn *f, size_t c, int reg, uint64_t *val);
bool as_global_at(const struct fn *f, size_t c, int reg, uint64_t *addr);
/* The caller's own argument reg (forward state `in` of reg) passed in
 * reg at call c and still in a slot that outlives it: its offset from SP
 * at c. */
bool as_caller_slot(const struct fn *f, const int32_t *in, size_t c,
		    int reg, int32_t *off);
/* Appends the n callers of v to *out (cap *cap), taking v's memory when
 * *out is empty. 0 or -ENOMEM. */
int as_callers_join(struct as_caller **out, size_t *nout, size_t *cap,
		    struct as_caller *v, size_t n, size_t vcap);
/* as_forward of reg into *st, once (NULL where slots cannot be trusted). */
int as_forward_once(struct fn *f, int reg, int32_t **st);
/*
 * alloc_sites_par.c: cb over every function of bin (as
 * go_binary_foreach_func with no prefix) on nw threads, worker w passing
 * ctx[w]; the first non-zero return stops the walk and is returned.
 * TRACEAF_PLAN_THREADS=N sets the worker count (default: online CPUs, at
 * most 8; 1 is the one-thread walk, for comparisons).
 */
#define AS_THREADS_ENV "TRACEAF_PLAN_THREADS"
unsigned as_par_workers(void);
int as_par_foreach_func(const struct go_binary *bin,
			int (*cb)(const char *name, uint64_t entry,
				  uint64_t size, void *arg),
			void *const *ctx, unsigned nw);
/* Sorts callers by call address and frees nothing. */
void as_callers_sort(struct as_caller *v, size_t n);

bool as_byte_scan(const uint8_t *code, uint64_t entry, uint64_t size,
	       const uint64_t *targets, size_t ntargets);

#endif /* ALLOC_SITES_IMPL_H */
