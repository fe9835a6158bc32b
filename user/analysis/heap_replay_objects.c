// SPDX-License-Identifier: BSD-3-Clause
/*
 * heap_replay_objects.c - what the replay knows of one object beyond its
 * counts: its size (slot, or its part of a tiny block) and, when it goes,
 * how long it lived and how many GC cycles it survived (heap_replay.h
 * states the rules; gc_cycles.h how cycles are estimated).
 */
#include <errno.h>
#include <string.h>

#include "analysis/heap_replay_impl.h"
#include "inspect/go_sizeclasses.h"

#define TINY_BLOCK 16
#define TINY_HALF 8

static uint64_t heap_align(const struct hr_private *p)
{
	return p->info.valid ? p->info.min_heap_align : 8;
}

static uint64_t page_size(const struct hr_private *p)
{
	return p->info.valid ? p->info.page_size : GO_PAGE_SIZE;
}

uint64_t hr_object_size(struct heap_replay *h, const struct ot_span *s,
			uint64_t id, uint64_t type_size, bool *tiny,
			bool *tiny_upper)
{

	*tiny = *tiny_upper = false;
	if (s && s->per_id) {
		/* Spans are page-aligned: the offset in the span tells the
		 * half of the block. */
		uint64_t off = (id - s->base_id) * h->priv->objects.align %
			       TINY_BLOCK;

		*tiny = true;
		*tiny_upper = off >= TINY_HALF;
		return *tiny_upper ? TINY_HALF : TINY_BLOCK;
	}
	if (s)
		return s->elemsize;
	h->anom.size_from_type++;
	return type_size;
}

/*
 * Moves live object KEY (map value V) from its class to the same type and
 * stack at SIZE, with its counts: allocs or exists, live, and the bytes of
 * its type and site.
 */
static int reclass(struct heap_replay *h, uint64_t key, uint64_t v,
		   uint64_t size)
{
	uint32_t from = (uint32_t)(v >> TIME_BITS), to;
	bool born = (v & TIME_MAX) != 0;
	struct hr_class *c;
	int rc;

	c = &h->classes[from];
	rc = hr_intern_class(h, c->type, c->stack, size, c->tiny, &to);
	if (rc)
		return rc;
	/* hr_intern_class may have moved the array. */
	c = &h->classes[from];
	c->live--;
	if (born)
		c->allocs--;
	else
		c->exists--;
	c = &h->classes[to];
	c->live++;
	if (born)
		c->allocs++;
	else
		c->exists++;
	return object_table_put(&h->priv->objects, key - 1,
				(uint64_t)to << TIME_BITS | (v & TIME_MAX));
}

int hr_tiny_split(struct heap_replay *h, uint64_t lower_id)
{
	uint64_t key = lower_id + 1, v;

	if (!key || !object_table_get(&h->priv->objects, lower_id, &v) ||
	    !h->classes[v >> TIME_BITS].tiny ||
	    h->classes[v >> TIME_BITS].size != TINY_BLOCK)
		return 0;
	return reclass(h, key, v, TINY_HALF);
}

/* Cycles survived by an object born at BORN (0: before the trace). */
static uint64_t cycles_survived(const struct hr_private *p, uint64_t born,
				uint64_t at_cycle)
{
	uint64_t c0 = born ? gc_cycles_at(&p->gc, (born - 1) * 1000) : 0;

	return at_cycle > c0 + 1 ? at_cycle - c0 - 1 : 0;
}

/* ---- lifetimes per type and site ---- */

static unsigned time_bucket(uint64_t us)
{
	unsigned e, b;

	if (!us)
		return 0;
	e = 63 - (unsigned)__builtin_clzll(us);
	/* The half of the octave: the bit below the top one. */
	b = 1 + 2 * e + (e ? (unsigned)(us >> (e - 1)) & 1 : 0);
	return b < HR_LIFE_TIME_BUCKETS ? b : HR_LIFE_TIME_BUCKETS - 1;
}

static unsigned cycle_bucket(uint64_t n)
{
	unsigned b;

	if (n < 16)
		return (unsigned)n;
	b = 16 + (63 - (unsigned)__builtin_clzll(n)) - 4;
	return b < HR_LIFE_CYCLE_BUCKETS ? b : HR_LIFE_CYCLE_BUCKETS - 1;
}

static uint64_t pct_bucket(const uint64_t *hist, unsigned nb, uint64_t n,
			   double pct)
{
	uint64_t want, seen = 0;
	unsigned b;

	if (!n)
		return UINT64_MAX;
	want = (uint64_t)(pct / 100.0 * (double)n);
	if (want >= n)
		want = n - 1;
	for (b = 0; b < nb; b++) {
		seen += hist[b];
		if (seen > want)
			return b;
	}
	return nb - 1;
}

