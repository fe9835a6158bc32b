// SPDX-License-Identifier: BSD-3-Clause
/*
 * export_disk_full small|big DIR - writes DIR/heap.pb.gz (pprof_write)
 * and DIR/heap.html (report_html_write), for test_export_disk_full.sh.
 * "small" is a few hundred bytes each; "big" is several hundred KiB each
 * (distinct function names and noisy series, which gzip and the page's
 * point thinning cannot shrink much).  Prints one line per file:
 * "pprof: RESULT" and "html: RESULT", RESULT being "ok" or the errno
 * name; exits 0 when both calls returned.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/alloc_profile.h"
#include "analysis/report_html.h"

#define NFRAMES 30000
#define NPOINTS 20000
#define NSERIES 8

static const char *result(int err)
{
	if (!err)
		return "ok";
	return strerrorname_np(-err) ? strerrorname_np(-err) : "?";
}

int main(int argc, char **argv)
{
	static struct stack_frame frames[NFRAMES];
	static struct alloc_profile_sample samples[NFRAMES];
	static char names[NFRAMES][32];
	static double t[NPOINTS];
	static uint64_t values[NSERIES][NPOINTS];
	struct heap_series series[NSERIES];
	struct alloc_profile prof = { .samples = samples };
	struct heap_picture pic = { .title = "disk full", .t_sec = t };
	char path[4096];
	unsigned seed = 1;
	size_t i, s;
	int big;

	if (argc != 3) {
		fprintf(stderr, "usage: %s small|big DIR\n", argv[0]);
		return 2;
	}
	big = strcmp(argv[1], "big") == 0;
	prof.nsamples = big ? NFRAMES : 2;
	pic.npoints = big ? NPOINTS : 3;
	pic.nseries = big ? NSERIES : 1;
	for (i = 0; i < prof.nsamples; i++) {
		snprintf(names[i], sizeof(names[i]), "main.f%08x",
			 (unsigned)(i * 2654435761u));
		frames[i] = (struct stack_frame){ names[i], "/src/main.go",
						  (uint32_t)i, 0x401000 + i };
		samples[i] = (struct alloc_profile_sample){
			&frames[i], 1, "[]uint8", 0, { 1, 64, 1, 64 } };
	}
	for (s = 0; s < pic.nseries; s++) {
		series[s].name = names[s];
		series[s].live_bytes = values[s];
		for (i = 0; i < pic.npoints; i++)
			values[s][i] = rand_r(&seed) % (64 << 20);
	}
	for (i = 0; i < pic.npoints; i++)
		t[i] = i * 0.01;
	pic.series = series;

	snprintf(path, sizeof(path), "%s/heap.pb.gz", argv[2]);
	printf("pprof: %s\n", result(pprof_write(&prof, path)));
	snprintf(path, sizeof(path), "%s/heap.html", argv[2]);
	printf("html: %s\n", result(report_html_write(&pic, path)));
	return 0;
}
