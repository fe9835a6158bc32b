// SPDX-License-Identifier: BSD-3-Clause
/*
 * profile_counts.c - the buckets' own sample counts (profile_counts.h).
 */
#include "attach/profile_counts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/mem_batch.h"
#include "attach/target.h"
#include "inspect/go_layout.h"
#include "inspect/runtime_globals.h"
#include "util/grow.h"

/* memRecord: active, then future[3]. */
#define PC_CYCLES 4
/* The runtime's own limit on a profile stack is 1024 frames
 * (debug.profstackdepth); more is not a bucket. */
#define PC_NSTK_MAX 1024
/* A list longer than this is not one (a read gone wrong). */
#define PC_BUCKETS_MAX (1u << 22)
/* Times a bucket is read again when a flush moved its counts. */
#define PC_REREADS 4

int profile_counts_open(const struct go_binary *bin, uint64_t bias,
			const struct go_layout *l, struct profile_counts *pc,
			char *err, size_t errlen)
{
	uint64_t mb, cyc;

	memset(pc, 0, sizeof(*pc));
	if (go_runtime_global_addr(bin, "runtime.mbuckets", &mb) ||
	    go_runtime_global_addr(bin, "runtime.mProfCycle", &cyc)) {
		snprintf(err, errlen, "runtime.mbuckets or runtime.mProfCycle "
			 "not found in the binary");
		return -ENOENT;
	}
	if (!go_field_present(&l->bucket_allnext) ||
	    !go_field_present(&l->bucket_nstk) ||
	    !go_field_present(&l->memrecord_future) ||
	    (l->memrecord_future.off != 16 && l->memrecord_future.off != 32)) {
		snprintf(err, errlen, "runtime layout of memRecord unknown");
		return -ENOENT;
	}
	pc->batch = malloc(sizeof(*pc->batch));
	if (!pc->batch) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	pc->mbuckets = mb + bias;
	pc->mprof_cycle = cyc + bias;
	pc->allnext = (uint32_t)l->bucket_allnext.off;
	pc->nstk = (uint32_t)l->bucket_nstk.off;
	pc->cycle_bytes = (uint32_t)l->memrecord_future.off;
	return 0;
}

void profile_counts_close(struct profile_counts *pc)
{
	free(pc->b);
	free(pc->batch);
	free(pc->buf[0]);
	free(pc->buf[1]);
	memset(pc, 0, sizeof(*pc));
}

static uint64_t word(const uint8_t *p, size_t off)
{
	uint64_t v;

	memcpy(&v, p + off, 8);
	return v;
}

void profile_counts_sum(const uint8_t *rec, uint32_t cycle_bytes, uint32_t c,
			struct pc_bucket *out)
{
	/* future[i] is cycle i + 1 of the record. */
	uint32_t mallocs = 1 + (c + 2) % 3, sweep = 1 + (c + 1) % 3, k;

	out->births = out->frees = out->allocs_all = out->frees_all = 0;
	for (k = 0; k < PC_CYCLES; k++) {
		uint64_t a = word(rec, k * cycle_bytes);
		uint64_t f = word(rec, k * cycle_bytes + 8);

		out->allocs_all += a;
		out->frees_all += f;
		if (k != mallocs)
			out->births += a;
		if (k != sweep)
			out->frees += f;
	}
	out->window = word(rec, sweep * cycle_bytes);
	out->sweeping = word(rec, sweep * cycle_bytes + 8);
}

/*
 * The buckets made since the last walk: from the list's head to the head
 * the last walk began at (new ones are pushed at the head).
 */
static int learn_buckets(const struct target *t, struct profile_counts *pc)
{
	uint64_t head = 0, b;
	size_t walked = 0, first = pc->n;

	if (target_read(t, pc->mbuckets, &head, 8))
		return -EIO;
	for (b = head; b && b != pc->head; walked++) {
		uint64_t hdr[8] = { 0 }, nstk;

		if (walked >= PC_BUCKETS_MAX ||
		    pc->nstk + 8 > sizeof(hdr) ||
		    target_read(t, b, hdr, pc->nstk + 8))
			goto bad;
		nstk = hdr[pc->nstk / 8];
		if (nstk > PC_NSTK_MAX)
			goto bad;
		if (!GROW(pc->b, pc->n, pc->cap, 64))
			return -ENOMEM;
		pc->b[pc->n++] = (struct pc_bucket){
			.bucket = b, .rec = b + pc->nstk + 8 + nstk * 8,
		};
		b = hdr[pc->allnext / 8];
	}
	pc->head = head;
	return 0;
bad:
	pc->n = first;   /* walked again next time */
	return -EIO;
}

