// SPDX-License-Identifier: BSD-3-Clause
/*
 * heap_snapshot.c - the live heap of a (stopped) Go process, read from
 * outside, following traceSnapshotMemory (runtime/traceallocfree.go):
 *   for each span in mheap_.allspans that is not dead: the span; for in-use
 *   heap spans every slot i with i < freeindex or alloc bit i set, typed as
 *   typePointersOfUnchecked would (mbitmap.go): the malloc header word for
 *   scan objects > 512 B in small classes, mspan.largeType for large scan
 *   objects, nothing otherwise;
 *   for each g in allgs with a stack: the stack.
 */
#include "heap_snapshot.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inspect/go_binary.h"
#include "inspect/go_layout.h"
#include "inspect/go_sizeclasses.h"
#include "inspect/runtime_globals.h"
#include "attach/mem_batch.h"
#include "attach/target.h"

/* runtime/mheap.go: mSpanDead, mSpanInUse, mSpanManual. */
#define MSPAN_IN_USE 1
#define MSPAN_MANUAL 2
#define MSPAN_READ_MAX 512
/* mspans (and their alloc bitmaps) read per batch. */
#define READ_BATCH MEM_BATCH_MAX
#define BITMAP_MAX (1024 / 8)      /* bytes: 1024 slots at most a span */

struct snap_layout {
	uint64_t mheap;            /* runtime address of runtime.mheap_ */
	uint64_t allgs;            /* runtime address of runtime.allgs */
	bool has_large_type;       /* mspan.largeType (Go 1.22+) readable */
	bool headers;              /* Go 1.22+: malloc headers */
	size_t mspan_read;         /* bytes of an mspan that hold our fields */
	struct go_layout l;        /* DWARF, or the table when stripped */
};

static int field_ok(const struct go_field *f)
{
	return f->off >= 0 && f->off + f->size <= MSPAN_READ_MAX;
}

static uint64_t get_uint(const uint8_t *buf, const struct go_field *f)
{
	uint64_t v = 0;

	memcpy(&v, buf + f->off, f->size > 8 ? 8 : (size_t)f->size);
	return v;
}

static int resolve(const struct go_binary *bin, uint64_t bias,
		   struct snap_layout *sl, char *err, size_t errlen)
{
	const struct go_build_info *bi = go_binary_build_info(bin);
	uint64_t addr;

	memset(sl, 0, sizeof(*sl));
	if (go_layout_resolve(bin, &sl->l, NULL, NULL) < 0) {
		snprintf(err, errlen, "no runtime layout for %s", bi->version);
		return -ENOENT;
	}
	/* Both come from the code when the binary has no symbols. */
	if (go_runtime_global_addr(bin, "runtime.mheap_", &addr) != 0) {
		snprintf(err, errlen, "runtime.mheap_ not found in the binary");
		return -ENOENT;
	}
	sl->mheap = addr + bias;
	/* Without it the snapshot still has spans and objects. */
	if (go_runtime_global_addr(bin, "runtime.allgs", &addr) == 0)
		sl->allgs = addr + bias;
	sl->headers = bi->major == 1 && bi->minor >= 22;
	/*
	 * largeType types the large objects of Go 1.22+; the 1.21 runtime
	 * has no such field (GO_FIELD_ABSENT) and no types to report.
	 */
	sl->has_large_type = go_field_present(&sl->l.mspan_large_type) &&
			     field_ok(&sl->l.mspan_large_type);
	if (sl->headers && !sl->has_large_type) {
		snprintf(err, errlen, "offset of mspan.largeType unknown for %s",
			 bi->version);
		return -ENOENT;
	}
	if (!go_field_present(&sl->l.mheap_allspans) ||
	    !field_ok(&sl->l.mspan_start_addr) || !field_ok(&sl->l.mspan_npages) ||
	    !field_ok(&sl->l.mspan_nelems) || !field_ok(&sl->l.mspan_freeindex) ||
	    !field_ok(&sl->l.mspan_elemsize) || !field_ok(&sl->l.mspan_alloc_bits) ||
	    !field_ok(&sl->l.mspan_spanclass) || !field_ok(&sl->l.mspan_state) ||
	    !go_field_present(&sl->l.g_stack)) {
		snprintf(err, errlen, "runtime layout of mheap/mspan/g incomplete");
		return -ENOENT;
	}
	/* Read no further than our fields: the next page may be unmapped. */
	{
		const struct go_field *fs[] = {
			&sl->l.mspan_start_addr, &sl->l.mspan_npages,
			&sl->l.mspan_nelems, &sl->l.mspan_freeindex,
			&sl->l.mspan_elemsize, &sl->l.mspan_alloc_bits,
			&sl->l.mspan_spanclass, &sl->l.mspan_state,
		};
		size_t k;

		sl->mspan_read = 0;
		if (sl->has_large_type)
			sl->mspan_read = (size_t)(sl->l.mspan_large_type.off +
						  sl->l.mspan_large_type.size);
		for (k = 0; k < sizeof(fs) / sizeof(fs[0]); k++)
			if ((size_t)(fs[k]->off + fs[k]->size) > sl->mspan_read)
				sl->mspan_read = (size_t)(fs[k]->off + fs[k]->size);
	}
	return 0;
}

