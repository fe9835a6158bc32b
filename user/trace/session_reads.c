// SPDX-License-Identifier: BSD-3-Clause
/*
 * session_reads.c - --memprofilerate's reads (sample_reads.h): the
 * session reads its process's heap-profile samples once or twice per GC
 * cycle and makes events of what changed since the last read.  The read
 * at each mark's end (the BPF programs', in the pause) is enough alone:
 * samples new to the session were allocated since the last read
 * (HeapObjectAlloc just before the mark's end); those it lacks, or whose
 * slot the last sweep freed and gave to another sample (allocBits), were
 * freed by that sweep (HeapObjectFree just after the last mark's end).
 * A read at the mark's start comes too while the daemon reads (a heap
 * too big for the pause) or a cut is near.  The read as tracing stops
 * adds what came since.  With --check-reads the reads are held against
 * the exact probes' samples instead.
 */
#include "trace/session.h"
#include "trace/session_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "attach/probe_plan.h"
#include "attach/probes.h"
#include "inspect/go_binary.h"
#include "attach/profile_specials.h"
#include "trace/alloc_stacks.h"
#include "trace/sample_reads.h"
#include "util/clock_ns.h"
#include "util/grow.h"

/*
 * The reader of the process's samples, resolved once; then the BPF
 * programs are asked to read them in the GC pauses where they can
 * (snap.bpf.h), and the daemon's reads are left for the pauses they
 * could not.
 */
