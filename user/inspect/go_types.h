/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * go_types.h - name, size and pointer bytes of a Go type descriptor
 * (*abi.Type) in a target process, as the runtime's own trace reports them
 * (runtime/tracetype.go uses rtype.string(), Size_ and PtrBytes).
 *
 * Owns: the module's types range (moduledata.types/etypes), decoding
 * abi.Type.Str (a nameOff from moduledata.types, runtime/type.go
 * resolveNameOff) and the name encoding (internal/abi/type.go Name: a flag
 * byte, a uvarint length, the bytes; Go 1.17+), dropping the '*' that
 * TFlagExtraStar marks (rtype.string in runtime/type.go).
 *
 * Memory is read through a callback so the same code serves a test reading
 * the file and the daemon reading /proc/PID/mem. All addresses passed to it
 * are runtime addresses: link address + load bias.
 */
#ifndef GO_TYPES_H
#define GO_TYPES_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "inspect/go_layout.h"

struct go_binary;

/* Reads len bytes of target memory at addr; 0 or -errno. */
typedef int (*go_mem_read_fn)(void *ctx, uint64_t addr, void *buf,
			      size_t len);

/* internal/abi/type.go: TFlagExtraStar. */
#define GO_TFLAG_EXTRA_STAR (1u << 1)

#define GO_TYPE_NAME_MAX 512

struct go_reflect_names;

struct go_type_reader {
	go_mem_read_fn read;
	void *ctx;
	const struct go_binary *bin; /* the file, when `read` fails */
	uint64_t bias;        /* runtime = link + bias */
	uint64_t types;       /* runtime address of moduledata.types */
	uint64_t etypes;      /* runtime address of moduledata.etypes */
	struct go_field size, ptr_bytes, tflag, str; /* abi.Type fields */
	/* Names of types made at run time (go_types_open only), or NULL. */
	struct go_reflect_names *reflect;
};

struct go_type_desc {
	char name[GO_TYPE_NAME_MAX]; /* NUL-terminated, maybe cut (truncated) */
	size_t name_len;             /* bytes in name, without the NUL */
	bool truncated;              /* the runtime name was longer */
	uint64_t size;               /* abi.Type.Size_ */
	uint64_t ptr_bytes;          /* abi.Type.PtrBytes */
	uint8_t tflag;
};

/*
 * Prepares a reader for the main module of bin loaded with load_bias (0
 * for a non-PIE). Finds moduledata (go_binary_moduledata), takes the
 * abi.Type and moduledata offsets from go_layout_resolve (DWARF or table),
 * and reads types/etypes from the file (the linker wrote them there; the
 * bias is added). Returns 0, -ENOENT (no moduledata or no layout for this
 * Go version), or a read error. bin must outlive the reader: [types,
 * etypes) is read-only data the file holds too, so a descriptor `read`
 * cannot reach (the process has exited) is read from the file instead.
 */
int go_types_init(struct go_type_reader *r, const struct go_binary *bin,
		  uint64_t load_bias, go_mem_read_fn read, void *ctx);

/* The same, on the heap: for owners that keep a pointer. */
int go_types_open(struct go_type_reader **out, const struct go_binary *bin,
		  uint64_t load_bias, go_mem_read_fn read, void *ctx);
void go_types_close(struct go_type_reader *r);

/*
 * Describes the *abi.Type at runtime address type_addr. Returns 0,
 * -ERANGE when the type is not in this module's types section and its
 * name cannot be found either (a type the program made at run time with
 * reflect: a reader from go_types_open finds its name in the runtime's
 * reflectOffs map, go_reflect_names.h), -EINVAL on a malformed name, or
 * the read callback's error.
 */
int go_type_describe(const struct go_type_reader *r, uint64_t type_addr,
		     struct go_type_desc *out);

#endif /* GO_TYPES_H */
