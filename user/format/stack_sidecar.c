// SPDX-License-Identifier: BSD-3-Clause
/*
 * stack_sidecar.c - the allocation-stack file beside each trace file.
 *
 * Format, version 2 (all integers unsigned LEB128 "uvarints"; zz() is the
 * zigzag map of a signed delta, 0,-1,1,-2.. -> 0,1,2,3..):
 *
 *   "traceaf-stacks 2\n"                    magic and version line
 *   then records, each a one-byte tag and its fields:
 *   'S' len bytes[len]                      string; IDs 1, 2, .. in order
 *   'F' pc func file line                   frame; func and file are
 *                                           string IDs (0 = "?"); frame
 *                                           IDs 1, 2, .. in order
 *   'K' n frame[n]                          stack of n (1..256) frames,
 *                                           innermost first; IDs 1, 2, ..
 *   'A' gen count { zz(did) zz(dts) stack }[count]
 *                                           allocations of generation gen:
 *                                           object ID and timestamp as
 *                                           deltas from the previous entry
 *                                           of the record (the first from
 *                                           0), the stack ID
 *   'M' len field[..]                       the process, at most once,
 *                                           before any 'A': len bytes of
 *                                           uvarints, in this order: exe,
 *                                           go build ID, GNU build ID
 *                                           (string IDs, 0 = none),
 *                                           text start, limit, file offset
 *                                           (link addresses, like the PCs),
 *                                           wall ns, monotonic ns (one
 *                                           moment on both clocks).  Fields
 *                                           past those a reader knows are
 *                                           skipped, missing ones are 0, so
 *                                           fields can be added at the end.
 *   'E' nalloc nstack                       end: totals, nothing after it
 *
 * Version 1 is the same without 'M' (before the pprof profile needed the
 * binary and the wall clock); readers take both.
 *
 * Every ID refers to a record before it, so one pass reads the file.  A
 * file without its 'E' record (the writer died) is malformed, and the
 * writer gives the file its real name only after writing 'E' (until then
 * it is "F.trace.stacks.tmp"), so a sidecar is either complete or absent.
 *
 * Reading: strings, frames and stacks are decoded at open; the 'A'
 * records are only skipped then (their values' ends found, not their
 * stack IDs checked) and kept encoded (3-8 bytes an allocation, not a
 * 32-byte key), and a lookup decodes (and checks) the records of its generation
 * when the generation changes, sorted by timestamp: report replays a trace
 * generation by generation and in time order, so memory holds one
 * generation's allocations and each lookup is a step or two on from the
 * last one, in memory read in order (a binary search over every
 * allocation of a 128 MiB file was 22 cache misses per event and 350 MiB;
 * a hash table of the generation, a miss to build and one to probe).
 *
 * An allocation costs 3-8 bytes: the ID delta is 1-3 bytes (objects of one
 * span are close), the timestamp delta 1-2, the stack ID 1-2; an 'A'
 * record holds up to BLOCK_ALLOCS of them.  Strings, frames and stacks are
 * written once per file.
 */
#include "stack_sidecar.h"
#include "stack_sidecar_impl.h"
#include "util/grow.h"
#include "util/uvarint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct alloc_key {
	uint64_t id, ts;
	uint32_t stack;
	uint32_t seq;                /* order in the file: the first of equal
					(id, ts) keys answers */
};

/* One 'A' record: its generation, where its entries start, how many,
 * and the stacks defined before it (its stack IDs are checked against
 * that when its generation is decoded). */
struct alloc_rec {
	uint64_t gen;
	size_t off;
	uint32_t count;
	uint32_t nstack;
};

struct stack_sidecar {
	char *arena;                 /* strings, NUL-terminated */
	size_t arena_len;
	const char **str;            /* [id], [0] = "?" */
	uint32_t nstr;
	struct stack_frame *frame;   /* [id], [0] unused */
	uint32_t nframe;
	struct stack_frame *pool;    /* frames of every stack, in order */
	size_t npool;
	size_t *stack_off;           /* stack id's frames: pool[off[id-1]..off[id]) */
	uint32_t nstack;
	uint8_t *data;               /* the file's bytes, owned */
	size_t len;
	bool mapped;                 /* data is the file mapped, not malloc'd */
	struct alloc_rec *rec;       /* the 'A' records, in file order */
	size_t nrec, nalloc;
	/* The generation decoded last: its allocations sorted by (ts, id),
	 * and where the last lookup's timestamp starts (the replay asks in
	 * time order, so the next answer is a few entries on). */
	bool have_gen;
	uint64_t gen;
	struct alloc_key *alloc;
	size_t ngen, gen_cap, cur;
	struct stack_sidecar_process proc;
	bool have_proc;
};