static void reads_open(struct session *s)
{
	/* The buckets sent are remembered per session: a PID's next one
	 * (exec, or the PID reused) is sent them again. */
	static uint32_t epochs;
	struct sample_reads *r = &s->reads;

	/* Said at the end (progress.c): every mark a missed read. */
	r->reader_rc = profile_specials_open(s->bin, s->load_bias,
					     s->prof_kind, &r->reader,
					     r->reader_err,
					     sizeof(r->reader_err));
	/* Without the buckets' counts the reads go unchecked: said at the
	 * end, not fatal. */
	if (r->reader_rc == 0 && r->counts_rc == 1 && !s->check_reads)
		r->counts_rc = profile_counts_open(s->bin, s->load_bias,
						   &r->reader.l, &r->counts,
						   r->counts_err,
						   sizeof(r->counts_err));
	if (r->reader_rc || !s->pause_budget_ns || !s->probes ||
	    !profile_specials_snap_target(&r->reader, &r->snap_target))
		return;
	r->snap_target.mprof_cycle = r->counts_rc == 0 ? r->counts.mprof_cycle : 0;
	r->snap_target.budget_ns = s->pause_budget_ns;
	r->snap_target.epoch = ++epochs;
	r->snap_asked = probes_snap_target(s->probes, s->target.pid,
					   &r->snap_target) == 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/*
 * A heap too big to read within --pause-budget: a cut snapshot costs the
 * pause the whole budget and the daemon reads anyway, so the programs
 * stop taking them.  Not on one cut alone (the first snapshot of a
 * process can take ten times the next, and a busy host can stall any):
 * on a cut the daemon's read after it tells how many steps the heap
 * takes (about its arenas' bitmaps, a word of them per span at most, its
 * spans with specials twice, its samples) and the last whole snapshots
 * what a step costs; two cuts in a row are taken at their word.  The
 * programs are asked again once a read finds a heap of half what the
 * budget reads.
 *
 * The step cost is the median of the last whole snapshots' own, not the
 * mean of all: one snapshot the host stalled (1.7 ms for 40 steps, seen
 * on allocbench) raised the mean so far that the estimate said a
 * 100-step heap would not fit, and it took about 70 cycles to come down
 * (with the mark's probe attached meanwhile), or, after a cut, kept the
 * programs from being asked again at all.
 */
static uint64_t snap_capacity(const struct session *s)
{
	const struct sample_reads *r = &s->reads;
	/* What a step took on these VMs at least: a small heap's whole
	 * snapshots say less than a big heap's steps cost (cache misses),
	 * and an estimate too high would ask for snapshots to be cut. */
	uint64_t step_ns = 150;
	uint32_t v[SNAP_STEP_COSTS];
	size_t n = r->snap_step_costs < SNAP_STEP_COSTS ?
		   r->snap_step_costs : SNAP_STEP_COSTS;

	if (n) {
		memcpy(v, r->snap_step_ns, n * sizeof(v[0]));
		qsort(v, n, sizeof(v[0]), cmp_u32);
		if (v[n / 2] > step_ns)
			step_ns = v[n / 2];
	}
	return s->pause_budget_ns / step_ns;
}

static void snap_weigh(struct session *s, const struct ps_stats *st)
{
	struct sample_reads *r = &s->reads;
	uint64_t words = st->spans < r->reader.narenas * 128 ? st->spans :
			 r->reader.narenas * 128;
	uint64_t steps = r->reader.narenas * 17 + words + st->spans * 2 +
			 st->samples;
	uint64_t cap = snap_capacity(s);

	if (r->snap_asked && r->snap_cut &&
	    (steps > cap || r->snap_cuts_in_row >= 2)) {
		probes_snap_forget(s->probes, s->target.pid);
		r->snap_asked = false;
		r->snap_off = true;
		r->c.snap_suspended++;
	} else if (r->snap_off && steps * 2 <= cap) {
		r->snap_asked = probes_snap_target(s->probes, s->target.pid,
						   &r->snap_target) == 0;
		r->snap_off = !r->snap_asked;
	}
	r->snap_cut = false;
}

void session_set_sample_reader(struct session *s, const struct probes *probes,
			       const struct u64_map *sample_types,
			       uint8_t prof_kind)
{
	s->probes = probes;
	s->sample_types = sample_types;
	s->prof_kind = prof_kind;
	if (session_reads_samples(s) && s->reads.reader_rc == 1)
		reads_open(s);
}

/*
 * The probe at each mark's start is needed while the daemon reads (the
 * programs do not: --pause-budget 0, a heap too big, a runtime they
 * cannot walk), and while a cut is near: a mark's end cut with no read
 * at its start is left to a daemon's read racing the sweep, which loses
 * what the sweep reached first.  So from the session's start until a
 * whole snapshot's steps are a third of what the budget reads, and again
 * from half.  By steps, not by the snapshot's time: one slow snapshot
 * (an interrupt, a cold cache) would attach it, and a detach costs the
 * daemon 8-30 ms (uprobe_unregister waits for the readers).  A heap that
 * doubles within one cycle can still be cut without it: counted.
 */
bool session_wants_mark_probe(const struct session *s, bool has)
{
	const struct sample_reads *r = &s->reads;
	uint64_t steps = r->snap_last_steps, cap;

	if (!s->sample_reads || s->check_reads || r->reader_rc < 0)
		return false;
	if (!r->snap_asked || !steps)
		return true;
	cap = snap_capacity(s);
	return has ? steps * 3 > cap : steps * 2 > cap;
}

const struct sample_reads *session_reads(const struct session *s)
{
	return session_reads_samples(s) ? &s->reads : NULL;
}

/*
 * Whether the sample at ADDR is one the session holds, as the last read
 * saw it: at its address, and, when a sweep came since, in a slot that
 * sweep kept (OLD).  Where it does not, another one took a freed one's
 * address.  Only
 * for reads at a mark or its end: the allocBits of a read at any time
 * may be of a sweep before the last read or after it, span by span.
 */
static bool read_reborn(const struct session *s, uint64_t key, bool old)
{
	const struct sample_reads *r = &s->reads;

	if (old || !r->swept || !r->use_old)
		return false;
	return u64_map_get(&s->sampled, key, NULL);
}

/*
 * --check-reads: a sample at an address the last whole read saw, after a
 * sweep: its flag against the probes' frees since (one sweep only: the
 * flags tell of the last sweep alone).
 */
static void read_check_old(struct sample_reads *r, uint64_t key, bool old)
{
	bool freed;

	if (!r->swept || !r->use_old || !u64_map_get(&r->prev_seen, key, NULL))
		return;
	r->c.reborn += !old;
	if (r->prev_sweeps != 1)
		return;
	freed = u64_map_get(&r->freed_since, key, NULL);
	r->c.check_reborn_unfreed += !old && !freed;
	r->c.check_same_freed += old && freed;
}

/* A read needs the size and stack of the samples the session lacks. */
static bool read_wants(void *arg, uint64_t addr, bool old)
{
	const struct session *s = arg;
	uint64_t key = sample_key(addr);

	return !u64_map_get(&s->sampled, key, NULL) ||
	       read_reborn(s, key, old);
}

/*
 * A sample of a read: its key; whether it is another than the one the
 * session holds at its address (--check-reads: held against what the
 * probes freed since the last read); the sample if the session lacks
 * it.
 */
static int read_sample(void *arg, const struct ps_sample *ps)
{
	struct session *s = arg;
	struct sample_reads *r = &s->reads;
	uint64_t key = sample_key(ps->addr), type;
	struct sample_fresh *f;
	int rc = sample_reads_key(r, key);

	if (rc == 0 && s->check_reads) {
		read_check_old(r, key, ps->old);
	} else if (rc == 0 && read_reborn(s, key, ps->old)) {
		r->c.reborn++;
		rc = u64_map_put(&r->reborn, key, 1) ? -ENOMEM : 0;
	}
	if (rc || !ps->full)
		return rc;
	f = sample_reads_fresh(r);
	if (!f)
		return -ENOMEM;
	f->key = key;
	f->addr = ps->addr;
	f->size = ps->size;
	f->bucket = ps->bucket;
	f->known = sample_stack_type(s->sample_types, s->load_bias, ps, &type);
	f->type = type ? type + s->load_bias : 0;
	f->npcs = (uint32_t)ps->npcs;
	memcpy(f->pcs, ps->pcs, ps->npcs * sizeof(ps->pcs[0]));
	return 0;
}

/* Whether a gcSweep came since the mark the read is at. */
static bool read_swept_since(void *arg)
{
	const struct session *s = arg;

	return probes_gc_sweeps(s->probes, s->target.pid) != s->reads.sweeps;
}

/* A span the walk read: kept when the read turns out partial. */
static int read_span(void *arg, uint64_t base, uint64_t limit, bool valid)
{
	struct session *s = arg;

	return valid ? sample_reads_span(&s->reads, base, limit) : 0;
}

/*
 * Reads the samples now, at the mark whose record said the process had
 * seen SWEEPS gcSweeps.  Whole if that count has not moved by the end of
 * the walk: no sweep freed a special under it.  Partial if it moved
 * during the walk: then only the spans not swept under it tell (their
 * sweepgen, profile_specials.h), the rest is left for the next read.
 * Late if it had moved before the walk began: then read as at any time
 * (below).  Missed when a node or bucket could not be read (a list read
 * in part would make its samples look freed).
 */
enum read_when { READ_MARK, READ_MARK_END, READ_ANY };

static void read_now(struct session *s, uint64_t sweeps, enum read_when when)
{
	struct sample_reads *r = &s->reads;
	pid_t pid = s->target.pid;
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	struct ps_stats st = { 0 };
	bool ok;
	int rc;

	sample_reads_begin(r);
	r->sweeps = sweeps;
	r->use_old = when != READ_ANY;
	if (!s->probes || !s->sample_types || s->target.gone)
		return;
	if (r->reader_rc == 1)
		reads_open(s);
	/*
	 * Late: a gcSweep came before this read could begin (a mark shorter
	 * than the daemon's wake-up).  The read is made as at any time
	 * instead, of the spans the sweep is not in the middle of: what it
	 * finds is not lost, though a free the new sweep made shows a cycle
	 * early and a birth since the mark's end one cycle early.  Not with
	 * --check-reads, whose probes' set is the mark's.
	 */
	ok = r->reader_rc == 0 && probes_gc_sweeps(s->probes, pid) == sweeps;
	if (!ok && r->reader_rc == 0) {
		r->c.late++;
		if (when == READ_MARK && !s->check_reads) {
			when = READ_ANY;
			r->use_old = false;
			ok = true;
		}
	}
	if (ok) {
		struct ps_walk_ops ops = {
			.want = read_wants, .sample = read_sample,
			.span = read_span,
			.sweepgen_delta = when == READ_MARK_END ? -2 : 0,
			/* Elsewhere than at a mark the sweep may run: always
			 * check. */
			.swept_since = when == READ_MARK ? read_swept_since : NULL,
			.any_phase = when == READ_ANY,
			.alloc_bits = true,
		};

		char err[160];

		/* A walk that fails is a missed read, counted (the process
		 * may be exiting): no word of its own. */
		rc = profile_specials_walk(&s->target, &r->reader, &ops, s,
					   &st, err, sizeof(err));
		r->c.unreadable += st.read_errors + st.list_errors;
		ok = rc == 0 && !st.read_errors;
		if (ok)
			snap_weigh(s, &st);
		/* Overtaken: partial, if the spans could be told apart.  A
		 * read elsewhere than at a mark is partial by nature. */
		r->partial = when != READ_MARK || st.spans_swept ||
			     probes_gc_sweeps(s->probes, pid) != sweeps;
		if (r->partial && !r->reader.by_sweepgen)
			ok = false;
	}
	sample_reads_end(r, ok, clock_ns(CLOCK_MONOTONIC) - t0);
}

/*
 * The thread the reads' events go on: one for the session, not the GC
 * record's.  A free is stamped at the last sweep's start, two
 * nanoseconds after a sample born at that mark's end, the same 64 ns
 * tick, and a generation's floor can move both to one time: on two
 * threads the parser could order the free first; on one, the order
 * they were written in is theirs.
 */
static uint64_t read_thread(const struct session *s)
{
	return (uint64_t)(uint32_t)s->target.pid;
}

/*
 * The samples the session holds that the read lacks (in the spans it
 * tells of), or finds another sample in the place of (reborn): freed by
 * a sweep since the last read, their HeapObjectFree at AT, or just after
 * the last mark's end when a sweep came since (it freed them).  The keys
 * are taken first: a map is not changed while it is walked.
 */
static int read_gone(struct session *s, const struct taf_rec_addr *at)
{
	struct sample_reads *r = &s->reads;
	uint64_t key, v, *dead = NULL, ts = at->hdr.ts;
	size_t it = 0, n = 0, cap = 0, i;
	int rc = 0;

	if (r->swept && r->swept_at && r->swept_at < ts)
		ts = r->swept_at;
	while (u64_map_next(&s->sampled, &it, &key, &v)) {
		if (!sample_reads_told(r, key) ||
		    (u64_map_get(&r->seen, key, NULL) &&
		     !u64_map_get(&r->reborn, key, NULL)))
			continue;
		if (!GROW(dead, n, cap, 64)) {
			free(dead);
			return -ENOMEM;
		}
		dead[n++] = key;
	}
	for (i = 0; i < n && rc == 0; i++) {
		u64_map_del(&s->sampled, dead[i]);
		sample_counts_freed(&r->sc, dead[i]);
		rc = session_emit(s, read_thread(s), TW_EV_HEAP_OBJECT_FREE, ts,
				  session_heap_object_id(s, dead[i]), 0, 0);
	}
	free(dead);
	return rc;
}

/* A sample the read saw first: its HeapObjectAlloc, at the mark. */
static int read_born(struct session *s, const struct taf_rec_addr *mark,
		     const struct sample_fresh *f)
{
	struct taf_rec_heap_alloc r = {
		.hdr.flags = TAF_ALLOC_F_SAMPLED |
			     (f->known ? 0 : TAF_ALLOC_F_NO_TYPE),
		.addr = f->addr, .type = f->type, .size = f->size,
	};
	const struct type_entry *e;
	uint32_t ref = 0;
	uint64_t id;
	int rc;

	if (u64_map_get(&s->sampled, f->key, NULL))
		return 0;   /* twice in one read: a list changed under it */
	if (!f->known)
		s->counts.samples_untyped++;
	e = session_sampled_type(s, &r);
	if (s->stacks)
		ref = alloc_stacks_learn(s->stacks, f->pcs, f->npcs);
	if (u64_map_put(&s->sampled, f->key, session_sampled_value(s, e, ref)) ||
	    sample_counts_born(&s->reads.sc, f->key, f->bucket))
		return -ENOMEM;
	id = session_heap_object_id(s, f->key);
	rc = session_emit(s, read_thread(s), TW_EV_HEAP_OBJECT_ALLOC,
			  mark->hdr.ts, id, session_gen_type_id(s, e), 0);
	if (rc == 0 && s->stacks)
		alloc_stacks_note_ref(s->stacks, id, tw_gen_last_event_ts(s->gen),
				      ref);
	return rc;
}

/*
 * --check-reads: what the probes had allocated by this mark and not
 * freed (s->sampled) must be what the read saw, but for samples
 * allocated since the mark record, whose probe records come after it:
 * those must come before the next mark.
 */
static int read_check(struct session *s, const struct taf_rec_addr *mark)
{
	struct sample_reads *r = &s->reads;
	uint64_t key, v;
	size_t it = 0, i;
	int rc = 0;

	r->c.checked_partial += r->partial;
	r->c.check_extra += r->unconfirmed.len;
	u64_map_free(&r->unconfirmed);
	u64_map_init(&r->unconfirmed);
	/* What the read saw that the probes hold: seen once, a sample is
	 * real and must be seen until freed.  One no read ever saw is
	 * counted apart (sample_reads_counts.check_never_read). */
	while (rc == 0 && u64_map_next(&r->seen, &it, &key, &v))
		if (u64_map_get(&s->sampled, key, NULL))
			rc = u64_map_put(&r->ever, key, 1);
	it = 0;
	while (rc == 0 && u64_map_next(&s->sampled, &it, &key, &v)) {
		if (u64_map_get(&r->seen, key, NULL) ||
		    !sample_reads_told(r, key))
			continue;
		if (u64_map_get(&r->ever, key, NULL))
			r->c.check_missing++;
		else if (!u64_map_get(&r->never_read, key, NULL)) {
			r->c.check_never_read++;
			rc = u64_map_put(&r->never_read, key, 1);
		}
	}
	for (i = 0; rc == 0 && i < r->nfresh; i++)
		if (!u64_map_get(&s->sampled, r->fresh[i].key, NULL))
			rc = u64_map_put(&r->unconfirmed, r->fresh[i].key, 1);
	r->c.checked++;
	return rc;
}

/*
 * After read_now: whether a consistent read waits to be applied (*MISSED
 * counted when the read was not consistent).
 */
static bool read_taken(struct sample_reads *r, uint64_t *missed)
{
	if (!r->ready)
		return false;   /* nothing to read with, or the process is gone */
	r->ready = false;
	if (!r->consistent) {
		(*missed)++;
		return false;
	}
	return true;
}

/* The read's samples new to the session, born at AT. */
static int read_births(struct session *s, const struct taf_rec_addr *at)
{
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < s->reads.nfresh; i++)
		rc = read_born(s, at, &s->reads.fresh[i]);
	return rc;
}

