// SPDX-License-Identifier: BSD-3-Clause
/* report_text.c - numbers as the report writes them. */
#include "report_text.h"

#include <stdio.h>

const char *report_human_bytes(uint64_t b, char *buf, size_t len)
{
	static const char *unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
	return buf;
}
