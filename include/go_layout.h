/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * go_layout.h - offsets and sizes of the Go runtime struct fields the tracer
 * reads, per Go version.
 *
 * Owns: the list of fields (GO_LAYOUT_FIELDS), the generated per-version
 * table (user/go_layout_table.c, written by tools/gen-layout-table from the
 * DWARF of each installed toolchain's binaries), and choosing between the
 * table and a binary's own DWARF. DWARF wins when present; a disagreement
 * with the table is reported, because it means the table is stale or the
 * binary was built with an experiment that changes a struct.
 */
#ifndef GO_LAYOUT_H
#define GO_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

struct go_binary;

/*
 * X(field, Go type, member path). Sources, Go 1.27 tree: runtime/mheap.go
 * (mspan, mheap), runtime/mpagealloc.go (pageAlloc.inUse), runtime/runtime2.go
 * (g, m), runtime/symtab.go (moduledata), internal/abi/type.go (Type).
 */
#define GO_LAYOUT_FIELDS(X)                                                  \
	X(mspan_start_addr, "runtime.mspan", "startAddr")                    \
	X(mspan_npages, "runtime.mspan", "npages")                           \
	X(mspan_freeindex, "runtime.mspan", "freeindex")                     \
	X(mspan_nelems, "runtime.mspan", "nelems")                           \
	X(mspan_alloc_bits, "runtime.mspan", "allocBits")                    \
	X(mspan_gcmark_bits, "runtime.mspan", "gcmarkBits")                  \
	X(mspan_spanclass, "runtime.mspan", "spanclass")                     \
	X(mspan_state, "runtime.mspan", "state")                             \
	X(mspan_elemsize, "runtime.mspan", "elemsize")                       \
	X(g_stack, "runtime.g", "stack")                                     \
	X(g_m, "runtime.g", "m")                                             \
	X(g_goid, "runtime.g", "goid")                                       \
	X(m_procid, "runtime.m", "procid")                                   \
	X(m_curg, "runtime.m", "curg")                                       \
	X(mheap_pages_inuse_ranges, "runtime.mheap", "pages.inUse.ranges")   \
	X(moduledata_text, "runtime.moduledata", "text")                     \
	X(moduledata_types, "runtime.moduledata", "types")                   \
	X(moduledata_etypes, "runtime.moduledata", "etypes")                 \
	X(moduledata_next, "runtime.moduledata", "next")                     \
	X(abi_type_size, "internal/abi.Type", "Size_")                       \
	X(abi_type_ptrbytes, "internal/abi.Type", "PtrBytes")                \
	X(abi_type_tflag, "internal/abi.Type", "TFlag")                      \
	X(abi_type_str, "internal/abi.Type", "Str")

/* Byte offset in the struct and byte size of the field; off < 0: unknown. */
struct go_field {
	int32_t off;
	int32_t size;
};

enum go_layout_source {
	GO_LAYOUT_NONE = 0,
	GO_LAYOUT_TABLE,  /* from the generated table */
	GO_LAYOUT_DWARF,  /* from the binary's DWARF */
};

struct go_layout {
	int major, minor;
	enum go_layout_source source;
#define GO_LAYOUT_MEMBER(name, type, path) struct go_field name;
	GO_LAYOUT_FIELDS(GO_LAYOUT_MEMBER)
#undef GO_LAYOUT_MEMBER
};

/* Describes one field of struct go_layout, for loops over all of them. */
struct go_layout_field_desc {
	const char *name;   /* "mspan_npages" */
	const char *type;   /* "runtime.mspan" */
	const char *path;   /* "npages" */
	size_t offset;      /* offsetof(struct go_layout, mspan_npages) */
};
extern const struct go_layout_field_desc go_layout_fields[];
extern const size_t go_layout_nfields;

static inline const struct go_field *
go_layout_field(const struct go_layout *l, size_t i)
{
	return (const struct go_field *)((const char *)l +
					 go_layout_fields[i].offset);
}

/* The generated table (user/go_layout_table.c). */
extern const struct go_layout go_layout_table[];
extern const size_t go_layout_table_len;

/* The table entry for go1.<minor>, or NULL. */
const struct go_layout *go_layout_lookup(int major, int minor);

/*
 * Every field from the binary's DWARF. Returns -ENODATA without DWARF;
 * otherwise 0, with off = -1 for any field DWARF does not describe.
 */
int go_layout_from_dwarf(const struct go_binary *bin, struct go_layout *out);

/* Called once per field where DWARF and the table differ. */
typedef void (*go_layout_report_fn)(void *ctx, const char *field,
				    struct go_field dwarf,
				    struct go_field table);

/*
 * The layout for this binary: DWARF when present (compared with the table
 * entry of its version; each difference goes to report, which may be
 * NULL), else the table entry. Returns the number of differences (>= 0),
 * or -ENOENT when there is neither DWARF nor a table entry for the
 * binary's version, or when DWARF lacks a field the table cannot supply.
 */
int go_layout_resolve(const struct go_binary *bin, struct go_layout *out,
		      go_layout_report_fn report, void *ctx);

#endif /* GO_LAYOUT_H */
