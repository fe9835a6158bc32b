// SPDX-License-Identifier: BSD-3-Clause
/*
 * report_html_text.c - what both files of the page write with: escaped
 * text and byte counts.  Kept apart from report_html.c, which calls
 * report_html_parts.c for the flame graph and the tables, so that the
 * parts need not call back into it.
 */
#include <stddef.h>
#include <stdio.h>

#include "analysis/report_html_impl.h"

void html_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

static const struct byte_unit units[] = {
	{ "B", 1.0 },
	{ "KiB", 1024.0 },
	{ "MiB", 1024.0 * 1024 },
	{ "GiB", 1024.0 * 1024 * 1024 },
	{ "TiB", 1024.0 * 1024 * 1024 * 1024 },
};
#define NUNITS (sizeof(units) / sizeof(units[0]))

const struct byte_unit *html_byte_unit(double bytes)
{
	size_t i = 0;

	while (i + 1 < NUNITS && bytes >= units[i + 1].size)
		i++;
	return &units[i];
}

/* "17.5 KiB": three significant digits at most, in the value's own unit. */
void html_bytes(FILE *f, double bytes)
{
	const struct byte_unit *u = html_byte_unit(bytes);
	double v = bytes / u->size;

	/* 1023 KiB would print as "1023 KiB"; "1.00 MiB" reads better. */
	if (v >= 999.5 && u + 1 < units + NUNITS) {
		u++;
		v = bytes / u->size;
	}
	if (u->size == 1.0)
		fprintf(f, "%.0f B", v);
	else
		fprintf(f, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v,
			u->name);
}
