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
#include "util/grow.h"
#include "util/u64_map.h"

#define MSPAN_IN_USE 1             /* runtime/mheap.go mSpanInUse */
#define SPAN_READ_MAX 512
#define LIST_MAX 1000000           /* specials of one span: a loop guard */
#define ALLSPANS_MAX (1ull << 28)
/* runtime/malloc.go, linux/amd64: 64 MiB arenas of 8 KiB pages. */
#define PAGES_PER_ARENA 8192
#define ARENAS_MAX (1ull << 22)     /* 1 << arenaL2Bits */
/* Pages with specials in an arena above which its spans array is read
 * whole. */
#define SPANS_WHOLE_ARRAY 32

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
		   struct ps_reader *pl, char *err, size_t errlen)
{
	const struct go_layout *l = &pl->l;
	const struct go_field *span_fields[] = {
		&l->mspan_start_addr, &l->mspan_state, &l->mspan_specials,
		&l->mspan_npages,
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
	/* size and nstk are adjacent words; the stack follows nstk. */
	if (l->bucket_nstk.off != l->bucket_size.off + 8) {
		snprintf(err, errlen, "runtime layout of buckets unexpected");
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
	/* mheap.arenas is [1 << arenaL1Bits]*[...]*heapArena: one pointer
	 * (arenaL1Bits is 0 on linux/amd64). */
	pl->arena_list = go_field_present(&l->mheap_heap_arenas) ?
			 &l->mheap_heap_arenas : &l->mheap_all_arenas;
	pl->by_arenas = go_field_present(pl->arena_list) &&
			pl->arena_list->size == 24 &&
			go_field_present(&l->mheap_arenas) &&
			l->mheap_arenas.size == 8 &&
			l->heap_arena_spans.size == PAGES_PER_ARENA * 8 &&
			l->heap_arena_page_specials.size == PAGES_PER_ARENA / 8 &&
			!getenv("TRACEAF_SPECIALS_BY_ALLSPANS");
	pl->by_sweepgen = go_field_present(&l->mheap_sweepgen) &&
			  l->mheap_sweepgen.size == 4 &&
			  go_field_present(&l->mspan_sweepgen) &&
			  l->mspan_sweepgen.size == 4 &&
			  in_span(&l->mspan_sweepgen);
	/* Then read with the span header. */
	if (pl->by_sweepgen && (size_t)(l->mspan_sweepgen.off + 4) > pl->span_read)
		pl->span_read = (size_t)(l->mspan_sweepgen.off + 4);
	pl->has_alloc_bits = l->mspan_alloc_bits.size == 8 &&
			in_span(&l->mspan_alloc_bits) &&
			l->mspan_elemsize.size == 8 && in_span(&l->mspan_elemsize);
	if (pl->has_alloc_bits) {
		if ((size_t)(l->mspan_alloc_bits.off + 8) > pl->span_read)
			pl->span_read = (size_t)(l->mspan_alloc_bits.off + 8);
		if ((size_t)(l->mspan_elemsize.off + 8) > pl->span_read)
			pl->span_read = (size_t)(l->mspan_elemsize.off + 8);
	}
	return 0;
}

/*
 * The walk goes level by level over all lists at once: the first node of
 * every span with specials in one batch of reads (mem_batch: one
 * process_vm_readv per MEM_BATCH_MAX pieces), then every second node,
 * and so on; then the buckets of the samples wanted.  A list is a chain
 * of dependent reads, so this is (longest list) batches instead of a
 * syscall per node: the difference between a read that ends within a
 * short mark phase and one that does not.
 */
struct ps_node {
	uint64_t node;             /* the special's address */
	uint64_t last_off;         /* offset of the list's previous node + 1 */
	uint32_t head;             /* its span: index in ps_walk.heads */
};

/* A span whose list is walked. */
struct ps_head {
	uint64_t span;             /* the mspan's address */
	uint64_t base, limit;
	uint32_t sweepgen;         /* as the header was read */
	bool valid;                /* not swept (or reused) while walked */
	uint64_t alloc_bits, elemsize;  /* ops->alloc_bits: allocBits, slot size */
};

struct ps_hit {
	uint32_t head;
	uint64_t addr;
	uint64_t bucket;           /* specialprofile.b */
	uint32_t bkt;              /* index + 1 in ps_reader.bkt */
	bool want;
	bool old;                  /* ops->alloc_bits: its slot's bit is set */
};

struct ps_walk {
	const struct target *t;
	struct ps_reader *pl;
	struct ps_stats *st;
	struct ps_node *cur, *next;
	size_t ncur, nnext, cap;
	struct ps_head *heads;
	size_t nheads, heads_cap;
	uint32_t sweepgen;         /* mheap_.sweepgen as the walk began */
	const struct ps_walk_ops *ops;
	void *ctx;
	struct ps_hit *hits;
	size_t nhits, hits_cap;
	uint8_t (*bufs)[64];
};

static struct mem_batch mb;

/*
 * A list that could not be read to its end: its span tells nothing this
 * time (as if swept under the walk, which is what it usually is: a
 * special freed and reused while the list was walked).
 */
static void span_error(struct ps_walk *w, uint32_t head)
{
	w->st->list_errors++;
	w->heads[head].valid = false;
}

/* One level: reads the nodes of w->cur, queues their successors. */
static int walk_level(struct ps_walk *w)
{
	const struct go_layout *l = &w->pl->l;
	/* The node with its bucket pointer: a profile special is a
	 * specialprofile, whose b follows the special (read for other
	 * kinds too, harmlessly: every special is at least that long). */
	size_t need = (size_t)(l->specialprofile_b.off + 8), i, k, n;

	w->nnext = 0;
	for (i = 0; i < w->ncur; i += MEM_BATCH_MAX) {
		n = w->ncur - i < MEM_BATCH_MAX ? w->ncur - i : MEM_BATCH_MAX;
		for (k = 0; k < n; k++) {
			mb.addr[k] = w->cur[i + k].node;
			mb.len[k] = need;
			mb.dst[k] = w->bufs[k];
		}
		mem_batch_read(w->t, &mb, n);
		for (k = 0; k < n; k++) {
			const struct ps_node *c = &w->cur[i + k];
			struct ps_head *h = &w->heads[c->head];
			const uint8_t *buf = w->bufs[k];
			uint64_t next, off;

			if (!mb.ok[k]) {
				span_error(w, c->head);
				continue;
			}
			memcpy(&next, buf, 8);  /* special.next is its first word */
			off = field(buf, &l->special_offset);
			/* Sorted by offset (addspecial keeps them so) and in
			 * the span: else the list changed under us, or this
			 * is no special. */
			if (off + 1 < c->last_off || h->base + off >= h->limit) {
				span_error(w, c->head);
				continue;
			}
			if (buf[l->special_kind.off] == w->pl->kind) {
				if (!GROW(w->hits, w->nhits, w->hits_cap, 256))
					return -ENOMEM;
				struct ps_hit *hit = &w->hits[w->nhits++];

				memset(hit, 0, sizeof(*hit));
				hit->head = c->head;
				hit->addr = h->base + off;
				memcpy(&hit->bucket, buf + l->specialprofile_b.off, 8);
			}
			if (next) {
				struct ps_node *nx = &w->next[w->nnext++];

				nx->node = next;
				nx->last_off = off + 1;
				nx->head = c->head;
			}
		}
	}
	return 0;
}

/* Room for bucket ADDR in the reader's cache: its index there, or -1. */
static ssize_t bucket_slot(struct ps_reader *r, uint64_t addr)
{
	if (!GROW(r->bkt, r->nbkt, r->bkt_cap, 64) ||
	    u64_map_put(&r->bkt_index, addr, r->nbkt + 1))
		return -1;
	return (ssize_t)r->nbkt++;
}

/* The cache's entry for a bucket read at SLOT: dropped when unreadable
 * (the index says 0: not known). */
static void bucket_unread(struct ps_reader *r, uint64_t addr)
{
	u64_map_put(&r->bkt_index, addr, 0);
}

/*
 * The buckets of the wanted samples the reader does not know yet, each
 * once: its size, nstk and stack (adjacent words, the stack after nstk)
 * into the reader's cache; a hit's `bkt` is its bucket's index + 1 there
 * (0: unread).  Many samples share a bucket (one per allocating stack
 * and size), and the same buckets come back read after read: a read of
 * a program whose call sites are known reads no bucket.
 */
static int read_buckets(struct ps_walk *w)
{
	const struct go_layout *l = &w->pl->l;
	struct ps_reader *r = w->pl;
	size_t i, k, n, nb = 0, cap = 0;
	uint64_t *addrs = NULL, v;
	int rc = 0;

	for (i = 0; i < w->nhits && rc == 0; i++) {
		struct ps_hit *h = &w->hits[i];
		ssize_t slot;

		if (!h->want || !h->bucket)
			continue;
		if (u64_map_get(&r->bkt_index, h->bucket, &v)) {
			h->bkt = (uint32_t)v;
			continue;
		}
		slot = bucket_slot(r, h->bucket);
		if (slot < 0 || !GROW(addrs, nb, cap, 64)) {
			rc = -ENOMEM;
			break;
		}
		addrs[nb++] = h->bucket;
		h->bkt = (uint32_t)slot + 1;
	}
	for (i = 0; rc == 0 && i < nb; i += MEM_BATCH_MAX) {
		n = nb - i < MEM_BATCH_MAX ? nb - i : MEM_BATCH_MAX;
		for (k = 0; k < n; k++) {
			u64_map_get(&r->bkt_index, addrs[i + k], &v);
			mb.addr[k] = addrs[i + k] + (uint64_t)l->bucket_size.off;
			mb.len[k] = sizeof(r->bkt[0]);
			mb.dst[k] = (uint8_t *)r->bkt[v - 1];
		}
		mem_batch_read(w->t, &mb, n);
		for (k = 0; k < n; k++)
			if (!mb.ok[k])
				bucket_unread(r, addrs[i + k]);
	}
	/* A hit whose bucket could not be read has none. */
	for (i = 0; rc == 0 && nb && i < w->nhits; i++)
		if (w->hits[i].bkt &&
		    (!u64_map_get(&r->bkt_index, w->hits[i].bucket, &v) || !v))
			w->hits[i].bkt = 0;
	free(addrs);
	return rc;
}

/* Bucket entry B (size, nstk, stack) into S. */
static void bucket_sample(const uint64_t *b, struct ps_sample *s)
{
	size_t n = b[1] < PS_MAX_PCS ? (size_t)b[1] : PS_MAX_PCS;

	s->full = true;
	s->size = b[0];
	memcpy(s->pcs, &b[2], n * 8);
	s->npcs = n;
}

int profile_specials_bucket(const struct target *t, struct ps_reader *r,
			    uint64_t bucket, struct ps_sample *s)
{
	uint64_t v;
	ssize_t slot;

	if (!bucket)
		return -EIO;
	if (u64_map_get(&r->bkt_index, bucket, &v)) {
		if (!v)
			return -EIO;
		bucket_sample(r->bkt[v - 1], s);
		return 0;
	}
	slot = bucket_slot(r, bucket);
	if (slot < 0)
		return -ENOMEM;
	if (target_read(t, bucket + (uint64_t)r->l.bucket_size.off,
			r->bkt[slot], sizeof(r->bkt[0]))) {
		bucket_unread(r, bucket);
		return -EIO;
	}
	bucket_sample(r->bkt[slot], s);
	return 0;
}

int profile_specials_learn_bucket(struct ps_reader *r, uint64_t bucket,
				  uint64_t size, uint64_t nstk,
				  const uint64_t *pcs, size_t npcs)
{
	uint64_t v;
	ssize_t slot;

	if (!bucket)
		return 0;
	if (u64_map_get(&r->bkt_index, bucket, &v) && v) {
		slot = (ssize_t)v - 1;
	} else {
		slot = bucket_slot(r, bucket);
		if (slot < 0)
			return -ENOMEM;
	}
	if (npcs > PS_MAX_PCS)
		npcs = PS_MAX_PCS;
	r->bkt[slot][0] = size;
	/* What bucket_sample takes of the stack: the PCs there are. */
	r->bkt[slot][1] = nstk < npcs ? nstk : npcs;
	memcpy(&r->bkt[slot][2], pcs, npcs * 8);
	return 0;
}

bool profile_specials_snap_target(const struct ps_reader *r,
				  struct taf_snap_target *out)
{
	const struct go_layout *l = &r->l;

	memset(out, 0, sizeof(*out));
	if (!r->by_arenas || l->special_offset.off != 8 ||
	    (l->special_offset.size != 2 && l->special_offset.size != 8) ||
	    l->special_kind.off < 0 || l->special_kind.off >= 32 ||
	    l->specialprofile_b.off < 8 || l->specialprofile_b.off > 24 ||
	    l->mspan_state.off < 0 || l->mspan_specials.off < 0 ||
	    l->mspan_start_addr.off < 0 || l->mspan_state.off > 0xffff ||
	    l->mspan_specials.off > 0xffff || l->mspan_start_addr.off > 0xffff)
		return false;
	out->arena_list = r->mheap + (uint64_t)r->arena_list->off;
	out->bucket_size = (uint32_t)l->bucket_size.off;
	out->arenas_l2 = r->mheap + (uint64_t)l->mheap_arenas.off;
	out->ha_spans = (uint32_t)l->heap_arena_spans.off;
	out->ha_page_specials = (uint32_t)l->heap_arena_page_specials.off;
	out->span_state = (uint16_t)l->mspan_state.off;
	out->span_specials = (uint16_t)l->mspan_specials.off;
	out->span_start_addr = (uint16_t)l->mspan_start_addr.off;
	out->span_alloc_bits = (uint16_t)l->mspan_alloc_bits.off;
	out->span_elemsize = (uint16_t)l->mspan_elemsize.off;
	out->span_head = (uint16_t)(l->mspan_state.off + 1);
	{
		const struct go_field *words[] = {
			&l->mspan_specials, &l->mspan_start_addr,
			&l->mspan_alloc_bits, &l->mspan_elemsize,
		};
		size_t k;

		/* snap.bpf.h's header buffer, and its aligned 8-byte reads. */
		for (k = 0; k < sizeof(words) / sizeof(words[0]); k++) {
			if (words[k]->off < 0 || words[k]->off % 8 ||
			    words[k]->size != 8 || words[k]->off + 8 > 256)
				return false;
			if (words[k]->off + 8 > out->span_head)
				out->span_head = (uint16_t)(words[k]->off + 8);
		}
	}
	if (out->span_head > 256)
		return false;
	out->special_offset_size = (uint8_t)l->special_offset.size;
	out->special_kind_off = (uint8_t)l->special_kind.off;
	out->special_kind_profile = r->kind;
	out->profile_b = (uint8_t)l->specialprofile_b.off;
	return true;
}

void profile_specials_close(struct ps_reader *r)
{
	free(r->arena_ha);
	free(r->span_buf);
	free(r->node_bufs);
	free(r->bkt);
	u64_map_free(&r->bkt_index);
	r->bkt = NULL;
	r->nbkt = r->bkt_cap = 0;
	r->arena_ha = NULL;
	r->span_buf = NULL;
	r->node_bufs = NULL;
	r->narenas = r->arenas_cap = 0;
}

int profile_specials_open(const struct go_binary *bin, uint64_t bias,
			  uint8_t kind, struct ps_reader *r, char *err,
			  size_t errlen)
{
	int rc;

	memset(r, 0, sizeof(*r));
	rc = resolve(bin, bias, r, err, errlen);

	r->kind = kind;
	return rc;
}

int profile_specials_read(const struct target *t, const struct go_binary *bin,
			  uint64_t bias, uint8_t kind,
			  int (*cb)(void *ctx, const struct ps_sample *s),
			  void *ctx, struct ps_stats *st, char *err,
			  size_t errlen)
{
	struct ps_walk_ops ops = { .sample = cb };
	struct ps_reader r;
	int rc;

	memset(st, 0, sizeof(*st));

	rc = profile_specials_open(bin, bias, kind, &r, err, errlen);
	if (rc == 0)
		rc = profile_specials_walk(t, &r, &ops, ctx, st, err, errlen);
	profile_specials_close(&r);
	return rc;
}

/*
 * Whether a span's sweepgen SG says no sweep of a cycle after the walk's
 * began has touched it (runtime/mheap.go, mspan.sweepgen, against the
 * heap's h at the walk's start): h is swept and ready, h + 3 swept and
 * cached in an mcache, both as marking left it.  Once the next sweep
 * begins (h + 2), a span it swept or is sweeping is at h + 1 or h + 2,
 * and one cached since at h + 4 or h + 5.  A span freed and reused gets
 * the heap's sweepgen of then.
 */
static bool unswept(const struct ps_walk *w, uint32_t sg)
{
	uint32_t h = w->sweepgen + (uint32_t)w->ops->sweepgen_delta;

	/* At any time: anything but being swept (h - 1) now. */
	if (w->ops->any_phase)
		return sg != w->sweepgen - 1;
	return sg == h || sg == h + 3;
}

/* Span header SPAN read into MS: the start of a list if it has specials. */
static int span_head(struct ps_walk *w, uint64_t span, const uint8_t *ms)
{
	const struct go_layout *l = &w->pl->l;
	uint64_t specials, base;
	struct ps_head *h;

	if (field(ms, &l->mspan_state) != MSPAN_IN_USE)
		return 0;
	w->st->spans++;
	specials = field(ms, &l->mspan_specials);
	if (!specials)
		return 0;
	if (!GROW(w->cur, w->ncur, w->cap, 256) ||
	    !GROW(w->heads, w->nheads, w->heads_cap, 256))
		return -ENOMEM;
	base = field(ms, &l->mspan_start_addr);
	h = &w->heads[w->nheads];
	*h = (struct ps_head){
		.span = span, .base = base,
		.limit = base + field(ms, &l->mspan_npages) * 8192,
		.valid = true,
	};
	if (w->pl->by_sweepgen) {
		h->sweepgen = (uint32_t)field(ms, &l->mspan_sweepgen);
		h->valid = unswept(w, h->sweepgen);
	}
	if (w->ops->alloc_bits && w->pl->has_alloc_bits) {
		h->elemsize = field(ms, &l->mspan_elemsize);
		h->alloc_bits = field(ms, &l->mspan_alloc_bits);
	}
	w->cur[w->ncur++] = (struct ps_node){
		.node = specials, .head = (uint32_t)w->nheads++,
	};
	return 0;
}

/*
 * ops->alloc_bits: the allocBits byte of each sample, in one batch of
 * reads before check_heads tells whether its span stayed unswept (then
 * the byte was the one before the walk: a sweep gives the span other
 * allocBits, and the old ones are not reused within the cycle).  A byte
 * that cannot be read is in a page nothing wrote, a fresh gcBits arena:
 * zero.
 */
static void read_alloc_bits(struct ps_walk *w)
{
	size_t i, k, n, m, *idx;

	if (!w->ops->alloc_bits)
		return;
	idx = malloc((w->nhits + 1) * sizeof(*idx));
	if (!idx)
		return;
	for (i = n = 0; i < w->nhits; i++) {
		const struct ps_head *hd = &w->heads[w->hits[i].head];

		if (hd->valid && hd->alloc_bits && hd->elemsize)
			idx[n++] = i;
	}
	for (i = 0; i < n; i += MEM_BATCH_MAX) {
		uint8_t bytes[MEM_BATCH_MAX];
		uint64_t slots[MEM_BATCH_MAX];

		m = n - i < MEM_BATCH_MAX ? n - i : MEM_BATCH_MAX;
		for (k = 0; k < m; k++) {
			const struct ps_hit *h = &w->hits[idx[i + k]];
			const struct ps_head *hd = &w->heads[h->head];

			slots[k] = (h->addr - hd->base) / hd->elemsize;
			mb.addr[k] = hd->alloc_bits + slots[k] / 8;
			mb.len[k] = 1;
			mb.dst[k] = &bytes[k];
		}
		mem_batch_read(w->t, &mb, m);
		for (k = 0; k < m; k++)
			w->hits[idx[i + k]].old = mb.ok[k] &&
				(bytes[k] & (1u << (slots[k] % 8)));
	}
	free(idx);
}

/*
 * After the walk: each span's sweepgen again.  A span still unswept was
 * not swept under the walk, so no special of its list was freed then.
 */
static void check_heads(struct ps_walk *w)
{
	const struct go_layout *l = &w->pl->l;
	uint32_t sg[MEM_BATCH_MAX];
	size_t i, k, n;

	/* Nobody to tell (the picture at attach), or no sweepgen known. */
	if (!w->ops->span || !w->pl->by_sweepgen)
		return;
	/* No sweep began since the walk did: nothing was swept under it. */
	if (w->ops->swept_since && !w->ops->swept_since(w->ctx))
		return;
	for (i = 0; i < w->nheads; i += MEM_BATCH_MAX) {
		n = w->nheads - i < MEM_BATCH_MAX ? w->nheads - i : MEM_BATCH_MAX;
		for (k = 0; k < n; k++) {
			mb.addr[k] = w->heads[i + k].span +
				     (uint64_t)l->mspan_sweepgen.off;
			mb.len[k] = 4;
			mb.dst[k] = (uint8_t *)&sg[k];
		}
		mem_batch_read(w->t, &mb, n);
		for (k = 0; k < n; k++)
			if (!mb.ok[k] || !unswept(w, sg[k]) ||
			    (w->ops->any_phase && sg[k] != w->heads[i + k].sweepgen))
				w->heads[i + k].valid = false;
	}
}

/* Reads the span headers at PTRS[0..n) and starts their lists. */
static int read_spans(struct ps_walk *w, const uint64_t *ptrs, size_t n)
{
	size_t span_read = w->pl->span_read, i, k, m;
	uint8_t *spans;
	int rc = 0;

	if (!w->pl->span_buf)
		w->pl->span_buf = malloc(MEM_BATCH_MAX * span_read);
	spans = w->pl->span_buf;
	if (!spans)
		return -ENOMEM;
	for (i = 0; i < n && rc == 0; i += MEM_BATCH_MAX) {
		m = n - i < MEM_BATCH_MAX ? n - i : MEM_BATCH_MAX;
		for (k = 0; k < m; k++) {
			mb.addr[k] = ptrs[i + k];
			mb.len[k] = span_read;
			mb.dst[k] = spans + k * span_read;
		}
		mem_batch_read(w->t, &mb, m);
		for (k = 0; k < m && rc == 0; k++) {
			if (!mb.ok[k])
				w->st->read_errors++;
			else
				rc = span_head(w, ptrs[i + k],
					       spans + k * span_read);
		}
	}
	return rc;
}

/* Every span of mheap_.allspans: what a binary without the arenas'
 * layout is walked by (one span header read per span of the heap). */
static int spans_by_allspans(struct ps_walk *w, char *err, size_t errlen)
{
	const struct ps_reader *r = w->pl;
	uint64_t slice[2], *ptrs;
	int rc;

	if (target_read(w->t, r->mheap + (uint64_t)r->l.mheap_allspans.off,
			slice, sizeof(slice)) || slice[1] > ALLSPANS_MAX) {
		snprintf(err, errlen, "cannot read mheap_.allspans");
		return -EIO;
	}
	ptrs = malloc(slice[1] * 8 + 8);
	if (!ptrs)
		return -ENOMEM;
	if (slice[1] && target_read(w->t, slice[0], ptrs, slice[1] * 8)) {
		snprintf(err, errlen, "cannot read mheap_.allspans");
		free(ptrs);
		return -EIO;
	}
	rc = read_spans(w, ptrs, slice[1]);
	free(ptrs);
	return rc;
}

/*
 * Each arena's heapArena: mheap_.arenas[0][index] for every index of the
 * arena list (LIST: its slice header; L2: the arenas' L2 array).  Kept
 * between walks while the list is the same (arenas are only ever added,
 * and a heapArena never moves): a read of a heap that did not grow reads
 * no arena again.
 */
static int arena_pointers(struct ps_walk *w, const uint64_t list[3],
			  uint64_t l2, char *err, size_t errlen)
{
	struct ps_reader *r = w->pl;
	size_t n = (size_t)list[1], i, k, m;
	uint64_t *idx;

	if (r->arena_list_at == list[0] && r->narenas == n && r->l2 == l2)
		return 0;
	r->narenas = 0;
	idx = malloc(n * 8 + 8);
	if (!idx || grow_to(&r->arena_ha, &r->arenas_cap, n + 1, 8, 16)) {
		free(idx);
		return -ENOMEM;
	}
	if (n && target_read(w->t, list[0], idx, n * 8)) {
		snprintf(err, errlen, "cannot read mheap_'s arena list");
		free(idx);
		return -EIO;
	}
	for (i = 0; i < n; i += MEM_BATCH_MAX) {
		m = n - i < MEM_BATCH_MAX ? n - i : MEM_BATCH_MAX;
		for (k = 0; k < m; k++) {
			r->arena_ha[i + k] = 0;
			mb.addr[k] = l2 + (idx[i + k] % ARENAS_MAX) * 8;
			mb.len[k] = 8;
			mb.dst[k] = (uint8_t *)&r->arena_ha[i + k];
		}
		mem_batch_read(w->t, &mb, m);
	}
	free(idx);
	r->arena_list_at = list[0];
	r->l2 = l2;
	r->narenas = n;
	return 0;
}

/*
 * The spans whose pageSpecials bit is set (runtime/mheap.go: the bit of
 * a span's first page, set while it has specials), arena by arena of
 * mheap_.allArenas (heapArenas from Go 1.25): a 1 KiB bitmap per 64 MiB
 * of heap, then only the spans with specials.
 */
static int spans_by_arenas(struct ps_walk *w, const uint64_t list[3],
			   uint64_t l2, char *err, size_t errlen)
{
	struct ps_reader *r = w->pl;
	const struct go_layout *l = &r->l;
	uint64_t *ptrs = NULL, *spans = NULL;
	uint8_t (*bits)[PAGES_PER_ARENA / 8] = NULL;
	size_t *pend = NULL, n, i, k, m, nptrs = 0, ptrs_cap = 0, npend = 0,
	       pend_cap = 0;
	int rc;

	if (list[1] > ARENAS_MAX || !l2) {
		snprintf(err, errlen, "cannot read mheap_'s arenas");
		return -EIO;
	}
	rc = arena_pointers(w, list, l2, err, errlen);
	if (rc)
		return rc;
	n = r->narenas;
	bits = calloc(n + 1, sizeof(*bits));
	if (!bits)
		return -ENOMEM;
	/* Each arena's pageSpecials bitmap; one unread counts as empty. */
	for (i = 0; i < n; i += MEM_BATCH_MAX) {
		m = n - i < MEM_BATCH_MAX ? n - i : MEM_BATCH_MAX;
		for (k = 0; k < m; k++) {
			mb.addr[k] = r->arena_ha[i + k] ?
				     r->arena_ha[i + k] +
				     (uint64_t)l->heap_arena_page_specials.off : 0;
			mb.len[k] = sizeof(bits[0]);
			mb.dst[k] = bits[i + k];
		}
		mem_batch_read(w->t, &mb, m);
		for (k = 0; k < m; k++)
			if (!mb.ok[k]) {
				w->st->read_errors++;
				memset(bits[i + k], 0, sizeof(bits[0]));
			}
	}
	/*
	 * The span of each page with its bit set: heapArena.spans[page].
	 * An arena with many such pages has its whole spans array read at
	 * once (64 KiB, one piece: the cost of a read is per piece), the
	 * others' pointers are read page by page (`pend`, below).
	 */
	for (i = 0; i < n; i++) {
		uint64_t at = r->arena_ha[i] + (uint64_t)l->heap_arena_spans.off;
		size_t p, set = 0;
		bool whole;

		for (p = 0; p < PAGES_PER_ARENA / 8; p++)
			set += (size_t)__builtin_popcount(bits[i][p]);
		whole = set > SPANS_WHOLE_ARRAY;
		if (whole && !spans && !(spans = malloc(PAGES_PER_ARENA * 8))) {
			rc = -ENOMEM;
			goto out;
		}
		if (whole && target_read(w->t, at, spans, PAGES_PER_ARENA * 8))
			whole = false;
		for (p = 0; p < PAGES_PER_ARENA; p++) {
			/* A byte of no set bit skips its eight pages. */
			if (!(p % 8) && !bits[i][p / 8]) {
				p += 7;
				continue;
			}
			if (!(bits[i][p / 8] & (1u << (p % 8))))
				continue;
			if (!GROW(ptrs, nptrs, ptrs_cap, 256) ||
			    (!whole && !GROW(pend, npend, pend_cap, 256))) {
				rc = -ENOMEM;
				goto out;
			}
			if (!whole)
				pend[npend++] = nptrs;
			ptrs[nptrs++] = whole ? spans[p] : at + p * 8;
		}
	}
	for (i = 0; i < npend; i += MEM_BATCH_MAX) {
		m = npend - i < MEM_BATCH_MAX ? npend - i : MEM_BATCH_MAX;
		for (k = 0; k < m; k++) {
			mb.addr[k] = ptrs[pend[i + k]];
			mb.len[k] = 8;
			mb.dst[k] = (uint8_t *)&ptrs[pend[i + k]];
		}
		mem_batch_read(w->t, &mb, m);
		for (k = 0; k < m; k++)
			if (!mb.ok[k])
				ptrs[pend[i + k]] = 0;
	}
	for (i = k = 0; i < nptrs; i++)
		if (ptrs[i])
			ptrs[k++] = ptrs[i];
		else
			w->st->read_errors++;
	rc = read_spans(w, ptrs, k);
out:
	free(bits);
	free(ptrs);
	free(spans);
	free(pend);
	return rc;
}

int profile_specials_walk(const struct target *t, struct ps_reader *r,
			  const struct ps_walk_ops *ops, void *ctx,
			  struct ps_stats *st, char *err, size_t errlen)
{
	struct ps_walk w = { .t = t, .pl = r, .st = st, .ops = ops, .ctx = ctx };
	uint64_t list[3] = { 0 }, l2 = 0;
	size_t k, level, n = 0;
	int rc = 0;

	memset(st, 0, sizeof(*st));
	/* mheap_'s sweepgen and arena list at once: one syscall. */
	if (r->by_sweepgen) {
		mb.addr[n] = r->mheap + (uint64_t)r->l.mheap_sweepgen.off;
		mb.len[n] = 4;
		mb.dst[n++] = (uint8_t *)&w.sweepgen;
	}
	if (r->by_arenas) {
		mb.addr[n] = r->mheap + (uint64_t)r->arena_list->off;
		mb.len[n] = sizeof(list);
		mb.dst[n++] = (uint8_t *)list;
		mb.addr[n] = r->mheap + (uint64_t)r->l.mheap_arenas.off;
		mb.len[n] = 8;
		mb.dst[n++] = (uint8_t *)&l2;
	}
	if (n && mem_batch_read(t, &mb, n) != n) {
		snprintf(err, errlen, "cannot read mheap_");
		return -EIO;
	}
	rc = r->by_arenas ? spans_by_arenas(&w, list, l2, err, errlen) :
			    spans_by_allspans(&w, err, errlen);
	if (rc == 0) {
		w.next = malloc((w.ncur + 1) * sizeof(*w.next));
		if (!r->node_bufs)
			r->node_bufs = malloc(MEM_BATCH_MAX * sizeof(*w.bufs));
		w.bufs = r->node_bufs;
		if (!w.next || !w.bufs)
			rc = -ENOMEM;
	}
	/* The lists, level by level. */
	for (level = 0; rc == 0 && w.ncur && level < LIST_MAX; level++) {
		struct ps_node *tmp;

		rc = walk_level(&w);
		tmp = w.cur;
		w.cur = w.next;
		w.next = tmp;
		w.ncur = w.nnext;
	}
	if (rc)
		goto out;
	read_alloc_bits(&w);
	check_heads(&w);
	/* Without a span callback (the picture at attach, read whenever it
	 * is), every sample read is told, as far as its list was read. */
	if (!ops->span) {
		for (k = 0; k < w.nheads; k++)
			w.heads[k].valid = true;
		st->read_errors += st->list_errors;
	}
	/* Told of with its samples; a span invalid from a list error has
	 * its samples left out like a swept one's. */
	for (k = 0; k < w.nheads && rc == 0; k++) {
		st->spans_swept += !w.heads[k].valid;
		if (ops->span)
			rc = ops->span(ctx, w.heads[k].base, w.heads[k].limit,
				       w.heads[k].valid);
	}
	/* A swept span's samples are not told: its list may have lost
	 * specials (or been reused) under the walk. */
	for (k = 0; k < w.nhits; k++)
		w.hits[k].want = w.heads[w.hits[k].head].valid &&
				 (!ops->want || ops->want(ctx, w.hits[k].addr,
							  w.hits[k].old));
	if (rc == 0)
		rc = read_buckets(&w);
	for (k = 0; k < w.nhits && rc == 0; k++) {
		struct ps_hit *h = &w.hits[k];
		struct ps_sample s = { .addr = h->addr, .bucket = h->bucket };

		if (!w.heads[h->head].valid)
			continue;
		s.old = h->old;
		if (h->want) {
			if (!h->bkt) {
				/* Buckets are never freed: a bucket
				 * unreadable is a wrong pointer. */
				st->read_errors++;
				continue;
			}
			bucket_sample(r->bkt[h->bkt - 1], &s);
		}
		st->samples++;
		rc = ops->sample(ctx, &s);
	}
out:
	free(w.cur);
	free(w.next);
	free(w.hits);
	free(w.heads);
	return rc;
}
