// SPDX-License-Identifier: BSD-3-Clause
/*
 * report_diff.c - `report --base OLD NEW`: two runs compared, like pprof's
 * -diff_base.  Types are matched by name, sites by function, file and
 * line (addresses differ between builds and runs); every process of a
 * side is summed.  Rows are sorted by how much their allocated bytes
 * changed, either way, so the first row is the biggest change.
 */
#include "report_sections.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/heap_replay.h"
#include "analysis/report.h"
#include "util/grow.h"
#include "util/json_str.h"

struct diff_row {
	char *key;             /* type name, or "func (file:line)" */
	uint64_t old_bytes, new_bytes, old_live, new_live;
	uint64_t old_allocs, new_allocs;
};

struct diff_set {
	struct diff_row *rows;
	size_t n, cap;
};

static struct diff_row *row_for(struct diff_set *d, const char *key)
{
	size_t i;

	/* Linear: a report's types and sites number in the thousands. */
	for (i = 0; i < d->n; i++)
		if (!strcmp(d->rows[i].key, key))
			return &d->rows[i];
	if (!GROW(d->rows, d->n, d->cap, 256))
		return NULL;
	memset(&d->rows[d->n], 0, sizeof(d->rows[0]));
	d->rows[d->n].key = strdup(key);
	if (!d->rows[d->n].key)
		return NULL;
	return &d->rows[d->n++];
}

static int add_counts(struct diff_set *d, const char *key,
		      const struct hr_counts *c, bool is_new)
{
	struct diff_row *r = row_for(d, key);

	if (!r)
		return -1;
	if (is_new) {
		r->new_bytes += c->alloc_bytes;
		r->new_allocs += c->allocs;
		r->new_live += c->live_bytes;
	} else {
		r->old_bytes += c->alloc_bytes;
		r->old_allocs += c->allocs;
		r->old_live += c->live_bytes;
	}
	return 0;
}

static int add_side(struct diff_set *types, struct diff_set *sites,
		    const struct report_proc *p, size_t n, bool is_new)
{
	char key[1024];
	size_t i, k;

	for (i = 0; i < n; i++) {
		const struct heap_replay *h = p[i].h;

		for (k = 0; k < h->ntypes; k++)
			if (add_counts(types, h->types[k].name, &h->types[k].c,
				       is_new))
				return -1;
		for (k = 0; k < h->nsites; k++) {
			const struct stack_frame *f = &h->sites[k].frame;

			snprintf(key, sizeof(key), "%s (%s:%u)", f->func,
				 f->file, f->line);
			if (add_counts(sites, key, &h->sites[k].c, is_new))
				return -1;
		}
	}
	return 0;
}

static uint64_t change(const struct diff_row *r)
{
	return r->new_bytes > r->old_bytes ? r->new_bytes - r->old_bytes :
					     r->old_bytes - r->new_bytes;
}

static int by_change(const void *a, const void *b)
{
	uint64_t x = change(a), y = change(b);

	return x < y ? 1 : x > y ? -1 : strcmp(((const struct diff_row *)a)->key,
					      ((const struct diff_row *)b)->key);
}

static void human(int64_t v, char *buf, size_t len)
{
	static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double d = (double)(v < 0 ? -v : v);
	int i = 0;

	while (d >= 1024 && i < 4) {
		d /= 1024;
		i++;
	}
	snprintf(buf, len, i ? "%s%.1f %s" : "%s%.0f %s",
		 v < 0 ? "-" : "", d, u[i]);
}

static void print_set(const char *what, struct diff_set *d, unsigned top)
{
	char a[32], b[32], c[32];
	size_t i;

	qsort(d->rows, d->n, sizeof(*d->rows), by_change);
	printf("\n%s (top %u by change in bytes allocated)\n", what, top);
	printf("  %12s %12s %12s %8s  %s\n", "OLD BYTES", "NEW BYTES", "CHANGE",
	       "RATIO", what[0] == 'T' ? "TYPE" : "SITE");
	for (i = 0; i < d->n && i < top; i++) {
		const struct diff_row *r = &d->rows[i];

		if (!change(r))
			break;
		human((int64_t)r->old_bytes, a, sizeof(a));
		human((int64_t)r->new_bytes, b, sizeof(b));
		human((int64_t)r->new_bytes - (int64_t)r->old_bytes, c, sizeof(c));
		if (r->old_bytes)
			printf("  %12s %12s %12s %7.2fx  %s\n", a, b, c,
			       (double)r->new_bytes / (double)r->old_bytes, r->key);
		else
			printf("  %12s %12s %12s %8s  %s\n", a, b, c, "new", r->key);
	}
}

static void json_set(const char *name, struct diff_set *d, unsigned top)
{
	size_t i;

	qsort(d->rows, d->n, sizeof(*d->rows), by_change);
	printf("\"%s\":[", name);
	for (i = 0; i < d->n && i < top; i++) {
		const struct diff_row *r = &d->rows[i];

		printf("%s{\"key\":", i ? "," : "");
		json_str(stdout, r->key);
		printf(",\"old_alloc_bytes\":%" PRIu64 ",\"new_alloc_bytes\":%" PRIu64
		       ",\"old_allocs\":%" PRIu64 ",\"new_allocs\":%" PRIu64
		       ",\"old_live_bytes\":%" PRIu64 ",\"new_live_bytes\":%" PRIu64 "}",
		       r->old_bytes, r->new_bytes, r->old_allocs, r->new_allocs,
		       r->old_live, r->new_live);
	}
	putchar(']');
}

static void set_free(struct diff_set *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		free(d->rows[i].key);
	free(d->rows);
}

int report_diff(const struct report_proc *old, size_t nold,
		const struct report_proc *new, size_t nnew, unsigned top,
		bool json)
{
	struct diff_set types = { 0 }, sites = { 0 };
	int rc = 0;

	if (add_side(&types, &sites, old, nold, false) ||
	    add_side(&types, &sites, new, nnew, true)) {
		fprintf(stderr, "traceaf-bpf: report --base: out of memory\n");
		rc = 1;
	} else if (json) {
		printf("{\"version\":1,\"diff\":{");
		json_set("types", &types, top);
		putchar(',');
		json_set("sites", &sites, top);
		printf("}}\n");
	} else {
		printf("report --base: %zu process%s before, %zu after\n", nold,
		       nold == 1 ? "" : "es", nnew);
		print_set("TYPES", &types, top);
		if (sites.n)
			print_set("SITES", &sites, top);
	}
	set_free(&types);
	set_free(&sites);
	return rc;
}
