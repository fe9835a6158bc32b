// SPDX-License-Identifier: BSD-3-Clause
/*
 * tracer_say.c - the tracer's line on stderr.  Every file of the tracer
 * says things and the loop in tracer.c calls those files, so this lives
 * in a file that calls none of them.
 */
#include "trace/tracer_impl.h"

#include <stdarg.h>
#include <stdio.h>

void tracer_say(const char *fmt, ...)
{
	va_list ap;

	fputs("traceaf-bpf: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
