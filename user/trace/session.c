// SPDX-License-Identifier: BSD-3-Clause
/*
 * session.c - one traced process, from ring-buffer records to trace files.
 *
 * The event semantics follow the runtime's own emission points
 * (runtime/traceallocfree.go and its callers), with two deliberate
 * departures that keep every file replayable (alloc and free of each ID
 * pair up), both documented in README.md:
 *   - an object with a malloc header (pointers, 513..32760 bytes, Go
 *     1.22+) is reported at its slot base, where its free is reported; the
 *     runtime reports the address after the header, which it never frees;
 *   - a tiny allocation whose 8-byte ID is already live in its 16-byte
 *     block is not a separate event (counted as tiny_merged); a block whose
 *     upper half was allocated is freed as two IDs.  --tiny-as-runtime
 *     drops this departure (on_tiny_alloc_runtime).
 */
#include "session.h"
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
#include "util/grow.h"
#include "trace/shadow_heap.h"
#include "format/trace_sink.h"

/* Go's constants on linux/amd64 (runtime/malloc.go, stack.go). */
#define GO_FIXED_STACK 2048
#define GO_TINY_SIZE 16
#define TRACE_FREQ (1000000000ull / SESSION_TICK_NS)

/*
 * The runtime's trace.minPageHeapAddr is mheap_.pages.inUse.ranges[0].base
 * (runtime/trace.go, traceAdvance).  Read it from the target (offsets from
 * DWARF or, stripped, the per-version table; mheap_ from DWARF, symbols or
 * the code).  When that fails the caller derives it from the first record
 * (heap_base_from_record): the lowest anonymous mapping is no guide, a
 * thread stack can be the lowest one above the heap's usual base.
 */
static int read_min_page_heap_addr(struct session *s, uint64_t *out)
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
	s->go_minor = go_binary_build_info(bin)->minor;
	s->started_realtime = (uint64_t)time(NULL);
	s->sample = o->sample > 1 ? o->sample : 1;
	s->gen_cap = gen_cap_of(o);
	u64_map_init(&s->type_index);
	u64_map_init(&s->sized_index);
	u64_map_init(&s->sampled);
	u64_map_init(&s->tiny_upper);
	s->memprofilerate = o->memprofilerate;
	s->tiny_as_runtime = o->tiny_as_runtime;

	s->info.page_size = GO_PAGE_SIZE;
	s->info.min_heap_align = GO_MIN_HEAP_ALIGN;
	s->info.fixed_stack = GO_FIXED_STACK;
	s->info_ready = read_min_page_heap_addr(s, &s->info.min_page_heap_addr) == 0;

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
		if (rc)
			snprintf(err, errlen, "cannot write to %s: %s", o->dir,
				 why[0] ? why : strerror(-rc));
	}
	return rc;
}

/* ---- types ---------------------------------------------------------- */

/* Appends an entry to type_tab (names copied into the arena). */
struct type_entry *session_type_append(struct session *s, uint64_t addr,
				      uint64_t size, uint64_t ptr_bytes,
				      const char *name, size_t name_len)
{
	struct type_entry *e;

	if (!GROW(s->type_tab, s->ntypes, s->type_cap, 64))
		return NULL;
	if (s->names_len + name_len > s->names_cap) {
		size_t cap = s->names_cap ? s->names_cap : 4096;
		char *nn;

		while (cap < s->names_len + name_len)
			cap *= 2;
		nn = realloc(s->names, cap);
		if (!nn)
			return NULL;
		s->names = nn;
		s->names_cap = cap;
	}
	e = &s->type_tab[s->ntypes];
	e->addr = addr;
	e->key = addr;
	e->size = size;
	e->ptr_bytes = ptr_bytes;
	e->name_off = (uint32_t)s->names_len;
	e->name_len = (uint32_t)name_len;
	memcpy(s->names + s->names_len, name, name_len);
	s->names_len += name_len;
	s->ntypes++;
	return e;
}

