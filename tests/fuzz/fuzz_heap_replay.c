// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_heap_replay - user/analysis/heap_replay.c on arbitrary trace files: events
 * with any IDs, types, page counts and orders, in any order, must neither
 * crash nor break the replay's own sums (what is live is what was
 * allocated or found, minus what was freed).
 *
 * Input: a trace file, header included (seeds: corpus/trace_reader).
 */
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "analysis/heap_replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct heap_replay *h;
	char path[64];
	size_t i;
	int fd;

	fd = memfd_create("trace", 0);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	h = heap_replay_new();
	if (h) {
		uint64_t in = 0, out = 0, live = 0;

		heap_replay_file(h, path, false);
		if (!heap_replay_finish(h)) {
			for (i = 0; i < h->ntypes; i++) {
				const struct hr_counts *c = &h->types[i].c;

				in += c->allocs + c->exists;
				out += c->frees;
				live += c->live;
			}
			FUZZ_CHECK(in - out == live);
			for (i = 1; i < h->npoints; i++)
				FUZZ_CHECK(h->points[i].t_ns >
					   h->points[i - 1].t_ns);
			(void)heap_replay_lifetime_pct(h, 99);
		}
		heap_replay_free(h);
	}
	close(fd);
	return 0;
}
