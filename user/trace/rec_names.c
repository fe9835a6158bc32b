// SPDX-License-Identifier: BSD-3-Clause
/* rec_names.c - the names of the ring-buffer record kinds. */
#include "rec_names.h"

const struct taf_rec_name taf_rec_names[TAF_REC_KIND_MAX] = {
	[TAF_REC_HEAP_ALLOC] = { "HeapObjectAlloc", "heap_alloc" },
	[TAF_REC_SPAN_SWEEP] = { "SpanSweep", "span_sweep" },
	[TAF_REC_SPAN_ALLOC] = { "SpanAlloc", "span_alloc" },
	[TAF_REC_SPAN_FREE] = { "SpanFree", "span_free" },
	[TAF_REC_STACK_ALLOC] = { "GoroutineStackAlloc", "stack_alloc" },
	[TAF_REC_STACK_FREE] = { "GoroutineStackFree", "stack_free" },
	[TAF_REC_EXEC] = { "Exec", "exec" },
	[TAF_REC_SAMPLED_FREE] = { "SampledFree", "sampled_free" },
	[TAF_REC_GC_CYCLE] = { "GCCycle", "gc_cycle" },
	[TAF_REC_GC_MARK] = { "GCMark", "gc_mark" },
	[TAF_REC_SNAP] = { "SampleSnapshot", "sample_snapshot" },
	[TAF_REC_SNAP_BUCKET] = { "SampleBucket", "sample_bucket" },
};
