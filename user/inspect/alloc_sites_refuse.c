// SPDX-License-Identifier: BSD-3-Clause
/*
 * alloc_sites_refuse.c - as_refuse(): why a function is not analysed.
 * Every part of the analysis refuses; alone here, it makes none of them
 * call back into alloc_sites.c, which calls them.
 */
#include "inspect/alloc_sites_impl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

int as_refuse(struct fn *f, const char *fmt, ...)
{
	va_list ap;

	if (!f->why[0]) {
		va_start(ap, fmt);
		vsnprintf(f->why, sizeof(f->why), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}
