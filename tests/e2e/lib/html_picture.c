// SPDX-License-Identifier: BSD-3-Clause
/*
 * html_picture OUT.html - writes the heap-over-time page for a synthetic
 * 60 s trace with three types of known shape, for test_report_html.sh:
 *   *main.node                       grows 0 -> 48 MiB (a leak)
 *   []uint8                          saw-tooth 12-28 MiB (churn)
 *   map.bucket[string]*main.session  level at 9 MiB
 * and the total, 4 MiB above their sum.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/report_html.h"

#define NPOINTS 600
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
		.title = "leaky-4242 (go1.27)",
		.npoints = NPOINTS,
		.t_sec = t,
		.nseries = 3,
		.series = series,
		.total_live_bytes = total,
	};
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
	err = report_html_write(&pic, argv[1]);
	if (err) {
		fprintf(stderr, "report_html_write: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
