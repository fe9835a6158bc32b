// SPDX-License-Identifier: BSD-3-Clause
/*
 * heap_replay_points.c - the replay's checkpoints (live counts per type
 * and site at generation ends and every TICK_NS) and the leak rule over
 * them; heap_replay.c's opening comment states both rules.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/heap_replay_impl.h"

/* ---- checkpoints ---- */

static uint64_t *copy_u64(const uint64_t *src, size_t n)
{
	uint64_t *d = malloc((n ? n : 1) * sizeof(*d));

	if (d && n)
		memcpy(d, src, n * sizeof(*d));
	return d;
}

static void drop_point(struct hr_point *pt)
{
	free(pt->type_live);
	free(pt->type_live_bytes);
	free(pt->site_live);
}

/*
 * The types' and sites' counts (and p->site_live), summed from their
 * classes'.  The replay counts per (type, stack, size) class only: one
 * counter per event instead of the class's, its type's and its site's,
 * which are needed only at a checkpoint and at the end.  Sites count no
 * "exists" (their objects were allocated before the trace).
 */
void hr_fold_counts(struct heap_replay *h)
{
	uint64_t *sl = h->priv->site_live;
	size_t i;

	for (i = 0; i < h->ntypes; i++)
		memset(&h->types[i].c, 0, sizeof(h->types[i].c));
	for (i = 0; i < h->nsites; i++) {
		memset(&h->sites[i].c, 0, sizeof(h->sites[i].c));
		sl[i] = 0;
	}
	for (i = 0; i < h->nclasses; i++) {
		const struct hr_class *k = &h->classes[i];
		struct hr_counts *t = &h->types[k->type].c;

		t->allocs += k->allocs;
		t->alloc_bytes += k->allocs * k->size;
		t->frees += k->frees;
		t->free_bytes += k->frees * k->size;
		t->exists += k->exists;
		t->live += k->live;
		t->live_bytes += k->live * k->size;
		if (k->stack) {
			uint32_t si = h->stacks[k->stack - 1].site;
			struct hr_counts *s = &h->sites[si].c;

			s->allocs += k->allocs;
			s->alloc_bytes += k->allocs * k->size;
			s->frees += k->frees;
			s->free_bytes += k->frees * k->size;
			s->live += k->live;
			s->live_bytes += k->live * k->size;
			sl[si] += k->live;
		}
	}
}

int hr_take_point(struct heap_replay *h, uint64_t t_ns)
{
	struct hr_private *p = h->priv;
	struct hr_point *pt;
	uint64_t *tl, *tb;
	size_t i;

	if (h->npoints == MAX_POINTS) {
		/* Keep every other one (the first and the newest stay). */
		size_t j = 1;

		for (i = 1; i < h->npoints; i++) {
			if (i % 2 && i != h->npoints - 1)
				drop_point(&h->points[i]);
			else
				h->points[j++] = h->points[i];
		}
		h->npoints = j;
		p->min_gap_ns = (h->points[h->npoints - 1].t_ns -
				 h->points[0].t_ns) / (MAX_POINTS / 2);
	}
	if (!h->points) {
		h->points = calloc(MAX_POINTS, sizeof(*h->points));
		if (!h->points)
			return -ENOMEM;
	}
	hr_fold_counts(h);
	tl = malloc((h->ntypes ? h->ntypes : 1) * sizeof(*tl));
	tb = malloc((h->ntypes ? h->ntypes : 1) * sizeof(*tb));
	pt = &h->points[h->npoints];
	memset(pt, 0, sizeof(*pt));
	pt->site_live = copy_u64(p->site_live, h->nsites);
	if (!tl || !tb || !pt->site_live) {
		free(tl);
		free(tb);
		free(pt->site_live);
		return -ENOMEM;
	}
	for (i = 0; i < h->ntypes; i++) {
		tl[i] = h->types[i].c.live;
		tb[i] = h->types[i].c.live_bytes;
		if (tb[i] > h->types[i].peak_live_bytes)
			h->types[i].peak_live_bytes = tb[i];
	}
	pt->type_live = tl;
	pt->type_live_bytes = tb;
	pt->ntypes = h->ntypes;
	pt->nsites = h->nsites;
	pt->t_ns = t_ns;
	pt->live = p->objects.len;
	for (i = 0; i < h->ntypes; i++) {
		pt->allocs += h->types[i].c.allocs;
		pt->alloc_bytes += h->types[i].c.alloc_bytes;
		pt->frees += h->types[i].c.frees;
		pt->live_bytes += h->types[i].c.live_bytes;
	}
	pt->heap_pages = h->heap_pages;
	pt->manual_pages = h->manual_pages;
	pt->stacks = h->stacks_live;
	pt->stack_bytes = h->stack_bytes;
	h->npoints++;
	p->last_point_ns = t_ns;
	return 0;
}

