// SPDX-License-Identifier: BSD-3-Clause
/*
 * stack_sidecar_write.c - writing the allocation-stack file beside each
 * trace file (the daemon, with --stacks).  The format is documented in
 * stack_sidecar.c; strings, frames and stacks are interned so each is
 * written once per file, and allocations are buffered in blocks of
 * BLOCK_ALLOCS (one 'A' record each).
 */
#include "stack_sidecar.h"
#include "stack_sidecar_impl.h"
#include "util/fnv.h"
#include "util/grow.h"
#include "util/u64_map.h"
#include "util/uvarint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


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
	bool have_proc;
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
	key = fnv1a64(s, len, FNV1A64_SEED) | 1;
	if (u64_map_get(&w->str_index, key, &v) &&
	    !strncmp(w->str[v - 1], s, len) && !w->str[v - 1][len]) {
		*sid = (uint32_t)v;
		return 0;
	}
	if (w->nstr >= UINT32_MAX - 1)
		return -E2BIG;
	err = grow_to(&w->str, &w->str_cap, w->nstr + 1, sizeof(*w->str), 16);
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
	key = fnv1a64(&wf.pc, sizeof(wf.pc), FNV1A64_SEED);
	key = fnv1a64(&wf.func, sizeof(wf.func) * 3, key) | 1;
	if (u64_map_get(&w->frame_index, key, &v) &&
	    frame_equal(&w->frame[v - 1], &wf)) {
		*frame_id = (uint32_t)v;
		return 0;
	}
	if (w->nframe >= UINT32_MAX - 1)
		return w->err = -E2BIG;
	err = grow_to(&w->frame, &w->frame_cap, w->nframe + 1,
		      sizeof(*w->frame), 16);
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
	key = fnv1a64(frame_ids, n * sizeof(*frame_ids), FNV1A64_SEED) | 1;
	if (u64_map_get(&w->stack_index, key, &v) &&
	    stack_equal(w, v, frame_ids, n)) {
		*stack_id = (uint32_t)v;
		return 0;
	}
	if (w->nstack >= UINT32_MAX - 2)
		return w->err = -E2BIG;
	err = grow_to(&w->stack_frames, &w->stack_frames_cap,
		      w->nstack_frames + n, sizeof(*w->stack_frames), 16);
	if (!err)
		err = grow_to(&w->stack_off, &w->stack_cap, w->nstack + 2,
			      sizeof(*w->stack_off), 16);
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

int stack_sidecar_writer_set_process(struct stack_sidecar_writer *w,
				     const struct stack_sidecar_process *p)
{
	uint8_t body[PROC_FIELDS * UVARINT_MAX_LEN], *e = body;
	uint32_t exe, go_id, gnu_id;
	int err;

	if (w->err)
		return w->err;
	if (w->have_proc || w->nalloc || w->nblock)
		return -EINVAL;
	err = add_string(w, p->exe, &exe);
	if (!err)
		err = add_string(w, p->go_build_id, &go_id);
	if (!err)
		err = add_string(w, p->gnu_build_id, &gnu_id);
	if (err)
		return w->err = err;
	e = uvarint_put(e, exe);
	e = uvarint_put(e, go_id);
	e = uvarint_put(e, gnu_id);
	e = uvarint_put(e, p->text_start);
	e = uvarint_put(e, p->text_limit);
	e = uvarint_put(e, p->text_offset);
	e = uvarint_put(e, p->wall_ns);
	e = uvarint_put(e, p->mono_ns);
	err = need(w, 1 + UVARINT_MAX_LEN + sizeof(body));
	if (err)
		return err;
	put_byte(w, TAG_PROCESS);
	put_uvarint(w, (uint64_t)(e - body));
	put_bytes(w, body, (size_t)(e - body));
	w->have_proc = true;
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
