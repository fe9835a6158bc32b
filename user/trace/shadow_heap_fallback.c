// SPDX-License-Identifier: BSD-3-Clause
/*
 * shadow_heap_fallback.c - objects allocated where no span is known, keyed
 * by address, and a count of them per page so that a new span can drop
 * the stale ones under it without scanning everything.
 */
#include "trace/shadow_heap.h"
#include "trace/shadow_heap_impl.h"

#include <stdlib.h>

#include "util/u64_map.h"

static int fb_page_add(struct shadow_heap *h, uint64_t addr, int delta)
{
	uint64_t key = (addr >> SH_PAGE_SHIFT) + 1, n = 0;

	u64_map_get(&h->fb_pages, key, &n);
	n += delta;
	if (!n) {
		u64_map_del(&h->fb_pages, key);
		return 0;
	}
	return u64_map_put(&h->fb_pages, key, n);
}

int sh_fb_alloc(struct shadow_heap *h, uint64_t addr, uint32_t type)
{
	int rc;

	if (!addr)
		return fail(h, SH_ERR_BAD_ARG);
	if (u64_map_get(&h->fallback, addr, NULL)) {
		/* Best effort: a failed update keeps the old type. */
		u64_map_put(&h->fallback, addr, type);
		return fail(h, SH_ERR_OBJ_ALLOC_LIVE);
	}
	/* Reserve page-count room first so that a failure changes nothing. */
	rc = fb_page_add(h, addr, 1);
	if (rc)
		return fail(h, rc);
	rc = u64_map_put(&h->fallback, addr, type);
	if (rc) {
		fb_page_add(h, addr, -1);
		return fail(h, rc);
	}
	h->live_objects++;
	return fail(h, SH_ERR_OBJ_NO_SPAN);
}

static bool fb_del(struct shadow_heap *h, uint64_t addr)
{
	if (!u64_map_del(&h->fallback, addr))
		return false;
	/* Should this fail (ENOMEM), the page's count stays too high, which
	 * only costs a needless scan when a span is allocated there. */
	fb_page_add(h, addr, -1);
	h->live_objects--;
	return true;
}

int sh_fb_free(struct shadow_heap *h, uint64_t addr)
{
	/* The sweeper frees slot bases; an object with a malloc header was
	 * reported allocated 8 bytes further (runtime/malloc.go). */
	if (fb_del(h, addr) || fb_del(h, addr + SH_MALLOC_HEADER))
		return SH_OK;
	return fail(h, SH_ERR_OBJ_FREE_UNKNOWN);
}

/*
 * Drops fallback objects on pages [pg, end): a span now owns those pages,
 * so the objects belonged to an earlier, unseen span.  Returns how many.
 */
uint64_t sh_fb_drop_range(struct shadow_heap *h, uint64_t pg,
			      uint64_t end)
{
	uint64_t lo = pg << SH_PAGE_SHIFT, hi = end << SH_PAGE_SHIFT;
	uint64_t key, *dead, n = 0, p;
	size_t it = 0, ndead = 0;

	for (p = pg; p < end; p++)
		if (u64_map_get(&h->fb_pages, p + 1, NULL))
			break;
	if (p == end)
		return 0;
	/* Rare (a span was missed): scan the table, delete after. */
	dead = malloc(h->fallback.len * sizeof(*dead));
	if (!dead)
		return 0; /* stale objects stay; they are still counted live */
	while (u64_map_next(&h->fallback, &it, &key, NULL))
		if (key >= lo && key < hi)
			dead[ndead++] = key;
	for (it = 0; it < ndead; it++)
		n += fb_del(h, dead[it]);
	free(dead);
	return n;
}