/* Reads and caches the descriptor at addr; returns its entry or NULL. */
const struct type_entry *session_type_lookup(struct session *s, uint64_t addr)
{
	struct go_type_desc d;
	struct type_entry *e;
	uint64_t idx;

	if (!addr)
		return NULL;
	if (u64_map_get(&s->type_index, addr, &idx))
		return idx ? &s->type_tab[idx - 1] : NULL;
	if (go_type_describe(s->types, addr, &d) != 0) {
		/* Remember the failure; the event keeps "no type". */
		s->counts.type_errors++;
		u64_map_put(&s->type_index, addr, 0);
		return NULL;
	}
	e = session_type_append(s, addr, d.size, d.ptr_bytes, d.name, d.name_len);
	if (!e || u64_map_put(&s->type_index, addr, s->ntypes))
		return NULL;
	return e;
}

/* The shadow heap's type_ref for an entry: index + 1, 0 for none. */
uint32_t session_type_ref_of(const struct session *s, const struct type_entry *e)
{
	return e ? (uint32_t)(e - s->type_tab) + 1 : 0;
}

/* The current generation's ID for a type, defining it on first use. */
uint64_t session_gen_type_id(struct session *s, const struct type_entry *e)
{
	uint64_t id;

	if (!e)
		return 0;
	id = tw_gen_type_id(s->gen, e->key);
	if (id)
		return id;
	return tw_gen_define_type(s->gen, e->key, e->size, e->ptr_bytes,
				  s->names + e->name_off, e->name_len);
}

static int write_exists(struct session *s);

/*
 * A rotated file's exists events go in just before its first event, and
 * must show the heap as it was before the record that brings that event:
 * each record handler calls this before it changes the shadow heap (a
 * free that came first would otherwise free an ID the file never had,
 * and an alloc allocate one it already holds).
 */
int session_flush_exists(struct session *s)
{
	int rc;

	if (!s->exists_pending)
		return 0;
	s->exists_pending = false;
	rc = write_exists(s);
	s->gen_base = tw_gen_event_bytes(s->gen);
	return rc;
}

/* Appends one event to the current generation, counting it per kind. */
int session_emit(struct session *s, uint64_t thread, enum tw_event ev,
		uint64_t ts, uint64_t a, uint64_t b, uint64_t c)
{
	int rc = session_flush_exists(s);

	if (rc)
		return rc;
	rc = tw_gen_event(s->gen, thread, ev, ts / SESSION_TICK_NS, a, b, c);

	if (rc == 0 && ev >= TW_EV_FIRST && ev < TW_EV_FIRST + TW_EV_COUNT)
		s->gen_events[ev - TW_EV_FIRST]++;
	return rc;
}

/* A HeapObjectAlloc, and its stack for the sidecar when it has one. */
int session_emit_alloc(struct session *s, const struct taf_rec_heap_alloc *r,
		      const struct alloc_stack_view *st, uint64_t id,
		      uint64_t type_id)
{
	int rc = session_emit(s, r->hdr.tid, TW_EV_HEAP_OBJECT_ALLOC, r->hdr.ts, id,
		      type_id, 0);

	/* The sidecar keys it by the timestamp as written. */
	if (rc == 0 && st->stack)
		alloc_stacks_note(s->stacks, id, tw_gen_last_event_ts(s->gen),
				  st->stack->stack_hash);
	return rc;
}

/* ---- IDs ------------------------------------------------------------ */

uint64_t session_heap_object_id(const struct session *s, uint64_t addr)
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
static uint32_t span_kindclass(uint8_t alloc_type, uint8_t spanclass)
{
	return alloc_type == 0 ? (uint32_t)spanclass << 1 : 1;
}

/* ---- exists events ---------------------------------------------------- */

struct exists_ctx {
	struct session *s;
	uint64_t ts;
	uint64_t thread;
	int rc;
};

static int exists_span(void *arg, const struct sh_span_info *sp)
{
	struct exists_ctx *c = arg;

	c->rc = session_emit(c->s, c->thread, TW_EV_SPAN, c->ts,
			     span_id(c->s, sp->base), sp->npages, sp->kindclass);
	c->s->counts.exists_events++;
	return c->rc;
}