struct cursor {
	const uint8_t *p, *end;
};

/* The one-byte case first: most timestamp deltas and stack IDs of an
 * 'A' record. */
static inline int get_uvarint(struct cursor *c, uint64_t *v)
{
	if (c->p < c->end && *c->p < 0x80) {
		*v = *c->p++;
		return 0;
	}
	return uvarint_get(&c->p, c->end, v) ? -EBADMSG : 0;
}

static inline int get_id(struct cursor *c, uint32_t max, uint32_t *id)
{
	uint64_t v;

	if (get_uvarint(c, &v) || v > max)
		return -EBADMSG;
	*id = (uint32_t)v;
	return 0;
}


struct parse_caps {
	size_t str, frame, pool, stack, rec;
};

static int parse_string(struct stack_sidecar *s, struct parse_caps *cap,
			struct cursor *c)
{
	uint64_t len;
	char *dst;

	if (get_uvarint(c, &len) || len > MAX_STRING ||
	    len > (uint64_t)(c->end - c->p) || s->nstr == UINT32_MAX - 1)
		return -EBADMSG;
	if (memchr(c->p, 0, len))
		return -EBADMSG;
	if (grow_to(&s->str, &cap->str, (size_t)s->nstr + 2, sizeof(*s->str),
		    16))
		return -ENOMEM;
	/* Each string takes >= 2 bytes of file (tag, length): the arena,
	 * sized like the file, always has room for it and its NUL. */
	dst = s->arena + s->arena_len;
	memcpy(dst, c->p, len);
	dst[len] = '\0';
	s->arena_len += len + 1;
	c->p += len;
	s->str[++s->nstr] = dst;
	return 0;
}

static int parse_frame(struct stack_sidecar *s, struct parse_caps *cap,
		       struct cursor *c)
{
	struct stack_frame *f;
	uint32_t func, file;
	uint64_t pc, line;

	if (get_uvarint(c, &pc) || get_id(c, s->nstr, &func) ||
	    get_id(c, s->nstr, &file) || get_uvarint(c, &line) ||
	    line > UINT32_MAX || s->nframe == UINT32_MAX - 1)
		return -EBADMSG;
	if (grow_to(&s->frame, &cap->frame, (size_t)s->nframe + 2,
		    sizeof(*s->frame), 16))
		return -ENOMEM;
	f = &s->frame[++s->nframe];
	f->pc = pc;
	f->func = s->str[func];
	f->file = s->str[file];
	f->line = (uint32_t)line;
	return 0;
}

static int parse_stack(struct stack_sidecar *s, struct parse_caps *cap,
		       struct cursor *c)
{
	uint64_t n, i;

	if (get_uvarint(c, &n) || n == 0 || n > STACK_SIDECAR_MAX_FRAMES ||
	    n > (uint64_t)(c->end - c->p) || s->nstack == UINT32_MAX - 1)
		return -EBADMSG;
	if (grow_to(&s->pool, &cap->pool, s->npool + n, sizeof(*s->pool),
		    16) ||
	    grow_to(&s->stack_off, &cap->stack, (size_t)s->nstack + 2,
		    sizeof(*s->stack_off), 16))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		uint32_t fid;

		if (get_id(c, s->nframe, &fid) || fid == 0)
			return -EBADMSG;
		s->pool[s->npool++] = s->frame[fid];
	}
	s->stack_off[++s->nstack] = s->npool;
	return 0;
}

/*
 * Skips N uvarints at C as uvarint_get would read them, but without
 * decoding: counts the bytes below 0x80 (each ends a value), eight at a
 * time.  A value of 10 bytes or more (9 continuation bytes in a row),
 * which uvarint_get may refuse, or the file's last 7 bytes, return
 * -EAGAIN and the caller skips with uvarint_get.  (An entry's deltas
 * take 1-3 bytes; a record's first, from 0, up to 5.)
 */
