// SPDX-License-Identifier: BSD-3-Clause
/*
 * The session from records to a file, read back with trace_decode.h:
 * timestamps in 64 ns ticks, --sample keeping the files consistent
 * (every freed ID was allocated, tiny blocks included), and
 * --tiny-as-runtime emitting tiny objects as the Go 1.23 and 1.27
 * runtimes do.  The session runs on allocloop (Go 1.27, or 1.23) as a
 * process that has exited: types come from the file, the heap base from
 * the first record.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>
#include <cmocka.h>

#include "gobin.h"
#include "inspect/go_sizeclasses.h"
#include "trace/session.h"
#include "trace/sample_reads.h"
#include "attach/profile_specials.h"
#include "attach/target.h"
#include "trace_decode.h"
#include "traceaf_events.h"
#include "util/u64_map.h"

#define HEAP 0xc000000000ull
#define T0 1000000000ull

struct fx {
	char dir[64];
	struct go_binary *bin;
	struct session *s;
	uint64_t ts;
};

/* self: the test process itself is the target, its memory readable. */
static struct fx *start_target(unsigned sample, bool tiny_as_runtime, int go,
			       bool self)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct session_opts so = { .sample = sample,
				   .tiny_as_runtime = tiny_as_runtime };
	struct target tg;
	char err[256];

	assert_non_null(f);
	strcpy(f->dir, "/tmp/test_session_sample.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	so.dir = f->dir;
	f->bin = open_bin(go, "");
	if (self)
		assert_int_equal(target_open(getpid(), &tg, err, sizeof(err)), 0);
	else
		target_init_gone(&tg, 4242, "t", 0, 0);
	assert_int_equal(session_start(&f->s, &tg, f->bin, 0, &so, err,
				       sizeof(err)), 0);
	assert_int_equal(session_begin(f->s, 1), 0);
	f->ts = T0;
	return f;
}

static struct fx *start_opts(unsigned sample, bool tiny_as_runtime, int go)
{
	return start_target(sample, tiny_as_runtime, go, false);
}

static struct fx *start(unsigned sample)
{
	return start_opts(sample, false, 27);
}

static void hdr(struct taf_rec_hdr *h, uint16_t kind, uint16_t len,
		uint64_t ts)
{
	h->ts = ts;
	h->pid = 4242;
	h->tid = 7;
	h->kind = kind;
	h->len = len;
}

/* One record into the session, decoded as the dispatcher decodes it. */
static void feed(struct fx *f, const void *rec, size_t len)
{
	struct record_view v;

	assert_int_equal(record_view_decode(rec, len, &v), 0);
	assert_int_equal(session_record(f->s, &v), 0);
}

static void span_alloc(struct fx *f, uint64_t base, uint8_t spanclass)
{
	struct taf_rec_span_alloc r = { 0 };

	hdr(&r.hdr, TAF_REC_SPAN_ALLOC, sizeof(r), f->ts += 1000);
	r.base = base;
	r.npages = 1;
	r.spanclass = spanclass;
	feed(f, &r, sizeof(r));
}

static void alloc(struct fx *f, uint64_t addr, uint64_t size, uint64_t ts)
{
	struct taf_rec_heap_alloc r = { 0 };

	hdr(&r.hdr, TAF_REC_HEAP_ALLOC, sizeof(r), ts);
	r.addr = addr;
	r.size = size;
	feed(f, &r, sizeof(r));
}

/* A sweep record of a one-page span, its bitmaps all zero. */
static void sweep_rec(struct fx *f, struct taf_rec_span_sweep *r,
		      uint64_t base, uint8_t spanclass, uint64_t elemsize)
{
	memset(r, 0, sizeof(*r));
	hdr(&r->hdr, TAF_REC_SPAN_SWEEP, sizeof(*r), f->ts += 1000);
	r->base = base;
	r->npages = 1;
	r->elemsize = elemsize;
	r->nelems = (uint32_t)(GO_PAGE_SIZE / elemsize);
	r->spanclass = spanclass;
	r->nbytes = (uint8_t)((r->nelems + 7) / 8);
}

