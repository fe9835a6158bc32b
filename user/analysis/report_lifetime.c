// SPDX-License-Identifier: BSD-3-Clause
/*
 * report_lifetime.c - LIFETIMES: how long the objects of each allocation
 * site (and each type) live, in time and in GC cycles (heap_replay.h,
 * struct hr_life; cycles are the runtime's or estimated, gc_cycles.h).
 *
 * Freed objects give a distribution (percentiles from log-scale buckets:
 * times within ~20%, cycles exact to 15); objects still live at the end
 * only give how many cycles they have survived so far, which is shown
 * apart: a lower bound, not a lifetime.
 */
#include "report_sections.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/heap_replay.h"
#include "analysis/report_html.h"
#include "analysis/report_text.h"

static int site_by_bytes(const void *a, const void *b, void *arg)
{
	const struct heap_replay *h = arg;
	const struct hr_site *x = &h->sites[*(const uint32_t *)a];
	const struct hr_site *y = &h->sites[*(const uint32_t *)b];

	if (x->c.alloc_bytes != y->c.alloc_bytes)
		return x->c.alloc_bytes > y->c.alloc_bytes ? -1 : 1;
	return strcmp(x->frame.func, y->frame.func);
}

static int type_by_bytes(const void *a, const void *b, void *arg)
{
	const struct heap_replay *h = arg;
	const struct hr_type *x = &h->types[*(const uint32_t *)a];
	const struct hr_type *y = &h->types[*(const uint32_t *)b];

	if (x->c.alloc_bytes != y->c.alloc_bytes)
		return x->c.alloc_bytes > y->c.alloc_bytes ? -1 : 1;
	return strcmp(x->name, y->name);
}

uint32_t *report_sorted_sites(const struct heap_replay *h)
{
	uint32_t *v = malloc((h->nsites ? h->nsites : 1) * sizeof(*v));
	size_t i;

	if (!v)
		return NULL;
	for (i = 0; i < h->nsites; i++)
		v[i] = (uint32_t)i;
	qsort_r(v, h->nsites, sizeof(*v), site_by_bytes, (void *)h);
	return v;
}

static uint32_t *sorted_types(const struct heap_replay *h)
{
	uint32_t *v = malloc((h->ntypes ? h->ntypes : 1) * sizeof(*v));
	size_t i;

	if (!v)
		return NULL;
	for (i = 0; i < h->ntypes; i++)
		v[i] = (uint32_t)i;
	qsort_r(v, h->ntypes, sizeof(*v), type_by_bytes, (void *)h);
	return v;
}

uint64_t report_life_max_cycles(const struct hr_life *l)
{
	unsigned b;

	for (b = HR_LIFE_CYCLE_BUCKETS; b-- > 0;)
		if (l->cycle_hist[b])
			return b < 16 ? b : 1ull << (b - 16 + 4);
	return 0;
}

/* "  12345  3.1 ms  40.2 ms    0    1   3 |  4567  2.0 / 9" */
static void print_life(const struct hr_life *l)
{
	char t50[24], t90[24];

	if (l->freed)
		printf("  %9" PRIu64 " %9s %9s %5" PRIu64 " %5" PRIu64
		       " %5" PRIu64 "%s",
		       l->freed,
		       report_human_ns(hr_life_time_pct(l, 50), t50, sizeof(t50)),
		       report_human_ns(hr_life_time_pct(l, 90), t90, sizeof(t90)),
		       hr_life_cycles_pct(l, 50), hr_life_cycles_pct(l, 90),
		       report_life_max_cycles(l),
		       report_life_max_cycles(l) >= 16 ? "+" : " ");
	else
		printf("  %9d %9s %9s %5s %5s %5s ", 0, "-", "-", "-", "-",
		       "-");
	if (l->live_end)
		printf(" %9" PRIu64 " %5.1f %5" PRIu64, l->live_end,
		       (double)l->live_cycles_sum / (double)l->live_end,
		       l->live_cycles_max);
	else
		printf(" %9d %5s %5s", 0, "-", "-");
}

static void print_head(const char *what)
{
	printf("  %9s %9s %9s %5s %5s %5s  %9s %5s %5s  %s\n", "FREED",
	       "p50 time", "p90 time", "p50 C", "p90 C", "max C", "LIVE",
	       "avg C", "max C", what);
}

void report_print_lifetimes(const struct heap_replay *h, unsigned top)
{
	uint32_t *ord;
	size_t i, shown;

	printf("\nLIFETIMES (C: GC cycles survived, %" PRIu64
	       " cycles, %s; FREED: allocated and freed in the trace; LIVE: still live at the end, cycles so far)\n",
	       h->gc_cycles, h->gc_exact ? "the runtime's" : "estimated from sweeps");
	if (h->nsites) {
		ord = report_sorted_sites(h);
		if (!ord)
			return;
		printf("  by site (top %u by bytes allocated)\n", top);
		print_head("SITE");
		for (i = 0, shown = 0; i < h->nsites && shown < top; i++) {
			const struct hr_site *s = &h->sites[ord[i]];

			if (!s->life.freed && !s->life.live_end)
				continue;
			shown++;
			print_life(&s->life);
			printf("  %s (%s:%u)\n", s->frame.func, s->frame.file,
			       s->frame.line);
		}
		free(ord);
	}
	ord = sorted_types(h);
	if (!ord)
		return;
	printf("  by type (top %u by bytes allocated)\n", top);
	print_head("TYPE");
	for (i = 0, shown = 0; i < h->ntypes && shown < top; i++) {
		const struct hr_type *t = &h->types[ord[i]];

		if (!t->life.freed && !t->life.live_end)
			continue;
		shown++;
		print_life(&t->life);
		printf("  %s\n", t->name);
	}
	free(ord);
}

