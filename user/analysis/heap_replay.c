// SPDX-License-Identifier: BSD-3-Clause
/*
 * heap_replay.c - a process's heap rebuilt from its AllocFree events.
 *
 * Memory: one u64_map slot pair (16 bytes, load under 3/4) per live
 * object.  Its value packs the object's class (type, stack, slot size;
 * interned, 24 bits) and its allocation time in microseconds since the
 * timeline's first event (40 bits, 12 days; 0 = existed before the trace).
 *
 * Files of one process continue one timeline: a rotated file starts with
 * "exists" events for everything live, which are no-ops for what the
 * replay already holds, so nothing is counted twice.
 *
 * Checkpoints: at the end of every generation, and every TICK_NS of trace
 * time inside one, the replay copies the live counts per type and per
 * site.  At most MAX_POINTS are kept: when full, every other one goes and
 * the minimum gap between checkpoints grows.
 *
 * Leak suspects: for the live count L_0..L_n of a type (or site) at the
 * checkpoints, its floor F_i = min(L_i..L_n) is what it never again goes
 * below.  Garbage that the GC frees in time lowers the floor back; a leak
 * raises it at almost every step.  Steps are up to 8 equal stretches of
 * the checkpoints' time (each gap between checkpoints when there are
 * fewer): a leak in bursts raises the floor in every stretch, though not
 * between two checkpoints inside one of its pauses.  A type is a suspect
 * when there are 3 steps or more, F rises in at least 3/4 of them, and
 * L_n >= F_0 + max(8, F_0 / 10).
 * Suspects are ranked by the live bytes they gained.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inspect/go_sizeclasses.h"
#include "heap_replay.h"
#include "heap_replay_impl.h"
#include "format/trace_reader.h"
#include "format/trace_events.h"
#include "util/fnv.h"
#include "util/u64_map.h"

#define CLASS_MAX ((1u << 24) - 1)
#define TYPE_MAX ((1u << 20) - 1)
#define STACK_MAX ((1u << 24) - 1)

static void dense_free(struct hr_dense *d);

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	while (ncap < need)
		ncap *= 2;
	n = realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	memset((char *)n + *cap * elem, 0, (ncap - *cap) * elem);
	*arr = n;
	*cap = ncap;
	return 0;
}

struct heap_replay *heap_replay_new(void)
{
	struct heap_replay *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->priv = calloc(1, sizeof(*h->priv));
	if (!h->priv) {
		free(h);
		return NULL;
	}
	gc_cycles_init(&h->priv->gc);
	object_table_init(&h->priv->objects);
	return h;
}

void heap_replay_free(struct heap_replay *h)
{
	struct hr_private *p;
	size_t i, j;

	if (!h)
		return;
	p = h->priv;
	for (i = 0; i < h->ntypes; i++)
		free(h->types[i].name);
	for (i = 0; i < h->nsites; i++) {
		free((char *)h->sites[i].frame.func);
		free((char *)h->sites[i].frame.file);
	}
	for (i = 0; i < h->nstacks; i++) {
		for (j = 0; j < h->stacks[i].nframes; j++) {
			free((char *)h->stacks[i].frames[j].func);
			free((char *)h->stacks[i].frames[j].file);
		}
		free(h->stacks[i].frames);
	}
	for (i = 0; i < h->npoints; i++) {
		free(h->points[i].type_live);
		free(h->points[i].type_live_bytes);
		free(h->points[i].site_live);
	}
	free(h->types);
	free(h->sites);
	free(h->stacks);
	free(h->classes);
	free(h->points);
	free(h->proc.exe);
	free(h->proc.go_build_id);
	free(h->proc.gnu_build_id);
	if (p) {
		gc_cycles_free(&p->gc);
		free(p->gc_marks);
		object_table_free(&p->objects);
		u64_map_free(&p->spans);
		u64_map_free(&p->gstacks);
		u64_map_free(&p->type_names);
		u64_map_free(&p->class_keys);
		u64_map_free(&p->stack_keys);
		u64_map_free(&p->site_keys);
		dense_free(&p->gen_types);
		dense_free(&p->file_stacks);
		stack_sidecar_close(p->sidecar);
		free(p->site_live);
		free(p);
	}
	free(h);
}

/* ---- dense keys (heap_replay_impl.h) ---- */

