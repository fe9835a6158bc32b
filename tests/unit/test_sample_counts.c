// SPDX-License-Identifier: BSD-3-Clause
/*
 * --memprofilerate's cross-check with the runtime's own counts: the
 * buckets read from a process (this one, holding a bucket list laid out
 * as runtime/mprof.go's, Go 1.27's two-word memRecordCycle and 1.26's
 * four), the sums by cycle, and the reads' figures held against them:
 * what came before the first check absorbed, a missed birth, an extra
 * birth, a false free, and a daemon's read during a mark held against
 * a range.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "attach/mem_batch.h"
#include "attach/profile_counts.h"
#include "attach/target.h"
#include "trace/sample_counts.h"

static struct target self;

static int setup(void **state)
{
	char err[256];

	return target_open(getpid(), &self, err, sizeof(err));
}

static int teardown(void **state)
{
	target_close(&self);
	return 0;
}

/* A bucket as the runtime lays it out: next, allnext, typ, hash, size,
 * nstk, the stack, then the memRecord (active, future[3]). */
#define NSTK 3
struct fake_bucket {
	uint64_t next, allnext, typ, hash, size, nstk;
	uint64_t stk[NSTK];
	uint64_t rec[4][4];          /* cycles of up to four words */
};

static uint64_t fake_mbuckets;
static uint32_t fake_cycle;

static void fake_open(struct profile_counts *pc, uint32_t cycle_bytes)
{
	memset(pc, 0, sizeof(*pc));
	pc->mbuckets = (uint64_t)(uintptr_t)&fake_mbuckets;
	pc->mprof_cycle = (uint64_t)(uintptr_t)&fake_cycle;
	pc->allnext = 8;
	pc->nstk = 40;
	pc->cycle_bytes = cycle_bytes;
	pc->batch = malloc(sizeof(*pc->batch));
	assert_non_null(pc->batch);
}

/* Word W (0 allocs, 1 frees) of cycle K (0 active, 1..3 future) of B's
 * memRecord, for a record of CYCLE_BYTES a cycle. */
static uint64_t *rec_word(struct fake_bucket *b, uint32_t cycle_bytes, int k,
			  int w)
{
	return (uint64_t *)((uint8_t *)b->rec + k * cycle_bytes) + w;
}

static void push(struct fake_bucket *b)
{
	memset(b, 0, sizeof(*b));
	b->typ = 1;
	b->nstk = NSTK;
	b->allnext = fake_mbuckets;
	fake_mbuckets = (uint64_t)(uintptr_t)b;
}

static const struct pc_bucket *find(const struct profile_counts *pc,
				    const struct fake_bucket *b)
{
	size_t i;

	for (i = 0; i < pc->n; i++)
		if (pc->b[i].bucket == (uint64_t)(uintptr_t)b)
			return &pc->b[i];
	fail_msg("bucket %p not read", (const void *)b);
	return NULL;
}

/*
 * At cycle C mallocs go to future[(C+2)%3] (record cycle 1 + that), the
 * sweep's frees to future[(C+1)%3]: births leave the first out, frees
 * the second, window is the second's allocs.  On both layouts.
 */
static void test_sums_leave_out_the_words_still_moving(void **state)
{
	static const uint32_t layouts[] = { 16, 32 };
	size_t l;

	for (l = 0; l < 2; l++) {
		uint32_t cb = layouts[l], c;

		for (c = 0; c < 6; c++) {
			struct fake_bucket b;
			struct pc_bucket out;
			int k;

			memset(&b, 0, sizeof(b));
			for (k = 0; k < 4; k++) {
				*rec_word(&b, cb, k, 0) = 1000u << (3 * k);
				*rec_word(&b, cb, k, 1) = 1u << (3 * k);
			}
			profile_counts_sum((const uint8_t *)b.rec, cb, c, &out);
			uint32_t m = 1 + (c + 2) % 3, sw = 1 + (c + 1) % 3;
			uint64_t births = 0, frees = 0;

			for (k = 0; k < 4; k++) {
				births += k == (int)m ? 0 : 1000u << (3 * k);
				frees += k == (int)sw ? 0 : 1u << (3 * k);
			}
			assert_int_equal(out.births, births);
			assert_int_equal(out.frees, frees);
			assert_int_equal(out.window, 1000u << (3 * sw));
			assert_int_equal(out.allocs_all, 1000u * (1 + 8 + 64 + 512));
			assert_int_equal(out.frees_all, 1 + 8 + 64 + 512);
		}
	}
}

/*
 * The list read from a process: every bucket, those pushed since the
 * last read learned from the head, each memRecord found after its
 * stack, and the cycle.
 */