static int exists_object(void *arg, uint64_t addr, uint32_t type_ref)
{
	struct exists_ctx *c = arg;
	struct session *s = c->s;
	const struct type_entry *e = type_ref ? &s->type_tab[type_ref - 1] : NULL;

	c->rc = session_emit(s, c->thread, TW_EV_HEAP_OBJECT, c->ts,
			     session_heap_object_id(s, addr), session_gen_type_id(s, e), 0);
	s->counts.exists_events++;
	if (c->rc == 0 && u64_map_get(&s->tiny_upper, addr, NULL)) {
		c->rc = session_emit(s, c->thread, TW_EV_HEAP_OBJECT,
				     c->ts, session_heap_object_id(s, addr) + 1, 0, 0);
		s->counts.exists_events++;
	}
	return c->rc;
}

static int exists_stack(void *arg, uint64_t lo, uint64_t size)
{
	struct exists_ctx *c = arg;

	c->rc = session_emit(c->s, c->thread, TW_EV_GOROUTINE_STACK, c->ts,
			     stack_id(c->s, lo), stack_order(size), 0);
	c->s->counts.exists_events++;
	return c->rc;
}

/* What the shadow heap holds, as exists events at the generation's start. */
static int write_exists(struct session *s)
{
	struct exists_ctx c = { s, s->last_ts, (uint64_t)s->target.pid, 0 };

	shadow_heap_for_each_span(s->heap, exists_span, &c);
	if (c.rc == 0)
		shadow_heap_for_each_object(s->heap, exists_object, &c);
	if (c.rc == 0)
		c.rc = session_sampled_for_each(s, exists_object, &c);
	if (c.rc == 0)
		shadow_heap_for_each_stack(s->heap, exists_stack, &c);
	return c.rc;
}

/*
 * Starts a generation.  When it will open a new file, it begins with what
 * the shadow heap holds, as traceSnapshotMemory begins a trace, so every
 * file can be read alone.  The first file gets them at once (a picture of
 * the heap at attach, even if nothing happens after); a rotated file when
 * its first event arrives, so no file holds nothing but a picture.
 */
