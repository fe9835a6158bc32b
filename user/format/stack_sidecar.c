// SPDX-License-Identifier: BSD-3-Clause
/*
 * stack_sidecar.c - the allocation-stack file beside each trace file.
 *
 * Format, version 1 (all integers unsigned LEB128 "uvarints"; zz() is the
 * zigzag map of a signed delta, 0,-1,1,-2.. -> 0,1,2,3..):
 *
 *   "traceaf-stacks 1\n"                    magic and version line
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
 *   'E' nalloc nstack                       end: totals, nothing after it
 *
 * Every ID refers to a record before it, so one pass reads the file.  A
 * file without its 'E' record (the writer died) is malformed, and the
 * writer gives the file its real name only after writing 'E' (until then
 * it is "F.trace.stacks.tmp"), so a sidecar is either complete or absent.
 *
 * An allocation costs 3-8 bytes: the ID delta is 1-3 bytes (objects of one
 * span are close), the timestamp delta 1-2, the stack ID 1-2; an 'A'
 * record holds up to BLOCK_ALLOCS of them.  Strings, frames and stacks are
 * written once per file.
 */
#include "stack_sidecar.h"
#include "util/u64_map.h"
#include "util/uvarint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "traceaf-stacks "
#define VERSION_LINE "1\n"
#define MAX_STRING 4096
/* Allocations per 'A' record: bounds the writer's buffer. */
#define BLOCK_ALLOCS 1024
/* Smallest encodings, to bound counts by the bytes that remain. */
#define MIN_ALLOC_BYTES 3
#define MAX_FILE_SIZE (1ull << 32)
#define OUT_BUF_SIZE 65536

enum rec_tag {
	TAG_STRING = 'S',
	TAG_FRAME = 'F',
	TAG_STACK = 'K',
	TAG_ALLOCS = 'A',
	TAG_END = 'E',
};

static const char unknown[] = "?";

static uint64_t zigzag(uint64_t delta)
{
	return (delta << 1) ^ (uint64_t)((int64_t)delta >> 63);
}

static uint64_t unzigzag(uint64_t v)
{
	return (v >> 1) ^ -(v & 1);
}

/* FNV-1a, for interning; a collision only costs a duplicate record. */
static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

#define HASH_SEED 0xcbf29ce484222325ull

/* ---- reading ---- */

struct alloc_key {
	uint64_t gen, id, ts;
	uint32_t stack;
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
	struct alloc_key *alloc;     /* sorted by (gen, id, ts) */
	size_t nalloc;
};

struct cursor {
	const uint8_t *p, *end;
};

static int get_uvarint(struct cursor *c, uint64_t *v)
{
	return uvarint_get(&c->p, c->end, v) ? -EBADMSG : 0;
}

static int get_id(struct cursor *c, uint32_t max, uint32_t *id)
{
	uint64_t v;

	if (get_uvarint(c, &v) || v > max)
		return -EBADMSG;
	*id = (uint32_t)v;
	return 0;
}

/* Grows *ARR to hold at least N elements of SIZE bytes (doubling). */
static int reserve(void *arr, size_t *cap, size_t n, size_t size)
{
	void **a = arr;
	size_t ncap = *cap ? *cap : 16;
	void *p;

	if (n <= *cap)
		return 0;
	while (ncap < n)
		ncap *= 2;
	p = reallocarray(*a, ncap, size);
	if (!p)
		return -ENOMEM;
	*a = p;
	*cap = ncap;
	return 0;
}

struct parse_caps {
	size_t str, frame, pool, stack, alloc;
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
	if (reserve(&s->str, &cap->str, (size_t)s->nstr + 2, sizeof(*s->str)))
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
	if (reserve(&s->frame, &cap->frame, (size_t)s->nframe + 2,
		    sizeof(*s->frame)))
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
	if (reserve(&s->pool, &cap->pool, s->npool + n, sizeof(*s->pool)) ||
	    reserve(&s->stack_off, &cap->stack, (size_t)s->nstack + 2,
		    sizeof(*s->stack_off)))
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

static int parse_allocs(struct stack_sidecar *s, struct parse_caps *cap,
			struct cursor *c)
{
	uint64_t gen, count, i, id = 0, ts = 0;

