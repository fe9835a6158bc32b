// SPDX-License-Identifier: BSD-3-Clause
/*
 * report_page.c - `report --html OUT`: one process's replay turned into
 * the page of report_html.h.  The live bytes of the top types at every
 * checkpoint and the GC cycle starts make the chart; the call stacks of
 * the stack sidecar, merged by function from the outermost frame in,
 * make the flame graph (by bytes allocated); the report's sections give
 * the tables.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/heap_replay.h"
#include "analysis/report.h"
#include "analysis/report_html.h"
#include "analysis/report_sections.h"
#include "analysis/report_text.h"
#include "util/fnv.h"
#include "util/grow.h"
#include "util/u64_map.h"

#define NTABLES 5
#define PICTURE_TYPES 8    /* lines in the chart at most */

static int by_peak(const void *a, const void *b, void *arg)
{
	const struct heap_replay *h = arg;
	const struct hr_type *x = &h->types[*(const uint32_t *)a];
	const struct hr_type *y = &h->types[*(const uint32_t *)b];

	if (x->peak_live_bytes != y->peak_live_bytes)
		return x->peak_live_bytes > y->peak_live_bytes ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* ---- the flame graph ---- */

struct fnode {
	const char *name, *detail_file;
	uint32_t line;
	uint64_t bytes;
	uint32_t child, next;         /* first child, next sibling: idx + 1 */
};

struct flame {
	struct fnode *n;
	size_t len, cap;
	struct u64_map keys;          /* hash(parent, name) -> idx + 1 */
	struct flame_node *out;
	size_t nout;
	char **details;               /* "file:line", per output node */
};

static uint64_t name_key(uint32_t parent, const char *s)
{
	uint64_t h = fnv1a64(s, strlen(s), FNV1A64_SEED ^ parent);

	return h ? h : 1;
}

static int child_of(struct flame *fl, uint32_t parent,
		    const struct stack_frame *fr, uint32_t *out)
{
	uint64_t key = name_key(parent, fr->func), v;
	struct fnode *n;

	for (;; key++) {
		if (!key)
			continue;
		if (!u64_map_get(&fl->keys, key, &v))
			break;
		if (!strcmp(fl->n[v - 1].name, fr->func)) {
			*out = (uint32_t)(v - 1);
			return 0;
		}
	}
	if (!GROW(fl->n, fl->len, fl->cap, 256))
		return -ENOMEM;
	n = &fl->n[fl->len];
	memset(n, 0, sizeof(*n));
	n->name = fr->func;
	n->detail_file = fr->file;
	n->line = fr->line;
	n->next = fl->n[parent].child;
	fl->n[parent].child = (uint32_t)fl->len + 1;
	if (u64_map_put(&fl->keys, key, fl->len + 1))
		return -ENOMEM;
	*out = (uint32_t)fl->len++;
	return 0;
}

static int child_by_bytes(const void *a, const void *b, void *arg)
{
	const struct flame *fl = arg;
	const struct fnode *x = &fl->n[*(const uint32_t *)a];
	const struct fnode *y = &fl->n[*(const uint32_t *)b];

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Pre-order from node I at DEPTH, children by bytes, largest first. */
static int emit(struct flame *fl, uint32_t i, unsigned depth)
{
	struct flame_node *o = &fl->out[fl->nout];
	uint32_t *kids, c, nk = 0, k;
	const struct fnode *n = &fl->n[i];

	o->name = n->name;
	o->bytes = n->bytes;
	o->depth = depth;
	o->detail = NULL;
	if (depth && asprintf(&fl->details[fl->nout], "%s:%u",
			      n->detail_file, n->line) >= 0)
		o->detail = fl->details[fl->nout];
	fl->nout++;
	for (c = n->child; c; c = fl->n[c - 1].next)
		nk++;
	if (!nk)
		return 0;
	kids = malloc(nk * sizeof(*kids));
	if (!kids)
		return -ENOMEM;
	for (c = n->child, k = 0; c; c = fl->n[c - 1].next)
		kids[k++] = c - 1;
	qsort_r(kids, nk, sizeof(*kids), child_by_bytes, fl);
	for (k = 0; k < nk; k++)
		if (emit(fl, kids[k], depth + 1)) {
			free(kids);
			return -ENOMEM;
		}
	free(kids);
	return 0;
}

static void flame_free(struct flame *fl)
{
	size_t i;

	for (i = 0; fl->details && i < fl->nout; i++)
		free(fl->details[i]);
	free(fl->details);
	free(fl->out);
	free(fl->n);
	u64_map_free(&fl->keys);
}

static int flame_build(const struct heap_replay *h, struct flame *fl)
{
	uint64_t *bytes = calloc(h->nstacks ? h->nstacks : 1, sizeof(*bytes));
	static const struct stack_frame root = { .func = "all allocations",
						 .file = "" };
	size_t i, k;
	uint32_t node;
	int rc = -ENOMEM;

	memset(fl, 0, sizeof(*fl));
	u64_map_init(&fl->keys);
	if (!bytes)
		return rc;
	for (i = 0; i < h->nclasses; i++)
		if (h->classes[i].stack)
			bytes[h->classes[i].stack - 1] +=
				h->classes[i].allocs * h->classes[i].size;
	fl->n = calloc(1, sizeof(*fl->n));
	if (!fl->n)
		goto out;
	fl->cap = fl->len = 1;
	fl->n[0].name = root.func;
	for (i = 0; i < h->nstacks; i++) {
		const struct hr_stack *st = &h->stacks[i];

		if (!bytes[i])
			continue;
		fl->n[0].bytes += bytes[i];
		node = 0;
		for (k = st->nframes; k-- > 0;) {
			uint32_t c;

			if (child_of(fl, node, &st->frames[k], &c))
				goto out;
			fl->n[c].bytes += bytes[i];
			node = c;
		}
	}
	fl->out = calloc(fl->len, sizeof(*fl->out));
	fl->details = calloc(fl->len, sizeof(*fl->details));
	if (!fl->out || !fl->details)
		goto out;
	rc = fl->n[0].bytes ? emit(fl, 0, 0) : 0;
out:
	free(bytes);
	return rc;
}

/* ---- the page ---- */

static int by_growth(const void *a, const void *b, void *arg)
{
	const struct heap_replay *h = arg;
	const struct hr_type *x = &h->types[*(const uint32_t *)a];
	const struct hr_type *y = &h->types[*(const uint32_t *)b];

	if (x->leak.growth_bytes != y->leak.growth_bytes)
		return x->leak.growth_bytes > y->leak.growth_bytes ? -1 : 1;
	return strcmp(x->name, y->name);
}

static const char *leak_head[] = {
	"type", "live objects: start", "end", "live bytes gained",
	"floor rose at",
};

/* Leak suspects (heap_replay.c's rule), by live bytes gained. */
static int leak_table(const struct heap_replay *h, unsigned top,
		      struct html_table *t)
{
	uint32_t *ord = malloc((h->ntypes ? h->ntypes : 1) * sizeof(*ord));
	size_t i, n = 0;
	char b[32];
	int rc = 0;

	if (!ord)
		return -ENOMEM;
	for (i = 0; i < h->ntypes; i++)
		if (h->types[i].leak.suspect)
			ord[n++] = (uint32_t)i;
	qsort_r(ord, n, sizeof(*ord), by_growth, (void *)h);
	if (n > top)
		n = top;
	if (html_table_init(t, 5, n, false)) {
		free(ord);
		return -ENOMEM;
	}
	t->id = "leaks";
	t->title = "Leak suspects";
	t->note = h->npoints < 4 ?
		  "Too few checkpoints (under 4) to tell a leak." :
		  "Types whose live count keeps growing: the least it is "
		  "later rises in 3/4 or more of up to 8 equal stretches of the "
		  "trace's time, and it ends "
		  "at least max(8, 10%) above where it started.";
	t->head = leak_head;
	t->text_cols = 1;
	for (i = 0; i < n && !rc; i++) {
		const struct hr_type *ty = &h->types[ord[i]];

		rc |= html_table_set(t, i, 0, "%s", ty->name);
		rc |= html_table_set(t, i, 1, "%" PRIu64, ty->leak.floor_start);
		rc |= html_table_set(t, i, 2, "%" PRIu64, ty->leak.live_end);
		rc |= html_table_set(t, i, 3, "+%s", report_human_bytes(
				     ty->leak.growth_bytes, b, sizeof(b)));
		rc |= html_table_set(t, i, 4, "%u of %u steps", ty->leak.rises,
				     ty->leak.steps);
	}
	free(ord);
	if (rc)
		html_table_free(t);
	return rc ? -ENOMEM : 0;
}

int report_page_write(const struct report_proc *p, const char *out,
		      unsigned top)
{
	const struct heap_replay *h = p->h;
	size_t ns = h->ntypes < top ? h->ntypes : top, i, j, npt = h->npoints;
	struct heap_series *series = calloc(ns + 1, sizeof(*series));
	uint64_t **vals = calloc(ns + 1, sizeof(*vals));
	uint64_t *total = calloc(npt + 1, sizeof(*total));
	double *t = calloc(npt + 1, sizeof(*t));
	double *gc = calloc(h->gc_cycles + 1, sizeof(*gc));
	uint32_t *ord = malloc((h->ntypes ? h->ntypes : 1) * sizeof(*ord));
	struct html_table tables[NTABLES];
	struct heap_picture pic = { 0 };
	uint64_t allocs = 0, bytes = 0, live = 0, lbytes = 0;
	struct flame fl = { 0 };
	char title[512], summary[512], b1[32], b2[32];
	int rc = -ENOMEM;

	memset(tables, 0, sizeof(tables));
	u64_map_init(&fl.keys);
	if (ns > PICTURE_TYPES)
		ns = PICTURE_TYPES;
	if (!series || !vals || !total || !t || !gc || !ord)
		goto out;
	for (i = 0; i < h->ntypes; i++) {
		ord[i] = (uint32_t)i;
		allocs += h->types[i].c.allocs;
		bytes += h->types[i].c.alloc_bytes;
		live += h->types[i].c.live;
		lbytes += h->types[i].c.live_bytes;
	}
	qsort_r(ord, h->ntypes, sizeof(*ord), by_peak, (void *)h);
	while (ns && !h->types[ord[ns - 1]].peak_live_bytes)
		ns--;
	for (j = 0; j < npt; j++) {
		t[j] = (double)h->points[j].t_ns / 1e9;
		total[j] = h->points[j].live_bytes;
	}
	for (i = 0; i <= ns; i++) {
		vals[i] = calloc(npt + 1, sizeof(**vals));
		if (!vals[i])
			goto out;
		series[i].live_bytes = vals[i];
	}
	for (i = 0; i < ns; i++) {
		series[i].name = h->types[ord[i]].name;
		for (j = 0; j < npt; j++) {
			const struct hr_point *pt = &h->points[j];

			vals[i][j] = ord[i] < pt->ntypes ?
				     pt->type_live_bytes[ord[i]] : 0;
		}
	}
	/* What the top types leave: "other types". */
	series[ns].name = "other types";
	for (j = 0; j < npt; j++) {
		uint64_t sum = 0;

		for (i = 0; i < ns; i++)
			sum += vals[i][j];
		vals[ns][j] = total[j] > sum ? total[j] - sum : 0;
	}
	for (i = 0; i < h->gc_cycles && h->gc_start_ns; i++)
		gc[i] = (double)h->gc_start_ns[i] / 1e9;
	if (h->nstacks && flame_build(h, &fl))
		goto out;
	if (leak_table(h, top, &tables[0]) ||
	    report_html_lifetimes(h, top, &tables[1]) ||
	    report_html_cycles(h, 0, top, &tables[2]) ||
	    report_html_cycles(h, 1, top, &tables[3]) ||
	    report_html_sizes(h, top, &tables[4]))
		goto out;
	snprintf(title, sizeof(title), "%s (trace format go 1.%u)", p->name,
		 h->format_version);
	snprintf(summary, sizeof(summary),
		 "%zu file%s, %.2f s; %" PRIu64 " allocations (%s), %" PRIu64
		 " GC cycles (%s); live at the end: %"
		 PRIu64 " objects (%s)%s", p->nfiles, p->nfiles == 1 ? "" : "s",
		 (double)(h->t_last_ns - h->t_first_ns) / 1e9, allocs,
		 report_human_bytes(bytes, b1, sizeof(b1)), h->gc_cycles,
		 h->gc_exact ? "the runtime's" : "estimated from the sweeps", live,
		 report_human_bytes(lbytes, b2, sizeof(b2)),
		 h->sample_rate > 1 ? "; ESTIMATES from heap-profile samples" :
		 "");
	pic.title = title;
	pic.summary = summary;
	pic.npoints = npt;
	pic.t_sec = t;
	pic.nseries = ns + 1;
	pic.series = series;
	pic.total_live_bytes = total;
	pic.ngc = h->gc_start_ns ? h->gc_cycles : 0;
	pic.gc_exact = h->gc_exact;
	pic.gc_t_sec = gc;
	pic.nflame = fl.nout;
	pic.flame = fl.out;
	pic.flame_note = h->nstacks ? "No allocation with a stack." :
			 "The trace was made without --stacks: there are no "
			 "call stacks to draw (trace with --stacks to see "
			 "allocation sites).";
	pic.ntables = NTABLES;
	pic.tables = tables;
	rc = report_html_write(&pic, out);
	if (rc)
		fprintf(stderr, "traceaf-bpf: %s: %s\n", out, strerror(-rc));
out:
	if (rc == -ENOMEM)
		fprintf(stderr, "traceaf-bpf: out of memory\n");
	for (i = 0; i < NTABLES; i++)
		html_table_free(&tables[i]);
	flame_free(&fl);
	for (i = 0; vals && i <= ns; i++)
		free(vals[i]);
	free(vals);
	free(series);
	free(total);
	free(t);
	free(gc);
	free(ord);
	return rc ? 1 : 0;
}