static void test_buckets_are_read_from_the_list(void **state)
{
	static struct fake_bucket a, b, c;
	struct profile_counts pc;

	fake_mbuckets = 0;
	fake_open(&pc, 16);
	push(&a);
	push(&b);
	fake_cycle = 7 << 1 | 1;     /* cycle 7, flushed */
	/* At 7: mallocs in future[0] (record cycle 1), sweep in future[2]. */
	*rec_word(&a, 16, 0, 0) = 10;   /* active allocs */
	*rec_word(&a, 16, 0, 1) = 4;
	*rec_word(&a, 16, 1, 0) = 5;    /* mallocs since the mark: left out */
	*rec_word(&a, 16, 3, 0) = 2;    /* the cycle the mark ended */
	*rec_word(&a, 16, 3, 1) = 3;    /* the sweep under way: left out */
	assert_int_equal(profile_counts_read(&self, &pc), 0);
	assert_int_equal(pc.n, 2);
	assert_int_equal(pc.cycle, 7);
	assert_int_equal(find(&pc, &a)->births, 12);
	assert_int_equal(find(&pc, &a)->frees, 4);
	assert_int_equal(find(&pc, &a)->window, 2);
	assert_int_equal(find(&pc, &a)->allocs_all, 17);
	assert_int_equal(find(&pc, &b)->births, 0);

	push(&c);
	*rec_word(&c, 16, 3, 0) = 9;    /* future[2]: neither, at 8 */
	fake_cycle = 8 << 1;
	assert_int_equal(profile_counts_read(&self, &pc), 0);
	assert_int_equal(pc.n, 3);
	assert_int_equal(find(&pc, &c)->births, 9);
	/* At 8 mallocs go to future[1]: a's 5 now count, its 3 frees too
	 * (the sweep's word is future[0] now). */
	assert_int_equal(find(&pc, &a)->births, 17);
	assert_int_equal(find(&pc, &a)->frees, 7);
	profile_counts_close(&pc);
}

/* A list whose bucket is unreadable is an error, not a short list. */
static void test_an_unreadable_bucket_fails_the_read(void **state)
{
	struct profile_counts pc;

	fake_open(&pc, 16);
	fake_mbuckets = 0x10;        /* page zero: never mapped */
	assert_int_equal(profile_counts_read(&self, &pc), -EIO);
	assert_int_equal(pc.n, 0);
	profile_counts_close(&pc);
	fake_mbuckets = 0;
}

static struct profile_counts one_bucket(uint64_t births, uint64_t frees,
					uint64_t window, uint64_t all)
{
	static struct pc_bucket b;
	struct profile_counts pc = { .b = &b, .n = 1 };

	b = (struct pc_bucket){ .bucket = 0x1000, .births = births,
				.frees = frees, .window = window,
				.allocs_all = all, .frees_all = frees };
	return pc;
}

static void born(struct sample_counts *sc, uint64_t from, uint64_t n)
{
	uint64_t k;

	for (k = from; k < from + n; k++)
		assert_int_equal(sample_counts_born(sc, (k + 1) * 16, 0x1000), 0);
}

static void freed(struct sample_counts *sc, uint64_t from, uint64_t n)
{
	uint64_t k;

	for (k = from; k < from + n; k++)
		sample_counts_freed(sc, (k + 1) * 16);
}

/*
 * What the runtime counted before the first check is taken as before
 * the tracer; then reads that find what it counts agree, and one that
 * misses a birth (and so its free) is told, by how many, once.
 */
static void test_a_missed_birth_is_told(void **state)
{
	struct sample_counts sc;
	struct profile_counts pc;

	sample_counts_init(&sc);
	born(&sc, 0, 10);                  /* the first read: 10 live */
	pc = one_bucket(25, 15, 10, 25);   /* 15 born and dead before */
	assert_int_equal(sample_counts_compare(&sc, &pc, SC_END), 0);
	assert_int_equal(sc.t.births_missed + sc.t.births_extra +
			 sc.t.frees_missed + sc.t.frees_extra, 0);

	born(&sc, 10, 5);                  /* 5 born, 3 freed: all seen */
	freed(&sc, 0, 3);
	pc = one_bucket(30, 18, 5, 30);
	assert_int_equal(sample_counts_compare(&sc, &pc, SC_END), 0);
	assert_int_equal(sc.t.births_missed + sc.t.births_extra +
			 sc.t.frees_missed + sc.t.frees_extra, 0);

	/* 4 born, one born and freed between two reads: the reads see 3
	 * births and no free; the runtime counts 4 and 1. */
	born(&sc, 15, 3);
	pc = one_bucket(34, 19, 4, 34);
	assert_int_equal(sample_counts_compare(&sc, &pc, SC_END), 0);
	assert_int_equal(sc.t.births_missed, 1);
	assert_int_equal(sc.t.frees_missed, 1);
	assert_int_equal(sc.t.births_extra + sc.t.frees_extra, 0);

	/* Told once: the next check that agrees adds nothing. */
	born(&sc, 18, 2);
	pc = one_bucket(36, 19, 2, 36);
	assert_int_equal(sample_counts_compare(&sc, &pc, SC_END), 0);
	assert_int_equal(sc.t.births_missed, 1);
	assert_int_equal(sc.t.frees_missed, 1);
	assert_int_equal(sc.t.checks, 4);
	assert_int_equal(sc.t.found_births, 20);
	sample_counts_free(&sc);
}

