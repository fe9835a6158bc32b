// SPDX-License-Identifier: BSD-3-Clause
/*
 * report_sizes.c - SIZE CLASSES: per type, the slot sizes its objects got
 * and the bytes lost to rounding a request up to a slot.
 *
 * What the trace says of an object: its type (HeapObjectAlloc's type ID:
 * the type table gives the type's size S and whether it has pointers) and
 * its slot (the span holding its ID: the span's element size s), not the
 * size that was asked for (runtime/traceallocfree.go logs no size).  A
 * new(T) asks for S; make([]T, n) and append ask for n*S and still log T
 * (runtime/malloc.go newarray passes the element type), so n is known
 * only within bounds: the allocator gives the smallest slot that holds
 * the request (runtime/sizeclasses.go; large objects: whole 8 KiB pages),
 * so the request was above the next smaller slot p, and n lies in
 * [floor(p/S) + 1, floor(s/S)].  When that range is one number the loss
 * s - n*S is exact (every new(T): a slot below 2*S holds one element);
 * otherwise it is given as bounds.  Pointerful objects over 512 B carry
 * an 8-byte malloc header in their slot from Go 1.22 (runtime/mbitmap.go
 * heapBitsInSpan), which the trace cannot tell from rounding: it counts
 * as lost, and the lower element bound allows for it.
 *
 * Tiny objects (no pointers, under 16 B) share 16-byte blocks
 * (runtime/malloc.go mallocgcTiny), so nothing is rounded for them: they
 * are shown by their own size, S (or k*S up to 15 B for a small array; a
 * string's bytes have no type and give 1..15 B).
 *
 * --memprofilerate traces have no spans: their type entries carry the
 * sampled slot size, so there is no rounding to show.
 */
#include "report_sections.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/heap_replay.h"
#include "analysis/report_html.h"
#include "analysis/report_text.h"
#include "util/json_str.h"
#include "inspect/go_sizeclasses.h"

#define TINY_MAX 15
#define SLOTS_SHOWN 8

/* One (type, slot, tiny) group of classes. */
struct size_row {
	uint32_t type;
	bool tiny;
	uint64_t slot, objects, live;
	uint64_t elems_min, elems_max; /* 0: unknown (no type size) */
	uint64_t lost_min, lost_max;   /* per object */
};

/* Per type: its rows [first, first + n) and totals. */
struct size_type {
	uint32_t type;
	size_t first, n;
	uint64_t objects, bytes, lost_min, lost_max;
	uint64_t tiny_objects, tiny_own_min, tiny_own_max;
};

struct size_table {
	struct size_row *rows;
	size_t nrows;
	struct size_type *types;
	size_t ntypes;
	uint64_t objects, bytes, lost_min, lost_max, tiny_objects;
};

static int class_order(const void *a, const void *b, void *arg)
{
	const struct heap_replay *h = arg;
	const struct hr_class *x = &h->classes[*(const uint32_t *)a];
	const struct hr_class *y = &h->classes[*(const uint32_t *)b];

	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	if (x->tiny != y->tiny)
		return x->tiny ? -1 : 1;
	return x->size < y->size ? -1 : x->size > y->size;
}

static int type_by_lost(const void *a, const void *b)
{
	const struct size_type *x = a, *y = b;

	if (x->lost_max != y->lost_max)
		return x->lost_max > y->lost_max ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->type < y->type ? -1 : x->type > y->type;
}

/* The largest slot size below S: a request that got S was above it. */
static uint64_t slot_below(uint64_t s)
{
	uint64_t p = 0;
	int i;

	if (s > GO_MAX_SMALL_SIZE)
		return s > GO_PAGE_SIZE ? s - GO_PAGE_SIZE : 0;
	for (i = 1; i < GO_NUM_SIZE_CLASSES; i++)
		if (go_class_to_size[i] < s && go_class_to_size[i] > p)
			p = go_class_to_size[i];
	return p;
}