/* Every bucket's memRecord into BUF. */
static int read_records(const struct target *t, struct profile_counts *pc,
			uint8_t *buf)
{
	size_t rec = PC_CYCLES * pc->cycle_bytes, i = 0;

	while (i < pc->n) {
		size_t n = pc->n - i < MEM_BATCH_MAX ? pc->n - i : MEM_BATCH_MAX;
		size_t k;

		for (k = 0; k < n; k++) {
			pc->batch->addr[k] = pc->b[i + k].rec;
			pc->batch->len[k] = rec;
			pc->batch->dst[k] = buf + (i + k) * rec;
		}
		if (mem_batch_read(t, pc->batch, n) != n)
			return -EIO;
		i += n;
	}
	return 0;
}

static int read_cycle(const struct target *t, const struct profile_counts *pc,
		      uint32_t *c)
{
	uint32_t v;

	if (target_read(t, pc->mprof_cycle, &v, 4))
		return -EIO;
	*c = v >> 1;
	return 0;
}

static bool same_sums(const struct pc_bucket *a, const struct pc_bucket *b)
{
	return a->births == b->births && a->frees == b->frees &&
	       a->window == b->window;
}

/* One bucket whose two reads disagreed, read until two in a row agree. */
static int settle(const struct target *t, struct profile_counts *pc,
		  size_t i, uint32_t c, struct pc_bucket *got)
{
	size_t rec = PC_CYCLES * pc->cycle_bytes;
	uint8_t buf[PC_CYCLES * 32];
	struct pc_bucket last = *got;
	int k;

	for (k = 0; k < PC_REREADS; k++) {
		if (target_read(t, pc->b[i].rec, buf, rec))
			return -EIO;
		profile_counts_sum(buf, pc->cycle_bytes, c, got);
		if (same_sums(got, &last))
			return 0;
		last = *got;
	}
	return -EAGAIN;
}

int profile_counts_read(const struct target *t, struct profile_counts *pc)
{
	size_t rec = PC_CYCLES * pc->cycle_bytes, i;
	uint32_t c0, c1;
	bool reread = false;
	int rc;

	rc = learn_buckets(t, pc);
	if (rc)
		return rc;
	if (pc->buf_cap < pc->n) {
		size_t cap = pc->n * 2;
		uint8_t *a = realloc(pc->buf[0], cap * rec);

		if (!a)
			return -ENOMEM;
		pc->buf[0] = a;
		a = realloc(pc->buf[1], cap * rec);
		if (!a)
			return -ENOMEM;
		pc->buf[1] = a;
		pc->buf_cap = cap;
	}
	if ((rc = read_cycle(t, pc, &c0)) ||
	    (rc = read_records(t, pc, pc->buf[0])) ||
	    (rc = read_records(t, pc, pc->buf[1])) ||
	    (rc = read_cycle(t, pc, &c1)))
		return rc;
	if (c0 != c1)
		return -EAGAIN;
	for (i = 0; i < pc->n; i++) {
		struct pc_bucket a, b;

		profile_counts_sum(pc->buf[0] + i * rec, pc->cycle_bytes, c0, &a);
		profile_counts_sum(pc->buf[1] + i * rec, pc->cycle_bytes, c0, &b);
		if (!same_sums(&a, &b)) {
			rc = settle(t, pc, i, c0, &b);
			if (rc)
				return rc;
			reread = true;
		}
		b.bucket = pc->b[i].bucket;
		b.rec = pc->b[i].rec;
		pc->b[i] = b;
	}
	if (reread && ((rc = read_cycle(t, pc, &c1)) || c0 != c1))
		return rc ? rc : -EAGAIN;
	pc->cycle = c0;
	return 0;
}