static bool dense_get(const struct hr_dense *d, uint64_t key, uint64_t *val)
{
	uint64_t v;

	if (key < HR_DENSE_MAX) {
		if (key >= d->cap || !d->v[key])
			return false;
		*val = d->v[key] - 1;
		return true;
	}
	if (!u64_map_get(&d->big, key + 1, &v))
		return false;
	*val = v;
	return true;
}

static int dense_put(struct hr_dense *d, uint64_t key, uint64_t val)
{
	if (key >= HR_DENSE_MAX || val == UINT64_MAX)
		return key + 1 ? u64_map_put(&d->big, key + 1, val) : 0;
	if (key >= d->cap) {
		size_t cap = d->cap ? d->cap : 256;
		uint64_t *n;

		while (cap <= key)
			cap *= 2;
		n = realloc(d->v, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		memset(n + d->cap, 0, (cap - d->cap) * sizeof(*n));
		d->v = n;
		d->cap = cap;
	}
	d->v[key] = val + 1;
	if (key >= d->hi)
		d->hi = key + 1;
	return 0;
}

/* Forgets every key (the array is kept for the next generation/file). */
static void dense_clear(struct hr_dense *d)
{
	if (d->v)
		memset(d->v, 0, d->hi * sizeof(*d->v));
	d->hi = 0;
	u64_map_free(&d->big);
}

static void dense_free(struct hr_dense *d)
{
	free(d->v);
	u64_map_free(&d->big);
	memset(d, 0, sizeof(*d));
}

/* ---- interning ---- */

static int intern_type(struct heap_replay *h, const char *name, size_t len,
		       uint64_t size, uint32_t *idx)
{
	struct hr_private *p = h->priv;
	uint64_t key = fnv1a64(name, len, FNV1A64_SEED), v;
	struct hr_type *t;

	/* Probe on past hash collisions of different names. */
	for (;; key++) {
		if (!key)
			continue;
		if (!u64_map_get(&p->type_names, key, &v))
			break;
		t = &h->types[v - 1];
		if (strlen(t->name) == len && !memcmp(t->name, name, len)) {
			*idx = (uint32_t)(v - 1);
			return 0;
		}
	}
	if (h->ntypes >= TYPE_MAX)
		return -E2BIG;
	if (grow((void **)&h->types, &p->types_cap, h->ntypes + 1,
		 sizeof(*h->types)))
		return -ENOMEM;
	t = &h->types[h->ntypes];
	memset(t, 0, sizeof(*t));
	t->name = strndup(name, len);
	t->size = size;
	if (!t->name || u64_map_put(&p->type_names, key, h->ntypes + 1)) {
		free(t->name);
		return -ENOMEM;
	}
	*idx = (uint32_t)h->ntypes++;
	return 0;
}

static uint64_t frame_hash(uint64_t hs, const struct stack_frame *f)
{
	hs = fnv1a64(f->func, strlen(f->func) + 1, hs);
	hs = fnv1a64(f->file, strlen(f->file) + 1, hs);
	return fnv1a64(&f->line, sizeof(f->line), hs);
}

static bool frame_eq(const struct stack_frame *a, const struct stack_frame *b)
{
	return a->line == b->line && !strcmp(a->func, b->func) &&
	       !strcmp(a->file, b->file);
}

static int copy_frame(struct stack_frame *d, const struct stack_frame *s)
{
	d->func = strdup(s->func ? s->func : "?");
	d->file = strdup(s->file ? s->file : "?");
	d->line = s->line;
	d->pc = s->pc;
	if (d->func && d->file)
		return 0;
	free((char *)d->func);
	free((char *)d->file);
	d->func = d->file = NULL;
	return -ENOMEM;
}

static int intern_site(struct heap_replay *h, const struct stack_frame *f,
		       uint32_t *idx)
{
	struct hr_private *p = h->priv;
	uint64_t key = frame_hash(FNV1A64_SEED, f), v;
	struct hr_site *s;

	for (;; key++) {
		if (!key)
			continue;
		if (!u64_map_get(&p->site_keys, key, &v))
			break;
		if (frame_eq(&h->sites[v - 1].frame, f)) {
			*idx = (uint32_t)(v - 1);
			return 0;
		}
	}
	if (grow((void **)&h->sites, &p->sites_cap, h->nsites + 1,
		 sizeof(*h->sites)) ||
	    grow((void **)&p->site_live, &p->site_live_cap, h->nsites + 1,
		 sizeof(*p->site_live)))
		return -ENOMEM;
	s = &h->sites[h->nsites];
	memset(s, 0, sizeof(*s));
	if (copy_frame(&s->frame, f))
		return -ENOMEM;
	if (u64_map_put(&p->site_keys, key, h->nsites + 1))
		return -ENOMEM;
	*idx = (uint32_t)h->nsites++;
	return 0;
}

/* The replay's stack index + 1 of the sidecar's stack SID, 0 if none. */
static int intern_stack(struct heap_replay *h, uint32_t sid, uint32_t *out)
{
	struct hr_private *p = h->priv;
	const struct stack_frame *fr;
	struct hr_stack *st;
	uint64_t key = FNV1A64_SEED, v;
	size_t n, i;
	int rc;

	*out = 0;
	if (dense_get(&p->file_stacks, sid, &v)) {
		*out = (uint32_t)v;
		return 0;
	}
	if (stack_sidecar_frames(p->sidecar, sid, &fr, &n) || !n)
		return 0;
	for (i = 0; i < n; i++)
		key = frame_hash(key, &fr[i]);
	for (;; key++) {
		if (!key)
			continue;
		if (!u64_map_get(&p->stack_keys, key, &v))
			break;
		st = &h->stacks[v - 1];
		if (st->nframes != n)
			continue;
		for (i = 0; i < n && frame_eq(&st->frames[i], &fr[i]); i++)
			;
		if (i == n) {
			*out = (uint32_t)v;
			return dense_put(&p->file_stacks, sid, v);
		}
	}
	if (h->nstacks >= STACK_MAX)
		return 0;
	if (grow((void **)&h->stacks, &p->stacks_cap, h->nstacks + 1,
		 sizeof(*h->stacks)))
		return -ENOMEM;
	st = &h->stacks[h->nstacks];
	st->frames = calloc(n, sizeof(*st->frames));
	st->nframes = 0;
	if (!st->frames)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		rc = copy_frame(&st->frames[i], &fr[i]);
		if (rc)
			return rc;
		st->nframes++;
	}
	h->nstacks++;
	rc = intern_site(h, &fr[0], &st->site);
	if (rc)
		return rc;
	if (u64_map_put(&p->stack_keys, key, h->nstacks) ||
	    dense_put(&p->file_stacks, sid, h->nstacks))
		return -ENOMEM;
	*out = (uint32_t)h->nstacks;
	return 0;
}

