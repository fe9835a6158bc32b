// SPDX-License-Identifier: BSD-3-Clause
/*
 * report_html.c - the report as one HTML page: the heap-over-time chart
 * here, the flame graph and tables in report_html_parts.c, escaped text
 * and byte counts in report_html_text.c.
 *
 * The chart is a line chart in inline SVG (one line per type, the total
 * dashed) above a table that is also the legend.  A strip above the plot
 * marks where each GC cycle began; a transparent band per time point
 * carries, as its <title>, every series' value at that time, which the
 * browser shows on hover.  The page has no script and fetches nothing,
 * so it opens from a mail attachment or a CI artifact as it is.  Every
 * string from the trace (type names, the title) goes through
 * html_text(): Go type names are full of '<', '>', '*', '[' and '&'
 * appears in generics.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/atomic_file.h"
#include "analysis/report_html_impl.h"

/* The chart in SVG user units; the page scales it to the window width. */
#define CHART_W   1100.0
#define CHART_H   460.0
#define PLOT_L    86.0    /* room for "1023.5 MiB" */
#define PLOT_R    24.0
#define PLOT_T    34.0    /* the GC strip above the plot */
#define GC_Y0     14.0
#define GC_Y1     28.0
#define GC_COLOUR "#d62728"
#define PLOT_B    56.0    /* tick labels and the axis title */
#define PLOT_W    (CHART_W - PLOT_L - PLOT_R)
#define PLOT_H    (CHART_H - PLOT_T - PLOT_B)

/* Tableau 10: distinct for most colour-blind readers, and on paper. */
static const char *const palette[] = {
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
};
#define NCOLOURS (sizeof(palette) / sizeof(palette[0]))
#define TOTAL_COLOUR "#3b3b3b"

/* Past the palette, colours repeat with a dash pattern to tell them apart. */
static const char *const dashes[] = { "", "8 4", "2 3", "10 3 2 3" };
#define NDASHES (sizeof(dashes) / sizeof(dashes[0]))

/* The smallest 1, 2, 2.5 or 5 times a power of ten that is >= X > 0. */
static double nice_step(double x)
{
	static const double mult[] = { 1, 2, 2.5, 5, 10 };
	double p = pow(10, floor(log10(x)));
	size_t i;

	for (i = 0; i < sizeof(mult) / sizeof(mult[0]); i++)
		if (mult[i] * p >= x * (1 - 1e-9))
			return mult[i] * p;
	return 10 * p;
}

/* Decimals that print every multiple of STEP exactly (2.5 -> 1). */
static int decimals_for(double step)
{
	int d = 0;

	while (d < 6 && fabs(step * pow(10, d) - round(step * pow(10, d))) >
				1e-6)
		d++;
	return d;
}

struct axes {
	double t0, t_span;        /* seconds at the left edge, and width */
	double y_max;             /* bytes at the top edge */
	const struct byte_unit *y_unit;
	double y_step;            /* in y_unit */
	double t_step;            /* seconds */
};

static double x_of(const struct axes *a, double t)
{
	return PLOT_L + (t - a->t0) / a->t_span * PLOT_W;
}

static double y_of(const struct axes *a, double bytes)
{
	return PLOT_T + PLOT_H - bytes / a->y_max * PLOT_H;
}

static void choose_axes(const struct heap_picture *pic, struct axes *a)
{
	double peak = 0, t1;
	size_t i, s;

	a->t0 = pic->t_sec[0];
	t1 = pic->t_sec[pic->npoints - 1];
	a->t_span = t1 > a->t0 ? t1 - a->t0 : 1.0;
	a->t_step = nice_step(a->t_span / 6);

	for (i = 0; i < pic->npoints; i++) {
		if (pic->total_live_bytes &&
		    (double)pic->total_live_bytes[i] > peak)
			peak = (double)pic->total_live_bytes[i];
		for (s = 0; s < pic->nseries; s++)
			if ((double)pic->series[s].live_bytes[i] > peak)
				peak = (double)pic->series[s].live_bytes[i];
	}
	if (peak < 1)
		peak = 1;
	/* Ticks in the unit of the peak, about five of them. */
	a->y_unit = html_byte_unit(peak);
	a->y_step = nice_step(peak / a->y_unit->size / 5);
	/* No fractions of a byte. */
	if (a->y_unit->size == 1.0 && a->y_step < 1)
		a->y_step = 1;
	a->y_max = ceil(peak / a->y_unit->size / a->y_step) * a->y_step *
		   a->y_unit->size;
}

