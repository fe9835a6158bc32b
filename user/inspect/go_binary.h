/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * go_binary.h - a Go executable (ELF, x86-64) opened for inspection.
 *
 * Owns: the file (mapped read-only), its ELF sections, segments and
 * symbols (libelf), PIE detection, link address <-> file offset, and the
 * three Go tables every later stage starts from: the build info
 * (go_buildinfo.h), the function table (go_pclntab.h) and the address of
 * runtime.firstmoduledata. Its DWARF index (go_dwarf.h) is opened on first
 * use and lives as long as the go_binary.
 *
 * Addresses here are link-time virtual addresses (what `nm` prints). For a
 * PIE the process sees them shifted by a load bias: runtime = link + bias.
 * Uprobes are attached by file offset (go_binary_vaddr_to_offset).
 *
 * Not thread-safe: one thread inspects a binary at a time.
 */
#ifndef GO_BINARY_H
#define GO_BINARY_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "inspect/go_buildinfo.h"
#include "inspect/go_pclntab.h"

struct go_binary;
struct Elf; /* libelf's Elf */

/*
 * Opens and checks `path`. Fails, with a one-line reason in err that
 * starts with the path, for: not ELF, not 64-bit x86-64 (names the
 * architecture), not an executable or shared object, no Go build info and
 * no pclntab (not Go), built by gccgo, a pclntab that is missing or
 * damaged in a Go binary (its functions cannot be found). Returns 0 or
 * -errno.
 */
int go_binary_open(const char *path, struct go_binary **out, char *err,
		   size_t errlen);
void go_binary_close(struct go_binary *bin);

/* The oldest Go whose runtime the tracer knows (probes, layout table). */
#define GO_MIN_SUPPORTED_MINOR 21

/*
 * Refuses what go_binary_open accepts but the tracer cannot trace: a Go
 * older than 1.GO_MIN_SUPPORTED_MINOR, or no Go version at all. Returns 0,
 * or -ENOTSUP with one line in err ("built with go1.20.14; Go 1.21 or
 * newer is required"), which does not name the file.
 */
int go_binary_check_version(const struct go_binary *bin, char *err,
			    size_t errlen);

/*
 * Whether the executable open on FD looks like a Go program, from its
 * section names alone (.go.buildinfo or .gopclntab): 1, 0, or -errno
 * when it is not a readable ELF file.  Cheap (the section headers, no
 * table parsed), for deciding whether a process just exec'd is worth
 * stopping; go_binary_open decides for good.  An ELF file without
 * section headers counts as Go (packers strip them; the open says).
 * Thread-safe (its own libelf handle).
 */
int go_binary_looks_go(int fd);

const char *go_binary_path(const struct go_binary *bin);

/* The descriptor the binary is open on (for as long as it is), or -1. */
int go_binary_fd(const struct go_binary *bin);

/*
 * Version and settings from .go.buildinfo. Always non-NULL; when the blob
 * is missing (very old or damaged binary) version is "" and major is 0.
 */
const struct go_build_info *go_binary_build_info(const struct go_binary *bin);

bool go_binary_is_pie(const struct go_binary *bin);     /* ET_DYN */
bool go_binary_has_symtab(const struct go_binary *bin); /* .symtab present */
bool go_binary_has_dwarf(const struct go_binary *bin);  /* .debug_info */

/*
 * Entry and code size of a function by its Go name, e.g. "runtime.mallocgc"
 * or "runtime.(*mheap).initSpan". Uses the pclntab (the runtime's own
 * table), else .symtab; both give the size without trailing padding.
 * 0 or -ENOENT.
 */
int go_binary_find_func(const struct go_binary *bin, const char *name,
			uint64_t *entry, uint64_t *size);

