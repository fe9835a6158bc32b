// SPDX-License-Identifier: BSD-3-Clause
/* sample_reads.c - the samples of one read (sample_reads.h). */
#include "trace/sample_reads.h"

#include <errno.h>
#include <string.h>

#include "util/grow.h"

void sample_reads_init(struct sample_reads *r)
{
	memset(r, 0, sizeof(*r));
	r->reader_rc = 1;
	r->counts_rc = 1;
	sample_counts_init(&r->sc);
	u64_map_init(&r->seen);
	u64_map_init(&r->unconfirmed);
	u64_map_init(&r->ever);
	u64_map_init(&r->never_read);
	u64_map_init(&r->reborn);
	u64_map_init(&r->prev_seen);
	u64_map_init(&r->freed_since);
}

void sample_reads_free(struct sample_reads *r)
{
	if (r->reader_rc == 0)
		profile_specials_close(&r->reader);
	if (r->counts_rc == 0)
		profile_counts_close(&r->counts);
	sample_counts_free(&r->sc);
	free(r->fresh);
	free(r->told);
	u64_map_free(&r->seen);
	u64_map_free(&r->unconfirmed);
	u64_map_free(&r->ever);
	u64_map_free(&r->never_read);
	u64_map_free(&r->reborn);
	u64_map_free(&r->prev_seen);
	u64_map_free(&r->freed_since);
	memset(r, 0, sizeof(*r));
}

void sample_reads_begin(struct sample_reads *r)
{
	/* A new set: a map is emptied by making it again. */
	u64_map_free(&r->seen);
	u64_map_init(&r->seen);
	r->nfresh = 0;
	r->ntold = 0;
	u64_map_free(&r->reborn);
	u64_map_init(&r->reborn);
	r->ready = false;
	r->consistent = false;
	r->partial = false;
}

int sample_reads_key(struct sample_reads *r, uint64_t key)
{
	return u64_map_put(&r->seen, key, 1) ? -ENOMEM : 0;
}

struct sample_fresh *sample_reads_fresh(struct sample_reads *r)
{
	if (!GROW(r->fresh, r->nfresh, r->fresh_cap, 256))
		return NULL;
	return &r->fresh[r->nfresh++];
}

int sample_reads_span(struct sample_reads *r, uint64_t base, uint64_t limit)
{
	if (!GROW(r->told, r->ntold, r->told_cap, 256))
		return -ENOMEM;
	r->told[r->ntold++] = (struct sample_span){ base, limit };
	return 0;
}

static int span_by_base(const void *a, const void *b)
{
	const struct sample_span *x = a, *y = b;

	return x->base < y->base ? -1 : x->base > y->base;
}

bool sample_reads_told(const struct sample_reads *r, uint64_t key)
{
	size_t lo = 0, hi = r->ntold;

	if (!r->partial)
		return true;
	/* The last span starting at or below KEY. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->told[mid].base <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && key < r->told[lo - 1].limit;
}

void sample_reads_end(struct sample_reads *r, bool consistent, uint64_t ns)
{
	if (r->partial)
		qsort(r->told, r->ntold, sizeof(*r->told), span_by_base);
	r->ready = true;
	r->consistent = consistent;
	r->c.ns_total += ns;
	if (ns > r->c.ns_max)
		r->c.ns_max = ns;
	if (consistent)
		r->c.last_samples = r->seen.len;
}

bool sample_stack_type(const struct u64_map *types, uint64_t bias,
		       const struct ps_sample *ps, uint64_t *type)
{
	size_t i;

	*type = 0;
	for (i = 0; i < ps->npcs; i++)
		if (ps->pcs[i] >= bias &&
		    u64_map_get(types, ps->pcs[i] - bias, type))
			return true;
	return false;
}
