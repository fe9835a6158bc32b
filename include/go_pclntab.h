/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * go_pclntab.h - function table of a Go binary from its pclntab.
 *
 * Owns: reading the runtime's own function table (runtime/symtab.go
 * pcHeader, functab, _func; debug/gosym/pclntab.go): names, entries and
 * code sizes of every Go function. It is present in every Go binary, also
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
};

struct go_func {
	const char *name;    /* points into the table */
	uint64_t entry;      /* link address of the first instruction */
	uint64_t size;       /* bytes of code, without the padding after it */
	uint64_t next_entry; /* entry of the following function (or etext) */
	uint8_t funcid;      /* _func.funcID: 0 for ordinary code; wrappers
				and a few runtime functions are non-zero */
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

#endif /* GO_PCLNTAB_H */
