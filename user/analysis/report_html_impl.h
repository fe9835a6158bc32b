/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report_html_impl.h - what the page's files share: report_html.c (the
 * page, the chart), report_html_parts.c (the flame graph, the tables) and
 * report_html_text.c (escaped text, byte counts).  Included by those
 * three only.
 */
#ifndef REPORT_HTML_IMPL_H
#define REPORT_HTML_IMPL_H

#include <stdio.h>

#include "analysis/report_html.h"

/* Binary units, as Go's runtime and pprof's -unit=kib report memory. */
struct byte_unit {
	const char *name;
	double size;
};

/* report_html_text.c: TEXT with &, <, >, " and ' escaped; "17.5 KiB":
 * three significant digits, binary units; the largest unit not above
 * BYTES (B below 1 KiB), for the chart's axis. */
void html_text(FILE *f, const char *s);
void html_bytes(FILE *f, double bytes);
const struct byte_unit *html_byte_unit(double bytes);

/* report_html_parts.c */
void html_print_flame(FILE *f, const struct heap_picture *pic);
void html_print_table(FILE *f, const struct html_table *t);

#endif /* REPORT_HTML_IMPL_H */