uint64_t hr_life_time_pct(const struct hr_life *l, double pct)
{
	uint64_t b = pct_bucket(l->time_hist, HR_LIFE_TIME_BUCKETS, l->freed,
				pct), lo, hi;
	unsigned e;

	if (b == UINT64_MAX || !b)
		return b == UINT64_MAX ? 0 : 500;	/* under 1 us */
	e = (unsigned)(b - 1) / 2;
	lo = 1ull << e;
	if (e && (b - 1) % 2)
		lo += 1ull << (e - 1);
	hi = e ? lo + (1ull << (e - 1)) : 2;
	return (lo + hi) * 1000 / 2;
}

uint64_t hr_life_cycles_pct(const struct hr_life *l, double pct)
{
	uint64_t b = pct_bucket(l->cycle_hist, HR_LIFE_CYCLE_BUCKETS,
				l->freed, pct);

	if (b == UINT64_MAX)
		return 0;
	return b < 16 ? b : 1ull << (b - 16 + 4);
}

static void life_freed(struct hr_life *l, uint64_t us, uint64_t cycles)
{
	l->freed++;
	l->time_hist[time_bucket(us)]++;
	l->cycle_hist[cycle_bucket(cycles)]++;
}

static void life_live(struct hr_life *l, uint64_t cycles)
{
	l->live_end++;
	l->live_cycles_sum += cycles;
	if (cycles > l->live_cycles_max)
		l->live_cycles_max = cycles;
}

static struct hr_site *class_site(struct heap_replay *h,
				  const struct hr_class *c)
{
	return c->stack ? &h->sites[h->stacks[c->stack - 1].site] : NULL;
}

static void count_life(struct hr_class *c, uint64_t born, uint64_t now_us)
{
	uint64_t from = born ? born - 1 : 0;

	if (now_us > from)
		c->live_s += (double)(now_us - from) / 1e6;
}

int hr_object_freed(struct heap_replay *h, uint32_t cls, uint64_t born,
		    uint64_t now_us, uint64_t id, bool swept)
{
	struct hr_private *p = h->priv;
	struct hr_class *c = &h->classes[cls];
	uint64_t survived;
	int rc;

	if (swept) {
		rc = gc_cycles_on_free(&p->gc,
				       id * heap_align(p) / page_size(p),
				       now_us * 1000);
		if (rc)
			return rc;
		if (!p->gc.exact)
			h->gc_cycles = p->gc.n;
	}
	count_life(c, born, now_us);
	survived = cycles_survived(p, born, p->gc.n);
	if (born) {
		uint64_t us = now_us + 1 > born ? now_us + 1 - born : 0;
		struct hr_site *st = class_site(h, c);

		life_freed(&h->types[c->type].life, us, survived);
		if (st)
			life_freed(&st->life, us, survived);
	}
	if (born && !survived)
		c->shortlived++;
	if (survived >= HR_SURVIVED_CYCLES) {
		c->survived++;
		c->survived_before += !born;
	}
	return 0;
}

void hr_objects_finish(struct heap_replay *h)
{
	struct hr_private *p = h->priv;
	uint64_t end_us = rel_ns(h, h->t_last_ns) / 1000, id, v;
	struct ot_iter it = { 0 };

	while (object_table_next(&p->objects, &it, &id, &v)) {
		struct hr_class *c = &h->classes[v >> TIME_BITS];
		uint64_t born = v & TIME_MAX;

		uint64_t cyc = cycles_survived(p, born, p->gc.n);

		count_life(c, born, end_us);
		if (cyc >= HR_SURVIVED_CYCLES) {
			c->survived++;
			c->survived_before += !born;
		}
		if (born) {
			struct hr_site *st = class_site(h, c);

			life_live(&h->types[c->type].life, cyc);
			if (st)
				life_live(&st->life, cyc);
		}
	}
}

/* ---- the whole trace's lifetime histogram (heap_replay.h) ---- */

unsigned hr_lifetime_bucket(uint64_t v)
{
	unsigned e;

	if (v < 16)
		return (unsigned)v;
	e = 63 - (unsigned)__builtin_clzll(v);
	return 16 + (e - 4) * 16 + (unsigned)((v >> (e - 4)) & 15);
}

static uint64_t bucket_value(unsigned b)
{
	unsigned e;

	if (b < 16)
		return b;
	e = (b - 16) / 16 + 4;
	/* The middle of the bucket. */
	return ((16ull + (b - 16) % 16) << (e - 4)) + (1ull << (e - 4)) / 2;
}

uint64_t heap_replay_lifetime_pct(const struct heap_replay *h, double pct)
{
	uint64_t want, seen = 0;
	unsigned b;

	if (!h->lifetimes)
		return 0;
	want = (uint64_t)(pct / 100.0 * (double)h->lifetimes);
	if (want >= h->lifetimes)
		want = h->lifetimes - 1;
	for (b = 0; b < HR_LIFETIME_BUCKETS; b++) {
		seen += h->lifetime_hist[b];
		if (seen > want)
			return bucket_value(b);
	}
	return 0;
}
