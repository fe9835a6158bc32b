// SPDX-License-Identifier: BSD-3-Clause
/*
 * session.c - one traced process, from ring-buffer records to trace files:
 * opening a session (the heap base, the type reader, the sink), seeding
 * its shadow heap from the attach-time snapshot, and closing it.  Its
 * other parts (session_impl.h): session_types.c (the type cache),
 * session_gen.c (events into generations, exists events, cuts),
 * session_records.c (what each record does), session_sampled.c
 * (--memprofilerate), session_gc.c (F.gc) and session_summary.c (the
 * summary.json).
 */
#include "trace/session.h"
#include "trace/session_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "trace/alloc_sample.h"
#include "trace/alloc_stacks.h"
#include "inspect/go_binary.h"
#include "inspect/go_layout.h"
#include "inspect/go_sizeclasses.h"
#include "inspect/go_types.h"
#include "inspect/runtime_globals.h"
#include "trace/shadow_heap.h"
#include "format/trace_sink.h"

/* Go's constants on linux/amd64 (runtime/stack.go). */
#define GO_FIXED_STACK 2048

/*
 * The runtime's trace.minPageHeapAddr is mheap_.pages.inUse.ranges[0].base
 * (runtime/trace.go, traceAdvance).  Read it from the target (offsets from
 * DWARF or, stripped, the per-version table; mheap_ from DWARF, symbols or
 * the code).  When that fails the caller derives it from the first record
 * (heap_base_from_record): the lowest anonymous mapping is no guide, a
 * thread stack can be the lowest one above the heap's usual base.
 */
int session_read_min_page_heap_addr(struct session *s, uint64_t *out)
{
	uint64_t mheap, ranges[2], base;
	struct go_layout l;

	if (go_runtime_global_addr(s->bin, "runtime.mheap_", &mheap) == 0 &&
	    go_layout_resolve(s->bin, &l, NULL, NULL) >= 0 &&
	    go_field_present(&l.mheap_pages_inuse_ranges) &&
	    go_field_present(&l.addr_range_base) &&
	    target_read(&s->target, mheap + s->load_bias +
			(uint64_t)l.mheap_pages_inuse_ranges.off, ranges,
			sizeof(ranges)) == 0 &&
	    ranges[1] > 0 &&
	    target_read(&s->target, ranges[0] + (uint64_t)l.addr_range_base.off,
			&base, sizeof(base)) == 0 &&
	    base != 0) {
		*out = base;
		return 0;
	}
	return -ENOENT;
}

/* The size that cuts a generation early: session.h SESSION_GEN_SIZE_*. */
static uint64_t gen_cap_of(const struct session_opts *o)
{
	uint64_t cap = o->gen_size, quarter = o->rotate_size / 4;

	if (!cap || !o->rotate_size)
		return cap;
	if (quarter < SESSION_GEN_SIZE_MIN)
		quarter = SESSION_GEN_SIZE_MIN;
	return cap < quarter ? cap : quarter;
}

/* session_start's work on a zeroed S; on failure the caller finishes S. */
static int start(struct session *s, struct target *t, struct go_binary *bin,
		 uint64_t load_bias, const struct session_opts *o, char *err,
		 size_t errlen)
{
	struct trace_sink_opts so = { 0 };
	char name[64];
	int rc;

	s->target = *t;
	s->bin = bin;
	s->load_bias = load_bias;
	s->go_minor = go_binary_build_info(bin)->minor;
	s->started_realtime = (uint64_t)time(NULL);
	s->sample = o->sample > 1 ? o->sample : 1;
	s->gen_cap = gen_cap_of(o);
	u64_map_init(&s->type_index);
	type_catalog_init(&s->catalog);
	u64_map_init(&s->sized_index);
	u64_map_init(&s->sampled);
	sample_reads_init(&s->reads);
	s->sample_reads = o->memprofilerate && o->sample_reads;
	s->check_reads = o->memprofilerate && o->check_reads;
	s->pause_budget_ns = o->pause_budget_ns;
	u64_map_init(&s->tiny_upper);
	s->memprofilerate = o->memprofilerate;
	s->tiny_as_runtime = o->tiny_as_runtime;

	s->info.page_size = GO_PAGE_SIZE;
	s->info.min_heap_align = GO_MIN_HEAP_ALIGN;
	s->info.fixed_stack = GO_FIXED_STACK;
	s->info_ready = session_read_min_page_heap_addr(s, &s->info.min_page_heap_addr) == 0;

	rc = go_types_open(&s->types, bin, load_bias, target_read_cb,
			   &s->target);
	if (rc) {
		snprintf(err, errlen, "cannot read Go type information of PID %d: %s",
			 (int)t->pid, strerror(-rc));
		return rc;
	}

	s->heap = shadow_heap_new(0);
	if (!s->heap ||
	    (o->stacks && alloc_stacks_new(o->known_stacks,
					   (uint32_t)t->pid, bin, load_bias,
					   &s->stacks))) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}

	snprintf(name, sizeof(name), "%s-%d", t->comm, (int)t->pid);
	so.dir = o->dir;
	so.name = name;
	so.rotate_size = o->rotate_size;
	so.keep_files = o->keep_files;
	{
		char why[256] = "";

		so.err = why;
		so.errlen = sizeof(why);
		rc = trace_sink_open(&so, &s->sink);
		if (rc) {
			snprintf(err, errlen, "cannot write to %s: %s", o->dir,
				 why[0] ? why : strerror(-rc));
			return rc;
		}
	}
	/* Each file's sidecars start over when the sink starts it. */
	rc = trace_sink_on_new_file(s->sink, session_gc_new_file, s);
	if (rc == 0 && s->memprofilerate)
		rc = trace_sink_on_new_file(s->sink, session_sampling_new_file,
					    s);
	if (rc == 0 && s->stacks)
		rc = trace_sink_on_new_file(s->sink, alloc_stacks_new_file,
					    s->stacks);
	if (rc)
		snprintf(err, errlen, "cannot watch the trace files: %s",
			 strerror(-rc));
	return rc;
}

