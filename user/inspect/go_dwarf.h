/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * go_dwarf.h - struct layouts, globals and type descriptors from the DWARF
 * a Go binary carries (absent when linked with -ldflags=-w).
 *
 * Owns: a name index over a binary's DWARF (libdw), built when opened.
 * Knows nothing of go_binary, which owns one per binary, opened on first
 * use (go_binary_dwarf): callers pass go_binary_dwarf(bin).  A NULL index
 * (no memory to open one) answers -ENOMEM.  Type names are Go's: "runtime.mspan",
 * "internal/abi.Type", "main.Node". Typedefs (Go emits one per named type)
 * are looked through.
 *
 * Errors: -ENODATA when the binary has no DWARF, -ENOENT when the type,
 * member or variable is not described.
 */
#ifndef GO_DWARF_H
#define GO_DWARF_H

#include <stdint.h>

struct Elf;
struct go_dwarf;

/*
 * The index of ELF's DWARF (NULL ELF: a binary without .debug_info).
 * Never fails but for memory (NULL); a binary without usable DWARF gives
 * an index whose every lookup answers -ENODATA.  Free with go_dwarf_free.
 */
struct go_dwarf *go_dwarf_open(struct Elf *elf);

/*
 * Offset and size of a member reached by a dotted path inside a struct:
 * ("runtime.mheap", "pages.inUse.ranges") adds the offsets of pages in
 * mheap, inUse in pageAlloc and ranges in addrRanges. size is the byte size
 * of the last member's type (8 for a pointer, 24 for a slice). size may be
 * NULL.
 */
int go_dwarf_member(struct go_dwarf *dw, const char *type,
		    const char *member_path, uint64_t *off, uint64_t *size);

static inline int go_dwarf_member_offset(struct go_dwarf *dw,
					 const char *type,
					 const char *member_path,
					 uint64_t *off)
{
	return go_dwarf_member(dw, type, member_path, off, (uint64_t *)0);
}

/* DW_AT_byte_size of a type. */
int go_dwarf_type_size(struct go_dwarf *dw, const char *type,
		       uint64_t *size);

/*
 * Link address of a package-level variable ("runtime.mheap_",
 * "runtime.firstmoduledata") from its DW_AT_location.  Most callers want
 * go_runtime_global_addr (runtime_globals.h), which also looks in .symtab
 * and, for a stripped binary, in the code.
 */
int go_dwarf_var_addr(struct go_dwarf *dw, const char *var,
		      uint64_t *addr);

/*
 * DW_AT_go_runtime_type (0x2904) of a type: where its *abi.Type lives, as
 * an offset from moduledata.types (cmd/link/internal/ld/dwarf.go writes it
 * as a section offset; dwarf_test.go checks types+off == the type's
 * address). Gives a test the descriptor of "main.Node".
 */
int go_dwarf_runtime_type_off(struct go_dwarf *dw, const char *type,
			      uint64_t *off);

/* Frees an index (NULL: nothing). */
void go_dwarf_free(struct go_dwarf *dw);

#endif /* GO_DWARF_H */
