// SPDX-License-Identifier: BSD-3-Clause
/* heap_scale.c - sampled replays scaled to estimates (heap_scale.h). */
#include "heap_scale.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/heap_replay.h"

double heap_scale_factor(uint64_t size, uint64_t rate)
{
	if (rate <= 1 || size == 0)
		return 1.0;
	return 1.0 / (1.0 - exp(-(double)size / (double)rate));
}

static uint64_t scaled(uint64_t n, double f)
{
	return (uint64_t)llround((double)n * f);
}

/* c += what class k stands for (counts scaled by f, bytes by f * size). */
static void add_class(struct hr_counts *c, const struct hr_class *k, double f)
{
	c->allocs += scaled(k->allocs, f);
	c->alloc_bytes += scaled(k->allocs * k->size, f);
	c->frees += scaled(k->frees, f);
	c->free_bytes += scaled(k->frees * k->size, f);
	c->exists += scaled(k->exists, f);
	c->live += scaled(k->live, f);
	c->live_bytes += scaled(k->live * k->size, f);
}

/* The checkpoints have no classes: each takes the whole trace's ratio. */
static void scale_points(struct heap_replay *h, double objs, double bytes)
{
	size_t i, k;

	for (i = 0; i < h->npoints; i++) {
		struct hr_point *p = &h->points[i];

		p->allocs = scaled(p->allocs, objs);
		p->alloc_bytes = scaled(p->alloc_bytes, bytes);
		p->frees = scaled(p->frees, objs);
		p->live = scaled(p->live, objs);
		p->live_bytes = scaled(p->live_bytes, bytes);
		for (k = 0; k < p->ntypes; k++) {
			p->type_live[k] = scaled(p->type_live[k], objs);
			p->type_live_bytes[k] = scaled(p->type_live_bytes[k], bytes);
		}
		for (k = 0; k < p->nsites; k++)
			p->site_live[k] = scaled(p->site_live[k], objs);
	}
}

int heap_replay_scale(struct heap_replay *h, uint64_t rate)
{
	uint64_t raw_objs = 0, raw_bytes = 0, est_objs = 0, est_bytes = 0;
	size_t i;

	h->sample_rate = rate;
	if (rate <= 1)
		return 0;
	for (i = 0; i < h->ntypes; i++)
		memset(&h->types[i].c, 0, sizeof(h->types[i].c));
	for (i = 0; i < h->nsites; i++)
		memset(&h->sites[i].c, 0, sizeof(h->sites[i].c));
	for (i = 0; i < h->nclasses; i++) {
		struct hr_class *k = &h->classes[i];
		double f = heap_scale_factor(k->size, rate);

		raw_objs += k->allocs;
		raw_bytes += k->allocs * k->size;
		add_class(&h->types[k->type].c, k, f);
		if (k->stack)
			add_class(&h->sites[h->stacks[k->stack - 1].site].c, k, f);
		/* The class itself last: add_class read its raw counts. */
		k->allocs = scaled(k->allocs, f);
		k->frees = scaled(k->frees, f);
		k->exists = scaled(k->exists, f);
		k->live = scaled(k->live, f);
		k->shortlived = scaled(k->shortlived, f);
		k->survived = scaled(k->survived, f);
		k->survived_before = scaled(k->survived_before, f);
		if (k->survived_before > k->survived)
			k->survived_before = k->survived;
		k->live_s *= f;
		est_objs += k->allocs;
		est_bytes += k->allocs * k->size;
	}
	for (i = 0; i < h->ntypes; i++)
		if (h->types[i].peak_live_bytes && raw_bytes)
			h->types[i].peak_live_bytes = (uint64_t)llround(
				(double)h->types[i].peak_live_bytes *
				((double)est_bytes / (double)raw_bytes));
	if (raw_objs && raw_bytes)
		scale_points(h, (double)est_objs / (double)raw_objs,
			     (double)est_bytes / (double)raw_bytes);
	return 0;
}
