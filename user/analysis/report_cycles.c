// SPDX-License-Identifier: BSD-3-Clause
/*
 * report_cycles.c - the report's sections that count objects in GC cycles
 * (heap_replay's per-class shortlived and survived counts; cycles are
 * estimated from sweeps, gc_cycles.h):
 *   - garbage producers: allocation sites (types, without stacks) by the
 *     bytes of their objects that the first GC after their allocation
 *     freed: what keeps the collector busy;
 *   - retention: sites by the bytes of their objects that survived at
 *     least HR_SURVIVED_CYCLES cycles: what the heap holds on to.
 */
#include "report_sections.h"

#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/heap_replay.h"
#include "analysis/report_html.h"
#include "analysis/report_text.h"
#include "util/json_str.h"

/*
 * One row: a site (stack's innermost frame) or, without stacks, a type.
 * In retention, the objects already live when the trace began ("exists"
 * events) have rows of their own: the trace holds no allocation of
 * theirs, so a share of "its bytes" means nothing for them; they are
 * all retained, since before the trace.
 */
struct cyc_row {
	uint32_t site;        /* site index + 1; 0: by type */
	uint32_t type;
	bool before;          /* live before the trace began */
	uint64_t objects, bytes, alloc_bytes;
};

/* What the share column says of a row that has no share. */
#define BEFORE_TRACE "live at trace start"

