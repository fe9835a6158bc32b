// SPDX-License-Identifier: BSD-3-Clause
/*
 * report.c - `traceaf-bpf report FILE|DIR [--json] [--html OUT] [--top N]
 * [--no-stacks]`: what a heap did, for a person (terminal) or a program
 * (--json; its fields are listed in README.md, "Analysis"), and the
 * heap-over-time picture (--html, report_html.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/heap_replay.h"
#include "report.h"
#include "analysis/report_sections.h"
#include "analysis/report_text.h"
#include "util/json_str.h"

#define DEFAULT_TOP 15

struct report_opts {
	const char *path;
	const char *base;           /* --base OLD: compare OLD with path */
	const char *html;
	bool json, stacks;
	unsigned top;
};

void report_print_help(void)
{
	fputs(
"NAME\n"
"    traceaf-bpf report - what a traced Go heap did, per type and site\n"
"\n"
"SYNOPSIS\n"
"    traceaf-bpf report FILE|DIR [--json] [--html OUT] [--top N]\n"
"                       [--no-stacks]\n"
"    traceaf-bpf report --base OLD NEW [--json] [--top N] [--no-stacks]\n"
"\n"
"DESCRIPTION\n"
"    Replays the AllocFree events of a trace (one written by traceaf-bpf,\n"
"    or by a Go 1.23+ program run with GODEBUG=traceallocfree=1 and\n"
"    runtime/trace) and prints, per process:\n"
"      - per type: allocations, bytes, frees, objects and bytes live at\n"
"        the end, sorted by bytes allocated;\n"
"      - the allocation rate over time;\n"
"      - lifetime percentiles of objects allocated and freed in the trace;\n"
"      - leak suspects: types (and, with stacks, allocation sites) whose\n"
"        live count keeps growing: its floor (the least it is later)\n"
"        rises in 3/4 or more of up to 8 equal stretches of the trace's\n"
"        time, and it ends at least max(8, 10%) above where it started;\n"
"      - garbage producers: sites (types, without stacks) by the bytes of\n"
"        their objects the first GC after their allocation freed;\n"
"      - retention: sites by the bytes of their objects alive after 2 GC\n"
"        cycles or more (cycles are estimated from the sweeps' frees);\n"
"      - lifetimes per site and per type, in time and in GC cycles;\n"
"      - size classes per type: the slot sizes its objects got and the\n"
"        bytes lost rounding requests up to them (exact for single\n"
"        objects, bounds for arrays; tiny objects by their own size);\n"
"      - heap and manual span pages and goroutine stacks.\n"
"    A DIR is grouped by process (COMM-PID-TIME-SEQ.trace); the files of\n"
"    one process are read in name order as one timeline.  Traces made with\n"
"    --stacks have a FILE.stacks sidecar: then allocation sites are shown\n"
"    as \"function (file:line)\".\n"
"\n"
"OPTIONS\n"
"    --base OLD\n"
"        Compare two runs instead: what grew and what shrank from OLD (a\n"
"        FILE or DIR) to NEW, by type and by allocation site, sorted by\n"
"        the change in bytes allocated.\n"
"    --json\n"
"        One JSON object on stdout instead of text (fields: README.md).\n"
"    --html OUT\n"
"        Also write OUT: a self-contained HTML page (no script, nothing\n"
"        fetched) of the process with the most events: the live heap of\n"
"        the top types over time with the GC cycles marked (hover for\n"
"        the values), a flame graph of the allocation sites by bytes\n"
"        (with --stacks), and tables of the leak suspects, top sites and\n"
"        their lifetimes, garbage producers, retention, size classes.\n"
"    --top N\n"
"        Rows per table (default 15).  --json lists every type and\n"
"        site and the top N call stacks.\n"
"    --no-stacks\n"
"        Ignore stack sidecars.\n"
"    -h, --help\n"
"        This text.\n"
"\n"
"EXIT STATUS\n"
"    0 on success; 1 if a file cannot be read or is malformed; 2 on bad\n"
"    usage.\n",
	      stdout);
}