static int new_generation(struct session *s, bool first)
{
	s->gen = tw_gen_new(trace_sink_next_gen(s->sink), TRACE_FREQ,
			    &s->info, s->last_ts / SESSION_TICK_NS);
	if (!s->gen)
		return -ENOMEM;
	/*
	 * Batches go to the file as they fill, so a generation (the attach
	 * snapshot's above all) is never held whole.  After a failed write
	 * the sink refuses them and they are dropped: the events are counted
	 * lost at the cut.
	 */
	tw_gen_stream(s->gen, trace_sink_write_cb, s->sink);
	s->gen_base = 0;
	if (!trace_sink_at_file_start(s->sink))
		return 0;
	if (first) {
		int rc = write_exists(s);

		s->gen_base = tw_gen_event_bytes(s->gen);
		return rc;
	}
	s->exists_pending = true;
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

void session_stop(struct session *s, uint64_t ts)
{
	s->stop_ts = ts;
}

int session_begin(struct session *s, uint64_t ts)
{
	s->start_ts = ts;
	s->last_ts = ts;
	s->started = true;
	return s->info_ready ? new_generation(s, true) : 0;
}

/*
 * The heap base when the process could not tell us: the runtime's first
 * heap range starts at a heap arena (64 MiB aligned, runtime/malloc.go
 * heapArenaBytes) and the first span of a fresh process lies in it.  Only
 * used for processes that were gone, or had no heap yet, when their
 * session opened; IDs stay consistent within the files either way.
 */
#define GO_HEAP_ARENA_BYTES (64ull << 20)

static uint64_t record_address(const struct record_view *v)
{
	switch (v->hdr->kind) {
	case TAF_REC_HEAP_ALLOC: return v->heap_alloc->addr;
	case TAF_REC_SPAN_SWEEP: return v->sweep->base;
	case TAF_REC_SPAN_ALLOC: return v->span_alloc->base;
	case TAF_REC_SPAN_FREE:
	case TAF_REC_STACK_FREE:
	case TAF_REC_SAMPLED_FREE: return v->addr->addr;
	case TAF_REC_STACK_ALLOC: return v->stack_alloc->lo;
	default: return 0;
	}
}

/* Makes sure the heap base is known and a generation is open. */
static int ensure_generation(struct session *s, const struct record_view *v)
{
	uint64_t addr;

	if (s->gen)
		return 0;
	if (!s->info_ready &&
	    read_min_page_heap_addr(s, &s->info.min_page_heap_addr) != 0) {
		addr = record_address(v);
		if (!addr)
			return -EAGAIN;
		s->info.min_page_heap_addr = addr & ~(GO_HEAP_ARENA_BYTES - 1);
	}
	s->info_ready = true;
	return new_generation(s, true);
}

/* ---- records ---------------------------------------------------------- */

static bool is_tiny_span(const struct sh_span_info *sp)
{
	return sp->kindclass == (GO_TINY_SPANCLASS << 1);
}

/* Go 1.22+ puts an 8-byte type header before pointerful 513..32760-byte
 * objects and returns the address after it (runtime/malloc.go). */
static bool has_malloc_header(const struct session *s, uint64_t size,
			      bool noscan)
{
	return s->go_minor >= 22 && !noscan &&
	       size > GO_MIN_SIZE_FOR_HEADER &&
	       size <= GO_MAX_SMALL_SIZE - GO_MALLOC_HEADER_SIZE;
}

/*
 * --tiny-as-runtime: a tiny object as the runtime's own trace has it.
 * Go 1.24+ emits an alloc for every tiny object at its own address
 * (runtime/malloc.go: mallocgcTiny returns x = c.tiny + off, and
 * postMallocgcDebug calls trace.HeapObjectAlloc(x)), so objects sharing
 * an 8-byte half allocate a live ID again and an upper half is never
 * freed.  Go 1.21-1.23's mallocgc returns before its trace hook when the
 * object fits the current block ("The object fits into existing tiny
 * block"): only the object that opens a block, at its base, is an event.
 * Either way the sweep frees a block once, at its base (on_sweep:
 * tiny_upper stays empty), as mgcsweep.go does.
 */
static int on_tiny_alloc_runtime(struct session *s,
				 const struct taf_rec_heap_alloc *r,
				 const struct alloc_stack_view *st,
				 const struct type_entry *e, uint64_t slot,
				 int live)
{
	if (live == 0)
		shadow_heap_obj_alloc(s->heap, slot, session_type_ref_of(s, e));
	if (s->go_minor <= 23 && r->addr != slot) {
		s->counts.tiny_unreported++;
		return 0;
	}
	return session_emit_alloc(s, r, st, session_heap_object_id(s, r->addr),
				  session_gen_type_id(s, e));
}

/*
 * A tiny object (< 16 B, no pointers) shares a 16-byte block with others:
 * its ID is one of the block's two 8-byte halves, and a half already live
 * is not allocated again (counted as merged).
 */
static int on_tiny_alloc(struct session *s, const struct taf_rec_heap_alloc *r,
			 const struct alloc_stack_view *st,
			 const struct type_entry *e, uint64_t slot, int live)
{
	bool upper = r->addr - slot >= GO_TINY_SIZE / 2;

	if (s->tiny_as_runtime)
		return on_tiny_alloc_runtime(s, r, st, e, slot, live);
	if (!upper && live == 1) {
		s->counts.tiny_merged++;
		return 0;
	}
	if (upper) {
		if (u64_map_get(&s->tiny_upper, slot, NULL)) {
			s->counts.tiny_merged++;
			return 0;
		}
		u64_map_put(&s->tiny_upper, slot, 1);
	}
	if (live == 0)
		shadow_heap_obj_alloc(s->heap, slot, session_type_ref_of(s, e));
	return session_emit_alloc(s, r, st, session_heap_object_id(s, slot) + (upper ? 1 : 0),
			  session_gen_type_id(s, e));
}

/*
 * --sample N: whether to keep this allocation.  The shadow heap then holds
 * only kept objects, and a sweep frees only what it holds, so no file
 * frees an ID it never allocated.  The objects of a tiny block share its
 * slot: the block is kept or skipped whole, decided at its first object
 * (always at the block's base, runtime/malloc.go mallocgcTiny).
 */
static bool keep_alloc(const struct session *s,
		       const struct taf_rec_heap_alloc *r, uint64_t slot,
		       int live, bool tiny)
{
	if (tiny && live == 1)
		return true;
	if (tiny && r->addr != slot)
		return false;
	return alloc_sampled(slot, r->hdr.ts, s->sample);
}

static int on_heap_alloc(struct session *s, const struct taf_rec_heap_alloc *r,
			 const struct alloc_stack_view *st)
{
	const struct type_entry *e = session_type_lookup(s, r->type);
	bool noscan = !e || e->ptr_bytes == 0;
	struct sh_span_info sp;
	uint64_t slot;
	int live = shadow_heap_obj_slot(s->heap, r->addr, &slot, &sp);
	bool tiny = live >= 0 && is_tiny_span(&sp) && r->size < GO_TINY_SIZE &&
		    noscan;

	if (s->sample > 1 && !keep_alloc(s, r, slot, live, tiny)) {
		s->counts.sampled_out++;
		return 0;
	}
	if (live == SH_SLOT_NO_SPAN) {
		/* Unknown span: the slot base is where the free will be. */
		if (has_malloc_header(s, r->size, noscan))
			slot = r->addr - GO_MALLOC_HEADER_SIZE;
	} else if (tiny) {
		return on_tiny_alloc(s, r, st, e, slot, live);
	}
	shadow_heap_obj_alloc(s->heap, slot, session_type_ref_of(s, e));
	return session_emit_alloc(s, r, st, session_heap_object_id(s, slot), session_gen_type_id(s, e));
}

/* --sample: frees slot if the shadow heap holds it; false if it does not. */
static bool sampled_free(struct session *s, uint64_t slot)
{
	uint64_t base;
	int live = shadow_heap_obj_slot(s->heap, slot, &base, NULL);

	if (live == SH_SLOT_NO_SPAN)
		return shadow_heap_obj_free(s->heap, slot) == SH_OK;
	if (live != 1)
		return false;
	shadow_heap_obj_free(s->heap, slot);
	return true;
}

/*
 * The runtime's free loop (runtime/mgcsweep.go, (*sweepLocked).sweep): slot
 * i is freed when it is not marked and was allocated, that is below
 * freeindex or with its alloc bit set.
 */
static int on_sweep(struct session *s, const struct taf_rec_span_sweep *r)
{
	bool tiny = r->spanclass == GO_TINY_SPANCLASS;
	uint32_t n = r->nelems, i;
	int rc = 0;

	if (r->read_errors)
		s->counts.sweep_read_errors++;
	if (n > (uint32_t)r->nbytes * 8)
		n = (uint32_t)r->nbytes * 8;
	for (i = 0; i < n && rc == 0; i++) {
		bool marked = r->mark_bits[i / 8] & (1u << (i % 8));
		bool allocated = i < r->freeindex ||
				 (r->alloc_bits[i / 8] & (1u << (i % 8)));
		uint64_t slot = r->base + (uint64_t)i * r->elemsize;

		if (marked || !allocated)
			continue;
		rc = session_flush_exists(s);
		if (rc)
			break;
		if (s->sample > 1) {
			/* Only what was kept is freed (keep_alloc). */
			if (!sampled_free(s, slot))
				continue;
		} else {
			shadow_heap_obj_free(s->heap, slot);
		}
		rc = session_emit(s, r->hdr.tid, TW_EV_HEAP_OBJECT_FREE,
				  r->hdr.ts, session_heap_object_id(s, slot), 0, 0);
		if (rc == 0 && tiny && u64_map_del(&s->tiny_upper, slot))
			rc = session_emit(s, r->hdr.tid,
					  TW_EV_HEAP_OBJECT_FREE, r->hdr.ts,
					  session_heap_object_id(s, slot) + 1, 0, 0);
	}
	return rc;
}

/* Forgets the upper halves of a tiny span's blocks when the span goes. */
static void forget_tiny_span(struct session *s, uint64_t base)
{
	struct sh_span_info sp;
	uint64_t a;

	/*
	 * Upper halves are only recorded for live blocks, and a sweep
	 * forgets them as it frees: a span with nothing live has none (a
	 * span freed after its sweep, the common case: 512 lookups saved).
	 */
	if (!s->tiny_upper.len || !shadow_heap_find_span(s->heap, base, &sp) ||
	    !is_tiny_span(&sp) || !sp.nlive)
		return;
	for (a = sp.base; a < sp.base + sp.npages * GO_PAGE_SIZE; a += GO_TINY_SIZE)
		u64_map_del(&s->tiny_upper, a);
}

/*
 * --stacks: the stack an allocation record carries is learnt whatever
 * becomes of the record: a stack comes whole only once.
 */
static void learn_stack(struct session *s, const struct alloc_stack_view *st)
{
	if (s->stacks && st->stack)
		alloc_stacks_record(s->stacks, st->stack->stack_hash, st->pcs,
				    st->nr_pcs, st->stack->ret);
}

static int record(struct session *s, const struct record_view *v)
{
	const struct taf_rec_hdr *h = v->hdr;
	/* Without --stacks a record's stack is not looked at. */
	static const struct alloc_stack_view no_stack;
	const struct alloc_stack_view *st = s->stacks ? &v->stack : &no_stack;

	if (h->kind == TAF_REC_HEAP_ALLOC)
		learn_stack(s, st);
	if (!s->started || h->ts < s->start_ts) {
		/* Before the snapshot: its effect is already in the shadow. */
		s->counts.before_start++;
		return 0;
	}
	if (s->stop_ts && h->ts > s->stop_ts) {
		s->counts.after_stop++;
		return 0;
	}
	/* A kind this build does not know: counted, not an event. */
	if (!v->body) {
		if (h->kind < TAF_REC_KIND_MAX)
			s->counts.records[h->kind]++;
		return 0;
	}
	/* Not an event: it goes to the next generation's file's F.gc. */
	if (h->kind == TAF_REC_GC_CYCLE) {
		s->counts.records[h->kind]++;
		return session_gc_mark(s, v->addr);
	}
	if (!s->gen && ensure_generation(s, v) != 0)
		return 0;
	if (h->kind < TAF_REC_KIND_MAX)
		s->counts.records[h->kind]++;
	/* A sweep changes the shadow heap only where it frees (on_sweep). */
	if (h->kind != TAF_REC_SPAN_SWEEP && h->kind != TAF_REC_EXEC &&
	    session_flush_exists(s))
		return -ENOMEM;

	switch (h->kind) {
	case TAF_REC_HEAP_ALLOC:
		if (h->flags & TAF_ALLOC_F_SAMPLED)
			return session_sampled_alloc(s, v->heap_alloc, st);
		return on_heap_alloc(s, v->heap_alloc, st);
	case TAF_REC_SAMPLED_FREE:
		return session_sampled_free(s, v->addr);
	case TAF_REC_SPAN_SWEEP:
		return on_sweep(s, v->sweep);
	case TAF_REC_SPAN_ALLOC: {
		const struct taf_rec_span_alloc *r = v->span_alloc;
		uint32_t kc = span_kindclass(r->alloc_type, r->spanclass);

		forget_tiny_span(s, r->base);
		shadow_heap_span_alloc(s->heap, r->base, r->npages, kc,
				       r->alloc_type == 0 ?
				       go_span_elemsize(r->spanclass, r->npages) : 0);
		return session_emit(s, h->tid, TW_EV_SPAN_ALLOC, h->ts,
				    span_id(s, r->base), r->npages, kc);
	}
	case TAF_REC_SPAN_FREE: {
		const struct taf_rec_addr *r = v->addr;

		forget_tiny_span(s, r->addr);
		shadow_heap_span_free(s->heap, r->addr);
		return session_emit(s, h->tid, TW_EV_SPAN_FREE, h->ts,
				    span_id(s, r->addr), 0, 0);
	}
	case TAF_REC_STACK_ALLOC: {
		const struct taf_rec_stack_alloc *r = v->stack_alloc;

		shadow_heap_stack_alloc(s->heap, r->lo, r->hi - r->lo);
		return session_emit(s, h->tid, TW_EV_GOROUTINE_STACK_ALLOC,
				    h->ts, stack_id(s, r->lo),
				    stack_order(r->hi - r->lo), 0);
	}
	case TAF_REC_STACK_FREE: {
		const struct taf_rec_addr *r = v->addr;

		shadow_heap_stack_free(s->heap, r->addr);
		return session_emit(s, h->tid, TW_EV_GOROUTINE_STACK_FREE,
				    h->ts, stack_id(s, r->addr), 0, 0);
	}
	default:
		return 0;
	}
}

int session_record(struct session *s, const struct record_view *v)
{
	int rc = record(s, v);

	/*
	 * Cut by size too (session.h SESSION_GEN_SIZE_DEFAULT), counting
	 * only the events after a file's exists events: those repeat the
	 * live heap, which may itself be larger than the cap, and every
	 * generation must hold some events of its own.
	 */
	if (s->gen_cap && s->gen &&
	    tw_gen_event_bytes(s->gen) - s->gen_base >= s->gen_cap)
		session_cut(s);
	return rc;
}

/* ---- generations ------------------------------------------------------ */

/* --stacks: the generation just written goes to its file's sidecar. */
static void stacks_gen_written(struct session *s, uint64_t gen)
{
	const char *name = trace_sink_file_name(s->sink);

	/* A failed sidecar is counted (stacks_lost); the trace is fine. */
	if (name)
		alloc_stacks_gen_written(s->stacks, trace_sink_dirfd(s->sink),
					 name, gen);
}

void session_stacks_close(struct session *s)
{
	struct alloc_stacks_counts c;

	if (!s->stacks)
		return;
	alloc_stacks_close_file(s->stacks);
	alloc_stacks_get_counts(s->stacks, &c);
	s->counts.stacks_with = c.with_stack;
	s->counts.stacks_without = c.without_stack;
	s->counts.stacks_lost = c.lost;
	s->counts.stacks_inline = c.inline_pcs;
}

int session_cut(struct session *s)
{
	uint64_t events, gen = 0;
	int rc;

	if (!s->gen)
		return 0;
	events = tw_gen_events(s->gen);
	if (events == 0)
		return 0;
	/* last_ts is in ns, the writer's in ticks. */
	if (tw_gen_last_ts(s->gen) * SESSION_TICK_NS > s->last_ts)
		s->last_ts = tw_gen_last_ts(s->gen) * SESSION_TICK_NS;

	if (s->sink_failed) {
		rc = s->sink_error;
	} else {
		/* A file that rotates at this cut is still the gen's own. */
		gen = trace_sink_next_gen(s->sink);
		rc = tw_gen_finish(s->gen);
		if (rc == 0)
			rc = trace_sink_end_gen(s->sink);
		if (rc) {
			s->sink_failed = true;
			s->sink_error = rc;
		}
	}
	if (rc) {
		s->counts.lost_on_write += events;
		if (s->stacks)
			alloc_stacks_gen_dropped(s->stacks);
		session_gc_gen_dropped(s);
	} else {
		int k;

		if (s->stacks)
			stacks_gen_written(s, gen);
		if (s->memprofilerate)
			session_sampling_gen_written(s);
		session_gc_gen_written(s);
		for (k = 0; k < TW_EV_COUNT; k++)
			s->counts.written[k] += s->gen_events[k];
		s->counts.events += events;
		s->counts.generations++;
	}
	memset(s->gen_events, 0, sizeof(s->gen_events));
	tw_gen_free(s->gen);
	s->gen = NULL;
	if (new_generation(s, false) != 0 && rc == 0)
		rc = -ENOMEM;
	return rc;
}

int session_rotate(struct session *s)
{
	int rc = session_cut(s);

	if (!s->gen || s->sink_failed || trace_sink_at_file_start(s->sink))
		return rc;
	/*
	 * session_cut opened the next generation for the old file; it holds
	 * nothing yet, so it is started again, for a new file.
	 */
	trace_sink_rotate(s->sink);
	session_stacks_close(s);
	tw_gen_free(s->gen);
	s->gen = NULL;
	if (new_generation(s, false) != 0 && rc == 0)
		rc = -ENOMEM;
	return rc;
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
	u64_map_free(&s->tiny_upper);
	session_gc_free(s);
	free(s->type_tab);
	free(s->names);
	s->type_tab = NULL;
	s->names = NULL;
}

uint64_t session_inconsistent(const struct session *s)
{
	return s->heap ? shadow_heap_inconsistent(s->heap) : 0;
}

uint64_t session_heap_ops(const struct session *s)
{
	return s->heap ? shadow_heap_ops(s->heap) : 0;
}
