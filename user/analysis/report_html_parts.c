// SPDX-License-Identifier: BSD-3-Clause
/*
 * report_html_parts.c - the page's flame graph and tables
 * (report_html.h), and the helpers that build a table.
 *
 * The flame graph is an icicle: the root (every allocation) on top, each
 * caller above its callees, widths in bytes allocated.  Frames narrower
 * than a third of a pixel are not drawn (their bytes stay in their
 * parent's width), so the page stays small for programs with many
 * stacks; hovering a frame shows its function, file:line, bytes and
 * share of all allocations.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/report_html_impl.h"

#define FLAME_W      1100.0
#define FLAME_ROW    18.0
#define FLAME_DEPTH  64      /* rows drawn at most */
#define FLAME_MIN_W  1.0     /* narrower frames are not drawn */
#define CHAR_W       6.7     /* 11 px monospace */

int html_table_init(struct html_table *t, size_t ncols, size_t nrows,
		    bool bars)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	t->nrows = nrows;
	t->cells = calloc(ncols * nrows > 0 ? ncols * nrows : 1,
			  sizeof(*t->cells));
	t->bar = bars ? calloc(nrows ? nrows : 1, sizeof(*t->bar)) : NULL;
	if (!t->cells || (bars && !t->bar)) {
		html_table_free(t);
		return -ENOMEM;
	}
	return 0;
}

int html_table_set(struct html_table *t, size_t row, size_t col,
		   const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	if (row >= t->nrows || col >= t->ncols)
		return -EINVAL;
	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	free(t->cells[row * t->ncols + col]);
	t->cells[row * t->ncols + col] = s;
	return 0;
}

void html_table_free(struct html_table *t)
{
	size_t i;

	if (t->cells)
		for (i = 0; i < t->ncols * t->nrows; i++)
			free(t->cells[i]);
	free(t->cells);
	free(t->bar);
	t->cells = NULL;
	t->bar = NULL;
	t->nrows = 0;
}

void html_print_table(FILE *f, const struct html_table *t)
{
	size_t r, c;

	fprintf(f, "<h2 id=\"h-");
	html_text(f, t->id);
	fputs("\">", f);
	html_text(f, t->title);
	fputs("</h2>\n", f);
	if (t->note) {
		fputs("<p class=\"note\">", f);
		html_text(f, t->note);
		fputs("</p>\n", f);
	}
	if (!t->nrows) {
		fputs("<p class=\"note\">None.</p>\n", f);
		return;
	}
	fputs("<table class=\"data\" id=\"", f);
	html_text(f, t->id);
	fputs("\">\n<tr>", f);
	for (c = 0; c < t->ncols; c++) {
		fputs(c < t->text_cols ? "<th class=\"t\">" : "<th>", f);
		html_text(f, t->head[c]);
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
	for (r = 0; r < t->nrows; r++) {
		fputs("<tr>", f);
		for (c = 0; c < t->ncols; c++) {
			const char *cell = t->cells[r * t->ncols + c];

			if (t->bar && c == t->bar_col) {
				double v = t->bar[r] < 0 ? 0 :
					   t->bar[r] > 1 ? 1 : t->bar[r];

				fprintf(f, "<td class=\"bar\"><span class=\"b\" "
					   "style=\"width:%.0fpx\"></span>",
					v * 120 + 1);
			} else {
				fputs(c < t->text_cols ? "<td class=\"t\">" :
				      "<td>", f);
			}
			html_text(f, cell ? cell : "");
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* A warm colour per package (the name up to its first '.' after the
 * last '/'), so one package's frames read as one hue. */
static void frame_colour(const char *name, unsigned depth, char *buf,
			 size_t len)
{
	const char *slash = strrchr(name, '/');
	const char *p = slash ? slash + 1 : name;
	const char *dot = strchr(p, '.');
	size_t n = dot ? (size_t)(dot - name) : strlen(name), i;
	uint32_t h = 2166136261u;

	if (depth == 0) {
		snprintf(buf, len, "#b9b9b9");
		return;
	}
	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	snprintf(buf, len, "hsl(%u,%u%%,%u%%)", h % 55, 62 + (h >> 8) % 25,
		 58 + (h >> 16) % 14);
}

static void print_label(FILE *f, const char *name, double w)
{
	size_t fit = (size_t)((w - 6) / CHAR_W), n = strlen(name);
	char *cut;

	if (fit < 3)
		return;
	if (n <= fit) {
		html_text(f, name);
		return;
	}
	cut = strndup(name, fit - 1);
	if (!cut)
		return;
	html_text(f, cut);
	fputs("\u2026", f);
	free(cut);
}

void html_print_flame(FILE *f, const struct heap_picture *pic)
{
	double next_x[FLAME_DEPTH + 2] = { 0 };
	unsigned maxd = 0;
	uint64_t total;
	size_t i;

	fputs("<h2 id=\"h-flame\">Allocation sites by bytes (flame graph)</h2>\n",
	      f);
	if (!pic->nflame) {
		fputs("<p class=\"note\" id=\"flame-none\">", f);
		html_text(f, pic->flame_note);
		fputs("</p>\n", f);
		return;
	}
	fputs("<p class=\"note\">Every allocation's call stack, callers above "
	      "callees; a frame's width is the bytes allocated under it. "
	      "Hover over a frame for its numbers.</p>\n", f);
	total = pic->flame[0].bytes ? pic->flame[0].bytes : 1;
	/* The rows drawn: as deep as a frame wide enough to be seen. */
	for (i = 0; i < pic->nflame; i++)
		if (pic->flame[i].depth > maxd &&
		    (double)pic->flame[i].bytes / (double)total * FLAME_W >=
		    FLAME_MIN_W)
			maxd = pic->flame[i].depth;
	if (maxd >= FLAME_DEPTH)
		maxd = FLAME_DEPTH - 1;
	fprintf(f, "<svg class=\"flame\" id=\"flame\" "
		   "xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
		   "role=\"img\" aria-label=\"flame graph of allocation sites\">\n",
		FLAME_W, (maxd + 1) * FLAME_ROW + 2);
	for (i = 0; i < pic->nflame; i++) {
		const struct flame_node *n = &pic->flame[i];
		double x, w = (double)n->bytes / (double)total * FLAME_W;
		char colour[40];

		if (n->depth >= FLAME_DEPTH)
			continue;
		x = next_x[n->depth];
		next_x[n->depth] = x + w;
		next_x[n->depth + 1] = x;
		if (w < FLAME_MIN_W)
			continue;
		frame_colour(n->name, n->depth, colour, sizeof(colour));
		fprintf(f, "<g class=\"fn\" data-bytes=\"%llu\" data-depth=\"%u\">"
			   "<title>", (unsigned long long)n->bytes, n->depth);
		html_text(f, n->name);
		if (n->detail) {
			fputs(" (", f);
			html_text(f, n->detail);
			fputc(')', f);
		}
		fputs("\n", f);
		html_bytes(f, (double)n->bytes);
		fprintf(f, " allocated, %.1f%% of all</title>",
			100.0 * (double)n->bytes / (double)total);
		fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
			   "height=\"%.1f\" fill=\"%s\"/>",
			x, n->depth * FLAME_ROW + 1, w, FLAME_ROW - 1, colour);
		fprintf(f, "<text x=\"%.2f\" y=\"%.1f\">", x + 3,
			n->depth * FLAME_ROW + 13);
		print_label(f, n->name, w);
		fputs("</text></g>\n", f);
	}
	fputs("</svg>\n", f);
}
