// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_trace_reader - user/format/trace_reader.c on arbitrary bytes: report and
 * pprof read trace files from anywhere, so the reader must not crash or
 * read out of bounds, and must keep its promises: events are AllocFree
 * kinds, in timestamp order within a generation, and type names lie
 * inside the input.
 *
 * Input: a trace file, header included.  Seeds: heads of files the tracer
 * wrote and of the runtime's own traces (Go 1.23 and 1.27, the leaky
 * workload with GODEBUG=traceallocfree=1).
 */
#include "fuzz_common.h"
#include "format/trace_reader.h"
#include "format/trace_events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace_reader *r;
	struct trace_event e;
	size_t i;
	int rc;

	if (trace_reader_open_mem(data, size, &r))
		return 0;
	while ((rc = trace_reader_next_gen(r)) > 0) {
		uint64_t last = 0;

		for (i = 0; i < trace_reader_ntypes(r); i++) {
			const struct trace_type *t = trace_reader_type_at(r, i);

			FUZZ_CHECK((const uint8_t *)t->name >= data &&
				   (const uint8_t *)t->name + t->name_len <=
				   data + size);
			FUZZ_CHECK(trace_reader_type(r, t->id) != NULL);
		}
		FUZZ_CHECK(trace_reader_freq(r) > 0 ||
			   trace_reader_next_event(r, &e) == 0);
		while ((rc = trace_reader_next_event(r, &e)) > 0) {
			FUZZ_CHECK(e.kind >= TW_EV_FIRST &&
				   e.kind < TW_EV_FIRST + TW_EV_COUNT);
			FUZZ_CHECK(e.ticks >= last);
			FUZZ_CHECK(e.gen == trace_reader_gen(r));
			last = e.ticks;
		}
		if (rc < 0)
			break;
	}
	if (rc < 0)
		FUZZ_CHECK(trace_reader_error(r)[0] != 0);
	trace_reader_close(r);
	return 0;
}