/* Small sizes in bytes, large ones in pages (flag bit 19). */
static uint64_t size_code(uint64_t size)
{
	uint64_t pages;

	if (size < (1u << 19))
		return size;
	pages = (size + GO_PAGE_SIZE - 1) / GO_PAGE_SIZE;
	return 1u << 19 | (pages < (1u << 19) ? pages : (1u << 19) - 1);
}

int hr_intern_class(struct heap_replay *h, uint32_t type, uint32_t stack,
		    uint64_t size, bool tiny, uint32_t *idx)
{
	struct hr_private *p = h->priv;
	/* A tiny part (8 or 16) takes the large flag with 0 pages' worth of
	 * codes no large object has (those start at 64 pages). */
	uint64_t key = (uint64_t)type << 44 | (uint64_t)stack << 20 |
		       (tiny ? 1u << 19 | size : size_code(size)), v;
	struct hr_class_memo *m;
	struct hr_class *c;

	if (!key)
		key = UINT64_MAX;
	m = &p->class_memo[(key * 0x9e3779b97f4a7c15ull) >>
			    (64 - __builtin_ctz(HR_CLASS_MEMO))];
	if (m->key == key) {
		*idx = m->idx;
		return 0;
	}
	if (u64_map_get(&p->class_keys, key, &v)) {
		*idx = (uint32_t)(v - 1);
		m->key = key;
		m->idx = *idx;
		return 0;
	}
	if (h->nclasses >= CLASS_MAX)
		return -E2BIG;
	if (grow((void **)&h->classes, &p->classes_cap, h->nclasses + 1,
		 sizeof(*h->classes)))
		return -ENOMEM;
	c = &h->classes[h->nclasses];
	memset(c, 0, sizeof(*c));
	c->type = type;
	c->stack = stack;
	c->size = size;
	c->tiny = tiny;
	if (u64_map_put(&p->class_keys, key, h->nclasses + 1))
		return -ENOMEM;
	*idx = (uint32_t)h->nclasses++;
	m->key = key;
	m->idx = *idx;
	return 0;
}

