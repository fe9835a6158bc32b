/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * heap_snapshot.h - what is live in a Go process right now, read from its
 * memory: spans, allocated heap objects, goroutine stacks.
 *
 * Owns: walking mheap_.allspans and allgs the way traceSnapshotMemory
 * (runtime/traceallocfree.go) does, from outside.  The caller stops the
 * process first (freeze.h) for a consistent picture.  Results go to
 * callbacks; nothing here knows about traces.
 */
#ifndef HEAP_SNAPSHOT_H
#define HEAP_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

struct go_binary;
struct target;

struct heap_snapshot_cb {
	/* alloc_type: 0 for heap spans (mSpanInUse), 1 for manual ones. */
	int (*span)(void *ctx, uint64_t base, uint64_t npages,
		    uint8_t alloc_type, uint8_t spanclass);
	/* slot base; type_addr 0 where the runtime has no type for it. */
	int (*object)(void *ctx, uint64_t slot, uint64_t type_addr);
	/*
	 * Optional: every object of a heap span whose objects have no type,
	 * at once (allocBits, nelems bits; slots below freeindex are live
	 * whatever their bit).  Returns how many are live, or -ENOTSUP to
	 * have them passed to `object` one by one instead.
	 */
	int (*span_objects)(void *ctx, uint64_t base, const uint8_t *bits,
			    uint32_t nelems, uint32_t freeindex);
	int (*stack)(void *ctx, uint64_t lo, uint64_t hi);
	void *ctx;
};

struct heap_snapshot_stats {
	uint64_t spans;
	uint64_t objects;
	uint64_t typed_objects;
	uint64_t stacks;
	uint64_t read_errors;     /* spans or gs that could not be read */
	uint64_t bytes_read;
};

/*
 * Reads the snapshot.  Needs the address of runtime.mheap_ (DWARF, symbol
 * table, or in a stripped binary the code that uses it: go_dwarf_var_addr)
 * and the layout of mheap, mspan and g (go_layout_resolve: DWARF, or the
 * per-version table); goroutine stacks also need runtime.allgs, found the
 * same way.  Returns 0; or -ENOENT (with `err` filled) when the binary does
 * not say where they are: when only allgs is missing, spans and objects
 * were still delivered.
 */
int heap_snapshot_read(const struct target *t, const struct go_binary *bin,
		       uint64_t load_bias, const struct heap_snapshot_cb *cb,
		       struct heap_snapshot_stats *st, char *err,
		       size_t errlen);

#endif /* HEAP_SNAPSHOT_H */