/*
 * --check-reads at a mark's end: every sample the read saw in the spans
 * not swept yet was allocated before the mark ended, so the probes,
 * whose records of it came before this one, must hold it; and hold no
 * sample there the read did not see.
 */
static int read_check_end(struct session *s)
{
	struct sample_reads *r = &s->reads;
	uint64_t key, v;
	size_t it = 0, i;

	r->c.checked_end++;
	for (i = 0; i < r->nfresh; i++)
		r->c.check_extra += !u64_map_get(&s->sampled, r->fresh[i].key, NULL);
	while (u64_map_next(&s->sampled, &it, &key, &v))
		if (sample_reads_told(r, key) &&
		    !u64_map_get(&r->seen, key, NULL) &&
		    u64_map_get(&r->ever, key, NULL))
			r->c.check_missing++;
	return 0;
}

/*
 * A snapshot's last record: whether it ended whole, its counts, and for
 * snap_weigh what a step cost (of those the program read to the end) and
 * whether the budget cut it.
 */
static void snap_ended(struct sample_reads *r, const struct taf_rec_snap *rec)
{
	bool cut = rec->hdr.flags & TAF_SNAP_F_CUT;
	bool unread = rec->hdr.flags & (TAF_SNAP_F_UNREAD | TAF_SNAP_F_LOST);

	r->snap_building = false;
	if (cut || unread)
		r->snap_whole = false;
	if (cut) {
		r->c.snaps_cut++;
		r->snap_cut = true;
		r->snap_cuts_in_row++;
	} else if (!r->snap_whole) {
		r->c.snaps_unread++;
	} else {
		r->snap_cuts_in_row = 0;
	}
	if (!cut && !unread) {
		uint64_t per = rec->ns / (rec->steps ? rec->steps : 1);

		r->snap_step_ns[r->snap_step_costs++ % SNAP_STEP_COSTS] =
			per > UINT32_MAX ? UINT32_MAX : (uint32_t)per;
		r->snap_last_steps = rec->steps ? rec->steps : 1;
	}
	r->c.snap_taken++;
	r->c.snap_ns_total += rec->ns;
	if (rec->ns > r->c.snap_ns_max)
		r->c.snap_ns_max = rec->ns;
	if (rec->steps > r->c.snap_steps_max)
		r->c.snap_steps_max = rec->steps;
}

