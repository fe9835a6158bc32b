/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * binary_ident.h - what names a Go executable to a profiler: its build IDs
 * and its executable segment, read from the ELF file.
 *
 * pprof's mapping (profile.proto Mapping) is a file, a build ID and the
 * address range of the code with its file offset; `go tool pprof` matches
 * the build ID against the GNU build-id note (NT_GNU_BUILD_ID) of a local
 * file, which Go's linker writes from Go 1.24 on (derived from the Go
 * build ID) and not before unless asked (-ldflags=-B=...), so the Go
 * build ID (.note.go.buildid, what `go tool buildid` prints) is read too,
 * to be shown apart.
 */
#ifndef BINARY_IDENT_H
#define BINARY_IDENT_H

#include <stdint.h>

struct go_binary;

struct binary_ident {
	char go_build_id[256];     /* "" if the note is missing */
	char gnu_build_id[129];    /* lower-case hex, "" if none */
	/* The PT_LOAD with PF_X that holds .text, at link addresses: start
	 * and offset rounded down, limit up, to 4 KiB pages, as the kernel
	 * maps it (what runtime/pprof puts in a mapping, minus the PIE load
	 * bias).  All 0 if there is no such segment. */
	uint64_t text_start, text_limit, text_offset;
};

/* Fills ID from BIN; returns 0 (every part is optional). */
int binary_ident_read(const struct go_binary *bin, struct binary_ident *id);

#endif /* BINARY_IDENT_H */