/*
 * Calls cb for every Go function whose name starts with prefix ("" = all),
 * in address order, from the pclntab (so stripped and unstripped builds
 * give the same list). A function that also has an ABI wrapper under the
 * same name is listed once, as go_binary_find_func finds it in a stripped
 * binary (go_pclntab_find). A non-zero return from cb stops the walk and
 * is returned.
 */
typedef int (*go_func_cb)(const char *name, uint64_t entry, uint64_t size,
			  void *arg);
int go_binary_foreach_func(const struct go_binary *bin, const char *prefix,
			   go_func_cb cb, void *arg);

/* Any .symtab symbol (data too: "runtime.mheap_"). 0 or -ENOENT. */
int go_binary_find_symbol(const struct go_binary *bin, const char *name,
			  uint64_t *addr, uint64_t *size);

/* A section by name. 0 or -ENOENT (also when section headers are gone). */
int go_binary_section(const struct go_binary *bin, const char *name,
		      uint64_t *addr, uint64_t *size);

/*
 * Copies len bytes stored in the file at link address vaddr. -EFAULT when
 * any byte is not backed by the file (unmapped, or .bss).
 */
int go_binary_read(const struct go_binary *bin, uint64_t vaddr, void *buf,
		   size_t len);

/* The same bytes in place, valid until close; NULL as for -EFAULT. */
const uint8_t *go_binary_bytes(const struct go_binary *bin, uint64_t vaddr,
			       size_t len);

/* Reads a little-endian 64-bit word (a pointer as the linker wrote it). */
int go_binary_read_u64(const struct go_binary *bin, uint64_t vaddr,
		       uint64_t *val);

/* File offset of vaddr, for uprobe attach. 0 or -EFAULT. */
int go_binary_vaddr_to_offset(const struct go_binary *bin, uint64_t vaddr,
			      uint64_t *off);

/*
 * Link address and file offset of the first PT_LOAD segment: with
 * /proc/PID/maps this gives the load bias (target_load_bias). 0 or -ENOENT.
 */
int go_binary_first_load(const struct go_binary *bin, uint64_t *vaddr,
			 uint64_t *offset);

/* The function table (always present once open succeeded). */
const struct go_pclntab *go_binary_pclntab(const struct go_binary *bin);

/* runtime.text: base of the pclntab's entry offsets. */
uint64_t go_binary_text_start(const struct go_binary *bin);

/*
 * Link address of runtime.firstmoduledata: from .symtab, or in a stripped
 * binary found as the word in the data sections that points at the pclntab
 * (moduledata's first field is pcHeader, runtime/symtab.go) and whose
 * second field points at the funcname table. 0 or -ENOENT.
 */
int go_binary_moduledata(const struct go_binary *bin, uint64_t *addr);

/*
 * Link address of moduledata.gofunc, the go:func.* data that funcdata
 * offsets (inline trees) are relative to. 0 or -ENOENT.
 */
int go_binary_gofunc(const struct go_binary *bin, uint64_t *addr);

/*
 * A few answers derived from the file and dear to compute, remembered with
 * it (runtime_globals.c: finding mheap_ in a stripped binary decodes every
 * runtime function, ~40 ms, not to be repeated while a target is stopped
 * for its snapshot).  get: false when key was never put.
 */
bool go_binary_memo_get(const struct go_binary *bin, const char *key,
			uint64_t *value, int *rc);
void go_binary_memo_put(const struct go_binary *bin, const char *key,
			uint64_t value, int rc);

/*
 * The libelf handle, for the modules that read sections go_binary does not
 * interpret (binary_ident's notes).
 */
struct Elf *go_binary_elf(const struct go_binary *bin);

/*
 * The binary's DWARF index (go_dwarf.h), opened on first use and owned by
 * the binary (freed by go_binary_close).  Without DWARF its lookups answer
 * -ENODATA; NULL (lookups: -ENOMEM) only when there is no memory for it.
 */
struct go_dwarf;
struct go_dwarf *go_binary_dwarf(const struct go_binary *bin);

#endif /* GO_BINARY_H */