static void print_grid(FILE *f, const struct axes *a)
{
	int yd = decimals_for(a->y_step), td = decimals_for(a->t_step);
	double v, t, x, y;
	long k;

	fputs("<g class=\"grid\">\n", f);
	for (k = 0;; k++) {
		v = k * a->y_step;
		if (v * a->y_unit->size > a->y_max * (1 + 1e-9))
			break;
		y = y_of(a, v * a->y_unit->size);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			   "y2=\"%.1f\"/>\n", PLOT_L, y, PLOT_L + PLOT_W, y);
		fprintf(f, "<text class=\"ytick\" x=\"%.1f\" y=\"%.1f\">",
			PLOT_L - 8, y + 4);
		if (k)
			fprintf(f, "%.*f %s", yd, v, a->y_unit->name);
		else
			fputc('0', f);
		fputs("</text>\n", f);
	}
	/* The first tick at or after t0, on a multiple of the step. */
	for (k = (long)ceil(a->t0 / a->t_step - 1e-9);; k++) {
		t = k * a->t_step;
		if (t > a->t0 + a->t_span * (1 + 1e-9))
			break;
		x = x_of(a, t);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			   "y2=\"%.1f\"/>\n", x, PLOT_T, x, PLOT_T + PLOT_H);
		fprintf(f, "<text class=\"xtick\" x=\"%.1f\" y=\"%.1f\">"
			   "%.*f s</text>\n", x, PLOT_T + PLOT_H + 20, td, t);
	}
	fputs("</g>\n", f);
	fprintf(f, "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" "
		   "width=\"%.1f\" height=\"%.1f\"/>\n",
		PLOT_L, PLOT_T, PLOT_W, PLOT_H);
	fprintf(f, "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\">time since "
		   "the trace started (seconds)</text>\n",
		PLOT_L + PLOT_W / 2, CHART_H - 10);
	fprintf(f, "<text class=\"axis\" transform=\"translate(16 %.1f) "
		   "rotate(-90)\">live heap</text>\n", PLOT_T + PLOT_H / 2);
}

/*
 * The polyline points of one series.  A trace has up to a point per
 * generation or finer, far more than the plot's pixel columns (the
 * page is drawn at most CHART_W pixels wide): per column only the first,
 * lowest, highest and last points are kept (in time order), so spikes
 * survive and the page stays small.
 */
struct column {
	long x;                 /* column index (SVG units); -1 = none */
	size_t first, lo, hi, last;
};

static void flush_column(FILE *f, const struct axes *a,
			 const struct heap_picture *pic, const uint64_t *v,
			 const struct column *c)
{
	size_t keep[4] = { c->first, c->lo, c->hi, c->last }, i, j, tmp;

	if (c->x < 0)
		return;
	/* Sort the four indices, then print each distinct one once. */
	for (i = 1; i < 4; i++)
		for (j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			tmp = keep[j];
			keep[j] = keep[j - 1];
			keep[j - 1] = tmp;
		}
	for (i = 0; i < 4; i++)
		if (i == 0 || keep[i] != keep[i - 1])
			fprintf(f, "%.1f,%.1f ", x_of(a, pic->t_sec[keep[i]]),
				y_of(a, (double)v[keep[i]]));
}

static void print_points(FILE *f, const struct axes *a,
			 const struct heap_picture *pic, const uint64_t *v)
{
	struct column c = { .x = -1 };
	size_t i;
	long x;

	for (i = 0; i < pic->npoints; i++) {
		x = lround(x_of(a, pic->t_sec[i]));
		if (x != c.x) {
			flush_column(f, a, pic, v, &c);
			c.x = x;
			c.first = c.lo = c.hi = i;
		}
		if (v[i] < v[c.lo])
			c.lo = i;
		if (v[i] > v[c.hi])
			c.hi = i;
		c.last = i;
	}
	flush_column(f, a, pic, v, &c);
}

static uint64_t peak_of(const uint64_t *v, size_t n);

