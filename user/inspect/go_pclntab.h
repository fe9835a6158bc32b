/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * go_pclntab.h - function table of a Go binary from its pclntab.
 *
 * Owns: reading the runtime's own function table (runtime/symtab.go
 * pcHeader, functab, _func; debug/gosym/pclntab.go): names, entries and
 * code sizes of every Go function, and the source position (file, line,
 * inlined calls) of any PC in them. It is present in every Go binary, also
 * one linked with -ldflags='-s -w' (no .symtab, no DWARF), because the
 * runtime needs it for tracebacks and stack growth.
 *
 * Works on bytes the caller provides; go_binary finds them in the file.
 * Formats: Go 1.16/1.17 (magic 0xfffffffa), Go 1.18/1.19 (0xfffffff0),
 * Go 1.20+ (0xfffffff1). Older tables (Go <= 1.15) are refused.
 */
#ifndef GO_PCLNTAB_H
#define GO_PCLNTAB_H

#include <stddef.h>
#include <stdint.h>

#define GO_PCLNTAB_MAGIC_116 0xfffffffau
#define GO_PCLNTAB_MAGIC_118 0xfffffff0u
#define GO_PCLNTAB_MAGIC_120 0xfffffff1u

struct go_pclntab {
	const uint8_t *data;  /* the table, starting at its pcHeader */
	size_t len;
	uint64_t addr;        /* link address of the header */
	uint32_t magic;
	unsigned quantum;     /* pcHeader.minLC: 1 on amd64 */
	uint64_t text_start;  /* moduledata.text: entries are offsets from it */
	uint64_t nfunc;
	uint64_t nfiles;
	/* Offsets of the sub-tables from the header (pcHeader.*Offset). */
	uint64_t funcname_off, pctab_off, pcln_off;
	uint64_t cutab_off, filetab_off;
};

struct go_func {
	const char *name;    /* points into the table */
	uint64_t entry;      /* link address of the first instruction */
	uint64_t size;       /* bytes of code, without the padding after it */
	uint64_t next_entry; /* entry of the following function (or etext) */
	uint8_t funcid;      /* _func.funcID: 0 for ordinary code; wrappers
				and a few runtime functions are non-zero */
	/* pc-value tables (offsets into pctab, 0 = none) and the compile
	 * unit's first entry in cutab: for go_pclntab_line. */
	uint32_t pcfile, pcln, cu_offset;
	/* Where _func is in the table and its pcdata/funcdata counts: for
	 * go_pclntab_src_frames. */
	uint64_t func_off;
	uint32_t npcdata;
	uint8_t nfuncdata;
};

/* True if the 8 bytes at p look like a pcHeader we can read (amd64). */
int go_pclntab_check_header(const uint8_t *p, size_t len);

/*
 * Validates the header and the function table bounds. text_start is the
 * link address of runtime.text (Go 1.18+ store entries relative to it; the
 * pcHeader field that once held it is 0 since Go 1.26). Returns 0 or
 * -EINVAL (not a table), -ENOTSUP (a format we do not read).
 */
int go_pclntab_init(struct go_pclntab *t, const uint8_t *data, size_t len,
		    uint64_t addr, uint64_t text_start);

/* Function i, 0 <= i < t->nfunc. Returns 0 or -EINVAL (corrupt entry). */
int go_pclntab_func(const struct go_pclntab *t, uint64_t i,
		    struct go_func *out);

/*
 * By exact name ("runtime.(*mheap).initSpan"). 0 or -ENOENT. A function
 * called across the ABI boundary appears twice under one name: its code
 * and the compiler's ABI wrapper (funcID FuncIDWrapper; .symtab names the
 * ABI0 one "NAME.abi0"). This returns the one with funcID 0: the code
 * itself for a Go function, the assembly body for an assembly one.
 */
int go_pclntab_find(const struct go_pclntab *t, const char *name,
		    struct go_func *out);

/* The function containing pc, 0 or -ENOENT. */
int go_pclntab_find_pc(const struct go_pclntab *t, uint64_t pc,
		       struct go_func *out);

/*
 * Source position of the instruction at PC in function F (from
 * go_pclntab_func or _find_pc): the file and line the runtime's own
 * tracebacks print (runtime/symtab.go funcline1, pcvalue).  For a return
 * address, ask for the call instruction (PC - 1), as tracebacks do.  Code
 * inlined into F reports the inlined function's file and line (F stays
 * the function: the inline tree is not read).  *FILE points into the
 * table.  Returns 0, -ENOENT (no position for PC), or -EINVAL (corrupt).
 */
int go_pclntab_line(const struct go_pclntab *t, const struct go_func *f,
		    uint64_t pc, const char **file, uint32_t *line);

/*
 * Reads LEN bytes at offset OFF of moduledata.gofunc (the go:func.* data
 * that funcdata offsets are relative to).  Returns 0 or -EFAULT.
 */
typedef int (*go_gofunc_read_fn)(void *ctx, uint64_t off, void *buf,
				 size_t len);

/* One frame of source: a function, inlined or not, at a file and line. */
struct go_src_frame {
	const char *func;    /* points into the table */
	const char *file;    /* "?" if unknown */
	uint32_t line;       /* 0 if unknown */
};

/*
 * The source frames of PC in F, innermost first: every call inlined at PC
 * (F's inline tree, FUNCDATA_InlTree, and its PCDATA_InlTreeIndex table;
 * runtime/symtabinl.go), then F itself at its call site: what a Go
 * traceback prints for one physical frame.  READ fetches the inline tree
 * (NULL, or Go < 1.20 tables: F alone).  Writes at most MAX frames, the
 * innermost first, and returns how many (>= 1), or -ENOENT when PC is
 * not in F.
 */
int go_pclntab_src_frames(const struct go_pclntab *t,
			  const struct go_func *f, uint64_t pc,
			  go_gofunc_read_fn read, void *ctx,
			  struct go_src_frame *out, size_t max);

#endif /* GO_PCLNTAB_H */