	if (get_uvarint(c, &gen) || get_uvarint(c, &count) ||
	    count > (uint64_t)(c->end - c->p) / MIN_ALLOC_BYTES)
		return -EBADMSG;
	if (reserve(&s->alloc, &cap->alloc, s->nalloc + count,
		    sizeof(*s->alloc)))
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		struct alloc_key *a = &s->alloc[s->nalloc];
		uint64_t did, dts;
		uint32_t stack;

		if (get_uvarint(c, &did) || get_uvarint(c, &dts) ||
		    get_id(c, s->nstack, &stack) || stack == 0)
			return -EBADMSG;
		id += unzigzag(did);
		ts += unzigzag(dts);
		a->gen = gen;
		a->id = id;
		a->ts = ts;
		a->stack = stack;
		s->nalloc++;
	}
	return 0;
}

static int cmp_alloc(const void *pa, const void *pb)
{
	const struct alloc_key *a = pa, *b = pb;

	if (a->gen != b->gen)
		return a->gen < b->gen ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
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

int stack_sidecar_parse(const uint8_t *data, size_t len,
			struct stack_sidecar **out)
{
	struct cursor c = { data, data + len };
	struct stack_sidecar *s;
	size_t ml = strlen(MAGIC), vl = strlen(VERSION_LINE);
	int err;

	*out = NULL;
	if (len < ml || memcmp(data, MAGIC, ml))
		return -EBADMSG;
	c.p += ml;
	if (len - ml < vl || memcmp(c.p, VERSION_LINE, vl))
		return -EPROTONOSUPPORT;
	c.p += vl;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
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
	if (s->nalloc)
		qsort(s->alloc, s->nalloc, sizeof(*s->alloc), cmp_alloc);
	*out = s;
	return 0;
}

int stack_sidecar_open(const char *trace_path, struct stack_sidecar **out)
{
	char path[4096];
	struct stat st;
	uint8_t *buf;
	size_t off = 0;
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
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > MAX_FILE_SIZE) {
		close(fd);
		return -EBADMSG;
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (off < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + off, (size_t)st.st_size - off);

		if (n <= 0) {
			err = n < 0 ? -errno : -EBADMSG;
			free(buf);
			close(fd);
			return err;
		}
		off += (size_t)n;
	}
	close(fd);
	err = stack_sidecar_parse(buf, off, out);
	free(buf);
	return err;
}

int stack_sidecar_lookup(const struct stack_sidecar *s, uint64_t gen,
			 uint64_t id, uint64_t ts, uint32_t *stack_id)
{
	struct alloc_key key = { .gen = gen, .id = id, .ts = ts };
	const struct alloc_key *a;

	if (!s->nalloc)
		return -ENOENT;
	a = bsearch(&key, s->alloc, s->nalloc, sizeof(*s->alloc), cmp_alloc);
	if (!a)
		return -ENOENT;
	*stack_id = a->stack;
	return 0;
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
	free(s);
}

/* ---- writing ---- */

struct wframe {
	uint64_t pc;
	uint32_t func, file, line;
};

struct walloc {
	uint64_t id, ts;
	uint32_t stack;
};

struct stack_sidecar_writer {
	int dirfd;
	int fd;
	char *tmp_name, *final_name;
	int err;                     /* first error; sticky */

	uint8_t out[OUT_BUF_SIZE];
	size_t out_len;
	uint64_t bytes;

	struct u64_map str_index, frame_index, stack_index;  /* hash -> ID */
	char **str;                  /* [id - 1] */
	size_t nstr, str_cap;
	struct wframe *frame;        /* [id - 1] */
	size_t nframe, frame_cap;
	uint32_t *stack_frames;      /* frame IDs of every stack */
	size_t nstack_frames, stack_frames_cap;
	size_t *stack_off;           /* [id]: end of stack id in stack_frames */
	size_t nstack, stack_cap;

