/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * go_binary_impl.h - what go_binary.c shares with go_binary_tables.c; not
 * for other modules (they use go_binary.h).
 */
#ifndef GO_BINARY_IMPL_H
#define GO_BINARY_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <libelf.h>

#include "inspect/go_binary.h"
#include "inspect/go_buildinfo.h"
#include "inspect/go_func_index.h"
#include "inspect/go_pclntab.h"

struct section {
	const char *name;
	uint64_t addr, size, offset;
	uint32_t type;
	uint64_t flags;
};

struct segment {
	uint64_t vaddr, memsz, offset, filesz;
	uint32_t flags;
};

struct symbol {
	const char *name;
	uint64_t addr, size;
	unsigned char type;
};

/* One go_binary_memo_put answer. */
struct go_binary_memo {
	char key[48];
	uint64_t value;
	int rc;
};

struct go_binary {
	char *path;
	int fd;
	Elf *elf;
	const uint8_t *image; /* the whole file, mapped by libelf */
	size_t image_len;

	bool pie, has_symtab, has_dwarf;
	struct section *secs;
	size_t nsecs;
	struct segment *segs;
	size_t nsegs;
	struct symbol *syms; /* sorted by name */
	size_t nsyms;

	struct go_build_info bi;
	struct go_pclntab pcln;
	struct go_func_index fidx;  /* pcln by name */
	uint64_t text_start;
	uint64_t moduledata; /* 0: not found */

	struct go_dwarf *dwarf; /* go_binary_dwarf's, opened on first use */
	/* runtime_globals.c's answers, see go_binary_memo_get. */
	struct go_binary_memo memo[8];
	size_t nmemo;
};

/* Sets err (printf-style) and returns code. */
int go_binary_fail(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
const struct section *go_binary_find_section(const struct go_binary *bin,
					      const char *name);
/* The symbol NAME from .symtab (sorted by name), or NULL. */
const struct symbol *go_binary_find_sym(const struct go_binary *bin,
					 const char *name);

/* go_binary_tables.c: bin->bi from .go.buildinfo; 0 or -errno. */
int go_binary_load_buildinfo(struct go_binary *bin);
/*
 * go_binary_tables.c: bin->pcln, bin->moduledata and bin->text_start.
 * 0, -ENOENT (no table found), or -errno with err set.
 */
int go_binary_load_pclntab(struct go_binary *bin, char *err, size_t errlen);

#endif /* GO_BINARY_IMPL_H */