/* Frees every slot of a fresh span (all below freeindex, none marked). */
static void sweep_all(struct fx *f, uint64_t base, uint8_t spanclass,
		      uint64_t elemsize)
{
	struct taf_rec_span_sweep r;

	sweep_rec(f, &r, base, spanclass, elemsize);
	r.freeindex = r.nelems;
	feed(f, &r, sizeof(r));
}

struct counts {
	uint64_t freq, allocs, frees, free_unknown, alloc_of_live, first_ts;
	uint64_t ts[2];          /* of the first two events */
};

/* Finishes the session and reads its one file. */
static void finish(struct fx *f, struct counts *c)
{
	struct u64_map live;
	struct dirent *e;
	char path[512];
	uint8_t *buf;
	DIR *d;
	FILE *fp;
	long len;
	int files = 0;

	session_finish(f->s);
	go_binary_close(f->bin);
	memset(c, 0, sizeof(*c));
	u64_map_init(&live);
	d = opendir(f->dir);
	assert_non_null(d);
	while ((e = readdir(d))) {
		const uint8_t *p, *end, *q;
		struct td_batch b;
		unsigned nev = 0;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", f->dir, e->d_name);
		/* Sidecars (F.gc, samples: NAME.trace.*) are not traces. */
		size_t nl = strlen(e->d_name);

		if (nl < 6 || strcmp(e->d_name + nl - 6, ".trace")) {
			unlink(path);
			continue;
		}
		files++;
		fp = fopen(path, "rb");
		assert_non_null(fp);
		fseek(fp, 0, SEEK_END);
		len = ftell(fp);
		rewind(fp);
		buf = malloc((size_t)len);
		assert_int_equal(fread(buf, 1, (size_t)len, fp), (size_t)len);
		fclose(fp);
		p = buf + 16;
		end = buf + len;
		while (td_next_batch(&p, end, &b) == 1) {
			struct td_event ev;
			uint64_t ts = b.ts;

			if (b.exp)
				continue;
			q = b.data;
			if (b.len && b.data[0] == TD_EV_FREQUENCY) {
				q++;
				assert_int_equal(td_uvarint(&q, b.data + b.len,
							    &c->freq), 0);
				continue;
			}
			while (td_next_event(&q, b.data + b.len, &ts, &ev) == 1) {
				if (nev < 2)
					c->ts[nev] = ev.ts;
				nev++;
				/* IDs + 1: ID 0 is the map's empty key. */
				if (ev.type == 132) {
					c->allocs++;
					if (u64_map_get(&live, ev.args[0] + 1, NULL))
						c->alloc_of_live++;
					u64_map_put(&live, ev.args[0] + 1, 1);
				} else if (ev.type == 133) {
					c->frees++;
					if (!u64_map_del(&live, ev.args[0] + 1))
						c->free_unknown++;
				}
			}
		}
		free(buf);
		unlink(path);
	}
	closedir(d);
	rmdir(f->dir);
	u64_map_free(&live);
	assert_int_equal(files, 1);
	free(f);
}

static void test_timestamps_are_64ns_ticks(void **state)
{
	struct fx *f = start(1);
	uint8_t sc = (uint8_t)(6 << 1);          /* size class 6: 64 B, scan */
	struct counts c;

	assert_int_equal(go_class_to_size[6], 64);
	span_alloc(f, HEAP, sc);
	alloc(f, HEAP, 56, T0 + 64000);
	alloc(f, HEAP + 64, 56, T0 + 64000 + 640);
	finish(f, &c);
	assert_int_equal(c.freq, 1000000000ull / 64);
	/* The span alloc at T0 + 1000 ns, then the two allocations. */
	assert_int_equal(c.ts[0], (T0 + 1000) / 64);
	assert_int_equal(c.ts[1], (T0 + 64000) / 64);
	assert_int_equal(c.allocs, 2);
}

/*
 * 32 spans of 64-byte objects and 16 tiny spans (two 8-byte objects per
 * 16-byte block), every slot allocated, then every span swept empty.
 * Returns the counts of the file.
 */