/* One tick per GC cycle start, in the strip above the plot. */
static void print_gc(FILE *f, const struct axes *a,
		     const struct heap_picture *pic)
{
	size_t i;

	if (!pic->ngc || !pic->gc_t_sec)
		return;
	fprintf(f, "<g id=\"gc-marks\" stroke=\"%s\" stroke-width=\"1.5\">"
		   "<title>%zu GC cycles (%s)</title>\n",
		GC_COLOUR, pic->ngc,
		pic->gc_exact ? "the runtime's" : "estimated from the sweeps");
	fprintf(f, "<text class=\"gclabel\" x=\"%.1f\" y=\"%.1f\">GC</text>\n",
		PLOT_L - 8, GC_Y1 - 2);
	for (i = 0; i < pic->ngc; i++) {
		double t = pic->gc_t_sec[i], x;

		if (!(t >= a->t0 && t <= a->t0 + a->t_span))
			continue;
		x = x_of(a, t);
		fprintf(f, "<line class=\"gc\" x1=\"%.1f\" y1=\"%.1f\" "
			   "x2=\"%.1f\" y2=\"%.1f\"><title>GC cycle %zu "
			   "begins at %.3f s</title></line>\n",
			x, GC_Y0, x, GC_Y1, i + 1, t);
	}
	fputs("</g>\n", f);
}

/*
 * Hover bands: one per time point, as wide as the gap to its neighbours,
 * whose title lists every series at that time.  Points closer than
 * BAND_MIN_W units share one band (showing the last of them), so a trace
 * with far more points than pixels does not give a page of titles.
 */
#define BAND_MIN_W 3.0

static void print_band(FILE *f, const struct heap_picture *pic, size_t i,
		       double l, double r)
{
	size_t s;

	fprintf(f, "<rect class=\"band\" x=\"%.2f\" y=\"%.1f\" "
		   "width=\"%.2f\" height=\"%.1f\"><title>%.3f s",
		l, PLOT_T, r - l, PLOT_H, pic->t_sec[i]);
	if (pic->total_live_bytes) {
		fputs("\nall heap objects: ", f);
		html_bytes(f, (double)pic->total_live_bytes[i]);
	}
	for (s = 0; s < pic->nseries; s++) {
		fputc('\n', f);
		html_text(f, pic->series[s].name);
		fputs(": ", f);
		html_bytes(f, (double)pic->series[s].live_bytes[i]);
	}
	fputs("</title></rect>\n", f);
}

static void print_bands(FILE *f, const struct axes *a,
			const struct heap_picture *pic)
{
	double l = PLOT_L, r;
	size_t i;

	fputs("<g id=\"hover\">\n", f);
	for (i = 0; i < pic->npoints; i++) {
		double x = x_of(a, pic->t_sec[i]);

		r = i + 1 < pic->npoints ?
		    (x + x_of(a, pic->t_sec[i + 1])) / 2 : PLOT_L + PLOT_W;
		if (r - l < BAND_MIN_W && i + 1 < pic->npoints)
			continue;
		print_band(f, pic, i, l, r);
		l = r;
	}
	fputs("</g>\n", f);
}

static void print_line(FILE *f, const struct axes *a,
		       const struct heap_picture *pic, const uint64_t *v,
		       const char *name, const char *colour, const char *dash,
		       const char *cls)
{
	fprintf(f, "<g class=\"%s\" stroke=\"%s\"", cls, colour);
	if (dash[0])
		fprintf(f, " stroke-dasharray=\"%s\"", dash);
	fputs("><title>", f);
	html_text(f, name);
	fputs(": peak ", f);
	html_bytes(f, (double)peak_of(v, pic->npoints));
	fputs(", at the end ", f);
	html_bytes(f, (double)v[pic->npoints - 1]);
	fputs("</title>\n", f);
	/* One point draws no line; show it as a dot. */
	if (pic->npoints == 1)
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" "
			   "fill=\"%s\"/>\n", x_of(a, pic->t_sec[0]),
			y_of(a, (double)v[0]), colour);
	fputs("<polyline points=\"", f);
	print_points(f, a, pic, v);
	fputs("\"/></g>\n", f);
}

static uint64_t peak_of(const uint64_t *v, size_t n)
{
	uint64_t m = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return m;
}