static int parse_args(int argc, char **argv, struct report_opts *o)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "html", required_argument, NULL, 'H' },
		{ "top", required_argument, NULL, 't' },
		{ "no-stacks", no_argument, NULL, 'S' },
		{ "base", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->top = DEFAULT_TOP;
	o->stacks = true;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o->json = true;
			break;
		case 'H':
			o->html = optarg;
			break;
		case 't':
			v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > 100000) {
				fprintf(stderr, "traceaf-bpf: invalid --top '%s'\n",
					optarg);
				return 2;
			}
			o->top = (unsigned)v;
			break;
		case 'S':
			o->stacks = false;
			break;
		case 'B':
			o->base = optarg;
			break;
		case 'h':
			report_print_help();
			return 0;
		default:
			fprintf(stderr, "traceaf-bpf: report: unknown or incomplete option '%s'; see report --help\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "traceaf-bpf: report: give one FILE or DIR%s; see report --help\n",
			o->base ? " after --base OLD" : "");
		return 2;
	}
	if (o->base && o->html) {
		fprintf(stderr, "traceaf-bpf: report: --html does not go with --base\n");
		return 2;
	}
	o->path = argv[optind];
	return -1;
}

/* ---- helpers ---- */

/* Larger first: a qsort result for X against Y, 0 if equal. */
static int larger_first(uint64_t x, uint64_t y)
{
	return x == y ? 0 : x > y ? -1 : 1;
}

static int by_alloc_bytes(const void *a, const void *b, void *arg)
{
	const struct heap_replay *h = arg;
	const struct hr_type *x = &h->types[*(const uint32_t *)a];
	const struct hr_type *y = &h->types[*(const uint32_t *)b];
	int c = larger_first(x->c.alloc_bytes, y->c.alloc_bytes);

	if (!c)
		c = larger_first(x->c.live_bytes, y->c.live_bytes);
	return c ? c : strcmp(x->name, y->name);
}

static int by_growth(const void *a, const void *b, void *arg)
{
	const struct heap_replay *h = arg;
	const struct hr_type *x = &h->types[*(const uint32_t *)a];
	const struct hr_type *y = &h->types[*(const uint32_t *)b];
	int c = larger_first(x->leak.growth_bytes, y->leak.growth_bytes);

	return c ? c : strcmp(x->name, y->name);
}

static int site_by_bytes(const void *a, const void *b, void *arg)
{
	const struct heap_replay *h = arg;
	const struct hr_site *x = &h->sites[*(const uint32_t *)a];
	const struct hr_site *y = &h->sites[*(const uint32_t *)b];
	int c = larger_first(x->c.alloc_bytes, y->c.alloc_bytes);

	return c ? c : strcmp(x->frame.func, y->frame.func);
}

/* Type indexes sorted by CMP (given H); NULL on allocation failure. */
static uint32_t *sorted(const struct heap_replay *h, size_t n,
			int (*cmp)(const void *, const void *, void *))
{
	uint32_t *v = malloc((n ? n : 1) * sizeof(*v));
	size_t i;

	if (!v)
		return NULL;
	for (i = 0; i < n; i++)
		v[i] = (uint32_t)i;
	qsort_r(v, n, sizeof(*v), cmp, (void *)h);
	return v;
}

/* The site holding most live objects of TYPE at the end, or -1. */
static long type_site(const struct heap_replay *h, uint32_t type)
{
	uint64_t best = 0, *live;
	long site = -1;
	size_t i;

	if (!h->nsites)
		return -1;
	live = calloc(h->nsites, sizeof(*live));
	if (!live)
		return -1;
	for (i = 0; i < h->nclasses; i++) {
		const struct hr_class *c = &h->classes[i];

		if (c->type == type && c->stack)
			live[h->stacks[c->stack - 1].site] += c->live;
	}
	for (i = 0; i < h->nsites; i++)
		if (live[i] > best) {
			best = live[i];
			site = (long)i;
		}
	free(live);
	return site;
}

/* Per full call stack, summed over its classes (types, sizes). */
struct stack_sum {
	uint32_t stack;             /* index into h->stacks */
	uint32_t type;              /* the type it allocated most bytes of */
	uint64_t allocs, alloc_bytes, live, live_bytes, type_bytes;
};

