// SPDX-License-Identifier: BSD-3-Clause
/*
 * mem_batch_read against this very process: readable pieces, a piece on
 * an unmapped page, a piece straddling into it, and many pieces.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "attach/mem_batch.h"
#include "attach/target.h"

static struct target self;
static struct mem_batch batch;

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

static void piece(struct mem_batch *b, size_t i, const void *src, size_t len,
		  uint8_t *dst)
{
	b->addr[i] = (uint64_t)(uintptr_t)src;
	b->len[i] = len;
	b->dst[i] = dst;
	b->ok[i] = false;
}

/* Pages 0 and 2 mapped, page 1 not: the kernel stops at pieces 2 and 3,
 * which must come back not ok while every other piece is read. */
static void test_unreadable_pieces_are_skipped_not_fatal(void **state)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t out[5][64];
	size_t i;

	assert_ptr_not_equal(m, MAP_FAILED);
	for (i = 0; i < (size_t)(3 * pg); i++)
		m[i] = (uint8_t)(i * 7);
	assert_int_equal(munmap(m + pg, pg), 0);
	memset(out, 0xee, sizeof(out));
	piece(&batch, 0, m, 64, out[0]);
	piece(&batch, 1, m + pg - 64, 64, out[1]);
	piece(&batch, 2, m + pg, 64, out[2]);           /* unmapped */
	piece(&batch, 3, m + pg - 32, 64, out[3]);      /* straddles into it */
	piece(&batch, 4, m + 2 * pg + 8, 64, out[4]);

	assert_int_equal(mem_batch_read(&self, &batch, 5), 3);
	assert_true(batch.ok[0]);
	assert_true(batch.ok[1]);
	assert_false(batch.ok[2]);
	assert_false(batch.ok[3]);
	assert_true(batch.ok[4]);
	assert_memory_equal(out[0], m, 64);
	assert_memory_equal(out[1], m + pg - 64, 64);
	assert_memory_equal(out[4], m + 2 * pg + 8, 64);
	munmap(m, pg);
	munmap(m + 2 * pg, pg);
}

/* A full batch of pieces of different lengths, back to back. */
static void test_full_batch_reads_every_piece(void **state)
{
	size_t n = MEM_BATCH_MAX, i, off = 0;
	uint8_t *src = malloc(n * 200), *dst = calloc(n, 200);

	assert_non_null(src);
	assert_non_null(dst);
	for (i = 0; i < n * 200; i++)
		src[i] = (uint8_t)(i ^ (i >> 8));
	for (i = 0; i < n; i++) {
		size_t len = 1 + i % 200;

		piece(&batch, i, src + off, len, dst + off);
		off += len;
	}
	assert_int_equal(mem_batch_read(&self, &batch, n), n);
	for (i = 0; i < n; i++)
		assert_true(batch.ok[i]);
	assert_memory_equal(dst, src, off);
	free(src);
	free(dst);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unreadable_pieces_are_skipped_not_fatal),
		cmocka_unit_test(test_full_batch_reads_every_piece),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