/* ---- events ---- */

/*
 * The interned type of trace type `id`, and the size its entry in this
 * generation's table gives (types are interned by name; entries of one
 * name can differ in size: --memprofilerate gives each sampled slot size
 * an entry of its own).  The cache packs both: idx in the low 20 bits.
 */
static int resolve_type(struct heap_replay *h, struct trace_reader *r,
			uint64_t id, uint32_t *idx, uint64_t *gen_size)
{
	struct hr_private *p = h->priv;
	const struct trace_type *t;
	uint64_t v, size = 0;
	int rc;

	if (id != UINT64_MAX && dense_get(&p->gen_types, id, &v)) {
		*idx = (uint32_t)(v & TYPE_MAX);
		*gen_size = v >> 20;
		return 0;
	}
	t = id ? trace_reader_type(r, id) : NULL;
	if (t) {
		size = t->size;
		rc = intern_type(h, t->name, t->name_len, t->size, idx);
		if (!rc && !h->types[*idx].ptr_bytes)
			h->types[*idx].ptr_bytes = t->ptr_bytes;
	} else if (!id) {
		rc = intern_type(h, "<notype>", 8, 0, idx);
	} else {
		h->anom.undefined_type++;
		rc = intern_type(h, "<undefined>", 11, 0, idx);
	}
	if (rc)
		return rc;
	*gen_size = size;
	if (size >> 44)
		size = 0;    /* beyond any heap object: not cached exactly */
	if (id != UINT64_MAX)
		return dense_put(&p->gen_types, id, *idx | size << 20);
	return 0;
}

/* The object at REF (its table value V) goes. */
static int free_object(struct heap_replay *h, const struct ot_ref *ref,
		       uint64_t v, uint64_t now_us, bool swept)
{
	struct hr_class *c = &h->classes[v >> TIME_BITS];
	uint64_t born = v & TIME_MAX;

	object_table_del_at(&h->priv->objects, ref);
	c->frees++;
	c->live--;
	if (born) {
		uint64_t life = now_us + 1 > born ? now_us + 1 - born : 0;

		h->lifetime_hist[hr_lifetime_bucket(life * 1000)]++;
		h->lifetimes++;
	}
	return hr_object_freed(h, (uint32_t)(v >> TIME_BITS), born, now_us,
			       ref->id, swept);
}