/* Objects of one in-use heap span. */
/*
 * The bytes of a span's alloc bitmap, 0 when its fields make no sense
 * (a span being set up, or a bad read).
 */
static size_t bitmap_len(const struct snap_layout *sl, const uint8_t *ms)
{
	uint64_t elemsize = get_uint(ms, &sl->l.mspan_elemsize);
	uint64_t nelems = get_uint(ms, &sl->l.mspan_nelems);
	uint64_t npages = get_uint(ms, &sl->l.mspan_npages);

	if (!elemsize || nelems == 0 || nelems > 8 * BITMAP_MAX ||
	    elemsize * nelems > npages * GO_PAGE_SIZE)
		return 0;
	return (size_t)(nelems + 7) / 8;
}

/* Objects of one in-use heap span whose alloc bitmap is `bits`. */
static int span_objects(const struct target *t, const struct snap_layout *sl,
			const uint8_t *ms, const uint8_t *bits, uint64_t base,
			uint64_t npages, uint8_t spanclass,
			const struct heap_snapshot_cb *cb,
			struct heap_snapshot_stats *st)
{
	uint64_t elemsize = get_uint(ms, &sl->l.mspan_elemsize);
	uint64_t nelems = get_uint(ms, &sl->l.mspan_nelems);
	uint64_t freeindex = get_uint(ms, &sl->l.mspan_freeindex);
	bool noscan = spanclass & 1, small = (spanclass >> 1) != 0;
	bool typed = sl->headers && !noscan && elemsize > GO_MIN_SIZE_FOR_HEADER;
	uint8_t *mem = NULL;
	uint64_t i, large_type = 0;
	int rc = 0;

	if (!typed && cb->span_objects && freeindex <= nelems) {
		rc = cb->span_objects(cb->ctx, base, bits, (uint32_t)nelems,
				      (uint32_t)freeindex);
		if (rc >= 0) {
			st->objects += (uint64_t)rc;
			return 0;
		}
		if (rc != -ENOTSUP)
			return rc;
		rc = 0;
	}
	if (typed && small) {
		/* One read of the span beats one per header word. */
		mem = malloc(npages * GO_PAGE_SIZE);
		if (mem && target_read(t, base, mem, npages * GO_PAGE_SIZE) != 0) {
			free(mem);
			mem = NULL;
		}
		if (mem)
			st->bytes_read += npages * GO_PAGE_SIZE;
	} else if (typed && sl->has_large_type) {
		large_type = get_uint(ms, &sl->l.mspan_large_type);
	}
	for (i = 0; i < nelems && rc == 0; i++) {
		uint64_t slot = base + i * elemsize, type = 0;

		if (!(i < freeindex || (bits[i / 8] & (1u << (i % 8)))))
			continue;
		if (typed && small && mem)
			memcpy(&type, mem + i * elemsize, 8);
		else if (typed && !small)
			type = large_type;
		st->objects++;
		if (type)
			st->typed_objects++;
		rc = cb->object(cb->ctx, slot, type);
	}
	free(mem);
	return rc;
}

/*
 * Reads the Go slice of pointers whose header ({ptr, len, cap}) is at
 * `hdr` (mheap_.allspans, allgs): a malloc'd copy in *out, its length in
 * *n.  Refuses lengths above `max`, which only a corrupt read gives.
 */
static int read_ptr_slice(const struct target *t, uint64_t hdr, uint64_t max,
			  uint64_t **out, uint64_t *n)
{
	uint64_t slice[2], *ptrs;

	if (target_read(t, hdr, slice, sizeof(slice)) || slice[1] > max)
		return -EIO;
	ptrs = malloc(slice[1] * 8 + 8);
	if (!ptrs)
		return -ENOMEM;
	if (slice[1] && target_read(t, slice[0], ptrs, slice[1] * 8)) {
		free(ptrs);
		return -EIO;
	}
	*out = ptrs;
	*n = slice[1];
	return 0;
}

/* Buffers of one batch of spans. */
struct span_batch {
	struct mem_batch spans, bitmaps;
	size_t bits_of[READ_BATCH];    /* span -> bitmap piece, or READ_BATCH */
	uint8_t *ms;                   /* READ_BATCH mspan structs */
	uint8_t bits[READ_BATCH][BITMAP_MAX];
};

/* Up to READ_BATCH spans whose mspan structs are at ptrs. */
static int spans_batch(const struct target *t, const struct snap_layout *sl,
		       const uint64_t *ptrs, size_t n, struct span_batch *b,
		       const struct heap_snapshot_cb *cb,
		       struct heap_snapshot_stats *st)
{
	struct mem_batch *sp = &b->spans, *bp = &b->bitmaps;
	size_t *bits_of = b->bits_of;
	uint8_t *ms = b->ms;
	size_t i, nb = 0;
	int rc = 0;

