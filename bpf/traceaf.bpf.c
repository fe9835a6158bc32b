// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * traceaf.bpf.c - uprobes on the Go runtime's allocator.
 *
 * Reports what the runtime did (addresses, type pointers, sizes) and nothing
 * about the trace format: the daemon owns IDs, generations and encoding.
 *
 * Go's register ABI (cmd/compile/abi-internal.md): integer arguments in
 * AX, BX, CX, DI, SI, R8.., results in AX, BX..; R14 holds the current g at
 * function entry and at RET.  The probes sit only at those two places, so
 * R14 identifies the goroutine without reading thread-local storage.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "traceaf_events.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * The programs, maps and helpers, one concern a file, in this order (each
 * uses only those before it):
 *   records.bpf.h       the switch, the ring, counters, layouts, record helpers
 *   alloc_record.bpf.h  the heap-alloc record and its stack (--stacks)
 *   alloc_entry.bpf.h   alloc_enter, alloc_exit: entry and RET probes
 *   spans.bpf.h         span_sweep, span_init, span_set, span_free,
 *                       stack_alloc, gc_cycle, gc_mark, stack_free
 *   exec.bpf.h          on_exec (--all) and its hint ring
 *   alloc_site.bpf.h    alloc_site, alloc_args: the allocation-path probe
 *   prof.bpf.h          prof_malloc, prof_free (--memprofilerate)
 */
#include "records.bpf.h"
#include "alloc_record.bpf.h"
#include "alloc_entry.bpf.h"
#include "spans.bpf.h"
#include "exec.bpf.h"
#include "alloc_site.bpf.h"
#include "prof.bpf.h"