static int stack_by_bytes(const void *a, const void *b)
{
	const struct stack_sum *x = a, *y = b;
	int c = larger_first(x->alloc_bytes, y->alloc_bytes);

	return c ? c : x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* Stacks sorted by bytes allocated; NULL on allocation failure. */
static struct stack_sum *stack_sums(const struct heap_replay *h)
{
	struct stack_sum *v = calloc(h->nstacks ? h->nstacks : 1,
				     sizeof(*v));
	size_t i;

	if (!v)
		return NULL;
	for (i = 0; i < h->nstacks; i++)
		v[i].stack = (uint32_t)i;
	for (i = 0; i < h->nclasses; i++) {
		const struct hr_class *c = &h->classes[i];
		struct stack_sum *ss;

		if (!c->stack)
			continue;
		ss = &v[c->stack - 1];
		ss->allocs += c->allocs;
		ss->alloc_bytes += c->allocs * c->size;
		ss->live += c->live;
		ss->live_bytes += c->live * c->size;
		if (c->allocs * c->size >= ss->type_bytes) {
			ss->type_bytes = c->allocs * c->size;
			ss->type = c->type;
		}
	}
	qsort(v, h->nstacks, sizeof(*v), stack_by_bytes);
	return v;
}

static double rate(const struct hr_point *a, const struct hr_point *b,
		   bool bytes)
{
	double dt = (double)(b->t_ns - a->t_ns) / 1e9;
	uint64_t d = bytes ? b->alloc_bytes - a->alloc_bytes :
			     b->allocs - a->allocs;

	return dt > 0 ? (double)d / dt : 0;
}

static struct hr_point zero_point;

static const struct hr_point *prev_point(const struct heap_replay *h,
					 size_t i)
{
	return i ? &h->points[i - 1] : &zero_point;
}

/* ---- terminal ---- */

static void print_rate(const struct heap_replay *h)
{
	static const char *bars[] = { "\u2581", "\u2582", "\u2583", "\u2584",
				      "\u2585", "\u2586", "\u2587", "\u2588" };
	double max = 0, r;
	size_t i, rows, step;
	char b1[32], b2[32];

	if (!h->npoints)
		return;
	for (i = 0; i < h->npoints; i++) {
		r = rate(prev_point(h, i), &h->points[i], false);
		if (r > max)
			max = r;
	}
	printf("\nALLOCATION RATE (%zu checkpoints over %.2f s, peak %.0f objects/s)\n  ",
	       h->npoints, (double)h->points[h->npoints - 1].t_ns / 1e9, max);
	for (i = 0; i < h->npoints; i++) {
		r = rate(prev_point(h, i), &h->points[i], false);
		fputs(bars[max > 0 ? (int)(r / max * 7.999) : 0], stdout);
	}
	printf("\n  %8s %14s %12s %12s\n", "t (s)", "objects/s", "bytes/s",
	       "live bytes");
	rows = h->npoints < 10 ? h->npoints : 10;
	step = (h->npoints + rows - 1) / rows;
	for (i = step - 1; i < h->npoints; i += step) {
		const struct hr_point *a = i >= step ? &h->points[i - step]
						     : &zero_point;
		const struct hr_point *b = &h->points[i];

		printf("  %8.2f %14.0f %10s/s %12s\n", (double)b->t_ns / 1e9,
		       rate(a, b, false),
		       report_human_bytes((uint64_t)rate(a, b, true), b1, sizeof(b1)),
		       report_human_bytes(b->live_bytes, b2, sizeof(b2)));
	}
}

static void print_site(const struct hr_site *s)
{
	printf("%s (%s:%u)", s->frame.func, s->frame.file, s->frame.line);
}

static void print_text(const struct report_proc *p,
		       const struct report_opts *o)
{
	const struct heap_replay *h = p->h;
	uint64_t allocs = 0, bytes = 0, frees = 0, live = 0, lbytes = 0;
	uint32_t *ord;
	size_t i, shown;
	char b1[32], b2[32], b3[32];

	for (i = 0; i < h->ntypes; i++) {
		allocs += h->types[i].c.allocs;
		bytes += h->types[i].c.alloc_bytes;
		frees += h->types[i].c.frees;
		live += h->types[i].c.live;
		lbytes += h->types[i].c.live_bytes;
	}
	printf("%s: %zu file%s, %llu generations, %s, format go 1.%u%s\n",
	       p->name, p->nfiles, p->nfiles == 1 ? "" : "s",
	       (unsigned long long)h->generations,
	       report_human_ns(h->t_last_ns - h->t_first_ns, b1, sizeof(b1)),
	       h->format_version, h->have_stacks ? ", with stacks" : "");
	if (h->sample_rate > 1)
		printf("  ESTIMATES from the runtime's heap-profile samples (memprofilerate %llu),\n"
		       "  scaled as runtime/pprof scales a heap profile; counts are not exact\n",
		       (unsigned long long)h->sample_rate);
	else if (h->sample_rate == 1)
		printf("  every allocation the runtime's heap profiler sees (memprofilerate 1)\n");
	printf("  %llu allocations (%s), %llu frees; live at the end: %llu objects (%s)\n",
	       (unsigned long long)allocs, report_human_bytes(bytes, b1, sizeof(b1)),
	       (unsigned long long)frees, (unsigned long long)live,
	       report_human_bytes(lbytes, b2, sizeof(b2)));

	ord = sorted(h, h->ntypes, by_alloc_bytes);
	if (!ord)
		return;
	printf("\nTYPES (top %u by bytes allocated)\n", o->top);
	printf("  %-36s %10s %10s %10s %10s %10s\n", "TYPE", "ALLOCS",
	       "BYTES", "FREES", "LIVE", "LIVE BYTES");
	for (i = 0, shown = 0; i < h->ntypes && shown < o->top; i++) {
		const struct hr_type *t = &h->types[ord[i]];

		if (!t->c.allocs && !t->c.live)
			continue;
		shown++;
		printf("  %-36.*s %10llu %10s %10llu %10llu %10s\n",
		       36, t->name, (unsigned long long)t->c.allocs,
		       report_human_bytes(t->c.alloc_bytes, b1, sizeof(b1)),
		       (unsigned long long)t->c.frees,
		       (unsigned long long)t->c.live,
		       report_human_bytes(t->c.live_bytes, b2, sizeof(b2)));
	}
	free(ord);

	print_rate(h);

	printf("\nOBJECT LIFETIME (%llu objects allocated and freed in the trace)\n",
	       (unsigned long long)h->lifetimes);
	if (h->lifetimes) {
		uint64_t p50 = heap_replay_lifetime_pct(h, 50);
		uint64_t p90 = heap_replay_lifetime_pct(h, 90);
		uint64_t p99 = heap_replay_lifetime_pct(h, 99);

		printf("  p50 %s   p90 %s   p99 %s\n",
		       report_human_ns(p50, b1, sizeof(b1)),
		       report_human_ns(p90, b2, sizeof(b2)),
		       report_human_ns(p99, b3, sizeof(b3)));
	}

	printf("\nLEAK SUSPECTS (live count keeps growing over %zu checkpoints)\n",
	       h->npoints);
	ord = sorted(h, h->ntypes, by_growth);
	if (!ord)
		return;
	for (i = 0, shown = 0; i < h->ntypes && shown < o->top; i++) {
		const struct hr_type *t = &h->types[ord[i]];
		long s;

		if (!t->leak.suspect)
			continue;
		shown++;
		printf("  %s: live %llu -> %llu objects (+%s), floor rose at %u of %u steps\n",
		       t->name, (unsigned long long)t->leak.floor_start,
		       (unsigned long long)t->leak.live_end,
		       report_human_bytes(t->leak.growth_bytes, b1, sizeof(b1)),
		       t->leak.rises, t->leak.steps);
		s = type_site(h, ord[i]);
		if (s >= 0) {
			fputs("      allocated at ", stdout);
			print_site(&h->sites[s]);
			putchar('\n');
		}
	}
	if (!shown)
		printf("  none%s\n", h->npoints < 4 ?
		       " (fewer than 4 checkpoints: trace too short)" : "");
	free(ord);

	if (h->nsites) {
		ord = sorted(h, h->nsites, site_by_bytes);
		if (!ord)
			return;
		printf("\nALLOCATION SITES (top %u by bytes allocated)\n",
		       o->top);
		for (i = 0; i < h->nsites && i < o->top; i++) {
			const struct hr_site *s = &h->sites[ord[i]];

			printf("  %10llu allocs %10s, live %llu (%s)%s  ",
			       (unsigned long long)s->c.allocs,
			       report_human_bytes(s->c.alloc_bytes, b1, sizeof(b1)),
			       (unsigned long long)s->c.live,
			       report_human_bytes(s->c.live_bytes, b2, sizeof(b2)),
			       s->leak.suspect ? " LEAK?" : "");
			print_site(s);
			printf(" %s\n", h->types[s->top_type].name);
		}
		free(ord);
	}
	report_print_cycles(h, o->top);
	report_print_lifetimes(h, o->top);
	report_print_sizes(h, o->top);

	printf("\nSPANS AND GOROUTINE STACKS\n");
	printf("  heap spans:   %llu pages at the end (%s), peak %llu; %llu allocated, %llu freed\n",
	       (unsigned long long)h->heap_pages,
	       report_human_bytes(h->heap_pages * 8192, b1, sizeof(b1)),
	       (unsigned long long)h->peak_heap_pages,
	       (unsigned long long)h->span_allocs,
	       (unsigned long long)h->span_frees);
	printf("  manual spans: %llu pages at the end (%s), peak %llu\n",
	       (unsigned long long)h->manual_pages,
	       report_human_bytes(h->manual_pages * 8192, b1, sizeof(b1)),
	       (unsigned long long)h->peak_manual_pages);
	printf("  goroutine stacks: %llu at the end (%s), peak %llu (%s); %llu allocated, %llu freed\n",
	       (unsigned long long)h->stacks_live,
	       report_human_bytes(h->stack_bytes, b1, sizeof(b1)),
	       (unsigned long long)h->peak_stacks,
	       report_human_bytes(h->peak_stack_bytes, b2, sizeof(b2)),
	       (unsigned long long)h->stack_allocs,
	       (unsigned long long)h->stack_frees);
	if (h->anom.alloc_of_live || h->anom.free_of_unknown ||
	    h->anom.undefined_type)
		printf("  (events out of order or lost: %llu allocs of a live ID, %llu frees of an unknown one, %llu undefined types)\n",
		       (unsigned long long)h->anom.alloc_of_live,
		       (unsigned long long)h->anom.free_of_unknown,
		       (unsigned long long)h->anom.undefined_type);
}

/* ---- JSON ---- */

static void json_counts(const struct hr_counts *c)
{
	printf("\"allocs\":%llu,\"alloc_bytes\":%llu,\"frees\":%llu,\"free_bytes\":%llu,\"exists\":%llu,\"live\":%llu,\"live_bytes\":%llu",
	       (unsigned long long)c->allocs,
	       (unsigned long long)c->alloc_bytes,
	       (unsigned long long)c->frees,
	       (unsigned long long)c->free_bytes,
	       (unsigned long long)c->exists,
	       (unsigned long long)c->live,
	       (unsigned long long)c->live_bytes);
}

static void json_leak(const struct hr_leak *l)
{
	printf("\"live_start\":%llu,\"live_end\":%llu,\"growth_bytes\":%llu,\"rises\":%u,\"steps\":%u",
	       (unsigned long long)l->floor_start,
	       (unsigned long long)l->live_end,
	       (unsigned long long)l->growth_bytes, l->rises, l->steps);
}

static void json_site(const struct hr_site *s)
{
	printf("{\"func\":");
	json_str(stdout, s->frame.func);
	printf(",\"file\":");
	json_str(stdout, s->frame.file);
	printf(",\"line\":%u}", s->frame.line);
}

static void print_json_proc(const struct report_proc *p, unsigned top)
{
	const struct heap_replay *h = p->h;
	struct hr_counts tot = { 0 };
	struct stack_sum *sums;
	uint32_t *ord;
	size_t i;
	bool first;

	for (i = 0; i < h->ntypes; i++) {
		const struct hr_counts *c = &h->types[i].c;

		tot.allocs += c->allocs;
		tot.alloc_bytes += c->alloc_bytes;
		tot.frees += c->frees;
		tot.free_bytes += c->free_bytes;
		tot.exists += c->exists;
		tot.live += c->live;
		tot.live_bytes += c->live_bytes;
	}
	printf("{\"name\":");
	json_str(stdout, p->name);
	printf(",\"files\":[");
	for (i = 0; i < p->nfiles; i++) {
		if (i)
			putchar(',');
		json_str(stdout, p->files[i]);
	}
	printf("],\"format\":%u,\"generations\":%llu,\"events\":%llu,\"duration_s\":%.6f,\"have_stacks\":%s,\"memprofilerate\":%llu,\"estimated\":%s,\"totals\":{",
	       h->format_version, (unsigned long long)h->generations,
	       (unsigned long long)h->events,
	       (double)(h->t_last_ns - h->t_first_ns) / 1e9,
	       h->have_stacks ? "true" : "false",
	       (unsigned long long)h->sample_rate,
	       h->sample_rate > 1 ? "true" : "false");
	json_counts(&tot);
	printf("},\"types\":[");
	ord = sorted(h, h->ntypes, by_alloc_bytes);
	for (i = 0; ord && i < h->ntypes; i++) {
		const struct hr_type *t = &h->types[ord[i]];

		printf("%s{\"name\":", i ? "," : "");
		json_str(stdout, t->name);
		printf(",\"size\":%llu,", (unsigned long long)t->size);
		json_counts(&t->c);
		printf(",\"peak_live_bytes\":%llu,",
		       (unsigned long long)t->peak_live_bytes);
		report_json_life(&t->life);
		putchar('}');
	}
	free(ord);
	printf("],\"rate\":[");
	for (i = 0; i < h->npoints; i++) {
		const struct hr_point *b = &h->points[i];

		printf("%s{\"t_s\":%.6f,\"allocs_per_s\":%.1f,\"bytes_per_s\":%.1f,\"live\":%llu,\"live_bytes\":%llu}",
		       i ? "," : "", (double)b->t_ns / 1e9,
		       rate(prev_point(h, i), b, false),
		       rate(prev_point(h, i), b, true),
		       (unsigned long long)b->live,
		       (unsigned long long)b->live_bytes);
	}
	printf("],\"lifetime_ns\":{\"count\":%llu,\"p50\":%llu,\"p90\":%llu,\"p99\":%llu}",
	       (unsigned long long)h->lifetimes,
	       (unsigned long long)heap_replay_lifetime_pct(h, 50),
	       (unsigned long long)heap_replay_lifetime_pct(h, 90),
	       (unsigned long long)heap_replay_lifetime_pct(h, 99));
	report_json_cycles(h, top);
	report_json_sizes(h);
	printf(",\"checkpoints\":%zu,\"leak_suspects\":[", h->npoints);
	ord = sorted(h, h->ntypes, by_growth);
	for (i = 0, first = true; ord && i < h->ntypes; i++) {
		const struct hr_type *t = &h->types[ord[i]];
		long s;

		if (!t->leak.suspect)
			continue;
		printf("%s{\"type\":", first ? "" : ",");
		first = false;
		json_str(stdout, t->name);
		putchar(',');
		json_leak(&t->leak);
		printf(",\"site\":");
		s = type_site(h, ord[i]);
		if (s >= 0)
			json_site(&h->sites[s]);
		else
			printf("null");
		putchar('}');
	}
	free(ord);
	printf("],\"sites\":[");
	ord = sorted(h, h->nsites, site_by_bytes);
	for (i = 0; ord && i < h->nsites; i++) {
		const struct hr_site *s = &h->sites[ord[i]];

		printf("%s{\"site\":", i ? "," : "");
		json_site(s);
		printf(",\"type\":");
		json_str(stdout, h->types[s->top_type].name);
		putchar(',');
		json_counts(&s->c);
		printf(",\"leak_suspect\":%s,", s->leak.suspect ? "true" :
		       "false");
		json_leak(&s->leak);
		putchar(',');
		report_json_life(&s->life);
		putchar('}');
	}
	free(ord);
	printf("],\"stacks\":[");
	sums = stack_sums(h);
	for (i = 0; sums && i < h->nstacks && i < top; i++) {
		const struct hr_stack *st = &h->stacks[sums[i].stack];
		size_t k;

		printf("%s{\"frames\":[", i ? "," : "");
		for (k = 0; k < st->nframes; k++) {
			printf("%s{\"func\":", k ? "," : "");
			json_str(stdout, st->frames[k].func);
			printf(",\"file\":");
			json_str(stdout, st->frames[k].file);
			printf(",\"line\":%u}", st->frames[k].line);
		}
		printf("],\"type\":");
		json_str(stdout, h->types[sums[i].type].name);
		printf(",\"allocs\":%llu,\"alloc_bytes\":%llu,\"live\":%llu,\"live_bytes\":%llu}",
		       (unsigned long long)sums[i].allocs,
		       (unsigned long long)sums[i].alloc_bytes,
		       (unsigned long long)sums[i].live,
		       (unsigned long long)sums[i].live_bytes);
	}
	free(sums);
	printf("],\"spans\":{\"heap_pages\":%llu,\"heap_pages_peak\":%llu,\"manual_pages\":%llu,\"manual_pages_peak\":%llu,\"allocs\":%llu,\"frees\":%llu}",
	       (unsigned long long)h->heap_pages,
	       (unsigned long long)h->peak_heap_pages,
	       (unsigned long long)h->manual_pages,
	       (unsigned long long)h->peak_manual_pages,
	       (unsigned long long)h->span_allocs,
	       (unsigned long long)h->span_frees);
	printf(",\"goroutine_stacks\":{\"live\":%llu,\"live_bytes\":%llu,\"peak\":%llu,\"peak_bytes\":%llu,\"allocs\":%llu,\"frees\":%llu}",
	       (unsigned long long)h->stacks_live,
	       (unsigned long long)h->stack_bytes,
	       (unsigned long long)h->peak_stacks,
	       (unsigned long long)h->peak_stack_bytes,
	       (unsigned long long)h->stack_allocs,
	       (unsigned long long)h->stack_frees);
	printf(",\"anomalies\":{\"alloc_of_live\":%llu,\"free_of_unknown\":%llu,\"undefined_type\":%llu,\"size_from_type\":%llu,\"span_free_unknown\":%llu,\"stack_free_unknown\":%llu,\"no_stack\":%llu}}",
	       (unsigned long long)h->anom.alloc_of_live,
	       (unsigned long long)h->anom.free_of_unknown,
	       (unsigned long long)h->anom.undefined_type,
	       (unsigned long long)h->anom.size_from_type,
	       (unsigned long long)h->anom.span_free_unknown,
	       (unsigned long long)h->anom.stack_free_unknown,
	       (unsigned long long)h->anom.no_stack);
}

/* report --base OLD NEW. */
static int report_base(const struct report_opts *o)
{
	struct report_proc *old = NULL, *new = NULL;
	size_t nold = 0, nnew = 0;
	int rc = 1;

	if (!report_load(o->base, o->stacks, &old, &nold) &&
	    !report_load(o->path, o->stacks, &new, &nnew))
		rc = report_diff(old, nold, new, nnew, o->top, o->json);
	report_procs_free(old, nold);
	report_procs_free(new, nnew);
	if (fflush(stdout))
		rc = 1;
	return rc;
}

int report_main(int argc, char **argv)
{
	struct report_proc *procs = NULL;
	struct report_opts o;
	size_t n = 0, i, best = 0;
	int rc;

	rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (o.base)
		return report_base(&o);
	if (report_load(o.path, o.stacks, &procs, &n))
		return 1;
	if (o.json) {
		printf("{\"version\":1,\"processes\":[");
		for (i = 0; i < n; i++) {
			if (i)
				putchar(',');
			print_json_proc(&procs[i], o.top);
		}
		printf("]}\n");
	} else {
		for (i = 0; i < n; i++) {
			if (i)
				printf("\n\n");
			print_text(&procs[i], &o);
		}
	}
	rc = 0;
	if (o.html) {
		/* One picture: the process with the most events. */
		for (i = 1; i < n; i++)
			if (procs[i].h->events > procs[best].h->events)
				best = i;
		if (report_page_write(&procs[best], o.html, o.top))
			rc = 1;
	}
	report_procs_free(procs, n);
	if (fflush(stdout))
		rc = 1;
	return rc;
}