static void bound_row(struct size_row *r, const struct hr_type *t)
{
	uint64_t S = t->size, below, room;

	if (r->tiny) {
		/* Own size: S or a few S up to 15 B; no type, 1..15. */
		r->elems_min = 1;
		r->elems_max = S && S <= TINY_MAX ? TINY_MAX / S : 0;
		return;
	}
	if (!S || r->slot < S)
		return;		/* unknown: no size, or not from a span */
	below = slot_below(r->slot);
	/* A malloc header may sit in the slot: the request was above
	 * below - 8, not below. */
	if (t->ptr_bytes && r->slot > GO_MIN_SIZE_FOR_HEADER &&
	    r->slot <= GO_MAX_SMALL_SIZE && below >= GO_MALLOC_HEADER_SIZE)
		below -= GO_MALLOC_HEADER_SIZE;
	room = r->slot;
	r->elems_max = room / S;
	r->elems_min = below / S + 1;
	if (r->elems_min > r->elems_max)
		r->elems_min = r->elems_max;
	r->lost_min = r->slot - r->elems_max * S;
	r->lost_max = r->slot - r->elems_min * S;
}

static void table_free(struct size_table *tb)
{
	free(tb->rows);
	free(tb->types);
	memset(tb, 0, sizeof(*tb));
}

