// SPDX-License-Identifier: BSD-3-Clause
/*
 * sample_counts.c - the reads' births and frees against the runtime's
 * own per-bucket counts (sample_counts.h).
 */
#include "trace/sample_counts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attach/profile_counts.h"
#include "util/grow.h"

void sample_counts_init(struct sample_counts *sc)
{
	memset(sc, 0, sizeof(*sc));
	u64_map_init(&sc->owner);
	u64_map_init(&sc->index);
}

void sample_counts_free(struct sample_counts *sc)
{
	u64_map_free(&sc->owner);
	u64_map_free(&sc->index);
	free(sc->b);
	memset(sc, 0, sizeof(*sc));
}

static struct sc_bucket *bucket_of(struct sample_counts *sc, uint64_t bucket)
{
	uint64_t v;

	if (u64_map_get(&sc->index, bucket, &v))
		return &sc->b[v - 1];
	if (!GROW(sc->b, sc->n, sc->cap, 64) ||
	    u64_map_put(&sc->index, bucket, sc->n + 1))
		return NULL;
	memset(&sc->b[sc->n], 0, sizeof(sc->b[0]));
	return &sc->b[sc->n++];
}

int sample_counts_born(struct sample_counts *sc, uint64_t key, uint64_t bucket)
{
	struct sc_bucket *b;

	if (!bucket)
		return 0;
	b = bucket_of(sc, bucket);
	if (!b || u64_map_put(&sc->owner, key, bucket))
		return -ENOMEM;
	b->births++;
	return 0;
}

void sample_counts_freed(struct sample_counts *sc, uint64_t key)
{
	uint64_t bucket, v;

	if (!u64_map_get(&sc->owner, key, &bucket))
		return;
	u64_map_del(&sc->owner, key);
	if (u64_map_get(&sc->index, bucket, &v))
		sc->b[v - 1].frees++;
}

/*
 * One check of one count: the runtime's is within [LO, HI] of what came
 * before plus OURS, so what came before within [LO - OURS, HI - OURS].
 * Narrows R; when that leaves nothing, the reads were wrong by the gap:
 * short (a later check asks more than an earlier allowed) or over.  R
 * starts again from this check then, so each error counts once.
 */
static void narrow(struct sc_range *r, uint64_t lo, uint64_t hi,
		   uint64_t ours, uint64_t *missed, uint64_t *extra)
{
	int64_t l = (int64_t)lo - (int64_t)ours, h = (int64_t)hi - (int64_t)ours;

	if (r->set && l > r->hi) {
		*missed += (uint64_t)(l - r->hi);
	} else if (r->set && h < r->lo) {
		*extra += (uint64_t)(r->lo - h);
	} else if (r->set) {
		r->lo = l > r->lo ? l : r->lo;
		r->hi = h < r->hi ? h : r->hi;
		return;
	}
	*r = (struct sc_range){ .lo = l, .hi = h, .set = true };
}

int sample_counts_compare(struct sample_counts *sc,
			  const struct profile_counts *pc, enum sc_when when)
{
	struct sample_counts_totals *t = &sc->t;
	uint64_t moving = 0;
	bool ahead;
	size_t i;

	for (i = 0; i < pc->n; i++)
		moving += pc->b[i].window + pc->b[i].sweeping;
	/*
	 * runtime.GC flushes the sweep's frees once it is over
	 * (mProf_PostSweep), with the cycle's mallocs: then no bucket has a
	 * window or frees of the sweep, and the frees may be a sweep ahead
	 * of the reads: an upper bound now, a lower one at the next check.
	 */
	ahead = when == SC_END && !moving;
	t->checks++;
	t->frees_unchecked += when == SC_END_BLOCKING;
	t->runtime_births = t->runtime_frees = 0;
	t->found_births = t->found_frees = 0;
	for (i = 0; i < pc->n; i++) {
		const struct pc_bucket *p = &pc->b[i];
		struct sc_bucket *b = bucket_of(sc, p->bucket);
		uint64_t blo = p->births, bhi = p->births;

		if (!b)
			return -ENOMEM;
		/* A bucket made since the first check had nothing before:
		 * every sample of it came after the first read. */
		if (sc->based && !b->before_b.set) {
			b->before_b = (struct sc_range){ .set = true };
			b->before_f = (struct sc_range){ .set = true };
		}
		if (when == SC_MARK)
			bhi = p->allocs_all;
		if (b->has_ahead) {
			narrow(&b->before_f, b->ahead_f, INT64_MAX / 2, b->frees,
			       &t->frees_missed, &t->frees_extra);
			b->has_ahead = false;
		}
		narrow(&b->before_b, blo, bhi, b->births, &t->births_missed,
		       &t->births_extra);
		if (when == SC_MARK)
			narrow(&b->before_f, p->frees_all, p->frees_all, b->frees,
			       &t->frees_missed, &t->frees_extra);
		else if (when == SC_END)
			narrow(&b->before_f, ahead ? 0 : p->frees, p->frees,
			       b->frees, &t->frees_missed, &t->frees_extra);
		if (ahead) {
			b->ahead_f = p->frees;
			b->has_ahead = true;
		}
		t->runtime_births += p->allocs_all;
		t->runtime_frees += p->frees_all;
		t->found_births += b->births;
		t->found_frees += b->frees;
	}
	t->buckets = pc->n;
	sc->based = true;
	return 0;
}
