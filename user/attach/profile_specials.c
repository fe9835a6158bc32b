// SPDX-License-Identifier: BSD-3-Clause
/* profile_specials.c - live heap-profile samples (profile_specials.h). */
#include "profile_specials.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/mem_batch.h"
#include "attach/target.h"
#include "inspect/go_binary.h"
#include "inspect/go_layout.h"
#include "inspect/runtime_globals.h"

#define MSPAN_IN_USE 1             /* runtime/mheap.go mSpanInUse */
#define SPAN_READ_MAX 512
#define LIST_MAX 1000000           /* specials of one span: a loop guard */
#define ALLSPANS_MAX (1ull << 28)

struct ps_layout {
	struct go_layout l;
	uint64_t mheap;
	size_t span_read;          /* bytes of an mspan holding our fields */
	uint8_t kind;
};

static uint64_t field(const uint8_t *buf, const struct go_field *f)
{
	uint64_t v = 0;

	memcpy(&v, buf + f->off, f->size > 8 ? 8 : (size_t)f->size);
	return v;
}

static bool in_span(const struct go_field *f)
{
	return f->off >= 0 && f->off + f->size <= SPAN_READ_MAX;
}

static int resolve(const struct go_binary *bin, uint64_t bias,
		   struct ps_layout *pl, char *err, size_t errlen)
{
	const struct go_layout *l = &pl->l;
	const struct go_field *span_fields[] = {
		&l->mspan_start_addr, &l->mspan_state, &l->mspan_specials,
	};
	uint64_t addr;
	size_t k;

	if (go_layout_resolve(bin, &pl->l, NULL, NULL) < 0) {
		snprintf(err, errlen, "no runtime layout for this Go version");
		return -ENOENT;
	}
	if (go_runtime_global_addr(bin, "runtime.mheap_", &addr)) {
		snprintf(err, errlen, "runtime.mheap_ not found in the binary");
		return -ENOENT;
	}
	pl->mheap = addr + bias;
	if (!go_field_present(&l->mheap_allspans) ||
	    !go_field_present(&l->special_offset) ||
	    !go_field_present(&l->special_kind) ||
	    !go_field_present(&l->specialprofile_b) ||
	    !go_field_present(&l->bucket_size) ||
	    !go_field_present(&l->bucket_nstk)) {
		snprintf(err, errlen, "runtime layout of specials and buckets unknown");
		return -ENOENT;
	}
	pl->span_read = 0;
	for (k = 0; k < sizeof(span_fields) / sizeof(span_fields[0]); k++) {
		if (!in_span(span_fields[k])) {
			snprintf(err, errlen, "runtime layout of mspan incomplete");
			return -ENOENT;
		}
		if ((size_t)(span_fields[k]->off + span_fields[k]->size) > pl->span_read)
			pl->span_read = (size_t)(span_fields[k]->off +
						 span_fields[k]->size);
	}
	return 0;
}

/* The sample of profile special `sp` (span base `base`). */
static int read_sample(const struct target *t, const struct ps_layout *pl,
		       uint64_t base, uint64_t sp, uint64_t off,
		       struct ps_sample *s)
{
	const struct go_layout *l = &pl->l;
	uint64_t b = 0, hdr[2];
	size_t n;

	if (target_read(t, sp + (uint64_t)l->specialprofile_b.off, &b, 8) || !b)
		return -EIO;
	/* size and nstk are adjacent words; the stack follows nstk. */
	if (l->bucket_nstk.off != l->bucket_size.off + 8 ||
	    target_read(t, b + (uint64_t)l->bucket_size.off, hdr, sizeof(hdr)))
		return -EIO;
	s->addr = base + off;
	s->size = hdr[0];
	n = hdr[1] < PS_MAX_PCS ? hdr[1] : PS_MAX_PCS;
	s->npcs = 0;
	if (n && target_read(t, b + (uint64_t)l->bucket_nstk.off + 8, s->pcs,
			     n * 8) == 0)
		s->npcs = n;
	return 0;
}

/* Walks one span's specials list. */
static int walk_specials(const struct target *t, const struct ps_layout *pl,
			 uint64_t base, uint64_t node,
			 int (*cb)(void *, const struct ps_sample *), void *ctx,
			 struct ps_stats *st)
{
	const struct go_layout *l = &pl->l;
	size_t steps;
	int rc;

	for (steps = 0; node && steps < LIST_MAX; steps++) {
		uint8_t buf[32];
		size_t need = (size_t)(l->special_kind.off + 1);
		struct ps_sample s;
		uint64_t next, off;

		if (need > sizeof(buf) || target_read(t, node, buf, need)) {
			st->read_errors++;
			return 0;
		}
		memcpy(&next, buf, 8);      /* special.next is its first word */
		off = field(buf, &l->special_offset);
		if (buf[l->special_kind.off] == pl->kind) {
			if (read_sample(t, pl, base, node, off, &s) == 0) {
				st->samples++;
				rc = cb(ctx, &s);
				if (rc)
					return rc;
			} else {
				st->read_errors++;
			}
		}
		node = next;
	}
	return 0;
}

int profile_specials_read(const struct target *t, const struct go_binary *bin,
			  uint64_t bias, uint8_t kind,
			  int (*cb)(void *ctx, const struct ps_sample *s),
			  void *ctx, struct ps_stats *st, char *err,
			  size_t errlen)
{
	static struct mem_batch mb;
	struct ps_layout pl;
	uint64_t slice[2], *ptrs = NULL, i;
	uint8_t *spans = NULL;
	int rc;

	memset(st, 0, sizeof(*st));
	rc = resolve(bin, bias, &pl, err, errlen);
	if (rc)
		return rc;
	pl.kind = kind;
	if (target_read(t, pl.mheap + (uint64_t)pl.l.mheap_allspans.off, slice,
			sizeof(slice)) || slice[1] > ALLSPANS_MAX) {
		snprintf(err, errlen, "cannot read mheap_.allspans");
		return -EIO;
	}
	ptrs = malloc(slice[1] * 8 + 8);
	spans = malloc(MEM_BATCH_MAX * pl.span_read);
	if (!ptrs || !spans) {
		rc = -ENOMEM;
		goto out;
	}
	if (slice[1] && target_read(t, slice[0], ptrs, slice[1] * 8)) {
		snprintf(err, errlen, "cannot read mheap_.allspans");
		rc = -EIO;
		goto out;
	}
	for (i = 0; i < slice[1] && rc == 0; i += MEM_BATCH_MAX) {
		size_t n = slice[1] - i < MEM_BATCH_MAX ? slice[1] - i : MEM_BATCH_MAX;
		size_t k;

		for (k = 0; k < n; k++) {
			mb.addr[k] = ptrs[i + k];
			mb.len[k] = pl.span_read;
			mb.dst[k] = spans + k * pl.span_read;
		}
		mem_batch_read(t, &mb, n);
		for (k = 0; k < n && rc == 0; k++) {
			const uint8_t *ms = spans + k * pl.span_read;
			uint64_t specials;

			if (!mb.ok[k]) {
				st->read_errors++;
				continue;
			}
			if (field(ms, &pl.l.mspan_state) != MSPAN_IN_USE)
				continue;
			st->spans++;
			specials = field(ms, &pl.l.mspan_specials);
			if (specials)
				rc = walk_specials(t, &pl,
						   field(ms, &pl.l.mspan_start_addr),
						   specials, cb, ctx, st);
		}
	}
out:
	free(ptrs);
	free(spans);
	return rc;
}
