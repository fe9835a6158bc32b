// SPDX-License-Identifier: BSD-3-Clause
/*
 * stacks_check TYPE FUNC FILE_SUFFIX LINE TRACE...: for every
 * HeapObjectAlloc of type TYPE in the TRACE files, looks its stack up in
 * the file's sidecar and checks that the innermost frame is FUNC, in a
 * file ending in FILE_SUFFIX, at LINE.  Prints
 *   allocs N
 *   with_stack M
 *   match K
 * and the innermost frames of up to 5 allocations that do not match.
 * Exit 0 when it could read everything (the caller judges the counts).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/stack_sidecar.h"
#include "format/trace_reader.h"
#include "format/trace_events.h"

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

int main(int argc, char **argv)
{
	unsigned long allocs = 0, with = 0, match = 0, shown = 0;
	const char *type, *func, *suffix;
	unsigned line;
	int i, rc;

	if (argc < 6) {
		fprintf(stderr, "usage: stacks_check TYPE FUNC FILE_SUFFIX LINE TRACE...\n");
		return 2;
	}
	type = argv[1];
	func = argv[2];
	suffix = argv[3];
	line = (unsigned)strtoul(argv[4], NULL, 10);
	for (i = 5; i < argc; i++) {
		struct trace_reader *r;
		struct stack_sidecar *sc;
		struct trace_event e;

		rc = trace_reader_open(argv[i], &r);
		if (rc) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(-rc));
			return 1;
		}
		rc = stack_sidecar_open(argv[i], &sc);
		if (rc) {
			fprintf(stderr, "%s: sidecar: %s\n", argv[i],
				strerror(-rc));
			return 1;
		}
		while ((rc = trace_reader_next_gen(r)) == 1) {
			while ((rc = trace_reader_next_event(r, &e)) == 1) {
				const struct trace_type *t;
				const struct stack_frame *f;
				uint32_t sid;
				size_t n;

				if (e.kind != TW_EV_HEAP_OBJECT_ALLOC)
					continue;
				t = trace_reader_type(r, e.args[1]);
				if (!t || t->name_len != strlen(type) ||
				    memcmp(t->name, type, t->name_len))
					continue;
				allocs++;
				if (stack_sidecar_lookup(sc, e.gen, e.args[0],
							 e.ticks, &sid) ||
				    stack_sidecar_frames(sc, sid, &f, &n))
					continue;
				with++;
				if (!strcmp(f[0].func, func) &&
				    ends_with(f[0].file, suffix) &&
				    f[0].line == line) {
					match++;
				} else if (shown++ < 5) {
					printf("mismatch %s %s:%u (%zu frames)\n",
					       f[0].func, f[0].file, f[0].line,
					       n);
				}
			}
			if (rc < 0)
				break;
		}
		if (rc < 0) {
			fprintf(stderr, "%s: %s\n", argv[i],
				trace_reader_error(r));
			return 1;
		}
		stack_sidecar_close(sc);
		trace_reader_close(r);
	}
	printf("allocs %lu\nwith_stack %lu\nmatch %lu\n", allocs, with, match);
	return 0;
}