/* A reused address taken for a free and a birth that did not happen:
 * both told extra. */
static void test_a_false_free_and_birth_are_told(void **state)
{
	struct sample_counts sc;
	struct profile_counts pc;

	sample_counts_init(&sc);
	born(&sc, 0, 4);
	pc = one_bucket(4, 0, 4, 4);
	assert_int_equal(sample_counts_compare(&sc, &pc, SC_END), 0);
	freed(&sc, 0, 1);
	born(&sc, 100, 1);                 /* "reborn", wrongly */
	pc = one_bucket(4, 0, 0, 4);
	pc.b[0].window = 1;                /* no runtime.GC flush */
	assert_int_equal(sample_counts_compare(&sc, &pc, SC_END), 0);
	assert_int_equal(sc.t.births_extra, 1);
	assert_int_equal(sc.t.frees_extra, 1);
	assert_int_equal(sc.t.births_missed + sc.t.frees_missed, 0);
	sample_counts_free(&sc);
}

/*
 * A daemon's read during a mark found births the runtime counts after
 * the last mark's end (between `births` and `allocs_all`): within the
 * range, not an error; frees are exact then.  A bucket made after the
 * first check had nothing before it.
 */
static void test_a_read_during_a_mark_is_held_to_a_range(void **state)
{
	static struct pc_bucket two[2];
	struct sample_counts sc;
	struct profile_counts pc = { .b = two, .n = 1 };

	sample_counts_init(&sc);
	born(&sc, 0, 6);
	two[0] = (struct pc_bucket){ .bucket = 0x1000, .births = 6,
				     .allocs_all = 6 };
	assert_int_equal(sample_counts_compare(&sc, &pc, SC_END), 0);

	born(&sc, 6, 3);                  /* 2 before the mark ended, 1 after */
	freed(&sc, 0, 2);
	two[0] = (struct pc_bucket){ .bucket = 0x1000, .births = 8,
				     .allocs_all = 10, .frees_all = 2 };
	assert_int_equal(sample_counts_compare(&sc, &pc, SC_MARK), 0);
	assert_int_equal(sc.t.births_missed + sc.t.births_extra +
			 sc.t.frees_missed + sc.t.frees_extra, 0);

	/* A new bucket whose one birth the reads missed. */
	two[1] = (struct pc_bucket){ .bucket = 0x2000, .births = 1,
				     .allocs_all = 1 };
	two[0].births = 9;                /* all 9 born before this mark's end */
	two[0].frees = 2;
	two[0].window = 1;
	pc.n = 2;
	assert_int_equal(sample_counts_compare(&sc, &pc, SC_END), 0);
	assert_int_equal(sc.t.births_missed, 1);
	assert_int_equal(sc.t.births_extra + sc.t.frees_missed +
			 sc.t.frees_extra, 0);
	sample_counts_free(&sc);
}

/*
 * runtime.GC flushed a sweep's frees before the check (no bucket has a
 * window or sweep frees): the runtime is ahead of the reads by that
 * sweep, not an error then; the next check holds the reads to it, so
 * frees they never found are told there, and found ones are not.
 */
static void test_frees_flushed_ahead_are_held_at_the_next_check(void **state)
{
	static const bool find[] = { true, false };
	size_t k;

	for (k = 0; k < 2; k++) {
		struct sample_counts sc;
		struct profile_counts pc;

		sample_counts_init(&sc);
		born(&sc, 0, 10);
		pc = one_bucket(10, 0, 10, 10);
		assert_int_equal(sample_counts_compare(&sc, &pc, SC_END), 0);
		/* The sweep freed 4 and PostSweep flushed them: ahead. */
		pc = one_bucket(10, 4, 0, 10);
		assert_int_equal(sample_counts_compare(&sc, &pc, SC_END), 0);
		assert_int_equal(sc.t.frees_missed + sc.t.frees_extra, 0);
		/* The next read finds the 4 gone, or (a read wrong) not. */
		if (find[k])
			freed(&sc, 0, 4);
		pc = one_bucket(11, 4, 1, 11);
		born(&sc, 10, 1);
		assert_int_equal(sample_counts_compare(&sc, &pc, SC_END), 0);
		assert_int_equal(sc.t.frees_missed, find[k] ? 0 : 4);
		assert_int_equal(sc.t.frees_extra + sc.t.births_missed +
				 sc.t.births_extra, 0);
		sample_counts_free(&sc);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sums_leave_out_the_words_still_moving),
		cmocka_unit_test(test_buckets_are_read_from_the_list),
		cmocka_unit_test(test_an_unreadable_bucket_fails_the_read),
		cmocka_unit_test(test_a_missed_birth_is_told),
		cmocka_unit_test(test_a_false_free_and_birth_are_told),
		cmocka_unit_test(test_a_read_during_a_mark_is_held_to_a_range),
		cmocka_unit_test(test_frees_flushed_ahead_are_held_at_the_next_check),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