static void print_legend_row(FILE *f, const struct heap_picture *pic,
			     const uint64_t *v, const char *name,
			     const char *colour, const char *dash)
{
	size_t n = pic->npoints;

	fprintf(f, "<tr><td><svg class=\"swatch\" width=\"36\" "
		   "height=\"14\"><line x1=\"2\" y1=\"7\" x2=\"34\" y2=\"7\" "
		   "stroke=\"%s\" stroke-width=\"6\"", colour);
	if (dash[0])
		fprintf(f, " stroke-dasharray=\"%s\"", dash);
	fputs("/></svg></td><td class=\"name\">", f);
	html_text(f, name);
	fputs("</td><td>", f);
	html_bytes(f, (double)v[0]);
	fputs("</td><td>", f);
	html_bytes(f, (double)peak_of(v, n));
	fputs("</td><td>", f);
	html_bytes(f, (double)v[n - 1]);
	/* The change over the trace: what a leak shows first. */
	fputs("</td><td>", f);
	if (v[n - 1] == v[0]) {
		fputs("none", f);
	} else if (v[n - 1] > v[0]) {
		fputc('+', f);
		html_bytes(f, (double)(v[n - 1] - v[0]));
	} else {
		fputs("&minus;", f);
		html_bytes(f, (double)(v[0] - v[n - 1]));
	}
	fputs("</td></tr>\n", f);
}

static const char page_style[] =
	"<style>\n"
	"body{font-family:\"DejaVu Sans\",\"Helvetica Neue\",Arial,"
	"sans-serif;color:#222;background:#fff;margin:16px 28px;}\n"
	"h1{font-size:21px;font-weight:600;margin:0 0 4px;}\n"
	"p.sub{color:#555;font-size:14px;margin:0 0 8px;}\n"
	"svg.chart{width:100%;max-width:1100px;height:auto;display:block;}\n"
	".grid line{stroke:#e3e3e3;stroke-width:1;}\n"
	".frame{fill:none;stroke:#999;stroke-width:1;}\n"
	".ytick{font-size:13px;text-anchor:end;fill:#444;}\n"
	".xtick{font-size:13px;text-anchor:middle;fill:#444;}\n"
	".axis{font-size:14px;text-anchor:middle;fill:#222;}\n"
	".series polyline{fill:none;stroke-width:3;stroke-linejoin:round;}\n"
	".total polyline{fill:none;stroke-width:2;}\n"
	"table{border-collapse:collapse;font-size:14px;margin-top:6px;}\n"
	"th,td{padding:2px 12px 2px 0;text-align:right;}\n"
	"th{font-weight:600;border-bottom:1px solid #ccc;}\n"
	"td.name,th.name{text-align:left;font-family:\"DejaVu Sans Mono\","
	"monospace;max-width:520px;overflow-wrap:anywhere;}\n"
	"p.empty{font-size:16px;color:#555;margin:40px 0;}\n"
	".gclabel{font-size:12px;text-anchor:end;fill:#d62728;}\n"
	".band{fill:#000;fill-opacity:0;}\n"
	".band:hover{fill-opacity:0.07;}\n"
	"h2{font-size:17px;font-weight:600;margin:26px 0 4px;}\n"
	"p.note{color:#555;font-size:13px;margin:0 0 6px;max-width:1100px;}\n"
	"table.data td.t{text-align:left;font-family:\"DejaVu Sans Mono\","
	"monospace;max-width:460px;overflow-wrap:anywhere;}\n"
	"table.data th.t{text-align:left;}\n"
	"table.data td{white-space:nowrap;}\n"
	"table.data td.t{white-space:normal;}\n"
	"table.data tr:nth-child(even){background:#f6f6f6;}\n"
	"td.bar{min-width:140px;}\n"
	"td.bar span.b{display:inline-block;height:10px;background:#c0504d;"
	"margin-right:6px;vertical-align:middle;}\n"
	"svg.flame{width:100%;max-width:1100px;height:auto;display:block;}\n"
	".flame rect{stroke:#fff;stroke-width:0.5;}\n"
	".flame text{font-size:11px;fill:#222;pointer-events:none;"
	"font-family:\"DejaVu Sans Mono\",monospace;}\n"
	".flame g:hover rect{stroke:#000;stroke-width:1;}\n"
	"</style>\n";