static int heap_object(struct heap_replay *h, struct trace_reader *r,
		       const struct trace_event *e, bool alloc)
{
	struct hr_private *p = h->priv;
	uint64_t key = e->args[0] + 1, v, now_us, size, tsize;
	uint32_t type, stack = 0, cls, sid;
	struct hr_class *c;
	struct ot_ref ref;
	bool tiny, upper;
	int rc;

	now_us = rel_ns(h, e->ns) / 1000;
	if (now_us >= TIME_MAX)
		now_us = TIME_MAX - 1;
	if (!key)
		return 0;
	/* Good to the end: nothing below changes a span. */
	ref = object_table_ref(&p->objects, e->args[0]);
	if (object_table_get_at(&p->objects, &ref, &v)) {
		if (!alloc)
			return 0; /* exists: already known */
		h->anom.alloc_of_live++;
		rc = free_object(h, &ref, v, now_us, false);
		if (rc)
			return rc;
	}
	rc = resolve_type(h, r, e->args[1], &type, &tsize);
	if (rc)
		return rc;
	size = hr_object_size(h, ref.span, e->args[0], tsize, &tiny, &upper);
	/* An exists event has a stack too when the daemon knew it (the
	 * heap-profile samples of --memprofilerate, read at attach). */
	if (p->sidecar) {
		rc = stack_sidecar_lookup(p->sidecar, e->gen, e->args[0],
					  e->ticks, &sid);
		if (rc == -EBADMSG)
			p->sidecar_bad = true;
		if (rc == -ENOMEM || rc == -EBADMSG)
			return rc;
		if (!rc) {
			rc = intern_stack(h, sid, &stack);
			if (rc)
				return rc;
		}
		if (!stack && alloc)
			h->anom.no_stack++;
	}
	rc = hr_intern_class(h, type, stack, size, tiny, &cls);
	if (rc)
		return rc;
	/* Counted per class only: hr_fold_counts sums the types' and
	 * sites' counts when a checkpoint or the end reads them. */
	c = &h->classes[cls];
	c->live++;
	if (alloc)
		c->allocs++;
	else
		c->exists++;
	rc = object_table_put_at(&p->objects, &ref,
				 (uint64_t)cls << TIME_BITS |
				 (alloc ? now_us + 1 : 0));
	if (rc == 0 && upper)
		rc = hr_tiny_split(h, e->args[0] - 1);
	return rc;
}

static int replay_event(struct heap_replay *h, struct trace_reader *r,
			const struct trace_event *e)
{
	struct hr_private *p = h->priv;
	uint64_t t;
	int rc;

	if (!p->started) {
		p->started = true;
		h->t_first_ns = e->ns;
	}
	if (e->ns > h->t_last_ns)
		h->t_last_ns = e->ns;
	while (e->ns >= p->gc_next_ns && p->gc_next < p->ngc_marks &&
	       p->gc_marks[p->gc_next].ns <= e->ns) {
		rc = gc_cycles_mark(&p->gc,
				    rel_ns(h, p->gc_marks[p->gc_next++].ns));
		if (rc)
			return rc;
		h->gc_cycles = p->gc.n;
		h->gc_exact = true;
		p->gc_next_ns = p->gc_next < p->ngc_marks ?
				p->gc_marks[p->gc_next].ns : UINT64_MAX;
	}
	t = rel_ns(h, e->ns);
	if (t >= p->last_point_ns + TICK_NS &&
	    t >= p->last_point_ns + p->min_gap_ns) {
		rc = hr_take_point(h, t);
		if (rc)
			return rc;
	}
	h->events++;
	switch (e->kind) {
	case TW_EV_SPAN:
	case TW_EV_SPAN_ALLOC:
	case TW_EV_SPAN_FREE:
		return hr_span_event(h, e);
	case TW_EV_HEAP_OBJECT:
	case TW_EV_HEAP_OBJECT_ALLOC:
		return heap_object(h, r, e, e->kind == TW_EV_HEAP_OBJECT_ALLOC);
	case TW_EV_HEAP_OBJECT_FREE: {
		struct ot_ref ref = object_table_ref(&p->objects, e->args[0]);

		if (!object_table_get_at(&p->objects, &ref, &t)) {
			h->anom.free_of_unknown++;
			return 0;
		}
		return free_object(h, &ref, t, rel_ns(h, e->ns) / 1000, true);
	}
	default:
		return hr_stack_event(h, e);
	}
}