	uint64_t block_gen;
	struct walloc block[BLOCK_ALLOCS];
	size_t nblock;
	uint64_t nalloc;
};

static int flush_out(struct stack_sidecar_writer *w)
{
	size_t off = 0;

	while (off < w->out_len) {
		ssize_t n = write(w->fd, w->out + off, w->out_len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			w->err = n < 0 ? -errno : -EIO;
			return w->err;
		}
		off += (size_t)n;
	}
	w->out_len = 0;
	return 0;
}

/* Room for N more bytes in the buffer (N <= OUT_BUF_SIZE). */
static int need(struct stack_sidecar_writer *w, size_t n)
{
	if (w->err)
		return w->err;
	if (w->out_len + n > sizeof(w->out))
		return flush_out(w);
	return 0;
}

static void put_byte(struct stack_sidecar_writer *w, uint8_t b)
{
	w->out[w->out_len++] = b;
	w->bytes++;
}

static void put_uvarint(struct stack_sidecar_writer *w, uint64_t v)
{
	uint8_t *start = w->out + w->out_len;
	size_t n = (size_t)(uvarint_put(start, v) - start);

	w->out_len += n;
	w->bytes += n;
}

static void put_bytes(struct stack_sidecar_writer *w, const void *p,
		      size_t n)
{
	memcpy(w->out + w->out_len, p, n);
	w->out_len += n;
	w->bytes += n;
}


static int flush_block(struct stack_sidecar_writer *w)
{
	uint64_t id = 0, ts = 0;
	size_t i;
	int err;

	if (!w->nblock)
		return 0;
	err = need(w, 1 + 2 * UVARINT_MAX_LEN);
	if (err)
		return err;
	put_byte(w, TAG_ALLOCS);
	put_uvarint(w, w->block_gen);
	put_uvarint(w, w->nblock);
	for (i = 0; i < w->nblock; i++) {
		const struct walloc *a = &w->block[i];

		err = need(w, 3 * UVARINT_MAX_LEN);
		if (err)
			return err;
		put_uvarint(w, zigzag(a->id - id));
		put_uvarint(w, zigzag(a->ts - ts));
		put_uvarint(w, a->stack);
		id = a->id;
		ts = a->ts;
	}
	w->nalloc += w->nblock;
	w->nblock = 0;
	return 0;
}

/* Interns string S (NULL or "" = unknown, ID 0). */
static int add_string(struct stack_sidecar_writer *w, const char *s,
		      uint32_t *sid)
{
	uint64_t key, v;
	size_t len;
	int err;

	*sid = 0;
	if (!s || !*s || !strcmp(s, unknown))
		return 0;
	len = strnlen(s, MAX_STRING);
	key = hash_bytes(HASH_SEED, s, len) | 1;
	if (u64_map_get(&w->str_index, key, &v) &&
	    !strncmp(w->str[v - 1], s, len) && !w->str[v - 1][len]) {
		*sid = (uint32_t)v;
		return 0;
	}
	if (w->nstr >= UINT32_MAX - 1)
		return -E2BIG;
	err = reserve(&w->str, &w->str_cap, w->nstr + 1, sizeof(*w->str));
	if (err)
		return err;
	w->str[w->nstr] = strndup(s, len);
	if (!w->str[w->nstr])
		return -ENOMEM;
	w->nstr++;
	if (!u64_map_get(&w->str_index, key, &v) &&
	    u64_map_put(&w->str_index, key, w->nstr))
		return -ENOMEM;
	err = need(w, 1 + UVARINT_MAX_LEN + len);
	if (err)
		return err;
	put_byte(w, TAG_STRING);
	put_uvarint(w, len);
	put_bytes(w, s, len);
	*sid = (uint32_t)w->nstr;
	return 0;
}

static bool frame_equal(const struct wframe *a, const struct wframe *b)
{
	return a->pc == b->pc && a->func == b->func && a->file == b->file &&
	       a->line == b->line;
}

