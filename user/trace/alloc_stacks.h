/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alloc_stacks.h - --stacks in the daemon, for one traced process: the
 * call stacks BPF captured become symbolized stacks in the sidecar of
 * each trace file (stack_sidecar.h).
 *
 * Owns: reading the BPF stack map, load to link addresses (PIE), putting
 * back a caller the frame-pointer walk skipped, dropping the allocator's
 * own frames (the innermost frame is the first outside the runtime),
 * symbolizing from the pclntab (so stripped binaries work), the
 * allocations of the generation being built, and the sidecar writer of
 * the current trace file.
 */
#ifndef ALLOC_STACKS_H
#define ALLOC_STACKS_H

#include <stdint.h>

#include "attach/probes.h"

struct go_binary;
struct alloc_stacks;

struct alloc_stacks_counts {
	uint64_t seen;            /* allocation records with a stack */
	uint64_t inline_pcs;      /* of those, sent whole: the first of their
				     stack, or again after the probes' map
				     forgot it */
	uint64_t with_stack;      /* allocations written with a stack */
	uint64_t without_stack;   /* allocations without one (unreadable) */
	uint64_t unknown;         /* of those, by a hash never sent whole */
	uint64_t lost;            /* with a stack, in generations or sidecars
				     that could not be written */
	uint64_t sidecars;        /* sidecar files completed */
	int last_error;           /* errno of the last sidecar failure */
};

/*
 * BIN is borrowed (frame names point into its pclntab) and must outlive
 * A; KNOWN is the probes' map of stacks sent (probes_known_stacks; fd -1:
 * none), PID the traced process.  0 or -ENOMEM.
 */
int alloc_stacks_new(struct known_stacks known, uint32_t pid, const struct go_binary *bin,
		     uint64_t load_bias, struct alloc_stacks **out);

/*
 * The executable's path as the process names it (readlink of
 * /proc/PID/exe), for the sidecars' process record; "" if unknown.
 * 0 or -ENOMEM.
 */
int alloc_stacks_set_exe(struct alloc_stacks *a, const char *path);

/*
 * Every allocation record with a stack, kept or not: stack HASH and, the
 * first time (NPCS > 0), its PCS (load addresses) from a function that
 * returns to RET (load address, 0 if unknown).  A stack is learnt here
 * even from a record the session drops, or its later records, which name
 * the hash only, would have none.
 */
void alloc_stacks_record(struct alloc_stacks *a, uint64_t hash,
			 const uint64_t *pcs, uint32_t npcs, uint64_t ret);

/*
 * An allocation event (object ID, timestamp as written) of the generation
 * being built, made by the stack of HASH (0: none).
 */
void alloc_stacks_note(struct alloc_stacks *a, uint64_t id, uint64_t ts,
		       uint64_t hash);

/*
 * The trace sink started file TRACE_NAME (a trace_sink_new_file_fn; ctx:
 * A): the next generation written is its first, and starts its sidecar.
 */
void alloc_stacks_new_file(void *ctx, const char *trace_name);

/*
 * The generation being built was written as generation GEN of trace file
 * TRACE_NAME in directory DIRFD: its allocations go to that file's
 * sidecar, which is started first (and the previous file's completed)
 * when the file is new (alloc_stacks_new_file).  Returns 0 or -errno of
 * the sidecar: then that file gets none, and the trace is unaffected.
 */
int alloc_stacks_gen_written(struct alloc_stacks *a, int dirfd,
			     const char *trace_name, uint64_t gen);

/*
 * A stack read from the process itself rather than sent by a probe: a
 * heap-profile bucket's (runtime/mprof.go), N return PCS (load
 * addresses), innermost first.  Symbolized now; returns a reference for
 * alloc_stacks_note_exists (0: none could be made).
 */
uint32_t alloc_stacks_learn(struct alloc_stacks *a, const uint64_t *pcs,
			    uint32_t n);

/*
 * An allocation event (object ID, timestamp as written) of the generation
 * being built whose stack alloc_stacks_learn gave as REF (0: none).
 */
void alloc_stacks_note_ref(struct alloc_stacks *a, uint64_t id, uint64_t ts,
			   uint32_t ref);

/* The reference of the stack a probe sent as HASH (0: not known). */
uint32_t alloc_stacks_ref(const struct alloc_stacks *a, uint64_t hash);

/*
 * An "exists" event (object ID, timestamp as written) of the generation
 * being built, of an object whose allocation stack is REF (0: nothing is
 * noted).  Exists events are not allocations: no count changes.
 */
void alloc_stacks_note_exists(struct alloc_stacks *a, uint64_t id,
			      uint64_t ts, uint32_t ref);

/* The generation being built was not written: forget its allocations. */
void alloc_stacks_gen_dropped(struct alloc_stacks *a);

/* Completes the current sidecar (the trace file is complete). */
int alloc_stacks_close_file(struct alloc_stacks *a);

void alloc_stacks_get_counts(const struct alloc_stacks *a,
			     struct alloc_stacks_counts *c);

/* Completes the current sidecar and frees A (NULL is fine). */
void alloc_stacks_free(struct alloc_stacks *a);

#endif /* ALLOC_STACKS_H */
