/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alloc_sites.h - where one uprobe on an instruction the kernel emulates
 * sees a whole allocation: the object's address, the requested size and
 * the type, inside the runtime function that produced it.
 *
 * Owns: the code analysis of one allocation function ("producer"): a CFG
 * over direct branches (calls fall through, calls to functions that never
 * return end a path, indirect jumps and tail jumps are refused), the
 * stack-pointer offset at every instruction, two data-flow analyses over
 * registers and 8-byte stack slots, and the proof that every allocation the
 * function returns passes exactly one probe site.
 *
 *  - "Anchor" sites: each CALL runtime.publicationBarrier (call rel32, which
 *    the kernel emulates) that no other one can precede on a path. Every
 *    non-tiny allocation path of mallocgc (Go <= 1.23) and of the
 *    mallocgc* helpers (1.24+), size-specialised functions and slow paths
 *    (1.26+) calls it exactly once, right after the object is set up.
 *  - "Early" sites: paths that return an object without an anchor (the tiny
 *    allocator's fast path: the object fits in the current 16-byte block)
 *    get the latest emulated instruction (a NOP or Jcc) that dominates their
 *    return and from which every path returns the same object.
 *
 * Where the values are at a site:
 *  - the object: backward from every RET reachable from the site (AX holds
 *    the result there) through 8-byte moves between registers and stack
 *    slots; a location counts only if it holds the result on every path.
 *  - size and type: forward from the entry (AX and BX by the register ABI)
 *    through the same moves, intersected over every path to the site.
 * A call clobbers every register but R14 (g), the stack below SP and the
 * callee's argument area at the bottom of the caller's frame (the callee's
 * pclntab args size); a write through any other pointer clobbers nothing
 * on the stack unless the function takes the address of its frame (LEAQ
 * off(SP)), in which case it clobbers every slot.
 *
 * RETs reached without passing a site must return something that is not
 * this function's own new object: a constant (&zerobase), the result of a
 * call to another producer (which counts it: SC -> SlowPath), or of
 * persistentalloc (debug.sbrk); and no call to a producer may lie on such
 * a path to a RET returning the function's own object (it would be counted
 * twice). When any of this cannot be shown the function is refused and the
 * planner falls back to entry + RET probes for it.
 */
#ifndef ALLOC_SITES_H
#define ALLOC_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "traceaf_events.h"

struct go_binary;

#define AS_MAX_SITES 8

enum as_site_kind {
	AS_SITE_ANCHOR = 1,  /* CALL runtime.publicationBarrier */
	AS_SITE_EARLY = 2,   /* a return path without the barrier (tiny) */
};

struct as_site {
	uint64_t addr;            /* link address of the probed instruction */
	enum as_site_kind kind;
	bool emulated;            /* the kernel emulates the instruction */
	char text[48];            /* its disassembly, for reports */
	int64_t sp;               /* SP at the site minus SP at entry */
	struct taf_loc obj;       /* the object (the function's result) */
	struct taf_loc size;      /* the size argument (AX at entry) */
	struct taf_loc type;      /* the type argument (BX at entry) */
	/* Every location the analyses found (for tests; the loc fields above
	 * pick one: a register before a stack slot). Stack offsets are
	 * SP-relative at the site. */
	struct taf_loc all_obj[8], all_size[8], all_type[8];
	unsigned n_obj, n_size, n_type;
};

enum as_ret_class {
	AS_RET_OWN = 0,       /* the function's own new object */
	AS_RET_CONST,         /* a constant (&zerobase, nil) */
	AS_RET_DELEGATED,     /* the result of a call to another producer */
	AS_RET_PERSISTENT,    /* the result of persistentalloc (debug.sbrk) */
};

struct as_func {
	char name[96];
	uint64_t entry, size;
	int status;               /* 0: the sites cover every allocation */
	char why[200];            /* why it was refused */
	struct as_site sites[AS_MAX_SITES];
	size_t nsites;
	unsigned n_rets;          /* RETs reachable from the entry */
	unsigned n_ret_class[4];  /* by enum as_ret_class */
	uint64_t producer_calls[16]; /* entries of producers it calls */
	size_t n_producer_calls;
	uint32_t frame;           /* SP drop from entry to body (push + sub) */
};

/* What the analysis must know about the rest of the binary. */
struct as_env {
	const struct go_binary *bin;
	uint64_t barrier;         /* entry of runtime.publicationBarrier */
	uint64_t nonheap[4];      /* callees whose result is no heap object:
				     persistentalloc, preMallocgcDebug */
	size_t nnonheap;
	const uint64_t *producers;/* entries of every producer function */
	size_t nproducers;
	/* Full mode: the dispatchers' calls that pass their own size and
	 * type on unchanged get TAF_CVAL_BOUND and TAF_CVAL_PASS instead of
	 * an ALLOC_ARGS probe (as_find_type_chains then describes the
	 * dispatchers' callers). */
	bool type_chains;
};

/* Fills env for `bin` (producers left to the caller). 0 or -ENOENT. */
int as_env_init(struct as_env *env, const struct go_binary *bin);

