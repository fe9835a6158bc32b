/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * go_dwarf.h - struct layouts, globals and type descriptors from the DWARF
 * a Go binary carries (absent when linked with -ldflags=-w).
 *
 * Owns: a name index over the binary's DWARF (libdw), built on first use
 * and kept in the go_binary. Type names are Go's: "runtime.mspan",
 * "internal/abi.Type", "main.Node". Typedefs (Go emits one per named type)
 * are looked through.
 *
 * Errors: -ENODATA when the binary has no DWARF, -ENOENT when the type,
 * member or variable is not described.
 */
#ifndef GO_DWARF_H
#define GO_DWARF_H

#include <stdint.h>

struct go_binary;
struct go_dwarf;

/*
 * Offset and size of a member reached by a dotted path inside a struct:
 * ("runtime.mheap", "pages.inUse.ranges") adds the offsets of pages in
 * mheap, inUse in pageAlloc and ranges in addrRanges. size is the byte size
 * of the last member's type (8 for a pointer, 24 for a slice). size may be
 * NULL.
 */
int go_dwarf_member(const struct go_binary *bin, const char *type,
		    const char *member_path, uint64_t *off, uint64_t *size);

static inline int go_dwarf_member_offset(const struct go_binary *bin,
					 const char *type,
					 const char *member_path,
					 uint64_t *off)
{
	return go_dwarf_member(bin, type, member_path, off, (uint64_t *)0);
}

/* DW_AT_byte_size of a type. */
int go_dwarf_type_size(const struct go_binary *bin, const char *type,
		       uint64_t *size);

/*
 * Link address of a package-level variable ("runtime.mheap_",
 * "runtime.firstmoduledata") from its DW_AT_location.  Most callers want
 * go_runtime_global_addr (runtime_globals.h), which also looks in .symtab
 * and, for a stripped binary, in the code.
 */
int go_dwarf_var_addr(const struct go_binary *bin, const char *var,
		      uint64_t *addr);

/*
 * DW_AT_go_runtime_type (0x2904) of a type: where its *abi.Type lives, as
 * an offset from moduledata.types (cmd/link/internal/ld/dwarf.go writes it
 * as a section offset; dwarf_test.go checks types+off == the type's
 * address). Gives a test the descriptor of "main.Node".
 */
int go_dwarf_runtime_type_off(const struct go_binary *bin, const char *type,
			      uint64_t *off);

/* Frees the lazy state; called by go_binary_close. */
void go_dwarf_free(struct go_dwarf *dw);

#endif /* GO_DWARF_H */