/* A checkpoint at a generation's end, unless one was just taken. */
int hr_gen_end_point(struct heap_replay *h)
{
	struct hr_private *p = h->priv;
	uint64_t t = rel_ns(h, h->t_last_ns);

	if (!p->started || (h->npoints && t <= p->last_point_ns) ||
	    t < p->last_point_ns + p->min_gap_ns)
		return 0;
	return hr_take_point(h, t);
}

void hr_leak_rule(struct heap_replay *h, struct hr_leak *lk,
		  bool site, size_t idx, uint64_t live_bytes_end)
{
	size_t n = h->npoints, i;
	uint64_t floor = UINT64_MAX, prev, end, t0, span;
	uint64_t *fl;
	size_t last;
	unsigned steps, s;

	memset(lk, 0, sizeof(*lk));
	if (n < 4)
		return;
	fl = malloc(n * sizeof(*fl));
	if (!fl)
		return;
	for (i = n; i-- > 0;) {
		const struct hr_point *pt = &h->points[i];
		uint64_t l = site ? (idx < pt->nsites ? pt->site_live[idx] : 0)
				  : (idx < pt->ntypes ? pt->type_live[idx] : 0);

		if (l < floor)
			floor = l;
		fl[i] = floor;
	}
	end = site ? (idx < h->points[n - 1].nsites ?
		      h->points[n - 1].site_live[idx] : 0)
		   : (idx < h->points[n - 1].ntypes ?
		      h->points[n - 1].type_live[idx] : 0);
	/*
	 * Steps are stretches of time, not gaps between checkpoints: a leak
	 * that grows in bursts (a batch every 50 ms, say) raises its floor
	 * in every stretch, but not between two checkpoints that fall in
	 * one pause of it, and generation ends can come faster than the
	 * bursts.  With more than LEAK_STEPS gaps, LEAK_STEPS equal
	 * stretches of [t_0, t_n-1], each ending at the last checkpoint
	 * inside it (one that holds none is no step); with fewer, each gap.
	 */
	steps = n - 1 < LEAK_STEPS ? (unsigned)(n - 1) : LEAK_STEPS;
	t0 = h->points[0].t_ns;
	span = h->points[n - 1].t_ns - t0;
	prev = fl[0];
	last = 0;
	for (s = 1, i = 0; s <= steps; s++) {
		uint64_t edge = s == steps ? UINT64_MAX :
				n - 1 <= LEAK_STEPS ? h->points[s].t_ns :
				t0 + (uint64_t)((double)span * s / steps);

		while (i + 1 < n && h->points[i + 1].t_ns <= edge)
			i++;
		if (i == last)
			continue;
		lk->steps++;
		if (fl[i] > prev)
			lk->rises++;
		prev = fl[i];
		last = i;
	}
	lk->floor_start = fl[0];
	lk->live_end = end;
	if (end > fl[0] && end)
		lk->growth_bytes = (uint64_t)((double)(end - fl[0]) *
					      ((double)live_bytes_end /
					       (double)end));
	lk->suspect = lk->steps >= 3 && lk->rises * 4 >= lk->steps * 3 &&
		      end >= fl[0] + (fl[0] / 10 > 8 ? fl[0] / 10 : 8);
	free(fl);
}