/*
 * A part of the BPF programs' snapshot (snap.bpf.h): its samples go into
 * the read as the daemon's walk would put them, the buckets of those new
 * to the session read (once each: profile_specials_bucket).  The first
 * part begins the read; the last says whether the whole heap was read.
 * The GC record after it applies the read (snap_taken).
 */
int session_sampled_snap(struct session *s, const struct taf_rec_snap *rec)
{
	struct sample_reads *r = &s->reads;
	uint32_t i;
	int rc = 0;

	if (r->reader_rc != 0)
		return 0;
	if (rec->seq == 0) {
		sample_reads_begin(r);
		r->use_old = true;
		r->snap_building = r->snap_whole = true;
		r->snap_next = 0;
		r->snap_cycle = rec->mprof_cycle;
		r->snap_cycle_read = rec->cycle_read;
	}
	/* A part missing (the ring was full, or the session began in the
	 * middle): the snapshot is not whole. */
	if (!r->snap_building || rec->seq != r->snap_next)
		r->snap_whole = false;
	r->snap_next = rec->seq + 1;
	for (i = 0; i < rec->n && rc == 0 && r->snap_whole; i++) {
		uint64_t bucket = rec->s[i].bucket & ~TAF_SNAP_OLD;
		struct ps_sample ps = {
			.addr = rec->s[i].addr, .bucket = bucket,
			.old = rec->s[i].bucket & TAF_SNAP_OLD,
		};

		if (read_wants(s, ps.addr, ps.old)) {
			rc = profile_specials_bucket(&s->target, &r->reader,
						     bucket, &ps);
			if (rc == -EIO) {
				r->c.unreadable++;
				r->snap_whole = false;
				rc = 0;
				break;
			}
		}
		if (rc == 0)
			rc = read_sample(s, &ps);
	}
	if (rec->hdr.flags & TAF_SNAP_F_LAST)
		snap_ended(r, rec);
	return rc;
}