static int skip_short_uvarints(struct cursor *c, uint64_t n)
{
	const uint64_t hi = 0x8080808080808080ull;
	const uint8_t *p = c->p;
	unsigned run = 0;	/* continuation bytes ending the last word */

	while (n) {
		uint64_t w, end;
		unsigned k;

		if (c->end - p < 8)
			return -EAGAIN;
		memcpy(&w, p, 8);
		end = ~w & hi;
		if (!end) {
			run += 8;
			if (run >= UVARINT_MAX_LEN - 1)
				return -EAGAIN;
			p += 8;
			continue;
		}
		if (run + (unsigned)__builtin_ctzll(end) / 8 >=
		    UVARINT_MAX_LEN - 1)
			return -EAGAIN;
		k = (unsigned)__builtin_popcountll(end);
		if (k < n) {
			n -= k;
			run = (unsigned)__builtin_clzll(end) / 8;
			p += 8;
			continue;
		}
		while (--n)	/* the N-th end in this word */
			end &= end - 1;
		p += __builtin_ctzll(end) / 8 + 1;
	}
	c->p = p;
	return 0;
}

/*
 * Finds where an 'A' record ends; its entries are decoded, and their
 * stack IDs checked, only when its generation is loaded (load_gen), so
 * that each allocation is decoded once, not checked at open then decoded
 * again: 2 % of a report's instructions with stacks.
 */
static int parse_allocs(struct stack_sidecar *s, struct parse_caps *cap,
			struct cursor *c)
{
	uint64_t gen, count, i, v;
	struct alloc_rec *r;
	struct cursor start;

	if (get_uvarint(c, &gen) || get_uvarint(c, &count) ||
	    count > (uint64_t)(c->end - c->p) / MIN_ALLOC_BYTES ||
	    count > UINT32_MAX || (count && !s->nstack))
		return -EBADMSG;
	if (grow_to(&s->rec, &cap->rec, s->nrec + 1, sizeof(*s->rec), 16))
		return -ENOMEM;
	r = &s->rec[s->nrec++];
	r->gen = gen;
	r->off = (size_t)(c->p - s->data);
	r->count = (uint32_t)count;
	r->nstack = s->nstack;
	start = *c;
	if (skip_short_uvarints(c, 3 * count)) {
		*c = start;
		for (i = 0; i < 3 * count; i++)
			if (get_uvarint(c, &v))
				return -EBADMSG;
	}
	s->nalloc += count;
	return 0;
}

/* A string ID of an 'M' field: 0 is "none", "" (not the frames' "?"). */
static int proc_string(const struct stack_sidecar *s, uint64_t id,
		       const char **out)
{
	if (id > s->nstr)
		return -EBADMSG;
	*out = id ? s->str[id] : "";
	return 0;
}

static int parse_process(struct stack_sidecar *s, struct cursor *c)
{
	struct stack_sidecar_process *p = &s->proc;
	uint64_t len, v[PROC_FIELDS] = { 0 };
	struct cursor f;
	size_t i;

	if (s->have_proc || s->nalloc || get_uvarint(c, &len) ||
	    len > (uint64_t)(c->end - c->p))
		return -EBADMSG;
	f.p = c->p;
	f.end = c->p + len;
	c->p = f.end;
	for (i = 0; i < PROC_FIELDS && f.p < f.end; i++)
		if (get_uvarint(&f, &v[i]))
			return -EBADMSG;
	if (proc_string(s, v[0], &p->exe) ||
	    proc_string(s, v[1], &p->go_build_id) ||
	    proc_string(s, v[2], &p->gnu_build_id))
		return -EBADMSG;
	p->text_start = v[3];
	p->text_limit = v[4];
	p->text_offset = v[5];
	p->wall_ns = v[6];
	p->mono_ns = v[7];
	s->have_proc = true;
	return 0;
}

