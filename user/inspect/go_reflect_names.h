/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * go_reflect_names.h - where the names of types made at run time are.
 *
 * A type the program builds with reflect (StructOf, SliceOf, MapOf,
 * ArrayOf, PointerTo, FuncOf, ChanOf) lives on the heap, outside every
 * module's types section, and its abi.Type.Str is not an offset into one:
 * reflect registers the name with runtime.addReflectOff, which hands out
 * negative IDs and keeps ID -> name in runtime.reflectOffs.m, a
 * map[int32]unsafe.Pointer (runtime/runtime1.go); resolveNameOff looks
 * such IDs up there (runtime/type.go).  This module reads that map from
 * the target's memory, as the runtime would.
 *
 * Owns: finding runtime.reflectOffs (DWARF or .symtab, else the code of
 * reflect.addReflectOff), and walking the map in both layouts: the
 * bucket hash map of Go 1.21-1.23 (runtime/map.go hmap, bmap) and the
 * Swiss table map of Go 1.24+ (internal/runtime/maps: Map, table,
 * groups of 8 slots behind one control word).  The walk reads whatever
 * the running program holds, bounded, and never writes.
 */
#ifndef GO_REFLECT_NAMES_H
#define GO_REFLECT_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/u64_map.h"

struct go_binary;

/* Reads len bytes of target memory at addr; 0 or -errno (go_types.h's
 * go_mem_read_fn: go_types includes this header, not the reverse). */
typedef int (*go_reflect_read_fn)(void *ctx, uint64_t addr, void *buf,
				  size_t len);

struct go_reflect_names {
	go_reflect_read_fn read;
	void *ctx;
	uint64_t offs;          /* runtime address of runtime.reflectOffs */
	bool swiss;             /* Go 1.24+ map layout */
	struct u64_map names;   /* (uint32)ID -> runtime address of the name */
	uint64_t scanned_len;   /* the map's length at the last walk + 1 */
};

/*
 * Prepares RN for BIN loaded with LOAD_BIAS, its memory read through
 * READ.  0, or -ENOENT when the binary shows no runtime.reflectOffs (then
 * run-time types stay unnamed).
 */
int go_reflect_names_init(struct go_reflect_names *rn,
			  const struct go_binary *bin, uint64_t load_bias,
			  go_reflect_read_fn read, void *ctx);

/*
 * Runtime address of the name (abi.Name: flag byte, uvarint length,
 * bytes) registered as ID.  The map is walked again when ID is not known
 * yet and the map has grown since the last walk.  0, -ENOENT, or the read
 * callback's error.
 */
int go_reflect_name_addr(struct go_reflect_names *rn, int32_t id,
			 uint64_t *addr);

void go_reflect_names_free(struct go_reflect_names *rn);

#endif /* GO_REFLECT_NAMES_H */
