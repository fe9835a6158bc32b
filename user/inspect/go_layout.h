/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * go_layout.h - offsets and sizes of the Go runtime struct fields the tracer
 * reads, per Go version.
 *
 * Owns: the list of fields (GO_LAYOUT_FIELDS), the generated per-version
 * table (user/inspect/go_layout_table.c, written by tools/gen-layout-table from the
 * DWARF of each installed toolchain's binaries), and choosing between the
 * table and a binary's own DWARF. DWARF wins when present; a disagreement
 * with the table is reported, because it means the table is stale or the
 * binary was built with an experiment that changes a struct.
 */
#ifndef GO_LAYOUT_H
#define GO_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct go_binary;

/*
 * X(field, Go type, member path, since). `since` is the first minor version
 * of Go 1 whose runtime has the field, 0 when every version the tracer
 * supports has it; before it the field is absent (GO_FIELD_ABSENT), not
 * unknown.  A negative `since` is the first version without it (-25:
 * mheap.allArenas, heapArenas from Go 1.25 on). Sources, Go 1.27 tree: runtime/mheap.go (mspan, mheap),
 * runtime/mpagealloc.go (pageAlloc.inUse), runtime/mranges.go (addrRange),
 * runtime/runtime2.go (g, m), runtime/symtab.go (moduledata),
 * internal/abi/type.go (Type), runtime/mprof.go (bucket: its stack follows
 * it, at nstk + 8); mheap.arenas (the L1 array: one L2 pointer on
 * linux/amd64), mheap.allArenas and heapArena.spans/pageSpecials are
 * --memprofilerate's way to the spans with specials (profile_specials.c). mspan.largeType came with malloc headers
 * (Go 1.22, runtime/mbitmap.go).
 */
#define GO_LAYOUT_FIELDS(X)                                                  \
	X(mspan_start_addr, "runtime.mspan", "startAddr", 0)                 \
	X(mspan_npages, "runtime.mspan", "npages", 0)                        \
	X(mspan_freeindex, "runtime.mspan", "freeindex", 0)                  \
	X(mspan_nelems, "runtime.mspan", "nelems", 0)                        \
	X(mspan_alloc_bits, "runtime.mspan", "allocBits", 0)                 \
	X(mspan_gcmark_bits, "runtime.mspan", "gcmarkBits", 0)               \
	X(mspan_spanclass, "runtime.mspan", "spanclass", 0)                  \
	X(mspan_state, "runtime.mspan", "state", 0)                          \
	X(mspan_elemsize, "runtime.mspan", "elemsize", 0)                    \
	X(mspan_large_type, "runtime.mspan", "largeType", 22)                \
	X(mspan_specials, "runtime.mspan", "specials", 0)                    \
	X(mspan_sweepgen, "runtime.mspan", "sweepgen", 0)                    \
	X(special_offset, "runtime.special", "offset", 0)                    \
	X(special_kind, "runtime.special", "kind", 0)                        \
	X(specialprofile_b, "runtime.specialprofile", "b", 0)                \
	X(bucket_size, "runtime.bucket", "size", 0)                          \
	X(bucket_nstk, "runtime.bucket", "nstk", 0)                          \
	X(bucket_allnext, "runtime.bucket", "allnext", 0)                    \
	X(memrecord_future, "runtime.memRecord", "future", 0)                \
	X(g_stack, "runtime.g", "stack", 0)                                  \
	X(g_m, "runtime.g", "m", 0)                                          \
	X(g_goid, "runtime.g", "goid", 0)                                    \
	X(m_procid, "runtime.m", "procid", 0)                                \
	X(m_curg, "runtime.m", "curg", 0)                                    \
	X(mheap_allspans, "runtime.mheap", "allspans", 0)                    \
	X(mheap_pages_inuse_ranges, "runtime.mheap", "pages.inUse.ranges", 0) \
	X(mheap_sweepgen, "runtime.mheap", "sweepgen", 0)                    \
	X(mheap_arenas, "runtime.mheap", "arenas", 0)                        \
	X(mheap_all_arenas, "runtime.mheap", "allArenas", -25)               \
	X(mheap_heap_arenas, "runtime.mheap", "heapArenas", 25)              \
	X(heap_arena_spans, "runtime.heapArena", "spans", 0)                 \
	X(heap_arena_page_specials, "runtime.heapArena", "pageSpecials", 0)  \
	X(addr_range_base, "runtime.addrRange", "base", 0)                   \
	X(moduledata_text, "runtime.moduledata", "text", 0)                  \
	X(moduledata_types, "runtime.moduledata", "types", 0)                \
	X(moduledata_etypes, "runtime.moduledata", "etypes", 0)              \
	X(moduledata_next, "runtime.moduledata", "next", 0)                  \
	X(abi_type_size, "internal/abi.Type", "Size_", 0)                    \
	X(abi_type_ptrbytes, "internal/abi.Type", "PtrBytes", 0)             \
	X(abi_type_tflag, "internal/abi.Type", "TFlag", 0)                   \
	X(abi_type_str, "internal/abi.Type", "Str", 0)

/*
 * Byte offset in the struct and byte size of the field. A negative off
 * says why there is none: GO_FIELD_UNKNOWN (nothing describes it) or
 * GO_FIELD_ABSENT (this Go version's runtime has no such field).
 */
#define GO_FIELD_UNKNOWN (-1)
#define GO_FIELD_ABSENT (-2)

struct go_field {
	int32_t off;
	int32_t size;
};

/* The field exists and its offset is known. */
static inline bool go_field_present(const struct go_field *f)
{
	return f->off >= 0;
}

enum go_layout_source {
	GO_LAYOUT_NONE = 0,
	GO_LAYOUT_TABLE,  /* from the generated table */
	GO_LAYOUT_DWARF,  /* from the binary's DWARF */
};

struct go_layout {
	int major, minor;
	enum go_layout_source source;
#define GO_LAYOUT_MEMBER(name, type, path, since) struct go_field name;
	GO_LAYOUT_FIELDS(GO_LAYOUT_MEMBER)
#undef GO_LAYOUT_MEMBER
};

/* Describes one field of struct go_layout, for loops over all of them. */
struct go_layout_field_desc {
	const char *name;   /* "mspan_npages" */
	const char *type;   /* "runtime.mspan" */
	const char *path;   /* "npages" */
	int since;          /* first go1.<minor> with the field; 0: all;
			       negative: -(first go1.<minor> without it) */
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

/* Whether go1.<MINOR>'s runtime lacks a field of SINCE (the desc's). */
static inline bool go_layout_absent_in(int since, int minor)
{
	return since > 0 ? minor < since : since < 0 && minor >= -since;
}

/* The generated table (user/inspect/go_layout_table.c). */
extern const struct go_layout go_layout_table[];
extern const size_t go_layout_table_len;

/* The table entry for go1.<minor>, or NULL. */
const struct go_layout *go_layout_lookup(int major, int minor);

/*
 * Every field from the binary's DWARF. Returns -ENODATA without DWARF;
 * otherwise 0. A field DWARF does not describe gets GO_FIELD_ABSENT when
 * the binary's version predates the field's `since`, else
 * GO_FIELD_UNKNOWN.
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
 * On success every field is present or GO_FIELD_ABSENT, never
 * GO_FIELD_UNKNOWN: a caller tests go_field_present() only for the fields
 * that have a `since`.
 */
int go_layout_resolve(const struct go_binary *bin, struct go_layout *out,
		      go_layout_report_fn report, void *ctx);

#endif /* GO_LAYOUT_H */