static void run_stream(unsigned sample, struct counts *c)
{
	struct fx *f = start(sample);
	uint8_t sc64 = (uint8_t)(6 << 1), tiny = GO_TINY_SPANCLASS;
	uint64_t base = HEAP, i, k;

	for (k = 0; k < 32; k++, base += GO_PAGE_SIZE) {
		span_alloc(f, base, sc64);
		for (i = 0; i < GO_PAGE_SIZE / 64; i++)
			alloc(f, base + i * 64, 56, f->ts += 700);
	}
	for (k = 0; k < 16; k++, base += GO_PAGE_SIZE) {
		span_alloc(f, base, tiny);
		for (i = 0; i < GO_PAGE_SIZE / 16; i++) {
			alloc(f, base + i * 16, 8, f->ts += 700);
			alloc(f, base + i * 16 + 8, 8, f->ts += 700);
		}
	}
	base = HEAP;
	for (k = 0; k < 32; k++, base += GO_PAGE_SIZE)
		sweep_all(f, base, sc64, 64);
	for (k = 0; k < 16; k++, base += GO_PAGE_SIZE)
		sweep_all(f, base, tiny, 16);
	finish(f, c);
}

static void test_all_kept_without_sample(void **state)
{
	struct counts c;

	run_stream(1, &c);
	/* 32 * 128 objects + 16 * 512 blocks of two IDs. */
	assert_int_equal(c.allocs, 32 * 128 + 16 * 512 * 2);
	assert_int_equal(c.frees, c.allocs);
	assert_int_equal(c.free_unknown, 0);
}

static void test_sample_frees_only_what_it_kept(void **state)
{
	uint64_t all = 32 * 128 + 16 * 512 * 2;
	struct counts c;

	run_stream(4, &c);
	/* Bernoulli(1/4) per object (tiny blocks as a whole): +-25 %. */
	assert_true(c.allocs > all / 4 * 3 / 4 && c.allocs < all / 4 * 5 / 4);
	assert_int_equal(c.free_unknown, 0);
	assert_int_equal(c.frees, c.allocs);
}

/*
 * A tiny span whose 512 blocks each get three 5-byte objects, at offsets
 * 0, 5 and 10 (runtime/malloc.go packs them so), then a sweep frees them:
 * IDs base, base (the same 8-byte half) and base + 1.
 */
static void run_tiny(bool tiny_as_runtime, int go, struct counts *c)
{
	struct fx *f = start_opts(1, tiny_as_runtime, go);
	uint64_t i, off;

	span_alloc(f, HEAP, GO_TINY_SPANCLASS);
	for (i = 0; i < GO_PAGE_SIZE / 16; i++)
		for (off = 0; off <= 10; off += 5)
			alloc(f, HEAP + i * 16 + off, 5, f->ts += 700);
	sweep_all(f, HEAP, GO_TINY_SPANCLASS, 16);
	finish(f, c);
}

static void test_tiny_default_two_ids_per_block(void **state)
{
	struct counts c;

	run_tiny(false, 27, &c);
	/* The object at 5 shares the base's live ID: merged. */
	assert_int_equal(c.allocs, 512 * 2);
	assert_int_equal(c.frees, 512 * 2);
	assert_int_equal(c.alloc_of_live, 0);
	assert_int_equal(c.free_unknown, 0);
}

static void test_tiny_as_runtime_go127(void **state)
{
	struct counts c;

	run_tiny(true, 27, &c);
	/* Go 1.24+: every tiny object, at its own address; one free per
	 * block, at its base: the object at 5 allocates a live ID again and
	 * the upper half is never freed, as in the runtime's own traces. */
	assert_int_equal(c.allocs, 512 * 3);
	assert_int_equal(c.alloc_of_live, 512);
	assert_int_equal(c.frees, 512);
	assert_int_equal(c.free_unknown, 0);
}

static void test_tiny_as_runtime_go123(void **state)
{
	struct counts c;

	run_tiny(true, 23, &c);
	/* Go 1.23: only the object that opens a block. */
	assert_int_equal(c.allocs, 512);
	assert_int_equal(c.alloc_of_live, 0);
	assert_int_equal(c.frees, 512);
	assert_int_equal(c.free_unknown, 0);
}

