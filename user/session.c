// SPDX-License-Identifier: BSD-3-Clause
/* session.c - one traced process, from ring-buffer records to trace files. */
#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "go_binary.h"
#include "go_types.h"
#include "trace_sink.h"

/* Go's constants on linux/amd64 (runtime/malloc.go, stack.go). */
#define GO_PAGE_SIZE 8192
#define GO_MIN_HEAP_ALIGN 8
#define GO_FIXED_STACK 2048
#define TRACE_FREQ_NS 1000000000ull

/*
 * The runtime's trace.minPageHeapAddr is mheap_.pages.inUse.ranges[0].base
 * (runtime/trace.go, traceAdvance).  Read it from the target; without DWARF
 * fall back to the lowest anonymous mapping in the heap's usual range.
 */
static int read_min_page_heap_addr(struct session *s, uint64_t *out)
{
	uint64_t mheap, off, ranges[2], base;

	if (go_dwarf_var_addr(s->bin, "runtime.mheap_", &mheap) == 0 &&
	    go_dwarf_member_offset(s->bin, "runtime.mheap", "pages.inUse.ranges",
				   &off) == 0 &&
	    target_read(&s->target, mheap + s->load_bias + off, ranges,
			sizeof(ranges)) == 0 &&
	    ranges[1] > 0 &&
	    target_read(&s->target, ranges[0], &base, sizeof(base)) == 0 &&
	    base != 0) {
		*out = base;
		return 0;
	}
	/* Before Go 1.26 the first arena hint is 0xc000000000. */
	if (target_lowest_anon_mapping(&s->target, 0xc000000000ull,
				       0x800000000000ull, &base) == 0) {
		*out = base;
		return 0;
	}
	return -ENOENT;
}

static int new_generation(struct session *s)
{
	s->gen = tw_gen_new(trace_sink_next_gen(s->sink), TRACE_FREQ_NS,
			    &s->info, s->last_ts);
	return s->gen ? 0 : -ENOMEM;
}

int session_start(struct session *s, struct target *t, struct go_binary *bin,
		  uint64_t load_bias, const struct session_opts *o, char *err,
		  size_t errlen)
{
	struct trace_sink_opts so = { 0 };
	char name[64];
	int rc;

	memset(s, 0, sizeof(*s));
	s->target = *t;
	s->bin = bin;
	s->load_bias = load_bias;
	u64_map_init(&s->type_index);

	s->info.page_size = GO_PAGE_SIZE;
	s->info.min_heap_align = GO_MIN_HEAP_ALIGN;
	s->info.fixed_stack = GO_FIXED_STACK;
	rc = read_min_page_heap_addr(s, &s->info.min_page_heap_addr);
	if (rc) {
		snprintf(err, errlen, "cannot find the Go heap of PID %d",
			 (int)t->pid);
		return rc;
	}

	rc = go_types_open(&s->types, bin, load_bias, target_read_cb,
			   &s->target);
	if (rc) {
		snprintf(err, errlen, "cannot read Go type information of PID %d: %s",
			 (int)t->pid, strerror(-rc));
		return rc;
	}

	snprintf(name, sizeof(name), "%s-%d", t->comm, (int)t->pid);
	so.dir = o->dir;
	so.name = name;
	so.rotate_size = o->rotate_size;
	so.keep_files = o->keep_files;
	rc = trace_sink_open(&so, &s->sink);
	if (rc) {
		snprintf(err, errlen, "cannot write to %s: %s", o->dir,
			 strerror(-rc));
		return rc;
	}
	rc = new_generation(s);
	if (rc)
		snprintf(err, errlen, "out of memory");
	return rc;
}

