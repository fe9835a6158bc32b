// SPDX-License-Identifier: BSD-3-Clause
/*
 * html_picture OUT.html - writes the heap-over-time page for a synthetic
 * 60 s trace with three types of known shape, for test_report_html.sh:
 *   *main.node                       grows 0 -> 48 MiB (a leak)
 *   []uint8                          saw-tooth 12-28 MiB (churn)
 *   map.bucket[string]*main.session  level at 9 MiB
 * and the total, 4 MiB above their sum; a GC cycle every 2 s (30 marks);
 * a flame graph of 100 MiB: main.main (100) -> main.leak (75, main.go:43)
 * and main.churn (25); and one table of two rows with bars.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/report_html.h"

#define NPOINTS 600
#define NGC 30
#define MIB (1024.0 * 1024.0)

int main(int argc, char **argv)
{
	static double t[NPOINTS];
	static uint64_t leak[NPOINTS], churn[NPOINTS], level[NPOINTS];
	static uint64_t total[NPOINTS];
	struct heap_series series[] = {
		{ "*main.node", leak },
		{ "[]uint8", churn },
		{ "map.bucket[string]*main.session", level },
	};
	struct heap_picture pic = {
		.summary = "synthetic: 60 s, 30 GC cycles",
		.title = "leaky-4242 (go1.27)",
		.npoints = NPOINTS,
		.t_sec = t,
		.nseries = 3,
		.series = series,
		.total_live_bytes = total,
	};
	static double gc[NGC];
	static const struct flame_node flame[] = {
		{ "all allocations", NULL, 100 << 20, 0 },
		{ "main.main", "main.go:10", 100 << 20, 1 },
		{ "main.leak", "main.go:43", 75 << 20, 2 },
		{ "main.churn", "main.go:50", 25 << 20, 2 },
	};
	static const char *head[] = { "site", "bytes" };
	struct html_table tab;
	int i, err;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUT.html\n", argv[0]);
		return 2;
	}
	for (i = 0; i < NPOINTS; i++) {
		t[i] = i * 0.1;
		leak[i] = (uint64_t)(48 * MIB * i / (NPOINTS - 1));
		churn[i] = (uint64_t)((12 + 16 * ((i % 100) / 100.0)) * MIB);
		level[i] = (uint64_t)(9 * MIB);
		total[i] = leak[i] + churn[i] + level[i] + (uint64_t)(4 * MIB);
	}
	for (i = 0; i < NGC; i++)
		gc[i] = 1.0 + 2.0 * i;
	pic.ngc = NGC;
	pic.gc_t_sec = gc;
	pic.nflame = sizeof(flame) / sizeof(flame[0]);
	pic.flame = flame;
	if (html_table_init(&tab, 2, 2, true))
		return 1;
	tab.id = "garbage";
	tab.title = "Garbage producers";
	tab.head = head;
	tab.text_cols = 1;
	tab.bar_col = 1;
	if (html_table_set(&tab, 0, 0, "main.churn (main.go:50)") ||
	    html_table_set(&tab, 0, 1, "25 MiB") ||
	    html_table_set(&tab, 1, 0, "main.<leak>&co") ||
	    html_table_set(&tab, 1, 1, "1 MiB"))
		return 1;
	tab.bar[0] = 1.0;
	tab.bar[1] = 0.04;
	pic.ntables = 1;
	pic.tables = &tab;
	err = report_html_write(&pic, argv[1]);
	html_table_free(&tab);
	if (err) {
		fprintf(stderr, "report_html_write: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