static int parse_records(struct stack_sidecar *s, struct cursor *c)
{
	struct parse_caps cap = { 0 };
	int err;

	while (c->p < c->end) {
		uint8_t tag = *c->p++;
		uint64_t nalloc, nstack;

		switch (tag) {
		case TAG_STRING:
			err = parse_string(s, &cap, c);
			break;
		case TAG_FRAME:
			err = parse_frame(s, &cap, c);
			break;
		case TAG_STACK:
			err = parse_stack(s, &cap, c);
			break;
		case TAG_ALLOCS:
			err = parse_allocs(s, &cap, c);
			break;
		case TAG_PROCESS:
			err = parse_process(s, c);
			break;
		case TAG_END:
			if (get_uvarint(c, &nalloc) ||
			    get_uvarint(c, &nstack) || nalloc != s->nalloc ||
			    nstack != s->nstack || c->p != c->end)
				return -EBADMSG;
			return 0;
		default:
			return -EBADMSG;
		}
		if (err)
			return err;
	}
	return -EBADMSG;	/* no end record: cut short */
}

/* Gives back DATA, malloc'd or MAPPED. */
static void release(uint8_t *data, size_t len, bool mapped)
{
	if (mapped)
		munmap(data, len);
	else
		free(data);
}

/* Parses DATA (malloc'd, or MAPPED), which S then owns (released by
 * stack_sidecar_close, or here on failure). */
static int parse_owned(uint8_t *data, size_t len, bool mapped,
		       struct stack_sidecar **out)
{
	struct cursor c = { data, data + len };
	struct stack_sidecar *s;
	size_t ml = strlen(MAGIC), vl = strlen(VERSION_LINE);
	static const char v1[] = "1\n";
	int err;

	*out = NULL;
	if (len < ml || memcmp(data, MAGIC, ml)) {
		release(data, len, mapped);
		return -EBADMSG;
	}
	c.p += ml;
	/* Both version lines are 2 bytes long. */
	if (len - ml < vl ||
	    (memcmp(c.p, VERSION_LINE, vl) && memcmp(c.p, v1, vl))) {
		release(data, len, mapped);
		return -EPROTONOSUPPORT;
	}
	c.p += vl;
	s = calloc(1, sizeof(*s));
	if (!s) {
		release(data, len, mapped);
		return -ENOMEM;
	}
	s->data = data;
	s->len = len;
	s->mapped = mapped;
	s->arena = malloc(len);
	s->str = malloc(sizeof(*s->str));
	s->stack_off = calloc(1, sizeof(*s->stack_off));
	if (!s->arena || !s->str || !s->stack_off) {
		stack_sidecar_close(s);
		return -ENOMEM;
	}
	s->str[0] = unknown;
	err = parse_records(s, &c);
	if (err) {
		stack_sidecar_close(s);
		return err;
	}
	*out = s;
	return 0;
}

int stack_sidecar_parse(const uint8_t *data, size_t len,
			struct stack_sidecar **out)
{
	uint8_t *copy = malloc(len ? len : 1);

	*out = NULL;
	if (!copy)
		return -ENOMEM;
	memcpy(copy, data, len);
	return parse_owned(copy, len, false, out);
}