static int cache_type(struct session *s, uint64_t addr, uint64_t *idx_out)
{
	struct go_type_desc d;
	struct type_entry *e;
	int rc;

	rc = go_type_describe(s->types, addr, &d);
	if (rc) {
		/* Keep the event, without a name: the runtime's "no type". */
		s->counts.type_errors++;
		return rc;
	}
	if (s->ntypes == s->type_cap) {
		size_t cap = s->type_cap ? s->type_cap * 2 : 64;
		struct type_entry *nt = realloc(s->type_tab, cap * sizeof(*nt));

		if (!nt)
			return -ENOMEM;
		s->type_tab = nt;
		s->type_cap = cap;
	}
	if (s->names_len + d.name_len > s->names_cap) {
		size_t cap = s->names_cap ? s->names_cap : 4096;
		char *nn;

		while (cap < s->names_len + d.name_len)
			cap *= 2;
		nn = realloc(s->names, cap);
		if (!nn)
			return -ENOMEM;
		s->names = nn;
		s->names_cap = cap;
	}
	e = &s->type_tab[s->ntypes];
	e->size = d.size;
	e->ptr_bytes = d.ptr_bytes;
	e->name_off = (uint32_t)s->names_len;
	e->name_len = (uint32_t)d.name_len;
	memcpy(s->names + s->names_len, d.name, d.name_len);
	s->names_len += d.name_len;
	rc = u64_map_put(&s->type_index, addr, s->ntypes);
	if (rc)
		return rc;
	*idx_out = s->ntypes++;
	return 0;
}

/* The generation's ID for type pointer `addr`, defining it on first use. */
static uint64_t type_id(struct session *s, uint64_t addr)
{
	const struct type_entry *e;
	uint64_t id, idx;

	if (!addr)
		return 0;
	id = tw_gen_type_id(s->gen, addr);
	if (id)
		return id;
	if (!u64_map_get(&s->type_index, addr, &idx) &&
	    cache_type(s, addr, &idx) != 0)
		return 0;
	e = &s->type_tab[idx];
	return tw_gen_define_type(s->gen, addr, e->size, e->ptr_bytes,
				  s->names + e->name_off, e->name_len);
}

static uint64_t heap_object_id(const struct session *s, uint64_t addr)
{
	return (addr - s->info.min_page_heap_addr) / s->info.min_heap_align;
}

static uint64_t span_id(const struct session *s, uint64_t base)
{
	return (base - s->info.min_page_heap_addr) / s->info.page_size;
}

static uint64_t stack_id(const struct session *s, uint64_t lo)
{
	return (lo - s->info.min_page_heap_addr) / s->info.fixed_stack;
}

/* runtime.traceCompressStackSize: sys.Len64(size), i.e. log2(size) + 1. */
static uint64_t stack_order(uint64_t size)
{
	return size ? 64 - (uint64_t)__builtin_clzll(size) : 0;
}

/* traceSpanTypeAndClass: spanclass << 1 for heap spans, 1 for manual ones. */
static uint64_t span_kindclass(uint8_t alloc_type, uint8_t spanclass)
{
	return alloc_type == 0 ? (uint64_t)spanclass << 1 : 1;
}

/*
 * The runtime's free loop (runtime/mgcsweep.go, (*sweepLocked).sweep): slot
 * i is freed when it is not marked and was allocated, that is below
 * freeindex or with its alloc bit set.
 */
static int sweep_frees(struct session *s, const struct taf_rec_span_sweep *r)
{
	uint32_t n = r->nelems, i;
	int rc = 0;

	if (n > (uint32_t)r->nbytes * 8)
		n = (uint32_t)r->nbytes * 8;
	for (i = 0; i < n && rc == 0; i++) {
		bool marked = r->mark_bits[i / 8] & (1u << (i % 8));
		bool allocated = i < r->freeindex ||
				 (r->alloc_bits[i / 8] & (1u << (i % 8)));

		if (marked || !allocated)
			continue;
		rc = tw_gen_event(s->gen, r->hdr.tid, TW_EV_HEAP_OBJECT_FREE,
				  r->hdr.ts,
				  heap_object_id(s, r->base + (uint64_t)i * r->elemsize),
				  0, 0);
	}
	return rc;
}