int session_sampled_snap_bucket(struct session *s,
				const struct taf_rec_snap_bucket *rec)
{
	struct sample_reads *r = &s->reads;
	size_t n = rec->nstk < TAF_SNAP_BUCKET_PCS ? (size_t)rec->nstk :
		   TAF_SNAP_BUCKET_PCS;

	if (r->reader_rc != 0)
		return 0;
	return profile_specials_learn_bucket(&r->reader, rec->bucket, rec->size,
					     rec->nstk, (const uint64_t *)rec->pcs, n);
}

/*
 * At a GC record: whether the snapshot before it is the read (whole,
 * taken with the world stopped: consistent, not partial), else the
 * daemon reads.
 */
static bool snap_taken(struct session *s, const struct taf_rec_addr *at)
{
	struct sample_reads *r = &s->reads;
	bool ok = (at->hdr.flags & TAF_GC_F_SNAP) && r->snap_whole &&
		  !r->snap_building && r->reader_rc == 0;

	r->snap_whole = r->snap_building = false;
	if (!ok)
		return false;
	r->partial = false;
	r->c.snaps++;
	sample_reads_end(r, true, 0);
	return true;
}

/*
 * After a read was applied: the reads' figures against the buckets' own
 * (sample_counts.h), as of the same instant.
 *
 * After the programs' read in a mark's-end pause: the runtime's figures
 * taken while the cycle is the one that pause's mProf_NextCycle began
 * (a blocking sweep, mode 2, moves it twice and frees within the pause).
 * The daemon may be far behind the process (records are read in
 * batches; a program can GC hundreds of times a second), so the figures
 * are taken when it can and kept (`counts_pending`) until the read of
 * their cycle is applied; a read the figures' cycle has passed drops
 * them.  Taken while the daemon is on time, within the pause (before
 * NextCycle), it waits a little.
 *
 * After the daemon's whole read during a mark: taken at once, valid if
 * the mark has not ended (the gcSweep count unmoved).
 *
 * Figures are taken at most once per COUNTS_COST_SHARE times what the
 * last take cost (at least a millisecond apart): the checks are
 * cumulative, so a server with thousands of buckets GCing often need not
 * pay each cycle, and a small program is checked at every one.
 */