int session_start(struct session **out, struct target *t,
		  struct go_binary *bin, uint64_t load_bias,
		  const struct session_opts *o, char *err, size_t errlen)
{
	struct session *s = calloc(1, sizeof(*s));
	int rc;

	*out = NULL;
	if (!s) {
		target_close(t);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = start(s, t, bin, load_bias, o, err, errlen);
	if (rc) {
		session_finish(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* ---- seeding from the attach-time snapshot ---------------------------- */

int session_seed_span(struct session *s, uint64_t base, uint64_t npages,
		      uint8_t alloc_type, uint8_t spanclass)
{
	int rc = shadow_heap_span_alloc(s->heap, base, npages,
					span_kindclass(alloc_type, spanclass),
					alloc_type == 0 ?
					go_span_elemsize(spanclass, npages) : 0);

	return rc < 0 ? rc : 0;
}

int session_seed_object(struct session *s, uint64_t slot, uint64_t type_addr)
{
	int rc;

	/* --sample: the shadow heap holds only the objects kept. */
	if (!alloc_sampled(slot, 0, s->sample))
		return 0;
	rc = shadow_heap_obj_alloc(s->heap, slot,
				   session_type_ref_of(s, session_type_lookup(s, type_addr)));
	return rc < 0 ? rc : 0;
}

int session_seed_span_objects(struct session *s, uint64_t base,
			       const uint8_t *bits, uint32_t nelems,
			       uint32_t freeindex)
{
	int n;

	/* --sample keeps objects one by one (alloc_sampled). */
	if (s->sample > 1)
		return -ENOTSUP;
	n = shadow_heap_span_seed_live(s->heap, base, bits, nelems, freeindex);
	return n < 0 ? -ENOTSUP : n;
}

int session_seed_stack(struct session *s, uint64_t lo, uint64_t hi)
{
	int rc = shadow_heap_stack_alloc(s->heap, lo, hi - lo);

	return rc < 0 ? rc : 0;
}

void session_finish(struct session *s)
{
	if (s->gen && s->sink)
		session_cut(s);
	if (s->gen)
		tw_gen_free(s->gen);
	/* Its sidecar is completed before the trace file is closed. */
	session_stacks_close(s);
	alloc_stacks_free(s->stacks);
	s->stacks = NULL;
	s->gen = NULL;
	trace_sink_close(s->sink);
	s->sink = NULL;
	go_types_close(s->types);
	s->types = NULL;
	s->bin = NULL;  /* borrowed */
	if (s->heap)
		shadow_heap_free(s->heap);
	s->heap = NULL;
	target_close(&s->target);
	u64_map_free(&s->type_index);
	u64_map_free(&s->sized_index);
	u64_map_free(&s->sampled);
	sample_reads_free(&s->reads);
	u64_map_free(&s->tiny_upper);
	session_gc_free(s);
	type_catalog_free(&s->catalog);
	free(s);
}

uint64_t session_inconsistent(const struct session *s)
{
	return s->heap ? shadow_heap_inconsistent(s->heap) : 0;
}

uint64_t session_heap_ops(const struct session *s)
{
	return s->heap ? shadow_heap_ops(s->heap) : 0;
}

/* ---- what the owner reads ------------------------------------------- */

const struct target *session_target(const struct session *s)
{
	return &s->target;
}

struct go_binary *session_binary(const struct session *s)
{
	return s->bin;
}

uint64_t session_load_bias(const struct session *s)
{
	return s->load_bias;
}

const struct session_counts *session_counts(const struct session *s)
{
	return &s->counts;
}

struct alloc_stacks *session_stacks(const struct session *s)
{
	return s->stacks;
}

void session_sink_stats(const struct session *s, struct trace_sink_stats *st)
{
	trace_sink_get_stats(s->sink, st);
}

int session_write_error(const struct session *s)
{
	return s->sink_failed ? s->sink_error : 0;
}