int stack_sidecar_open(const char *trace_path, struct stack_sidecar **out)
{
	char path[4096];
	struct stat st;
	void *m;
	int fd, err;

	*out = NULL;
	if ((size_t)snprintf(path, sizeof(path), "%s%s", trace_path,
			     STACK_SIDECAR_SUFFIX) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	/* Empty: not even the magic line, as parse_owned would say. */
	if (!S_ISREG(st.st_mode) || !st.st_size ||
	    (uint64_t)st.st_size > MAX_FILE_SIZE) {
		close(fd);
		return -EBADMSG;
	}
	/*
	 * Mapped, not read: a read copied the file (420 MB for the 1 GB
	 * set) into fresh pages the kernel had to zero first, a second of
	 * system time that the page cache's own pages save.
	 */
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	err = m == MAP_FAILED ? -errno : 0;
	close(fd);
	if (err)
		return err;
	return parse_owned(m, (size_t)st.st_size, true, out);
}

static bool key_less(const struct alloc_key *a, const struct alloc_key *b)
{
	if (a->ts != b->ts)
		return a->ts < b->ts;
	return a->id != b->id ? a->id < b->id : a->seq < b->seq;
}

static int key_cmp(const void *x, const void *y)
{
	return key_less(x, y) ? -1 : key_less(y, x) ? 1 : 0;
}

/*
 * Sorts A[0..N) by (ts, id, seq).  The daemon writes allocations in the
 * order it took them from the ring buffer, which is time order but for
 * neighbours a few places apart: an insertion sort does that in one pass;
 * if the input is further from sorted than that, qsort.
 */
static void sort_keys(struct alloc_key *a, size_t n)
{
	size_t i, moves = 0, budget = 8 * n;

	for (i = 1; i < n; i++) {
		struct alloc_key t = a[i];
		size_t j = i;

		while (j && key_less(&t, &a[j - 1])) {
			a[j] = a[j - 1];
			j--;
			if (++moves > budget) {
				a[j] = t;
				qsort(a, n, sizeof(*a), key_cmp);
				return;
			}
		}
		a[j] = t;
	}
}

/* Decodes generation GEN's 'A' records into s->alloc, sorted. */
static int load_gen(struct stack_sidecar *s, uint64_t gen)
{
	size_t i, cap = 0;
	uint32_t k;

	s->ngen = s->cur = 0;
	s->have_gen = false;
	for (i = 0; i < s->nrec; i++)
		if (s->rec[i].gen == gen)
			cap += s->rec[i].count;
	if (grow_to(&s->alloc, &s->gen_cap, cap, sizeof(*s->alloc), 16))
		return -ENOMEM;
	for (i = 0; i < s->nrec; i++) {
		const struct alloc_rec *r = &s->rec[i];
		struct cursor c = { s->data + r->off, s->data + s->len };
		uint64_t id = 0, ts = 0, did = 0, dts = 0;

		if (r->gen != gen)
			continue;
		for (k = 0; k < r->count; k++) {
			struct alloc_key *a = &s->alloc[s->ngen];

			/* parse_allocs found the values' ends, not their
			 * stacks: a stack not defined before its record
			 * fails the lookup. */
			get_uvarint(&c, &did);
			get_uvarint(&c, &dts);
			if (get_id(&c, r->nstack, &a->stack) || !a->stack)
				return -EBADMSG;
			id += unzigzag(did);
			ts += unzigzag(dts);
			a->id = id;
			a->ts = ts;
			a->seq = (uint32_t)s->ngen++;
		}
	}
	sort_keys(s->alloc, s->ngen);
	s->gen = gen;
	s->have_gen = true;
	return 0;
}

/* The first entry with a timestamp >= TS. */
static size_t first_at(struct stack_sidecar *s, uint64_t ts)
{
	const struct alloc_key *a = s->alloc;
	size_t lo = 0, hi = s->ngen, i = s->cur;
	unsigned step;

	if (i > s->ngen)
		i = s->ngen;
	if (!i || a[i - 1].ts < ts) {
		/* At or after the last answer: a few steps, else search. */
		for (step = 0; step < 8 && i < s->ngen && a[i].ts < ts; step++)
			i++;
		if (i == s->ngen || a[i].ts >= ts)
			return i;
		lo = i;
	} else {
		hi = i;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid].ts < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int stack_sidecar_lookup(struct stack_sidecar *s, uint64_t gen,
			 uint64_t id, uint64_t ts, uint32_t *stack_id)
{
	size_t i;
	int err;

	if (!s->nalloc)
		return -ENOENT;
	if (!s->have_gen || s->gen != gen) {
		err = load_gen(s, gen);
		if (err)
			return err;
	}
	s->cur = i = first_at(s, ts);
	for (; i < s->ngen && s->alloc[i].ts == ts; i++) {
		if (s->alloc[i].id == id) {
			*stack_id = s->alloc[i].stack;
			return 0;
		}
		if (s->alloc[i].id > id)
			break;
	}
	return -ENOENT;
}

const struct stack_sidecar_process *
stack_sidecar_process(const struct stack_sidecar *s)
{
	return s->have_proc ? &s->proc : NULL;
}

int stack_sidecar_frames(const struct stack_sidecar *s, uint32_t stack_id,
			 const struct stack_frame **frames, size_t *n)
{
	if (stack_id == 0 || stack_id > s->nstack)
		return -ENOENT;
	*frames = &s->pool[s->stack_off[stack_id - 1]];
	*n = s->stack_off[stack_id] - s->stack_off[stack_id - 1];
	return 0;
}

void stack_sidecar_close(struct stack_sidecar *s)
{
	if (!s)
		return;
	free(s->arena);
	free(s->str);
	free(s->frame);
	free(s->pool);
	free(s->stack_off);
	free(s->alloc);
	free(s->rec);
	release(s->data, s->len, s->mapped);
	free(s);
}