#define COUNTS_COST_SHARE 100
#define COUNTS_MIN_GAP_NS 1000000ull
#define COUNTS_WAITS 20

/* Whether cycle A comes after B (they wrap at PC_CYCLE_WRAP). */
static bool cycle_after(uint32_t a, uint32_t b)
{
	return a != b && (a + PC_CYCLE_WRAP - b) % PC_CYCLE_WRAP < PC_CYCLE_WRAP / 2;
}

/* The runtime's figures now (0, or skipped and -errno). */
static int counts_take(struct session *s, uint32_t wait_past)
{
	struct sample_reads *r = &s->reads;
	int rc = 0, k;

	r->counts_last_ns = clock_ns(CLOCK_MONOTONIC);
	for (k = 0; k < COUNTS_WAITS; k++) {
		const struct timespec wait = { 0, 100000 };
		uint64_t t0 = clock_ns(CLOCK_MONOTONIC);

		rc = profile_counts_read(&s->target, &r->counts);
		/* What a take costs is its read, not the waits between. */
		r->counts_cost_ns = clock_ns(CLOCK_MONOTONIC) - t0;
		r->sc.t.ns_total += r->counts_cost_ns;
		if (rc != 0 || r->counts.cycle != wait_past)
			break;
		nanosleep(&wait, NULL);
	}
	if (rc && rc != -ENOMEM)
		r->sc.t.skipped++;
	return rc;
}

