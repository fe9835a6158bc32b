/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * runtime_globals.h - link addresses of the runtime's globals, whatever a
 * binary kept: DWARF, .symtab, or only its code.
 *
 * Owns: the one entry point the attach and trace stages ask
 * (go_runtime_global_addr), and the code scans behind it for stripped
 * binaries.  Depends on go_binary, go_dwarf and disasm; none of them
 * depends on it.
 */
#ifndef RUNTIME_GLOBALS_H
#define RUNTIME_GLOBALS_H

#include <stdbool.h>
#include <stdint.h>

struct go_binary;

/*
 * Link address of a package-level variable ("runtime.mheap_",
 * "runtime.allgs"): its DW_AT_location, else its .symtab entry, else for
 * runtime.mheap_, runtime.allgs, runtime.MemProfileRate,
 * runtime.disableMemoryProfiling, runtime.reflectOffs, runtime.mbuckets
 * and runtime.mProfCycle the code that uses them
 * (go_find_receiver_global, go_find_appended_slice_global below), whose
 * answer is remembered with the binary.  0 or -ENOENT.
 */
int go_runtime_global_addr(const struct go_binary *bin, const char *var,
			   uint64_t *addr);

/*
 * Link address of the global a function is called on: the RIP-relative
 * LEAQ into AX (the receiver, first ABIInternal argument) closest before
 * each direct CALL of `callee`, in every runtime.* function; all of them
 * must agree. This is how a stripped binary shows where runtime.mheap_ is
 * (mallocgc's large path: LEAQ runtime.mheap_(SB), AX; CALL
 * runtime.(*mheap).alloc). 0, -ENOENT (no such call, or callers disagree).
 */
int go_find_receiver_global(const struct go_binary *bin, const char *callee,
			    uint64_t *addr);

/*
 * One RIP-relative memory operand: how Go code on amd64 names a global
 * (MOVQ runtime.allgs+8(SB), CX is mov rcx, [rip+disp]). target is the
 * operand's link address, the instruction's end plus the displacement.
 */
struct go_rip_ref {
	uint64_t insn;    /* address of the instruction */
	uint64_t target;  /* link address referred to */
	bool lea;         /* LEAQ: the address is taken, memory not touched */
};

/*
 * Every RIP-relative operand of function `func` (by Go name), in code
 * order. *refs is malloc'd (free it); *n may be 0. 0, -ENOENT (no such
 * function), -EILSEQ (undecodable), -ENOMEM.
 */
int go_func_rip_refs(const struct go_binary *bin, const char *func,
		     struct go_rip_ref **refs, size_t *n);

/*
 * Link address of the slice-typed global that `func` appends to: the one
 * address A whose three header words (array A, len A+8, cap A+16) the
 * function all reads or writes RIP-relative, as `s = append(s, x)` on a
 * package-level s compiles. This is how a stripped binary shows where
 * runtime.allgs is (runtime.allgadd, runtime/proc.go). 0, -ENOENT (no such
 * function, or no or several candidates).
 */
int go_find_appended_slice_global(const struct go_binary *bin,
				  const char *func, uint64_t *addr);

/* Whether `func` reads or writes (not LEAQ) the word at link address addr. */
bool go_func_accesses(const struct go_binary *bin, const char *func,
		      uint64_t addr);

#endif /* RUNTIME_GLOBALS_H */
