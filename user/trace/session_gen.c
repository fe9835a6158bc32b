// SPDX-License-Identifier: BSD-3-Clause
/*
 * session_gen.c - a session's generations: events appended to the one
 * being built, the exists events a file starts with, the heap base that
 * must be known first, and the cut that ends a generation (and rotates).
 */
#include "trace/session.h"
#include "trace/session_impl.h"

#include <errno.h>
#include <string.h>
#include <sys/statvfs.h>

#include "trace/alloc_stacks.h"
#include "trace/shadow_heap.h"
#include "format/trace_sink.h"

#define TRACE_FREQ (1000000000ull / SESSION_TICK_NS)

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

	c->rc = session_emit(s, c->thread, TW_EV_HEAP_OBJECT, c->ts,
			     session_heap_object_id(s, addr),
			     tw_gen_type(s->gen, type_ref), 0);
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
 * The size cut for the generation starting now: --generation-size, but
 * no more than a quarter of the room left on the output's file system.
 * A generation is kept whole or not at all (a failed write is cut back
 * to the last whole one), so on a disk nearly full one 8 MiB generation
 * could be lost whole where four smaller ones fit: with an 8 MiB disk
 * and the defaults no file was left at all.  Each generation then takes
 * a quarter of what remains, until the room is under SESSION_GEN_SIZE_MIN
 * a generation.
 */
static uint64_t gen_cap_for_room(const struct session *s)
{
	struct statvfs st;
	uint64_t room;
	int fd = s->sink ? trace_sink_dirfd(s->sink) : -1;

	if (fd < 0 || fstatvfs(fd, &st) != 0)
		return s->gen_cap;
	room = (uint64_t)st.f_bavail * st.f_frsize / 4;
	if (room < SESSION_GEN_SIZE_MIN)
		room = SESSION_GEN_SIZE_MIN;
	return s->gen_cap && s->gen_cap < room ? s->gen_cap : room;
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
	tw_gen_use_types(s->gen, &s->catalog);
	s->gen_base = 0;
	s->gen_cap_now = gen_cap_for_room(s);
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
	/* A snapshot's first sample: the process may have exited before
	 * its records are read, its runtime's heap base with it. */
	case TAF_REC_SNAP: return v->snap->n ? v->snap->s[0].addr : 0;
	default: return 0;
	}
}

/* Makes sure the heap base is known and a generation is open. */
int session_ensure_generation(struct session *s, const struct record_view *v)
{
	uint64_t addr;

	if (s->gen)
		return 0;
	if (!s->info_ready &&
	    session_read_min_page_heap_addr(s, &s->info.min_page_heap_addr) != 0) {
		addr = record_address(v);
		if (!addr)
			return -EAGAIN;
		s->info.min_page_heap_addr = addr & ~(GO_HEAP_ARENA_BYTES - 1);
	}
	s->info_ready = true;
	return new_generation(s, true);
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