static int counts_check(struct session *s, enum sc_when when, uint32_t mode)
{
	struct sample_reads *r = &s->reads;
	uint32_t at = r->snap_cycle >> 1;
	uint32_t want = (at + (mode == 2 ? 2 : 1)) % PC_CYCLE_WRAP;
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	uint64_t gap = r->counts_cost_ns * COUNTS_COST_SHARE;
	bool due = !r->counts_last_ns ||
		   now - r->counts_last_ns >= (gap > COUNTS_MIN_GAP_NS ? gap :
					      COUNTS_MIN_GAP_NS);
	int rc;

	/* Figures taken are compared after the process has gone too (the
	 * daemon may be that far behind). */
	if (r->counts_rc || !s->probes)
		return 0;
	due = due && !s->target.gone;
	if (when == SC_MARK) {
		/* Behind the process already: no figures of this mark. */
		if (r->counts_pending || !due ||
		    probes_gc_sweeps(s->probes, s->target.pid) != r->mark_sweeps)
			return 0;
		rc = counts_take(s, PC_CYCLE_WRAP);
		if (rc)
			return rc == -ENOMEM ? rc : 0;
		if (probes_gc_sweeps(s->probes, s->target.pid) != r->mark_sweeps) {
			r->sc.t.skipped++;
			return 0;
		}
		return sample_counts_compare(&r->sc, &r->counts, SC_MARK);
	}
	if (!r->snap_cycle_read)
		return 0;
	if (!r->counts_pending && due) {
		rc = counts_take(s, at);
		if (rc)
			return rc == -ENOMEM ? rc : 0;
		r->counts_pending = true;
	}
	if (!r->counts_pending || cycle_after(r->counts.cycle, want))
		return 0;   /* none, or of a read still to come */
	r->counts_pending = false;
	if (r->counts.cycle != want) {
		r->sc.t.skipped++;   /* their read was not applied */
		return 0;
	}
	return sample_counts_compare(&r->sc, &r->counts,
				     mode == 2 ? SC_END_BLOCKING : SC_END);
}

/*
 * A read was applied: the next one's allocBits are of a sweep after it
 * only if a gcSweep comes first (session_sampled_read_end);
 * --check-reads keeps its keys, to hold the next one's against the
 * probes' frees since.  Not a partial read's (the daemon's at a mark's
 * end, of the spans the sweep had not reached): the whole read before
 * it and the frees since stay what the next read is held against.
 */
static void read_applied(struct sample_reads *r, bool check)
{
	r->swept = false;
	if (check && !r->partial) {
		struct u64_map tmp = r->prev_seen;

		r->prev_seen = r->seen;
		r->seen = tmp;
		r->prev_sweeps = 0;
		u64_map_free(&r->freed_since);
		u64_map_init(&r->freed_since);
	}
}

