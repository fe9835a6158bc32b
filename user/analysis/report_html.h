/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report_html.h - the heap-over-time picture of `report --html OUT`: one
 * self-contained HTML page (inline SVG, inline CSS, no script or network
 * fetch) showing the live heap bytes of the top types over time.
 */
#ifndef REPORT_HTML_H
#define REPORT_HTML_H

#include <stddef.h>
#include <stdint.h>

struct heap_series {
	const char *name;           /* type name, or "other types" */
	const uint64_t *live_bytes; /* one value per time point */
};

struct heap_picture {
	const char *title;          /* e.g. "leaky-1234 (go1.27)"; escaped */
	size_t npoints;
	const double *t_sec;        /* seconds since the trace's start */
	size_t nseries;             /* top types first */
	const struct heap_series *series;
	const uint64_t *total_live_bytes; /* all heap objects, per point */
};

/*
 * Writes the page to PATH (created 0644, replaced atomically).  Returns 0
 * or a negative errno.  Names are HTML-escaped; a picture with no points
 * still gives a valid page that says so.
 */
int report_html_write(const struct heap_picture *pic, const char *path);

#endif /* REPORT_HTML_H */