/*
 * Events read ahead of the one replayed.  An object's value sits at the
 * end of a chain of loads (page table, span, slot) that miss the caches
 * when the heap is large; each link is fetched while other events are
 * replayed: an event's page-table entry when it is read (AHEAD - 1 events
 * before it is replayed), its span SPAN_AHEAD events before, its slot
 * SLOT_AHEAD before.  One prefetch of the whole chain 8 events ahead left
 * the span and page misses in the way (the lookup that issues it waits
 * for them): 24 % of `report`; twice these distances changed nothing.
 * Stacks need none: the sidecar is read in time order (stack_sidecar.c).
 */
#define AHEAD 16                      /* a power of two */
#define SPAN_AHEAD 8
#define SLOT_AHEAD 4

static bool object_event(const struct trace_event *e)
{
	return e->kind >= TW_EV_HEAP_OBJECT &&
	       e->kind <= TW_EV_HEAP_OBJECT_FREE;
}

static void prefetch_slot(struct heap_replay *h, const struct trace_event *e)
{
	struct hr_private *p = h->priv;

	if (!object_event(e))
		return;
	object_table_prefetch(&p->objects, e->args[0]);
}

/* Replays the events of R's current generation. */
static int replay_gen(struct heap_replay *h, struct trace_reader *r)
{
	struct object_table *ot = &h->priv->objects;
	struct trace_event q[AHEAD];
	size_t head = 0, n = 0;
	int more = 1, rc;

	for (;;) {
		while (n < AHEAD && more > 0) {
			struct trace_event *e = &q[(head + n) % AHEAD];

			more = trace_reader_next_event(r, e);
			if (more > 0) {
				if (object_event(e))
					object_table_prefetch_page(ot,
								   e->args[0]);
				n++;
			}
		}
		if (!n)
			return more;	/* 0 at the end, or the reader's error */
		if (n > SPAN_AHEAD &&
		    object_event(&q[(head + SPAN_AHEAD) % AHEAD]))
			object_table_prefetch_span(
				ot, q[(head + SPAN_AHEAD) % AHEAD].args[0]);
		if (n > SLOT_AHEAD)
			prefetch_slot(h, &q[(head + SLOT_AHEAD) % AHEAD]);
		rc = replay_event(h, r, &q[head]);
		if (rc)
			return rc;
		head = (head + 1) % AHEAD;
		n--;
	}
}

/* The first process record among the sidecars (they all agree). */
static int keep_process(struct heap_replay *h)
{
	const struct stack_sidecar_process *sp =
		stack_sidecar_process(h->priv->sidecar);
	struct hr_process *hp = &h->proc;

	if (hp->valid || !sp)
		return 0;
	hp->exe = strdup(sp->exe);
	hp->go_build_id = strdup(sp->go_build_id);
	hp->gnu_build_id = strdup(sp->gnu_build_id);
	if (!hp->exe || !hp->go_build_id || !hp->gnu_build_id)
		return -ENOMEM;
	hp->text_start = sp->text_start;
	hp->text_limit = sp->text_limit;
	hp->text_offset = sp->text_offset;
	hp->wall_ns = sp->wall_ns;
	hp->mono_ns = sp->mono_ns;
	hp->valid = true;
	return 0;
}