/*
 * A mark ended (TAF_REC_GC_CYCLE, gcSweep's entry, world stopped).  The
 * read here is the one the BPF programs took in the pause, or else the
 * daemon's, partial (the sweep begins as the world restarts: the spans
 * it has not reached).  The samples new to the session were allocated
 * since the last read (during this mark, or since the last mark's end
 * when no read was made at this mark's start): their HeapObjectAlloc
 * goes just before the mark's end, in the cycle whose mark first saw
 * them.  With no read at this mark's start, the samples the session
 * holds that the read lacks, or finds another sample in the place of,
 * were freed by the last sweep (read_gone).  That is every birth and
 * death by the cycle from one read a cycle (one probe: gc_mark is
 * attached only while the daemon reads, session_wants_mark_probe).  The
 * sweep that begins now is remembered: the next read's allocBits are
 * its.
 */
int session_sampled_read_end(struct session *s, const struct taf_rec_addr *end)
{
	struct sample_reads *r = &s->reads;
	struct taf_rec_addr born = *end;
	bool snap = snap_taken(s, end);
	bool alone = !r->mark_seen;
	int rc = 0;

	r->mark_seen = false;
	/* --check-reads compares at a mark's end only what its start's
	 * read began; the first mark's end is not compared. */
	if (alone && s->check_reads)
		goto swept;
	if (!snap)
		read_now(s, !alone ? r->mark_sweeps + 1 : s->probes ?
			 probes_gc_sweeps(s->probes, s->target.pid) : 0,
			 READ_MARK_END);
	if (!read_taken(r, &r->c.missed_end))
		goto swept;
	if (s->check_reads) {
		rc = read_check_end(s);
	} else {
		born.hdr.ts = end->hdr.ts ? end->hdr.ts - 1 : 0;
		r->c.reads_end++;
		r->c.partial += alone && r->partial;
		if (alone)
			rc = read_gone(s, &born);
		if (rc == 0)
			rc = read_births(s, &born);
		if (rc == 0 && snap)
			rc = counts_check(s, SC_END, (uint32_t)end->addr);
	}
	read_applied(r, s->check_reads);
swept:
	r->swept = true;
	r->prev_sweeps++;
	r->swept_at = end->hdr.ts + 1;
	return rc;
}

int session_sampled_read(struct session *s, const struct taf_rec_addr *mark)
{
	struct sample_reads *r = &s->reads;
	int rc;

	r->mark_seen = true;
	r->mark_sweeps = mark->addr;
	if (!snap_taken(s, mark))
		read_now(s, mark->addr, READ_MARK);
	if (!read_taken(r, &r->c.missed))
		return 0;
	r->c.partial += r->partial;
	if (s->check_reads) {
		rc = read_check(s, mark);
	} else {
		rc = read_gone(s, mark);
		r->c.reads++;
		if (rc == 0)
			rc = read_births(s, mark);
		if (rc == 0 && !r->partial)
			rc = counts_check(s, SC_MARK, 0);
	}
	read_applied(r, s->check_reads);
	return rc;
}


/*
 * The tracer stops while the process runs (a signal, --duration): the
 * samples made since the last mark would be missing, and on a program
 * that did not GC while traced, all of them.  One last read, at any
 * point of the GC cycle: partial by nature (the spans the sweep was not
 * in the middle of, unchanged under the walk), births and frees in
 * those spans, stamped at the stop.
 */
int session_sampled_read_final(struct session *s)
{
	struct sample_reads *r = &s->reads;
	struct taf_rec_addr at = { .hdr.tid = (uint32_t)s->target.pid };
	int rc;

	if (!s->sample_reads || !s->started || !s->gen || s->target.gone ||
	    !s->probes)
		return 0;
	at.hdr.ts = s->stop_ts ? s->stop_ts : clock_ns(CLOCK_MONOTONIC);
	read_now(s, probes_gc_sweeps(s->probes, s->target.pid), READ_ANY);
	if (!read_taken(r, &r->c.missed_final))
		return 0;
	rc = read_gone(s, &at);
	r->c.reads_final++;
	return rc ? rc : read_births(s, &at);
}