/*
 * A sweep whose bitmaps BPF could not read (pages nothing had written:
 * not present, and a uprobe cannot fault them in) is completed by the
 * daemon from the target's memory, the marks added to the finalizers'
 * marks the record already holds.  Here the target is this process and
 * the bitmaps are the arrays below.  A span of 128 64-byte objects, all
 * allocated; the alloc bits say slots 120-127 were not, the marks that
 * the even slots live, and slot 5 has a finalizer: 59 frees.  Green Tea's
 * inline marks are not read again (the sweep clears them), nor is an
 * unreadable address: nothing is freed there.
 */
static uint8_t alloc_bits_mem[16], mark_bits_mem[16];

static void sweep_unread(struct fx *f, uint64_t base, bool inline_marks,
			 uint64_t marks_at)
{
	struct taf_rec_span_sweep r;

	sweep_rec(f, &r, base, (uint8_t)(6 << 1), 64);
	r.inline_marks = inline_marks;
	r.read_errors = TAF_SWEEP_ALLOC_UNREAD | TAF_SWEEP_MARKS_UNREAD;
	memset(r.alloc_bits, 0xff, sizeof(r.alloc_bits));
	r.alloc_bits_at = (uint64_t)(uintptr_t)alloc_bits_mem;
	r.mark_bits[0] = 1u << 5;                 /* slot 5's finalizer */
	r.mark_bits_at = marks_at;
	feed(f, &r, sizeof(r));
}

static void test_sweep_reads_what_bpf_could_not(void **state)
{
	struct fx *f = start_target(1, false, 27, true);
	uint64_t i, k, base;
	struct counts c;

	memset(alloc_bits_mem, 0xff, sizeof(alloc_bits_mem));
	alloc_bits_mem[15] = 0;
	memset(mark_bits_mem, 0x55, sizeof(mark_bits_mem));
	for (k = 0, base = HEAP; k < 3; k++, base += GO_PAGE_SIZE) {
		span_alloc(f, base, (uint8_t)(6 << 1));
		for (i = 0; i < 128; i++)
			alloc(f, base + i * 64, 56, f->ts += 700);
	}
	sweep_unread(f, HEAP, false, (uint64_t)(uintptr_t)mark_bits_mem);
	sweep_unread(f, HEAP + GO_PAGE_SIZE, true,
		     (uint64_t)(uintptr_t)mark_bits_mem);
	sweep_unread(f, HEAP + 2 * GO_PAGE_SIZE, false, 16);
	assert_int_equal(session_counts(f->s)->sweep_bitmaps_read_late, 3 + 1);
	assert_int_equal(session_counts(f->s)->sweep_read_errors, 2);
	finish(f, &c);
	assert_int_equal(c.allocs, 3 * 128);
	assert_int_equal(c.frees, 60 - 1);
	assert_int_equal(c.free_unknown, 0);
}

/*
 * --memprofilerate's snapshots (TAF_REC_SNAP, taken by the BPF programs
 * in the GC pauses) become the reads at the GC record after them: a
 * whole one is applied (births at a mark and at its end, frees at a
 * mark), one with a part missing, cut by the budget or not confirmed by
 * its GC record is not.  The session reads its own process: the bucket
 * the samples name is in this test's memory, laid out as Go 1.27's.
 */
static uint64_t bucket_mem[2 + PS_MAX_PCS + 64];

static void snap(struct fx *f, uint32_t seq, uint32_t flags,
		 const uint64_t *addrs, uint32_t n, uint64_t bucket)
{
	struct taf_rec_snap r;
	uint32_t i;

	memset(&r, 0, sizeof(r));
	hdr(&r.hdr, TAF_REC_SNAP,
	    (uint16_t)(offsetof(struct taf_rec_snap, s) + n * sizeof(r.s[0])),
	    f->ts += 10);
	r.hdr.flags = flags;
	r.seq = seq;
	r.n = n;
	for (i = 0; i < n; i++)
		r.s[i] = (struct taf_snap_sample){ addrs[i], bucket };
	feed(f, &r, r.hdr.len);
}

static void gc_rec(struct fx *f, uint16_t kind, uint32_t flags, uint64_t addr)
{
	struct taf_rec_addr r = { 0 };

	hdr(&r.hdr, kind, sizeof(r), f->ts += 1000);
	r.hdr.flags = flags;
	r.addr = addr;
	feed(f, &r, sizeof(r));
}