/* Builds the table; types sorted by bytes lost (upper bound).  -1: OOM. */
static int table_build(const struct heap_replay *h, struct size_table *tb)
{
	uint32_t *ord = malloc((h->nclasses ? h->nclasses : 1) * sizeof(*ord));
	size_t i;

	memset(tb, 0, sizeof(*tb));
	tb->rows = calloc(h->nclasses ? h->nclasses : 1, sizeof(*tb->rows));
	tb->types = calloc(h->ntypes ? h->ntypes : 1, sizeof(*tb->types));
	if (!ord || !tb->rows || !tb->types) {
		free(ord);
		table_free(tb);
		return -1;
	}
	for (i = 0; i < h->nclasses; i++)
		ord[i] = (uint32_t)i;
	qsort_r(ord, h->nclasses, sizeof(*ord), class_order, (void *)h);
	for (i = 0; i < h->nclasses; i++) {
		const struct hr_class *c = &h->classes[ord[i]];
		struct size_row *r = tb->nrows ? &tb->rows[tb->nrows - 1] : NULL;

		if (!c->allocs && !c->live)
			continue;
		if (!r || r->type != c->type || r->tiny != c->tiny ||
		    (!c->tiny && r->slot != c->size)) {
			r = &tb->rows[tb->nrows++];
			r->type = c->type;
			r->tiny = c->tiny;
			r->slot = c->tiny ? 16 : c->size;
		}
		r->objects += c->allocs;
		r->live += c->live;
	}
	free(ord);
	for (i = 0; i < tb->nrows; i++) {
		struct size_row *r = &tb->rows[i];
		const struct hr_type *t = &h->types[r->type];
		struct size_type *st = tb->ntypes ?
				       &tb->types[tb->ntypes - 1] : NULL;

		bound_row(r, t);
		if (!st || st->type != r->type) {
			st = &tb->types[tb->ntypes++];
			st->type = r->type;
			st->first = i;
		}
		st->n++;
		st->objects += r->objects;
		if (r->tiny) {
			st->tiny_objects += r->objects;
			st->tiny_own_min += r->objects * (t->size ? t->size : 1);
			st->tiny_own_max += r->objects *
				(r->elems_max ? r->elems_max * t->size : TINY_MAX);
			continue;
		}
		st->bytes += r->objects * r->slot;
		st->lost_min += r->objects * r->lost_min;
		st->lost_max += r->objects * r->lost_max;
	}
	for (i = 0; i < tb->ntypes; i++) {
		tb->objects += tb->types[i].objects;
		tb->bytes += tb->types[i].bytes;
		tb->lost_min += tb->types[i].lost_min;
		tb->lost_max += tb->types[i].lost_max;
		tb->tiny_objects += tb->types[i].tiny_objects;
	}
	qsort(tb->types, tb->ntypes, sizeof(*tb->types), type_by_lost);
	return 0;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void print_range(uint64_t lo, uint64_t hi, int width)
{
	char a[32], b[32], s[72];

	if (lo == hi)
		snprintf(s, sizeof(s), "%s", report_human_bytes(lo, a, sizeof(a)));
	else
		snprintf(s, sizeof(s), "%s..%s",
			 report_human_bytes(lo, a, sizeof(a)),
			 report_human_bytes(hi, b, sizeof(b)));
	printf("%*s", width, s);
}

static void print_type(const struct heap_replay *h, const struct size_table *tb,
		       const struct size_type *st)
{
	const struct hr_type *t = &h->types[st->type];
	size_t i, shown = 0;
	char b1[32];

	printf("  %s (%s%s): %" PRIu64 " objects", t->name,
	       report_human_bytes(t->size, b1, sizeof(b1)),
	       t->ptr_bytes ? "" : ", no pointers", st->objects);
	if (st->bytes) {
		printf(" in slots of %s, lost ", report_human_bytes(st->bytes, b1, sizeof(b1)));
		print_range(st->lost_min, st->lost_max, 0);
		printf(" (%.1f%%%s)", pct(st->lost_max, st->bytes),
		       st->lost_min == st->lost_max ? "" : " at most");
	}
	putchar('\n');
	printf("      %10s %10s %10s %12s %14s %18s\n", "SLOT", "OBJECTS",
	       "LIVE", "ELEMENTS", "LOST EACH", "LOST");
	for (i = st->first; i < st->first + st->n; i++) {
		const struct size_row *r = &tb->rows[i];
		char el[48];

		if (shown == SLOTS_SHOWN) {
			printf("      (%zu more slot sizes)\n",
			       st->first + st->n - i);
			break;
		}
		shown++;
		if (!r->elems_max)
			snprintf(el, sizeof(el), "?");
		else if (r->elems_min == r->elems_max)
			snprintf(el, sizeof(el), "%" PRIu64, r->elems_min);
		else
			snprintf(el, sizeof(el), "%" PRIu64 "..%" PRIu64,
				 r->elems_min, r->elems_max);
		if (r->tiny) {
			printf("      %10s %10" PRIu64 " %10" PRIu64 " %12s %14s %18s\n",
			       "tiny", r->objects, r->live, el, "(own size)",
			       "-");
			continue;
		}
		printf("      %10s %10" PRIu64 " %10" PRIu64 " %12s ",
		       report_human_bytes(r->slot, b1, sizeof(b1)), r->objects,
		       r->live, el);
		if (!r->elems_max) {
			printf("%14s %18s\n", "?", "?");
			continue;
		}
		print_range(r->lost_min, r->lost_max, 14);
		putchar(' ');
		print_range(r->objects * r->lost_min, r->objects * r->lost_max,
			    18);
		putchar('\n');
	}
}

void report_print_sizes(const struct heap_replay *h, unsigned top)
{
	struct size_table tb;
	size_t i, shown;
	char b1[32];

	printf("\nSIZE CLASSES (bytes lost rounding requests up to slots, objects allocated in the trace; top %u types by bytes lost)\n",
	       top);
	if (h->sample_rate) {
		printf("  not known for a --memprofilerate trace (no spans: its sizes are the sampled slots)\n");
		return;
	}
	if (table_build(h, &tb))
		return;
	printf("  lost: ");
	print_range(tb.lost_min, tb.lost_max, 0);
	printf(" of %s in slots (%.1f%%%s); an array's length is known only within bounds, so its loss is a range\n",
	       report_human_bytes(tb.bytes, b1, sizeof(b1)),
	       pct(tb.lost_max, tb.bytes),
	       tb.lost_min == tb.lost_max ? "" : " at most");
	if (tb.tiny_objects)
		printf("  tiny objects (no pointers, under 16 B, packed into shared 16-byte blocks; shown by their own size): %" PRIu64 "\n",
		       tb.tiny_objects);
	for (i = 0, shown = 0; i < tb.ntypes && shown < top; i++) {
		if (!tb.types[i].objects)
			continue;
		shown++;
		print_type(h, &tb, &tb.types[i]);
	}
	table_free(&tb);
}

void report_json_sizes(const struct heap_replay *h)
{
	struct size_table tb;
	size_t i, j;

	printf(",\"size_classes\":");
	if (h->sample_rate || table_build(h, &tb)) {
		printf("null");
		return;
	}
	printf("{\"objects\":%" PRIu64 ",\"slot_bytes\":%" PRIu64
	       ",\"lost_min\":%" PRIu64 ",\"lost_max\":%" PRIu64
	       ",\"tiny_objects\":%" PRIu64 ",\"types\":[",
	       tb.objects, tb.bytes, tb.lost_min, tb.lost_max,
	       tb.tiny_objects);
	for (i = 0; i < tb.ntypes; i++) {
		const struct size_type *st = &tb.types[i];
		const struct hr_type *t = &h->types[st->type];

		printf("%s{\"type\":", i ? "," : "");
		json_str(stdout, t->name);
		printf(",\"type_size\":%" PRIu64 ",\"pointers\":%s,\"objects\":%"
		       PRIu64 ",\"slot_bytes\":%" PRIu64 ",\"lost_min\":%" PRIu64
		       ",\"lost_max\":%" PRIu64 ",\"tiny_objects\":%" PRIu64
		       ",\"tiny_own_bytes_min\":%" PRIu64
		       ",\"tiny_own_bytes_max\":%" PRIu64 ",\"slots\":[",
		       t->size, t->ptr_bytes ? "true" : "false", st->objects,
		       st->bytes, st->lost_min, st->lost_max, st->tiny_objects,
		       st->tiny_own_min, st->tiny_own_max);
		for (j = st->first; j < st->first + st->n; j++) {
			const struct size_row *r = &tb.rows[j];

			printf("%s{\"slot\":%" PRIu64 ",\"tiny\":%s,\"objects\":%"
			       PRIu64 ",\"live\":%" PRIu64 ",\"elements_min\":%"
			       PRIu64 ",\"elements_max\":%" PRIu64
			       ",\"lost_min\":%" PRIu64 ",\"lost_max\":%" PRIu64 "}",
			       j > st->first ? "," : "", r->slot,
			       r->tiny ? "true" : "false", r->objects, r->live,
			       r->elems_min, r->elems_max, r->lost_min,
			       r->lost_max);
		}
		printf("]}");
	}
	printf("]}");
	table_free(&tb);
}

static const char *size_head[] = {
	"type", "type size", "objects", "slot sizes", "in slots",
	"lost to rounding", "lost share",
};

static int range_cell(struct html_table *t, size_t row, size_t col,
		      uint64_t lo, uint64_t hi)
{
	char a[32], b[32];

	if (lo == hi)
		return html_table_set(t, row, col, "%s",
				      report_human_bytes(lo, a, sizeof(a)));
	return html_table_set(t, row, col, "%s .. %s",
			      report_human_bytes(lo, a, sizeof(a)),
			      report_human_bytes(hi, b, sizeof(b)));
}

int report_html_sizes(const struct heap_replay *h, unsigned top,
		      struct html_table *t)
{
	struct size_table tb;
	size_t i, shown = 0, rows;
	char b1[32];
	int rc = 0;

	if (h->sample_rate)
		return html_table_init(t, 7, 0, false);
	if (table_build(h, &tb))
		return -ENOMEM;
	rows = tb.ntypes < top ? tb.ntypes : top;
	if (html_table_init(t, 7, rows, true)) {
		table_free(&tb);
		return -ENOMEM;
	}
	t->id = "sizes";
	t->title = "Size classes: bytes lost to rounding";
	t->note = "Per type, by bytes lost rounding requests up to the "
		  "allocator's slot sizes (objects allocated in the trace). An "
		  "array's length is known only within bounds, so its loss is "
		  "a range; tiny objects (no pointers, under 16 B) share "
		  "16-byte blocks and lose nothing to rounding.";
	t->head = size_head;
	t->text_cols = 1;
	t->bar_col = 6;
	for (i = 0; i < tb.ntypes && shown < rows && !rc; i++) {
		const struct size_type *st = &tb.types[i];
		const struct hr_type *ty = &h->types[st->type];

		if (!st->objects)
			continue;
		rc |= html_table_set(t, shown, 0, "%s", ty->name);
		rc |= html_table_set(t, shown, 1, "%s",
				     report_human_bytes(ty->size, b1, sizeof(b1)));
		rc |= html_table_set(t, shown, 2, "%" PRIu64 "%s", st->objects,
				     st->tiny_objects ? " (some tiny)" : "");
		rc |= html_table_set(t, shown, 3, "%zu", st->n);
		rc |= html_table_set(t, shown, 4, "%s",
				     report_human_bytes(st->bytes, b1, sizeof(b1)));
		rc |= range_cell(t, shown, 5, st->lost_min, st->lost_max);
		rc |= html_table_set(t, shown, 6, "%.1f%%%s",
				     pct(st->lost_max, st->bytes),
				     st->lost_min == st->lost_max ? "" : " at most");
		t->bar[shown] = st->bytes ? (double)st->lost_max /
					    (double)st->bytes : 0;
		shown++;
	}
	t->nrows = shown;
	table_free(&tb);
	if (rc) {
		html_table_free(t);
		return -ENOMEM;
	}
	return 0;
}
