// SPDX-License-Identifier: BSD-3-Clause
/*
 * gc_cycles.c - GC cycle starts from pages swept twice (gc_cycles.h).
 *
 * Memory: one u64_map entry (16 bytes) per heap page that ever had a free
 * (0.2 % of the heap it describes) and 8 bytes per cycle.
 */
#include "analysis/gc_cycles.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

#define NS_BITS 40
#define NS_MASK ((1ull << NS_BITS) - 1)
#define CYCLE_MAX ((1ull << (64 - NS_BITS)) - 1)

void gc_cycles_init(struct gc_cycles *g)
{
	memset(g, 0, sizeof(*g));
	u64_map_init(&g->pages);
}

void gc_cycles_free(struct gc_cycles *g)
{
	u64_map_free(&g->pages);
	free(g->start_ns);
	memset(g, 0, sizeof(*g));
}

static int begin_cycle(struct gc_cycles *g, uint64_t t_ns)
{
	if (!GROW(g->start_ns, g->n, g->cap, 64))
		return -ENOMEM;
	g->start_ns[g->n++] = t_ns;
	return 0;
}

int gc_cycles_mark(struct gc_cycles *g, uint64_t t_ns)
{
	if (!g->exact) {
		/* Estimates made before the first mark give way to it. */
		g->exact = true;
		g->n = 0;
		u64_map_free(&g->pages);
		u64_map_init(&g->pages);
	}
	if (g->n && t_ns < g->start_ns[g->n - 1])
		t_ns = g->start_ns[g->n - 1];
	return begin_cycle(g, t_ns);
}

int gc_cycles_on_free(struct gc_cycles *g, uint64_t page, uint64_t t_ns)
{
	uint64_t v, cur = g->n < CYCLE_MAX ? g->n : CYCLE_MAX;
	int rc;

	if (g->exact)
		return 0;

	/*
	 * The last free's time is kept modulo 2^40 ns (18 minutes): a page
	 * idle that long and then freed within the gap of the same residue
	 * would be taken for one sweep, once in 5 million.
	 */
	/* The first free of the trace: a sweep began, so a cycle did. */
	if (!g->n && !g->pages.len) {
		rc = begin_cycle(g, t_ns);
		if (rc)
			return rc;
		cur = 1;
	}
	if (u64_map_get(&g->pages, page + 1, &v)) {
		if (((t_ns - v) & NS_MASK) < GC_SWEEP_GAP_NS)
			cur = v >> NS_BITS;	/* the same sweep goes on */
		else if (v >> NS_BITS == cur && cur < CYCLE_MAX) {
			rc = begin_cycle(g, t_ns);
			if (rc)
				return rc;
			cur++;
		}
	}
	return u64_map_put(&g->pages, page + 1,
			   cur << NS_BITS | (t_ns & NS_MASK));
}

uint64_t gc_cycles_at(const struct gc_cycles *g, uint64_t t_ns)
{
	size_t lo = 0, hi = g->n, k;

	/* The number of starts at or before T_NS.  Most asks are of objects
	 * born in the last few cycles: those first. */
	for (k = hi; k && k + 4 > hi; k--)
		if (g->start_ns[k - 1] <= t_ns)
			return k;
	hi = k;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g->start_ns[mid] <= t_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