void report_json_life(const struct hr_life *l)
{
	printf("\"lifetime\":{\"freed\":%" PRIu64 ",\"p50_ns\":%" PRIu64
	       ",\"p90_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64
	       ",\"p50_cycles\":%" PRIu64 ",\"p90_cycles\":%" PRIu64
	       ",\"p99_cycles\":%" PRIu64 ",\"max_cycles\":%" PRIu64
	       ",\"live\":%" PRIu64 ",\"live_cycles_mean\":%.3f"
	       ",\"live_cycles_max\":%" PRIu64 "}",
	       l->freed, hr_life_time_pct(l, 50), hr_life_time_pct(l, 90),
	       hr_life_time_pct(l, 99), hr_life_cycles_pct(l, 50),
	       hr_life_cycles_pct(l, 90), hr_life_cycles_pct(l, 99),
	       report_life_max_cycles(l), l->live_end,
	       l->live_end ? (double)l->live_cycles_sum / (double)l->live_end
			   : 0.0,
	       l->live_cycles_max);
}

/* Without stacks the rows are types, and the second column their size. */
static const char *site_head[] = {
	"allocation site", "type", "allocs", "bytes", "live at end",
	"freed: p50 life", "p90 life", "p50 cycles", "p90 cycles",
	"live: cycles so far (max)",
};
static const char *type_head[] = {
	"type", "type size", "allocs", "bytes", "live at end",
	"freed: p50 life", "p90 life", "p50 cycles", "p90 cycles",
	"live: cycles so far (max)",
};

static int life_cells(struct html_table *t, size_t row,
		      const struct hr_counts *c, const struct hr_life *l)
{
	char b1[32], b2[32], t50[24], t90[24];
	int rc = 0;

	rc |= html_table_set(t, row, 2, "%" PRIu64, c->allocs);
	rc |= html_table_set(t, row, 3, "%s",
			     report_human_bytes(c->alloc_bytes, b1, sizeof(b1)));
	rc |= html_table_set(t, row, 4, "%" PRIu64 " (%s)", c->live,
			     report_human_bytes(c->live_bytes, b2, sizeof(b2)));
	if (l->freed) {
		rc |= html_table_set(t, row, 5, "%s", report_human_ns(
				     hr_life_time_pct(l, 50), t50, sizeof(t50)));
		rc |= html_table_set(t, row, 6, "%s", report_human_ns(
				     hr_life_time_pct(l, 90), t90, sizeof(t90)));
		rc |= html_table_set(t, row, 7, "%" PRIu64,
				     hr_life_cycles_pct(l, 50));
		rc |= html_table_set(t, row, 8, "%" PRIu64,
				     hr_life_cycles_pct(l, 90));
	} else {
		for (int k = 5; k <= 8; k++)
			rc |= html_table_set(t, row, (size_t)k, "-");
	}
	if (l->live_end)
		rc |= html_table_set(t, row, 9, "%.1f (%" PRIu64 ")",
				     (double)l->live_cycles_sum /
				     (double)l->live_end, l->live_cycles_max);
	else
		rc |= html_table_set(t, row, 9, "-");
	return rc ? -ENOMEM : 0;
}

int report_html_lifetimes(const struct heap_replay *h, unsigned top,
			  struct html_table *t)
{
	bool sites = h->nsites > 0;
	size_t n = sites ? h->nsites : h->ntypes, rows = n < top ? n : top, i;
	uint32_t *ord = sites ? report_sorted_sites(h) : sorted_types(h);
	int rc;

	if (!ord || html_table_init(t, 10, rows, false)) {
		free(ord);
		return -ENOMEM;
	}
	t->id = "sites";
	t->title = sites ? "Top allocation sites and their lifetimes"
			 : "Top types and their lifetimes";
	t->note = h->gc_exact ?
		  "By bytes allocated. Lifetimes of the objects freed in the "
		  "trace, in time and in GC cycles survived (the runtime's "
		  "cycles); objects still live at the end have survived "
		  "the cycles shown so far." :
		  "By bytes allocated. Lifetimes of the objects freed in the "
		  "trace, in time and in GC cycles survived (estimated from "
		  "the sweeps); objects still live at the end have survived "
		  "the cycles shown so far.";
	t->head = sites ? site_head : type_head;
	t->text_cols = 2;
	for (i = 0, rc = 0; i < rows && !rc; i++) {
		if (sites) {
			const struct hr_site *s = &h->sites[ord[i]];

			rc = html_table_set(t, i, 0, "%s (%s:%u)", s->frame.func,
					    s->frame.file, s->frame.line);
			if (!rc)
				rc = html_table_set(t, i, 1, "%s",
						    h->types[s->top_type].name);
			if (!rc)
				rc = life_cells(t, i, &s->c, &s->life);
		} else {
			const struct hr_type *ty = &h->types[ord[i]];

			char b[32];

			rc = html_table_set(t, i, 0, "%s", ty->name);
			if (!rc)
				rc = html_table_set(t, i, 1, "%s",
						    report_human_bytes(ty->size, b,
								       sizeof(b)));
			if (!rc)
				rc = life_cells(t, i, &ty->c, &ty->life);
		}
	}
	free(ord);
	if (rc)
		html_table_free(t);
	return rc;
}