int stack_sidecar_writer_add_frame(struct stack_sidecar_writer *w,
				   const struct stack_frame *f,
				   uint32_t *frame_id)
{
	struct wframe wf = { .pc = f->pc, .line = f->line };
	uint64_t key, v;
	int err;

	if (w->err)
		return w->err;
	err = add_string(w, f->func, &wf.func);
	if (!err)
		err = add_string(w, f->file, &wf.file);
	if (err)
		return w->err = err;
	key = hash_bytes(HASH_SEED, &wf.pc, sizeof(wf.pc));
	key = hash_bytes(key, &wf.func, sizeof(wf.func) * 3) | 1;
	if (u64_map_get(&w->frame_index, key, &v) &&
	    frame_equal(&w->frame[v - 1], &wf)) {
		*frame_id = (uint32_t)v;
		return 0;
	}
	if (w->nframe >= UINT32_MAX - 1)
		return w->err = -E2BIG;
	err = reserve(&w->frame, &w->frame_cap, w->nframe + 1,
		      sizeof(*w->frame));
	if (err)
		return w->err = err;
	w->frame[w->nframe++] = wf;
	if (!u64_map_get(&w->frame_index, key, &v) &&
	    u64_map_put(&w->frame_index, key, w->nframe))
		return w->err = -ENOMEM;
	err = need(w, 1 + 4 * UVARINT_MAX_LEN);
	if (err)
		return err;
	put_byte(w, TAG_FRAME);
	put_uvarint(w, wf.pc);
	put_uvarint(w, wf.func);
	put_uvarint(w, wf.file);
	put_uvarint(w, wf.line);
	*frame_id = (uint32_t)w->nframe;
	return 0;
}

static bool stack_equal(const struct stack_sidecar_writer *w, uint64_t sid,
			const uint32_t *frame_ids, size_t n)
{
	size_t start = w->stack_off[sid - 1], end = w->stack_off[sid];

	return end - start == n &&
	       !memcmp(&w->stack_frames[start], frame_ids,
		       n * sizeof(*frame_ids));
}

int stack_sidecar_writer_add_stack(struct stack_sidecar_writer *w,
				   const uint32_t *frame_ids, size_t n,
				   uint32_t *stack_id)
{
	uint64_t key, v;
	size_t i;
	int err;

	if (w->err)
		return w->err;
	if (n == 0 || n > STACK_SIDECAR_MAX_FRAMES)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (frame_ids[i] == 0 || frame_ids[i] > w->nframe)
			return -EINVAL;
	key = hash_bytes(HASH_SEED, frame_ids, n * sizeof(*frame_ids)) | 1;
	if (u64_map_get(&w->stack_index, key, &v) &&
	    stack_equal(w, v, frame_ids, n)) {
		*stack_id = (uint32_t)v;
		return 0;
	}
	if (w->nstack >= UINT32_MAX - 2)
		return w->err = -E2BIG;
	err = reserve(&w->stack_frames, &w->stack_frames_cap,
		      w->nstack_frames + n, sizeof(*w->stack_frames));
	if (!err)
		err = reserve(&w->stack_off, &w->stack_cap, w->nstack + 2,
			      sizeof(*w->stack_off));
	if (err)
		return w->err = err;
	memcpy(&w->stack_frames[w->nstack_frames], frame_ids,
	       n * sizeof(*frame_ids));
	w->nstack_frames += n;
	w->stack_off[++w->nstack] = w->nstack_frames;
	if (!u64_map_get(&w->stack_index, key, &v) &&
	    u64_map_put(&w->stack_index, key, w->nstack))
		return w->err = -ENOMEM;
	err = need(w, 1 + (n + 1) * UVARINT_MAX_LEN);
	if (err)
		return err;
	put_byte(w, TAG_STACK);
	put_uvarint(w, n);
	for (i = 0; i < n; i++)
		put_uvarint(w, frame_ids[i]);
	*stack_id = (uint32_t)w->nstack;
	return 0;
}