int heap_replay_file(struct heap_replay *h, const char *path,
		     bool use_stacks)
{
	struct hr_private *p = h->priv;
	struct trace_reader *r = NULL;
	int rc;

	h->err[0] = 0;
	rc = trace_reader_open(path, &r);
	if (rc) {
		snprintf(h->err, sizeof(h->err), "%s: %s", path,
			 rc == -EBADMSG ? "not a Go execution trace" :
			 strerror(-rc));
		return rc;
	}
	stack_sidecar_close(p->sidecar);
	p->sidecar = NULL;
	dense_clear(&p->file_stacks);
	p->sidecar_bad = false;
	if (use_stacks) {
		rc = stack_sidecar_open(path, &p->sidecar);
		if (rc && rc != -ENOENT) {
			snprintf(h->err, sizeof(h->err), "%s%s: %s", path,
				 STACK_SIDECAR_SUFFIX, strerror(-rc));
			goto out;
		}
		if (!rc)
			h->have_stacks = true;
		if (!rc && (rc = keep_process(h)))
			goto out;
	}
	free(p->gc_marks);
	p->gc_marks = NULL;
	p->ngc_marks = p->gc_next = 0;
	rc = gc_sidecar_read(path, &p->gc_marks, &p->ngc_marks);
	p->gc_next_ns = p->ngc_marks ? p->gc_marks[0].ns : UINT64_MAX;
	if (rc) {
		snprintf(h->err, sizeof(h->err), "%s%s: %s", path,
			 GC_SIDECAR_SUFFIX, rc == -EINVAL ? "malformed" :
			 strerror(-rc));
		goto out;
	}
	h->files++;
	while ((rc = trace_reader_next_gen(r)) > 0) {
		const struct trace_heap_info *in = trace_reader_info(r);

		if (in->valid) {
			p->info = *in;
			rc = object_table_geometry(&p->objects,
						   in->min_heap_align,
						   in->page_size);
			if (rc)
				break;
		}
		dense_clear(&p->gen_types);
		rc = replay_gen(h, r);
		if (rc)
			break;
		h->generations++;
		rc = hr_gen_end_point(h);
		if (rc)
			break;
	}
	h->format_version = trace_reader_version(r);
	if (p->sidecar_bad)	/* found malformed when a generation was read */
		snprintf(h->err, sizeof(h->err), "%s%s: %s", path,
			 STACK_SIDECAR_SUFFIX, strerror(-rc));
	else if (rc == -E2BIG)
		snprintf(h->err, sizeof(h->err),
			 "%s: more than 2^20 types or 2^24 (type, stack, size) classes",
			 path);
	else if (rc < 0 && !h->err[0])
		snprintf(h->err, sizeof(h->err), "%s: %s", path,
			 *trace_reader_error(r) ? trace_reader_error(r) :
			 strerror(-rc));
out:
	trace_reader_close(r);
	return rc < 0 ? rc : 0;
}

int heap_replay_finish(struct heap_replay *h)
{
	struct hr_private *p = h->priv;
	uint64_t *best;
	size_t i;
	int rc;

	/* The last checkpoint is the trace's end, whatever the gap. */
	if (p->started && (!h->npoints || h->points[h->npoints - 1].t_ns <
					   rel_ns(h, h->t_last_ns))) {
		rc = hr_take_point(h, rel_ns(h, h->t_last_ns));
		if (rc)
			return rc;
	}
	hr_objects_finish(h);
	hr_fold_counts(h);
	for (i = 0; i < h->ntypes; i++)
		hr_leak_rule(h, &h->types[i].leak, false, i,
			  h->types[i].c.live_bytes);
	for (i = 0; i < h->nsites; i++)
		hr_leak_rule(h, &h->sites[i].leak, true, i,
			  h->sites[i].c.live_bytes);
	/* Each site's main type: the one it allocated most bytes of. */
	best = calloc(h->nsites ? h->nsites : 1, sizeof(*best));
	if (!best)
		return -ENOMEM;
	for (i = 0; i < h->nclasses; i++) {
		const struct hr_class *c = &h->classes[i];
		uint32_t s;

		if (!c->stack)
			continue;
		s = h->stacks[c->stack - 1].site;
		if (c->allocs * c->size >= best[s]) {
			best[s] = c->allocs * c->size;
			h->sites[s].top_type = c->type;
		}
	}
	free(best);
	/*
	 * The tables of what is live are done with: a report of many
	 * processes then holds each one's results, not each one's heap.
	 */
	object_table_free(&p->objects);
	u64_map_free(&p->spans);
	u64_map_free(&p->gstacks);
	dense_free(&p->gen_types);
	dense_free(&p->file_stacks);
	u64_map_free(&p->gc.pages);
	h->gc_start_ns = p->gc.start_ns;
	stack_sidecar_close(p->sidecar);
	p->sidecar = NULL;
	return 0;
}