	for (i = 0; i < n; i++) {
		sp->addr[i] = ptrs[i];
		sp->len[i] = sl->mspan_read;
		sp->dst[i] = ms + i * sl->mspan_read;
	}
	mem_batch_read(t, sp, n);

	/* The alloc bitmaps of the in-use heap spans, in one more batch. */
	for (i = 0; i < n; i++) {
		const uint8_t *m = ms + i * sl->mspan_read;
		size_t bl;

		bits_of[i] = READ_BATCH;
		if (!sp->ok[i] ||
		    get_uint(m, &sl->l.mspan_state) != MSPAN_IN_USE)
			continue;
		bl = bitmap_len(sl, m);
		if (!bl)
			continue;
		bp->addr[nb] = get_uint(m, &sl->l.mspan_alloc_bits);
		bp->len[nb] = bl;
		bp->dst[nb] = b->bits[i];
		bits_of[i] = nb++;
	}
	mem_batch_read(t, bp, nb);

	for (i = 0; i < n && rc == 0; i++) {
		const uint8_t *m = ms + i * sl->mspan_read;
		uint64_t base, npages;
		uint8_t state, spanclass;

		if (!sp->ok[i]) {
			st->read_errors++;
			continue;
		}
		st->bytes_read += sl->mspan_read;
		state = (uint8_t)get_uint(m, &sl->l.mspan_state);
		if (state != MSPAN_IN_USE && state != MSPAN_MANUAL)
			continue;
		base = get_uint(m, &sl->l.mspan_start_addr);
		npages = get_uint(m, &sl->l.mspan_npages);
		spanclass = (uint8_t)get_uint(m, &sl->l.mspan_spanclass);
		st->spans++;
		rc = cb->span(cb->ctx, base, npages,
			      state == MSPAN_IN_USE ? 0 : 1, spanclass);
		if (rc || state != MSPAN_IN_USE)
			continue;
		if (bits_of[i] == READ_BATCH || !bp->ok[bits_of[i]]) {
			st->read_errors++;
			continue;
		}
		st->bytes_read += bp->len[bits_of[i]];
		rc = span_objects(t, sl, m, b->bits[i], base, npages,
				  spanclass, cb, st);
	}
	return rc;
}

static int read_spans(const struct target *t, const struct snap_layout *sl,
		      const struct heap_snapshot_cb *cb,
		      struct heap_snapshot_stats *st)
{
	struct span_batch *b;
	uint64_t n, i, *ptrs;
	int rc;

	rc = read_ptr_slice(t, sl->mheap + (uint64_t)sl->l.mheap_allspans.off,
			    1ull << 28, &ptrs, &n);
	if (rc)
		return rc;
	b = calloc(1, sizeof(*b));
	if (b)
		b->ms = malloc(READ_BATCH * sl->mspan_read);
	if (!b || !b->ms)
		rc = -ENOMEM;
	for (i = 0; i < n && rc == 0; i += READ_BATCH)
		rc = spans_batch(t, sl, ptrs + i,
				 n - i < READ_BATCH ? n - i : READ_BATCH, b,
				 cb, st);
	if (b)
		free(b->ms);
	free(b);
	free(ptrs);
	return rc;
}

static int read_stacks(const struct target *t, const struct snap_layout *sl,
		       const struct heap_snapshot_cb *cb,
		       struct heap_snapshot_stats *st)
{
	uint64_t n, i, *gs;
	int rc;

	rc = read_ptr_slice(t, sl->allgs, 1ull << 26, &gs, &n);
	if (rc)
		return rc;
	for (i = 0; i < n && rc == 0; i++) {
		uint64_t stk[2];

		if (target_read(t, gs[i] + (uint64_t)sl->l.g_stack.off, stk,
				sizeof(stk)) != 0) {
			st->read_errors++;
			continue;
		}
		st->bytes_read += sizeof(stk);
		if (!stk[0] || stk[1] <= stk[0])
			continue;
		st->stacks++;
		rc = cb->stack(cb->ctx, stk[0], stk[1]);
	}
	free(gs);
	return rc;
}

int heap_snapshot_read(const struct target *t, const struct go_binary *bin,
		       uint64_t load_bias, const struct heap_snapshot_cb *cb,
		       struct heap_snapshot_stats *st, char *err,
		       size_t errlen)
{
	struct snap_layout sl;
	int rc;

	memset(st, 0, sizeof(*st));
	rc = resolve(bin, load_bias, &sl, err, errlen);
	if (rc)
		return rc;
	rc = read_spans(t, &sl, cb, st);
	if (rc == 0 && sl.allgs)
		rc = read_stacks(t, &sl, cb, st);
	if (rc) {
		snprintf(err, errlen, "reading the heap failed: %s",
			 strerror(-rc));
		return rc;
	}
	if (!sl.allgs) {
		snprintf(err, errlen, "runtime.allgs not found in the binary: no goroutine stacks in the snapshot");
		return -ENOENT;
	}
	return 0;
}