static void print_chart(FILE *f, const struct heap_picture *pic)
{
	struct axes a;
	size_t s;

	choose_axes(pic, &a);
	fprintf(f, "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" "
		   "viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
		   "aria-label=\"live heap bytes over time\">\n",
		CHART_W, CHART_H);
	print_grid(f, &a);
	print_gc(f, &a, pic);
	print_bands(f, &a, pic);
	if (pic->total_live_bytes)
		print_line(f, &a, pic, pic->total_live_bytes,
			   "all heap objects", TOTAL_COLOUR, "6 4", "total");
	/* The top type last, so it is drawn over the others. */
	for (s = pic->nseries; s-- > 0;)
		print_line(f, &a, pic, pic->series[s].live_bytes,
			   pic->series[s].name, palette[s % NCOLOURS],
			   dashes[(s / NCOLOURS) % NDASHES], "series");
	fputs("</svg>\n", f);

	fputs("<table>\n<tr><th></th><th class=\"name\">type</th>"
	      "<th>live at start</th><th>peak</th><th>live at end</th>"
	      "<th>change</th></tr>\n", f);
	for (s = 0; s < pic->nseries; s++)
		print_legend_row(f, pic, pic->series[s].live_bytes,
				 pic->series[s].name, palette[s % NCOLOURS],
				 dashes[(s / NCOLOURS) % NDASHES]);
	if (pic->total_live_bytes)
		print_legend_row(f, pic, pic->total_live_bytes,
				 "all heap objects", TOTAL_COLOUR, "6 4");
	fputs("</table>\n", f);
}

static void print_page(FILE *f, const struct heap_picture *pic)
{
	const char *title = pic->title ? pic->title : "heap over time";
	size_t i;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	      "<meta charset=\"utf-8\">\n<title>Live heap: ", f);
	html_text(f, title);
	fputs("</title>\n", f);
	fputs(page_style, f);
	fputs("</head>\n<body>\n<h1>Live heap by type: ", f);
	html_text(f, title);
	fputs("</h1>\n", f);
	if (pic->summary) {
		fputs("<p class=\"sub\" id=\"summary\">", f);
		html_text(f, pic->summary);
		fputs("</p>\n", f);
	}
	if (!pic->npoints) {
		fputs("<p class=\"empty\">No heap samples: the trace has no "
		      "heap object events to draw.</p>\n", f);
	} else {
		fprintf(f, "<p class=\"sub\">%zu time points over %.4g s; "
			   "%zu lines for the types with the most live "
			   "bytes%s.</p>\n",
			pic->npoints,
			pic->t_sec[pic->npoints - 1] - pic->t_sec[0],
			pic->nseries, pic->total_live_bytes ?
			", and all heap objects (dashed)" : "");
		print_chart(f, pic);
	}
	if (pic->nflame || pic->flame_note)
		html_print_flame(f, pic);
	for (i = 0; i < pic->ntables; i++)
		html_print_table(f, &pic->tables[i]);
	fputs("</body>\n</html>\n", f);
}

static bool picture_is_valid(const struct heap_picture *pic)
{
	size_t i;

	if ((pic->ngc && !pic->gc_t_sec) || (pic->nflame && !pic->flame) ||
	    (pic->ntables && !pic->tables))
		return false;
	for (i = 0; i < pic->ntables; i++)
		if (pic->tables[i].nrows && (!pic->tables[i].cells ||
					     !pic->tables[i].head))
			return false;
	if (!pic->npoints)
		return true;
	if (!pic->t_sec || (pic->nseries && !pic->series))
		return false;
	for (i = 0; i < pic->nseries; i++)
		if (!pic->series[i].live_bytes)
			return false;

	/* Time must not run backwards, or the lines double back. */
	for (i = 1; i < pic->npoints; i++)
		if (!(pic->t_sec[i] >= pic->t_sec[i - 1]))
			return false;
	return isfinite(pic->t_sec[0]) &&
	       isfinite(pic->t_sec[pic->npoints - 1]);
}

int report_html_write(const struct heap_picture *pic, const char *path)
{
	struct atomic_file out;
	char *page = NULL;
	size_t len = 0;
	FILE *f;
	int err;

	if (!pic || !path || !picture_is_valid(pic))
		return -EINVAL;
	/* Built in memory, so the file is written (and can fail) once. */
	f = open_memstream(&page, &len);
	if (!f)
		return -ENOMEM;
	print_page(f, pic);
	/* A memstream fails only when it cannot grow. */
	err = ferror(f) ? -ENOMEM : 0;
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		free(page);
		return err;
	}
	err = atomic_file_open(&out, path, 0644);
	if (!err) {
		err = atomic_file_write(&out, page, len);
		if (err)
			atomic_file_abort(&out);
		else
			err = atomic_file_commit(&out);
	}
	free(page);
	return err;
}