int stack_sidecar_writer_add_alloc(struct stack_sidecar_writer *w,
				   uint64_t gen, uint64_t id, uint64_t ts,
				   uint32_t stack_id)
{
	struct walloc *a;
	int err;

	if (w->err)
		return w->err;
	if (stack_id == 0 || stack_id > w->nstack)
		return -EINVAL;
	if (w->nblock && (gen != w->block_gen || w->nblock == BLOCK_ALLOCS)) {
		err = flush_block(w);
		if (err)
			return err;
	}
	w->block_gen = gen;
	a = &w->block[w->nblock++];
	a->id = id;
	a->ts = ts;
	a->stack = stack_id;
	return 0;
}

static void writer_free(struct stack_sidecar_writer *w)
{
	size_t i;

	if (w->fd >= 0)
		close(w->fd);
	for (i = 0; i < w->nstr; i++)
		free(w->str[i]);
	free(w->str);
	free(w->frame);
	free(w->stack_frames);
	free(w->stack_off);
	u64_map_free(&w->str_index);
	u64_map_free(&w->frame_index);
	u64_map_free(&w->stack_index);
	free(w->tmp_name);
	free(w->final_name);
	free(w);
}

int stack_sidecar_writer_open_at(int dirfd, const char *trace_name,
				 struct stack_sidecar_writer **out)
{
	struct stack_sidecar_writer *w;
	int err;

	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->dirfd = dirfd;
	w->fd = -1;
	u64_map_init(&w->str_index);
	u64_map_init(&w->frame_index);
	u64_map_init(&w->stack_index);
	w->stack_off = calloc(1, sizeof(*w->stack_off));
	if (!w->stack_off ||
	    asprintf(&w->tmp_name, "%s%s.tmp", trace_name,
		     STACK_SIDECAR_SUFFIX) < 0 ||
	    asprintf(&w->final_name, "%s%s", trace_name,
		     STACK_SIDECAR_SUFFIX) < 0) {
		w->tmp_name = w->final_name = NULL;
		writer_free(w);
		return -ENOMEM;
	}
	w->stack_cap = 1;
	w->fd = openat(dirfd, w->tmp_name,
		       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		       0640);
	if (w->fd < 0 && errno == EEXIST) {
		/* Left by a writer that died: never complete, so ours. */
		if (!unlinkat(dirfd, w->tmp_name, 0))
			w->fd = openat(dirfd, w->tmp_name,
				       O_WRONLY | O_CREAT | O_EXCL |
					       O_NOFOLLOW | O_CLOEXEC,
				       0640);
	}
	if (w->fd < 0) {
		err = -errno;
		writer_free(w);
		return err;
	}
	put_bytes(w, MAGIC VERSION_LINE, strlen(MAGIC VERSION_LINE));
	*out = w;
	return 0;
}

int stack_sidecar_writer_open(const char *trace_path,
			      struct stack_sidecar_writer **out)
{
	return stack_sidecar_writer_open_at(AT_FDCWD, trace_path, out);
}

int stack_sidecar_writer_close(struct stack_sidecar_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = flush_block(w);
	if (!err)
		err = need(w, 1 + 2 * UVARINT_MAX_LEN);
	if (!err) {
		put_byte(w, TAG_END);
		put_uvarint(w, w->nalloc);
		put_uvarint(w, w->nstack);
		err = flush_out(w);
	}
	if (!err && close(w->fd))
		err = -errno;
	w->fd = -1;
	if (!err && renameat(w->dirfd, w->tmp_name, w->dirfd, w->final_name))
		err = -errno;
	if (err)
		unlinkat(w->dirfd, w->tmp_name, 0);
	writer_free(w);
	return err;
}

void stack_sidecar_writer_discard(struct stack_sidecar_writer *w)
{
	if (!w)
		return;
	unlinkat(w->dirfd, w->tmp_name, 0);
	writer_free(w);
}

void stack_sidecar_writer_get_stats(const struct stack_sidecar_writer *w,
				    struct stack_sidecar_writer_stats *st)
{
	st->allocs = w->nalloc + w->nblock;
	st->frames = (uint32_t)w->nframe;
	st->stacks = (uint32_t)w->nstack;
	st->bytes = w->bytes;
}