/*
 * A --memprofilerate session with reads, on this process (laid out as Go
 * 1.27's), begun, the heap's base set: its samples name *BUCKET (size
 * 64, one PC, in bucket_mem); the reads are typed by TYPES.
 */
static struct fx *reads_session(struct u64_map *types, uint64_t *bucket)
{
	struct session_opts so = { .sample = 1, .memprofilerate = 4096,
				   .sample_reads = true,
				   .pause_budget_ns = 100000 };
	struct fx *f = calloc(1, sizeof(*f));
	struct ps_reader pr;
	struct target tg;
	char err[256];

	assert_non_null(f);
	strcpy(f->dir, "/tmp/test_session_sample.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	so.dir = f->dir;
	f->bin = open_bin(27, "");
	assert_int_equal(profile_specials_open(f->bin, 0, 4, &pr, err,
					       sizeof(err)), 0);
	/* Where the bucket's size is at its layout's offset. */
	*bucket = (uint64_t)(uintptr_t)bucket_mem - (uint64_t)pr.l.bucket_size.off;
	bucket_mem[0] = 64;
	bucket_mem[1] = 1;
	bucket_mem[2] = 0x401000;
	profile_specials_close(&pr);
	assert_int_equal(target_open(getpid(), &tg, err, sizeof(err)), 0);
	assert_int_equal(session_start(&f->s, &tg, f->bin, 0, &so, err,
				       sizeof(err)), 0);
	u64_map_init(types);
	/* No probes: no daemon read and no BPF to ask; only the records. */
	session_set_sample_reader(f->s, NULL, types, 4);
	assert_int_equal(session_begin(f->s, 1), 0);
	f->ts = T0;
	/* The heap's base, from a first event (the process is no Go one). */
	span_alloc(f, HEAP, (uint8_t)(6 << 1));
	return f;
}

static void test_snapshots_are_the_reads(void **state)
{
	struct fx *f;
	const uint64_t A = HEAP + 0x100, B = HEAP + 0x2000, C = HEAP + 0x4000,
		       D = HEAP + 0x6000, E = HEAP + 0x8000;
	const uint64_t ab[] = { A, B }, abc[] = { A, B, C }, ac[] = { A, C },
		       acd[] = { A, C, D };
	const struct sample_reads *r;
	struct u64_map types;
	struct counts c;
	uint64_t bucket;

	f = reads_session(&types, &bucket);

	/* A mark: A and B born; its end: C too. */
	snap(f, 0, TAF_SNAP_F_LAST, ab, 2, bucket);
	gc_rec(f, TAF_REC_GC_MARK, TAF_GC_F_SNAP, 0);
	snap(f, 0, TAF_SNAP_F_LAST, abc, 3, bucket);
	gc_rec(f, TAF_REC_GC_CYCLE, TAF_GC_F_SNAP, 0);
	/* In two parts: B freed; A and C in slots the sweep since the
	 * mark's end kept (allocBits set). */
	snap(f, 0, 0, ac, 2, bucket | TAF_SNAP_OLD);
	snap(f, 1, TAF_SNAP_F_LAST, NULL, 0, bucket);
	gc_rec(f, TAF_REC_GC_MARK, TAF_GC_F_SNAP, 1);
	/* A part lost (seq 1): not a read, C is not freed nor D born. */
	snap(f, 0, 0, &A, 1, bucket);
	snap(f, 2, TAF_SNAP_F_LAST, &D, 1, bucket);
	gc_rec(f, TAF_REC_GC_MARK, TAF_GC_F_SNAP, 2);
	/* Cut by the budget, its GC record without TAF_GC_F_SNAP. */
	snap(f, 0, TAF_SNAP_F_LAST | TAF_SNAP_F_CUT, &A, 1, bucket);
	gc_rec(f, TAF_REC_GC_MARK, 0, 3);
	/* Whole but its GC record did not confirm it (the ring lost
	 * nothing the session saw, but the program said no). */
	snap(f, 0, TAF_SNAP_F_LAST, &A, 1, bucket);
	gc_rec(f, TAF_REC_GC_MARK, 0, 4);
	/* Whole again: D born; then all freed. */
	snap(f, 0, TAF_SNAP_F_LAST, acd, 3, bucket);
	gc_rec(f, TAF_REC_GC_MARK, TAF_GC_F_SNAP, 5);
	snap(f, 0, TAF_SNAP_F_LAST, NULL, 0, bucket);
	gc_rec(f, TAF_REC_GC_MARK, TAF_GC_F_SNAP, 6);
	/* E born; after the sweep the next mark's E is in a slot the
	 * sweep freed (allocBits clear): another sample, a free and a
	 * birth.  Its mark's end (no sweep since) and the next mark, whose
	 * E is in a slot kept, see the same one. */
	snap(f, 0, TAF_SNAP_F_LAST, &E, 1, bucket);
	gc_rec(f, TAF_REC_GC_MARK, TAF_GC_F_SNAP, 7);
	snap(f, 0, TAF_SNAP_F_LAST, &E, 1, bucket);
	gc_rec(f, TAF_REC_GC_CYCLE, TAF_GC_F_SNAP, 0);
	snap(f, 0, TAF_SNAP_F_LAST, &E, 1, bucket);
	gc_rec(f, TAF_REC_GC_MARK, TAF_GC_F_SNAP, 8);
	snap(f, 0, TAF_SNAP_F_LAST, &E, 1, bucket);
	gc_rec(f, TAF_REC_GC_CYCLE, TAF_GC_F_SNAP, 0);
	snap(f, 0, TAF_SNAP_F_LAST, &E, 1, bucket | TAF_SNAP_OLD);
	gc_rec(f, TAF_REC_GC_MARK, TAF_GC_F_SNAP, 9);
	snap(f, 0, TAF_SNAP_F_LAST, NULL, 0, bucket);
	gc_rec(f, TAF_REC_GC_MARK, TAF_GC_F_SNAP, 10);

	r = session_reads(f->s);
	assert_non_null(r);
	assert_int_equal(r->c.snaps, 11);
	assert_int_equal(r->c.snaps_cut, 1);
	assert_int_equal(r->c.snaps_unread, 1);
	assert_int_equal(r->c.reads, 8);
	assert_int_equal(r->c.reads_end, 3);
	assert_int_equal(r->c.reborn, 1);
	finish(f, &c);
	u64_map_free(&types);
	assert_int_equal(c.allocs, 6);
	assert_int_equal(c.frees, 6);
	assert_int_equal(c.free_unknown, 0);
	assert_int_equal(c.alloc_of_live, 0);
}

/*
 * One read a cycle, at each mark's end (the probe at the mark's start
 * held back): a snapshot there tells every birth and death.  Samples new
 * to the session are born; those it holds that the read lacks, or finds
 * in a slot the last sweep freed (allocBits clear), were freed by that
 * sweep.
 */
static void test_one_read_a_cycle(void **state)
{
	struct fx *f;
	const uint64_t A = HEAP + 0x100, B = HEAP + 0x2000, C = HEAP + 0x4000;
	const struct sample_reads *r;
	struct taf_rec_snap rec;
	struct u64_map types;
	struct counts c;
	uint64_t bucket;

	f = reads_session(&types, &bucket);

	/* End 1: A and B born. */
	{
		const uint64_t ab[] = { A, B };

		snap(f, 0, TAF_SNAP_F_LAST, ab, 2, bucket);
	}
	gc_rec(f, TAF_REC_GC_CYCLE, TAF_GC_F_SNAP, 0);
	/* End 2: another sample at A's address (its slot was freed by the
	 * sweep: allocBits clear), B kept, C born. */
	memset(&rec, 0, sizeof(rec));
	hdr(&rec.hdr, TAF_REC_SNAP, (uint16_t)(offsetof(struct taf_rec_snap, s) +
	    3 * sizeof(rec.s[0])), f->ts += 10);
	rec.hdr.flags = TAF_SNAP_F_LAST;
	rec.n = 3;
	rec.s[0] = (struct taf_snap_sample){ A, bucket };
	rec.s[1] = (struct taf_snap_sample){ B, bucket | TAF_SNAP_OLD };
	rec.s[2] = (struct taf_snap_sample){ C, bucket };
	feed(f, &rec, rec.hdr.len);
	gc_rec(f, TAF_REC_GC_CYCLE, TAF_GC_F_SNAP, 0);
	/* End 3: A and B gone, C kept. */
	snap(f, 0, TAF_SNAP_F_LAST, &C, 1, bucket | TAF_SNAP_OLD);
	gc_rec(f, TAF_REC_GC_CYCLE, TAF_GC_F_SNAP, 0);
	/* End 4: nothing; a cut one is no read. */
	snap(f, 0, TAF_SNAP_F_LAST, NULL, 0, bucket);
	gc_rec(f, TAF_REC_GC_CYCLE, TAF_GC_F_SNAP, 0);
	snap(f, 0, TAF_SNAP_F_LAST | TAF_SNAP_F_CUT, &A, 1, bucket);
	gc_rec(f, TAF_REC_GC_CYCLE, 0, 0);

	r = session_reads(f->s);
	assert_non_null(r);
	assert_int_equal(r->c.snaps, 4);
	assert_int_equal(r->c.reads, 0);
	assert_int_equal(r->c.reads_end, 4);
	assert_int_equal(r->c.reborn, 1);
	finish(f, &c);
	u64_map_free(&types);
	/* A, B, A again, C; each freed once, none born while live. */
	assert_int_equal(c.allocs, 4);
	assert_int_equal(c.frees, 4);
	assert_int_equal(c.free_unknown, 0);
	assert_int_equal(c.alloc_of_live, 0);
}

/*
 * Whether the probe at each mark's start is wanted rests on what a step
 * of the pause's read costs.  One snapshot the host stalled (1.7 ms for
 * 40 steps; seen on allocbench) must not make a 40-step heap look as if
 * it would not fit the budget: the mean of all the snapshots said so
 * for the next 70 cycles, the median of the last ones does not.
 */
static void test_one_stalled_snapshot_wants_no_mark_probe(void **state)
{
	struct sample_reads *r;
	struct taf_rec_snap rec;
	struct u64_map types;
	struct counts c;
	struct fx *f;
	uint64_t bucket, ns;
	int i;

	f = reads_session(&types, &bucket);
	/* As if the programs had been asked (the test has no probes). */
	r = (struct sample_reads *)session_reads(f->s);
	r->snap_asked = true;
	for (i = 0; i < 21; i++) {
		ns = i == 0 ? 1735000 : 8000;
		memset(&rec, 0, sizeof(rec));
		hdr(&rec.hdr, TAF_REC_SNAP, (uint16_t)offsetof(struct taf_rec_snap, s),
		    f->ts += 10);
		rec.hdr.flags = TAF_SNAP_F_LAST;
		rec.steps = 40;
		rec.ns = ns;
		feed(f, &rec, rec.hdr.len);
		gc_rec(f, TAF_REC_GC_CYCLE, TAF_GC_F_SNAP, 0);
	}
	assert_int_equal(r->c.snap_taken, 21);
	/* 200 ns a step: the budget reads 500, a third is 166 > 40. */
	assert_false(session_wants_mark_probe(f->s, true));
	/* A heap of 300 steps is near the budget: wanted. */
	r->snap_last_steps = 300;
	assert_true(session_wants_mark_probe(f->s, false));
	finish(f, &c);
	u64_map_free(&types);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timestamps_are_64ns_ticks),
		cmocka_unit_test(test_all_kept_without_sample),
		cmocka_unit_test(test_sample_frees_only_what_it_kept),
		cmocka_unit_test(test_tiny_default_two_ids_per_block),
		cmocka_unit_test(test_tiny_as_runtime_go127),
		cmocka_unit_test(test_tiny_as_runtime_go123),
		cmocka_unit_test(test_sweep_reads_what_bpf_could_not),
		cmocka_unit_test(test_snapshots_are_the_reads),
		cmocka_unit_test(test_one_read_a_cycle),
		cmocka_unit_test(test_one_stalled_snapshot_wants_no_mark_probe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
