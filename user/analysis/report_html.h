/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report_html.h - the page of `report --html OUT`: one self-contained
 * HTML file (inline SVG, inline CSS, no script or network fetch) with the
 * live heap bytes of the top types over time and the GC cycles marked
 * (hovering a time shows every series' value there), a flame graph of
 * the allocation sites by bytes, and tables (report_page.c fills them:
 * top sites and their lifetimes, garbage producers, retention, size
 * classes).  Hover text is SVG <title>: browsers show it as a tooltip.
 */
#ifndef REPORT_HTML_H
#define REPORT_HTML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct heap_series {
	const char *name;           /* type name, or "other types" */
	const uint64_t *live_bytes; /* one value per time point */
};

/*
 * A table of the page (top sites, garbage producers, ...): cells are
 * plain text (escaped when written), row-major.  BAR, when set, gives
 * each row a bar of that fraction (0..1) in its BAR_COL column.
 */
struct html_table {
	const char *id;             /* the element's id: "sites" */
	const char *title;          /* its heading */
	const char *note;           /* a sentence under the heading, or NULL */
	size_t ncols, nrows;
	const char **head;          /* ncols */
	char **cells;               /* nrows * ncols, owned (html_table_free) */
	double *bar;                /* nrows, or NULL */
	size_t bar_col;
	size_t text_cols;           /* the first text_cols are left-aligned */
};

/*
 * A frame of the flame graph (icicle: callers above callees), in
 * pre-order: a node's children follow it, at depth + 1.  Depth 0 is the
 * root (all allocations); a node's bytes include its children's.
 */
struct flame_node {
	const char *name;           /* function */
	const char *detail;         /* "file:line" of its first frame, or NULL */
	uint64_t bytes;
	unsigned depth;
};

struct heap_picture {
	const char *title;          /* e.g. "leaky-1234 (go1.27)"; escaped */
	const char *summary;        /* a line under the title, or NULL */
	size_t npoints;
	const double *t_sec;        /* seconds since the trace's start */
	size_t nseries;             /* top types first */
	const struct heap_series *series;
	const uint64_t *total_live_bytes; /* all heap objects, per point */
	size_t ngc;                 /* GC cycles begun in the trace, */
	const double *gc_t_sec;     /* their start times (seconds) */
	bool gc_exact;              /* the runtime's cycles, not estimated */
	size_t nflame;              /* 0: no flame graph, FLAME_NOTE says why */
	const struct flame_node *flame;
	const char *flame_note;
	size_t ntables;             /* after the chart and the flame graph */
	const struct html_table *tables;
};

/* Table building: 0 or -ENOMEM.  Cells start NULL (written as empty). */
int html_table_init(struct html_table *t, size_t ncols, size_t nrows,
		    bool bars);
int html_table_set(struct html_table *t, size_t row, size_t col,
		   const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void html_table_free(struct html_table *t);

/*
 * Writes the page to PATH (created 0644, replaced atomically).  Returns 0
 * or a negative errno.  Names are HTML-escaped; a picture with no points
 * still gives a valid page that says so.
 */
int report_html_write(const struct heap_picture *pic, const char *path);

#endif /* REPORT_HTML_H */
