/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gc_cycles.h - GC cycles of a trace: the runtime's own (gc_cycles_mark,
 * from the trace's F.gc) or, for a trace without them, estimated from its
 * frees as follows.
 *
 * The AllocFree events carry no GC event, but every free comes from a
 * sweep, and the runtime sweeps each span once per GC cycle
 * (mheap_.sweepgen, runtime/mgcsweep.go): spans allocated while a cycle
 * sweeps count as swept.  So when a heap page whose objects were freed in
 * the current estimated cycle has objects freed again by a later sweep,
 * a new cycle has begun, and its start is taken as that moment.  The
 * trace's first free begins cycle 1 (a trace that starts with its process,
 * or while it marks, sees that cycle's first sweep; one attached while the
 * process sweeps dates that cycle at its first free, late).
 *
 * Frees of one sweep are told from the next sweep's by time: those of one
 * page closer than GC_SWEEP_GAP_NS to the page's previous free belong to
 * the same sweep (ours share one timestamp; the runtime's own traces time
 * every free; a sweep of one span takes microseconds, GC cycles are
 * milliseconds apart at least).  The estimate never counts a cycle that did not happen;
 * it misses one in which no page has frees twice, merges cycles shorter
 * than the gap, and dates a start late by the time the new cycle takes to
 * reach a page with garbage again (its first sweeps, usually).
 */
#ifndef GC_CYCLES_H
#define GC_CYCLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/u64_map.h"

#define GC_SWEEP_GAP_NS 1000000ull

struct gc_cycles {
	bool exact;              /* starts from the runtime (gc_cycles_mark) */
	struct u64_map pages;    /* page + 1 -> cycle << 40 | last free ns */
	uint64_t *start_ns;      /* start_ns[i]: start of cycle i + 1 */
	size_t n, cap;           /* n: cycles begun after the trace's start */
};

void gc_cycles_init(struct gc_cycles *g);
void gc_cycles_free(struct gc_cycles *g);

/*
 * A sweep freed an object on heap page PAGE (address / page size) at
 * T_NS (ns since the timeline's start; frees come in time order).
 * Returns 0 or -ENOMEM.
 */
int gc_cycles_on_free(struct gc_cycles *g, uint64_t page, uint64_t t_ns);

/*
 * A cycle known to begin at T_NS (ns since the timeline's start, in
 * order): the runtime entered gcSweep then (the trace's F.gc,
 * format/gc_sidecar.h).  From the first such mark on, the starts are the
 * runtime's and frees no longer estimate any.  Returns 0 or -ENOMEM.
 */
int gc_cycles_mark(struct gc_cycles *g, uint64_t t_ns);

/* The cycle in progress at T_NS: 0 until the first start seen, then 1.. */
uint64_t gc_cycles_at(const struct gc_cycles *g, uint64_t t_ns);

#endif /* GC_CYCLES_H */