int session_record(struct session *s, const void *data, size_t len)
{
	const struct taf_rec_hdr *h = data;

	if (len < sizeof(*h) || h->len > len)
		return -EINVAL;
	if (h->kind < TAF_REC_KIND_MAX)
		s->counts.records[h->kind]++;

	switch (h->kind) {
	case TAF_REC_HEAP_ALLOC: {
		const struct taf_rec_heap_alloc *r = data;

		if (len < sizeof(*r))
			return -EINVAL;
		return tw_gen_event(s->gen, h->tid, TW_EV_HEAP_OBJECT_ALLOC,
				    h->ts, heap_object_id(s, r->addr),
				    type_id(s, r->type), 0);
	}
	case TAF_REC_SPAN_SWEEP: {
		const struct taf_rec_span_sweep *r = data;

		if (len < sizeof(*r))
			return -EINVAL;
		return sweep_frees(s, r);
	}
	case TAF_REC_SPAN_ALLOC: {
		const struct taf_rec_span_alloc *r = data;

		if (len < sizeof(*r))
			return -EINVAL;
		return tw_gen_event(s->gen, h->tid, TW_EV_SPAN_ALLOC, h->ts,
				    span_id(s, r->base), r->npages,
				    span_kindclass(r->alloc_type, r->spanclass));
	}
	case TAF_REC_SPAN_FREE: {
		const struct taf_rec_addr *r = data;

		if (len < sizeof(*r))
			return -EINVAL;
		return tw_gen_event(s->gen, h->tid, TW_EV_SPAN_FREE, h->ts,
				    span_id(s, r->addr), 0, 0);
	}
	case TAF_REC_STACK_ALLOC: {
		const struct taf_rec_stack_alloc *r = data;

		if (len < sizeof(*r))
			return -EINVAL;
		return tw_gen_event(s->gen, h->tid, TW_EV_GOROUTINE_STACK_ALLOC,
				    h->ts, stack_id(s, r->lo),
				    stack_order(r->hi - r->lo), 0);
	}
	case TAF_REC_STACK_FREE: {
		const struct taf_rec_addr *r = data;

		if (len < sizeof(*r))
			return -EINVAL;
		return tw_gen_event(s->gen, h->tid, TW_EV_GOROUTINE_STACK_FREE,
				    h->ts, stack_id(s, r->addr), 0, 0);
	}
	default:
		return 0;
	}
}

int session_cut(struct session *s)
{
	uint64_t events = tw_gen_events(s->gen);
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc;

	if (events == 0)
		return 0;
	if (tw_gen_last_ts(s->gen) > s->last_ts)
		s->last_ts = tw_gen_last_ts(s->gen);

	if (s->sink_failed) {
		rc = s->sink_error;
		s->counts.lost_on_write += events;
		goto next;
	}
	rc = tw_gen_encode(s->gen, &buf, &len);
	if (rc == 0)
		rc = trace_sink_write_gen(s->sink, buf, len);
	free(buf);
	if (rc) {
		s->sink_failed = true;
		s->sink_error = rc;
		s->counts.lost_on_write += events;
	} else {
		s->counts.events += events;
		s->counts.generations++;
	}
next:
	tw_gen_free(s->gen);
	s->gen = NULL;
	if (new_generation(s) != 0 && rc == 0)
		rc = -ENOMEM;
	return rc;
}

void session_finish(struct session *s)
{
	if (s->gen && s->sink)
		session_cut(s);
	if (s->gen)
		tw_gen_free(s->gen);
	s->gen = NULL;
	if (s->sink)
		trace_sink_close(s->sink);
	s->sink = NULL;
	go_types_close(s->types);
	s->types = NULL;
	if (s->bin)
		go_binary_close(s->bin);
	s->bin = NULL;
	target_close(&s->target);
	u64_map_free(&s->type_index);
	free(s->type_tab);
	free(s->names);
	s->type_tab = NULL;
	s->names = NULL;
}