static int row_by_bytes(const void *a, const void *b)
{
	const struct cyc_row *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

/*
 * Rows of section `which` (0: shortlived, 1: survived), largest first;
 * *n rows with bytes > 0.  NULL on allocation failure.
 */
static struct cyc_row *cyc_rows(const struct heap_replay *h, int which,
				size_t *n)
{
	size_t nkeys = h->nsites + h->ntypes + 1, i, k = 0;
	/* Retention: keys [nkeys, 2 nkeys) hold the before-trace rows. */
	struct cyc_row *rows = calloc(2 * nkeys, sizeof(*rows)), *out;

	*n = 0;
	if (!rows)
		return NULL;
	for (i = 0; i < h->nclasses; i++) {
		const struct hr_class *c = &h->classes[i];
		uint64_t objs = which ? c->survived : c->shortlived;
		/* Sites first, then types for the classes without a stack. */
		size_t key = c->stack ? h->stacks[c->stack - 1].site :
			     h->nsites + c->type;
		struct cyc_row *r = &rows[key], *old = &rows[nkeys + key];
		uint64_t before = which ? c->survived_before : 0;

		r->site = c->stack ? (uint32_t)key + 1 : 0;
		if (!r->objects && !r->alloc_bytes)
			r->type = c->type;
		r->objects += objs - before;
		r->bytes += (objs - before) * c->size;
		r->alloc_bytes += c->allocs * c->size;
		if (before) {
			old->site = r->site;
			if (!old->objects)
				old->type = c->type;
			old->before = true;
			old->objects += before;
			old->bytes += before * c->size;
		}
	}
	out = rows;
	for (i = 0; i < 2 * nkeys; i++)
		if (rows[i].bytes)
			out[k++] = rows[i];
	qsort(out, k, sizeof(*out), row_by_bytes);
	*n = k;
	return out;
}

static const char *row_type(const struct heap_replay *h, const struct cyc_row *r)
{
	uint32_t t = r->site ? h->sites[r->site - 1].top_type : r->type;

	return t < h->ntypes ? h->types[t].name : "?";
}

static void print_section(const struct heap_replay *h, int which,
			  unsigned top)
{
	struct cyc_row *rows;
	size_t n, i;
	char b[32];

	rows = cyc_rows(h, which, &n);
	if (!rows)
		return;
	if (which == 0)
		printf("\nGARBAGE PRODUCERS (top %u %s by bytes the first GC after their allocation freed; %" PRIu64 " GC cycles, %s)\n",
		       top, h->nsites ? "sites" : "types", h->gc_cycles,
		       h->gc_exact ? "the runtime's" : "estimated from sweeps");
	else
		printf("\nRETENTION (top %u %s by bytes alive after %d GC cycles or more)\n",
		       top, h->nsites ? "sites" : "types", HR_SURVIVED_CYCLES);
	if (!n)
		printf("  none\n");
	for (i = 0; i < n && i < top; i++) {
		const struct cyc_row *r = &rows[i];

		report_human_bytes(r->bytes, b, sizeof(b));
		printf("  %10s %10" PRIu64 " objects ", b, r->objects);
		if (r->before)
			printf("%-19s  ", BEFORE_TRACE);
		else
			printf("%5.1f%% of its bytes  ",
			       r->alloc_bytes ? 100.0 * (double)r->bytes /
						(double)r->alloc_bytes : 0.0);
		if (r->site) {
			const struct stack_frame *f = &h->sites[r->site - 1].frame;

			printf("%s (%s:%u) %s\n", f->func, f->file, f->line,
			       row_type(h, r));
		} else {
			printf("%s\n", row_type(h, r));
		}
	}
	free(rows);
}

void report_print_cycles(const struct heap_replay *h, unsigned top)
{
	print_section(h, 0, top);
	print_section(h, 1, top);
}

static void json_section(const struct heap_replay *h, int which,
			 unsigned top)
{
	struct cyc_row *rows;
	size_t n, i;

	printf(",\"%s\":[", which ? "retention" : "garbage_producers");
	rows = cyc_rows(h, which, &n);
	for (i = 0; rows && i < n && i < top; i++) {
		const struct cyc_row *r = &rows[i];

		if (i)
			putchar(',');
		printf("{\"site\":");
		if (r->site) {
			const struct stack_frame *f = &h->sites[r->site - 1].frame;

			printf("{\"func\":");
			json_str(stdout, f->func);
			printf(",\"file\":");
			json_str(stdout, f->file);
			printf(",\"line\":%u}", f->line);
		} else {
			printf("null");
		}
		printf(",\"type\":");
		json_str(stdout, row_type(h, r));
		printf(",\"objects\":%" PRIu64 ",\"bytes\":%" PRIu64
		       ",\"alloc_bytes\":%" PRIu64 ",\"before_trace\":%s}",
		       r->objects, r->bytes, r->alloc_bytes,
		       r->before ? "true" : "false");
	}
	putchar(']');
	free(rows);
}

void report_json_cycles(const struct heap_replay *h, unsigned top)
{
	printf(",\"gc_cycles\":%" PRIu64 ",\"gc_cycles_exact\":%s,\"survived_cycles\":%d",
	       h->gc_cycles, h->gc_exact ? "true" : "false", HR_SURVIVED_CYCLES);
	json_section(h, 0, top);
	json_section(h, 1, top);
}

static const char *cyc_head[] = {
	"site", "type", "bytes", "objects", "share of its bytes",
};

int report_html_cycles(const struct heap_replay *h, int which, unsigned top,
		       struct html_table *t)
{
	struct cyc_row *rows = NULL;
	size_t n, i, shown;
	char b[32];
	int rc = 0;

	rows = cyc_rows(h, which, &n);
	shown = n < top ? n : top;
	if (!rows || html_table_init(t, 5, shown, true)) {
		free(rows);
		return -ENOMEM;
	}
	t->id = which ? "retention" : "garbage";
	t->title = which ? "Retention" : "Garbage producers";
	t->note = which ? "Sites (types, without stacks) by the bytes of their "
			  "objects alive after 2 GC cycles or more: what the "
			  "heap holds on to (\"" BEFORE_TRACE "\": objects "
			  "allocated before the trace began, all retained)."
			: "Sites (types, without stacks) by the bytes of their "
			  "objects that the first GC after their allocation "
			  "freed: what keeps the collector busy.";
	t->head = cyc_head;
	t->text_cols = 2;
	t->bar_col = 4;
	for (i = 0; i < shown && !rc; i++) {
		const struct cyc_row *r = &rows[i];
		double share = r->alloc_bytes ? (double)r->bytes /
						(double)r->alloc_bytes : 0;

		if (r->site) {
			const struct stack_frame *f = &h->sites[r->site - 1].frame;

			rc |= html_table_set(t, i, 0, "%s (%s:%u)", f->func,
					     f->file, f->line);
		} else {
			rc |= html_table_set(t, i, 0, "-");
		}
		rc |= html_table_set(t, i, 1, "%s", row_type(h, r));
		rc |= html_table_set(t, i, 2, "%s",
				     report_human_bytes(r->bytes, b, sizeof(b)));
		rc |= html_table_set(t, i, 3, "%" PRIu64, r->objects);
		if (r->before)
			rc |= html_table_set(t, i, 4, BEFORE_TRACE);
		else
			rc |= html_table_set(t, i, 4, "%.1f%%", 100 * share);
		t->bar[i] = r->before ? 1 : share;
	}
	free(rows);
	if (rc) {
		html_table_free(t);
		return -ENOMEM;
	}
	return 0;
}