/*
 * Analyses the producer `name` at [entry, entry+size). Returns 0 when the
 * function could be decoded (out->status then says whether its sites are
 * usable, out->why why not), -errno when it could not be read at all.
 */
int as_analyze(const struct as_env *env, const char *name, uint64_t entry,
	       uint64_t size, struct as_func *out);

/*
 * The producer functions of a binary: every runtime.mallocgc* function that
 * calls runtime.publicationBarrier (mallocgc itself up to Go 1.23; from
 * 1.24 the helpers it dispatches to, and from 1.26 the size-specialised
 * functions and their slow paths). *names is malloc'd, an array of n
 * malloc'd strings; as_names_free frees it. 0 or -errno.
 */
int as_find_producers(const struct go_binary *bin, char ***names,
		      uint64_t **entries, size_t *n);
void as_names_free(char **names, size_t n);

/*
 * Every function of the binary (any package) with a direct CALL of
 * runtime.publicationBarrier, for the check that no producer is missed.
 */
int as_barrier_callers(const struct go_binary *bin, char ***names, size_t *n);

/*
 * A call of a producer that loses its size or type before its sites: what
 * the caller knows at the call (constant, a slot of its frame that outlives
 * the call, or only AX and BX, which an ALLOC_ARGS probe at `pre` records).
 */
struct as_caller {
	uint64_t call;        /* link address of the CALL */
	uint64_t ret;         /* where it returns to: the lookup key */
	uint64_t callee;      /* the producer, 0 for an indirect call */
	char func[96];        /* the calling function */
	struct taf_cval size, type;
	uint64_t pre;         /* ALLOC_ARGS probe site, 0 if not needed */
	bool pre_emulated;
	uint8_t pre_reg;      /* the register it records the type from */
};

/*
 * Every call of the producers in targets[] anywhere in the binary (direct
 * CALLs, found by a byte scan confirmed by decoding the caller), plus every
 * indirect call inside the functions named in dispatchers[] (mallocgc's
 * size-class tables). *out is malloc'd. 0 or -errno.
 */
int as_find_callers(const struct as_env *env, const uint64_t *targets,
		    size_t ntargets, const char *const *dispatchers,
		    size_t ndispatchers, struct as_caller **out, size_t *n);

/*
 * --memprofilerate: where the type of a sampled allocation can be read
 * from the frames above mProf_Malloc.  Every call of a target (newobject,
 * makeslice, growslice, mallocgc, the producers) anywhere in the binary
 * with the type in `type_reg` at the call as a constant, or as the
 * caller's own argument in a slot that outlives the call; and every call
 * inside the functions inner[] (mallocgc and the producers: BX at their
 * entry is the type) across which their own type stays in a slot.  Only
 * entries with a known type (CONST or STACK, SP-relative at the call) are
 * returned, keyed by `ret`.  *out is malloc'd. 0 or -errno.
 */
struct as_type_target {
	uint64_t entry;
	int type_reg;         /* enum taf_reg of the type argument */
};
int as_find_type_sources(const struct as_env *env,
			 const struct as_type_target *targets, size_t ntargets,
			 const uint64_t *inner, size_t ninner,
			 struct as_caller **out, size_t *n);

/*
 * Full mode, type chains (alloc_sites_chain.c): every direct call of the
 * roots (mallocgc, type in BX), and level by level of the functions that
 * pass their own argument on as the type, described for the climb of an
 * alloc-site probe (bpf/alloc_site.bpf.h climb_type): the type at the call
 * as a constant, a global, a slot, the caller's own argument q (PASS:
 * the caller becomes a target with q, its callers are described at the
 * next level) or the 8 bytes at an offset from it (PASS_DEREF), or
 * recorded by an ALLOC_ARGS probe on the call itself (PENDING, pre and
 * pre_reg set) where none of those holds.  A level deeper than max_hops
 * gets no PASS.  *out is malloc'd, sorted by call. 0 or -errno.
 */
struct as_chain_stats {
	unsigned levels;      /* levels of callers scanned */
	unsigned passers;     /* functions that pass a type on */
	unsigned captured;    /* calls given an ALLOC_ARGS probe */
	unsigned unknown;     /* calls left undescribed (flagged records) */
};
int as_find_type_chains(const struct as_env *env,
			const struct as_type_target *roots, size_t nroots,
			unsigned max_hops, struct as_caller **out, size_t *n,
			struct as_chain_stats *st);

/*
 * What the analyses know before every reachable instruction of [lo, hi) of
 * a function (for tests: compared with DWARF location lists): every
 * location of the result, the size and the type there. cb returning
 * non-zero stops. 0, -EINVAL (the function could not be analysed), -errno.
 */
struct as_values {
	uint64_t pc;
	int64_t sp;               /* SP - SP at entry */
	struct taf_loc obj[8], size[8], type[8];
	unsigned n_obj, n_size, n_type;
};
int as_values_in(const struct as_env *env, uint64_t entry, uint64_t size,
		 uint64_t lo, uint64_t hi,
		 int (*cb)(const struct as_values *v, void *arg), void *arg);

const char *as_loc_str(const struct taf_loc *l, char *buf, size_t len);
const char *as_cval_str(const struct taf_cval *v, char *buf, size_t len);

#endif /* ALLOC_SITES_H */
