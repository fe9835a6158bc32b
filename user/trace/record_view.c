// SPDX-License-Identifier: BSD-3-Clause
/*
 * record_view.c - the length every record kind must have (record_view.h).
 * The BPF programs write whole structs, so a short record is a damaged
 * one: it is refused here, once, instead of by each handler.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "record_view.h"

/* The smallest record of each kind: its body's struct. */
static const size_t min_len[TAF_REC_KIND_MAX] = {
	[TAF_REC_HEAP_ALLOC] = sizeof(struct taf_rec_heap_alloc),
	[TAF_REC_SPAN_SWEEP] = sizeof(struct taf_rec_span_sweep),
	[TAF_REC_SPAN_ALLOC] = sizeof(struct taf_rec_span_alloc),
	[TAF_REC_SPAN_FREE] = sizeof(struct taf_rec_addr),
	[TAF_REC_STACK_ALLOC] = sizeof(struct taf_rec_stack_alloc),
	[TAF_REC_STACK_FREE] = sizeof(struct taf_rec_addr),
	/* An exec record without its identity still ends the PID's session. */
	[TAF_REC_EXEC] = sizeof(struct taf_rec_hdr),
	[TAF_REC_SAMPLED_FREE] = sizeof(struct taf_rec_addr),
	[TAF_REC_GC_CYCLE] = sizeof(struct taf_rec_addr),
	[TAF_REC_GC_MARK] = sizeof(struct taf_rec_addr),
	[TAF_REC_SNAP] = offsetof(struct taf_rec_snap, s),
	[TAF_REC_SNAP_BUCKET] = offsetof(struct taf_rec_snap_bucket, pcs),
};

/* The stack an allocation record carries (TAF_ALLOC_F_STACK). */
static void stack_view(const void *data, size_t len,
		       struct alloc_stack_view *st)
{
	const struct taf_rec_heap_alloc_pcs *rp = data;

	if (len < sizeof(*st->stack))
		return;
	st->stack = data;
	if (len >= sizeof(*rp)) {
		st->pcs = (const uint64_t *)rp->pcs;
		st->nr_pcs = rp->nr_pcs < TAF_STACK_DEPTH ? rp->nr_pcs :
			     TAF_STACK_DEPTH;
	}
}

int record_view_decode(const void *data, size_t len, struct record_view *v)
{
	const struct taf_rec_hdr *h = data;

	*v = (struct record_view){ 0 };
	if (len < sizeof(*h) || h->len > len)
		return -EINVAL;
	v->hdr = h;
	if (h->kind >= TAF_REC_KIND_MAX || !min_len[h->kind])
		return 0;
	if (len < min_len[h->kind])
		return -EINVAL;
	if (h->kind == TAF_REC_EXEC && len < sizeof(struct taf_rec_exec))
		return 0;
	/* A snapshot record holds the samples it counts. */
	if (h->kind == TAF_REC_SNAP) {
		const struct taf_rec_snap *r = data;

		if (r->n > TAF_SNAP_BATCH ||
		    len < offsetof(struct taf_rec_snap, s) + r->n * sizeof(r->s[0]))
			return -EINVAL;
	}
	/* ... and a bucket record the PCs it counts. */
	if (h->kind == TAF_REC_SNAP_BUCKET) {
		const struct taf_rec_snap_bucket *r = data;
		uint64_t n = r->nstk < TAF_SNAP_BUCKET_PCS ? r->nstk :
			     TAF_SNAP_BUCKET_PCS;

		if (len < offsetof(struct taf_rec_snap_bucket, pcs) + n * 8)
			return -EINVAL;
	}
	v->body = data;
	if (h->kind == TAF_REC_HEAP_ALLOC && (h->flags & TAF_ALLOC_F_STACK))
		stack_view(data, len, &v->stack);
	return 0;
}
