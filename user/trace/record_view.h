/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * record_view.h - one ring-buffer record, decoded once.
 *
 * Owns: the rule of which length each record kind must have.  The
 * dispatcher decodes every record into a view (its header, a typed
 * pointer to its body, and for an allocation with --stacks the stack it
 * carries) and passes that view down; the session, the sampled mode and
 * the stack store read the view, never the raw bytes or their length.
 * The record is the ring buffer's memory: the view is valid until the
 * callback that got it returns.
 */
#ifndef RECORD_VIEW_H
#define RECORD_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "traceaf_events.h"

/*
 * --stacks: what a heap-alloc record carries besides the allocation.
 * stack NULL: no stack (not asked for, or the walk failed); pcs NULL:
 * the stack is named by its hash only (the process sent it whole before).
 */
struct alloc_stack_view {
	const struct taf_rec_heap_alloc_stack *stack;
	const uint64_t *pcs;    /* the stack itself: its first record */
	uint32_t nr_pcs;        /* <= TAF_STACK_DEPTH */
};

struct record_view {
	const struct taf_rec_hdr *hdr;
	/* The body by kind; NULL for a kind this build does not know, and
	 * for an exec record that is only a header. */
	union {
		const void *body;
		const struct taf_rec_heap_alloc *heap_alloc;  /* HEAP_ALLOC */
		const struct taf_rec_span_sweep *sweep;       /* SPAN_SWEEP */
		const struct taf_rec_span_alloc *span_alloc;  /* SPAN_ALLOC */
		const struct taf_rec_stack_alloc *stack_alloc; /* STACK_ALLOC */
		/* SPAN_FREE, STACK_FREE, SAMPLED_FREE, GC_CYCLE */
		const struct taf_rec_addr *addr;
		const struct taf_rec_exec *exec;              /* EXEC */
		const struct taf_rec_snap *snap;              /* SNAP */
		const struct taf_rec_snap_bucket *snap_bucket; /* SNAP_BUCKET */
	};
	struct alloc_stack_view stack;                /* HEAP_ALLOC */
};

/*
 * Decodes the LEN bytes at DATA into V.  0, or -EINVAL when the record is
 * shorter than its header, than the length its header claims, or than its
 * kind's body: such a record is not passed on.
 */
int record_view_decode(const void *data, size_t len, struct record_view *v);

#endif /* RECORD_VIEW_H */
