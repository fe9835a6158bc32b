/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report_html_impl.h - what the page's two files share: report_html.c
 * (the page, the chart) and report_html_parts.c (the flame graph, the
 * tables).  Included by those two only.
 */
#ifndef REPORT_HTML_IMPL_H
#define REPORT_HTML_IMPL_H

#include <stdio.h>

#include "analysis/report_html.h"

/* TEXT with &, <, >, " and ' escaped. */
void html_text(FILE *f, const char *s);
/* "17.5 KiB": three significant digits, binary units. */
void html_bytes(FILE *f, double bytes);

void html_print_flame(FILE *f, const struct heap_picture *pic);
void html_print_table(FILE *f, const struct html_table *t);

#endif /* REPORT_HTML_IMPL_H */
