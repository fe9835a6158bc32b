// SPDX-License-Identifier: BSD-3-Clause
/*
 * go_reflect_names: runtime.reflectOffs.m walked in a made-up memory
 * image laid out as Go 1.21-1.23 (hmap, buckets with an overflow chain,
 * old buckets of a map that is growing) and Go 1.24+ (a small Swiss map of
 * one group; a directory of tables with a table listed twice) lay it out;
 * IDs found, empty/deleted/evacuated slots skipped, a later registration
 * found by a second walk once the map has grown, and not before.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "inspect/go_reflect_names.h"

#define BASE 0x100000ull
#define MEM 65536

static uint8_t mem[MEM];
static unsigned reads;

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	reads++;
	if (addr < BASE || addr + len > BASE + MEM)
		return -EFAULT;
	memcpy(buf, mem + (addr - BASE), len);
	return 0;
}

static void w64(uint64_t addr, uint64_t v) { memcpy(mem + (addr - BASE), &v, 8); }
static void w32(uint64_t addr, int32_t v) { memcpy(mem + (addr - BASE), &v, 4); }
static void w8(uint64_t addr, uint8_t v) { mem[addr - BASE] = v; }

/* reflectOffs at BASE: lock, next, m (+16), minv (+24). */
#define OFFS BASE
#define MAP (BASE + 0x100)

static void reader(struct go_reflect_names *rn, bool swiss)
{
	memset(rn, 0, sizeof(*rn));
	rn->read = fake_read;
	rn->offs = OFFS;
	rn->swiss = swiss;
	u64_map_init(&rn->names);
	memset(mem, 0, sizeof(mem));
	w64(OFFS + 16, MAP);
}

static void expect(struct go_reflect_names *rn, int32_t id, uint64_t want)
{
	uint64_t got = 0;

	assert_int_equal(go_reflect_name_addr(rn, id, &got), 0);
	assert_int_equal(got, want);
}

static void expect_none(struct go_reflect_names *rn, int32_t id)
{
	uint64_t got;

	assert_int_equal(go_reflect_name_addr(rn, id, &got), -ENOENT);
}

/* Bucket K of an array at ARR: slot S holds (ID, NAME) with TOPHASH. */
static void bucket_slot(uint64_t b, unsigned s, uint8_t tophash, int32_t id,
			uint64_t name)
{
	w8(b + s, tophash);
	w32(b + 8 + 4 * s, id);
	w64(b + 40 + 8 * s, name);
}

static void test_bucket_map(void **state)
{
	struct go_reflect_names rn;
	uint64_t buckets = BASE + 0x1000, old = BASE + 0x2000,
		 over = BASE + 0x3000;

	(void)state;
	reader(&rn, false);
	/* hmap: count 5, flags 0, B 1 (two buckets), growing from one. */
	w64(MAP, 5);
	w8(MAP + 9, 1);
	w64(MAP + 16, buckets);
	w64(MAP + 24, old);
	bucket_slot(buckets, 0, 7, -1, 0xa001);
	bucket_slot(buckets, 3, 1, -9, 0xdead);      /* emptyOne */
	bucket_slot(buckets + 112, 7, 200, -2, 0xa002);
	w64(buckets + 112 + 104, over);              /* overflow chain */
	bucket_slot(over, 0, 5, -3, 0xa003);
	bucket_slot(old, 0, 2, -8, 0xdead);          /* evacuatedX */
	bucket_slot(old, 1, 9, -4, 0xa004);          /* not moved yet */

	expect(&rn, -1, 0xa001);
	expect(&rn, -2, 0xa002);
	expect(&rn, -3, 0xa003);
	expect(&rn, -4, 0xa004);
	expect_none(&rn, -9);
	expect_none(&rn, -8);
	/* Not registered yet: no second walk while the map is unchanged. */
	reads = 0;
	expect_none(&rn, -5);
	assert_true(reads <= 2);
	bucket_slot(buckets, 1, 33, -5, 0xa005);
	w64(MAP, 6);
	expect(&rn, -5, 0xa005);
	go_reflect_names_free(&rn);
}

/* Group at G: control byte S and slot S = (ID, NAME). */
static void group_slot(uint64_t g, unsigned s, uint8_t ctrl, int32_t id,
		       uint64_t name)
{
	w8(g + s, ctrl);
	w32(g + 8 + 16 * s, id);
	w64(g + 8 + 16 * s + 8, name);
}

static void empty_group(uint64_t g)
{
	unsigned s;

	for (s = 0; s < 8; s++)
		w8(g + s, 0x80);
}

static void test_swiss_small_map(void **state)
{
	struct go_reflect_names rn;
	uint64_t g = BASE + 0x1000;

	(void)state;
	reader(&rn, true);
	/* Map: used 2, dirPtr = one group, dirLen 0. */
	w64(MAP, 2);
	w64(MAP + 16, g);
	empty_group(g);
	group_slot(g, 0, 0x11, -1, 0xb001);
	group_slot(g, 5, 0x7f, -2, 0xb002);
	group_slot(g, 6, 0xfe, -7, 0xdead);          /* deleted */

	expect(&rn, -1, 0xb001);
	expect(&rn, -2, 0xb002);
	expect_none(&rn, -7);
	go_reflect_names_free(&rn);
}

static void test_swiss_tables(void **state)
{
	struct go_reflect_names rn;
	uint64_t dir = BASE + 0x800, t1 = BASE + 0x900, t2 = BASE + 0x940,
		 g1 = BASE + 0x1000, g2 = BASE + 0x2000;

	(void)state;
	reader(&rn, true);
	/* Map: used 3, a directory of 3 entries naming t1, t1, t2. */
	w64(MAP, 3);
	w64(MAP + 16, dir);
	w64(MAP + 24, 3);
	w64(dir, t1);
	w64(dir + 8, t1);
	w64(dir + 16, t2);
	/* t1: two groups (lengthMask 1); t2: one. */
	w64(t1 + 16, g1);
	w64(t1 + 24, 1);
	w64(t2 + 16, g2);
	w64(t2 + 24, 0);
	empty_group(g1);
	empty_group(g1 + 136);
	empty_group(g2);
	group_slot(g1, 2, 0x01, -10, 0xc010);
	group_slot(g1 + 136, 7, 0x02, -11, 0xc011);
	group_slot(g2, 0, 0x03, -12, 0xc012);

	expect(&rn, -10, 0xc010);
	expect(&rn, -11, 0xc011);
	expect(&rn, -12, 0xc012);
	expect_none(&rn, -13);
	go_reflect_names_free(&rn);
}

/* A map that is not there yet, or a header that makes no sense. */
static void test_absent_or_damaged(void **state)
{
	struct go_reflect_names rn;
	uint64_t got;

	(void)state;
	reader(&rn, false);
	w64(OFFS + 16, 0);
	expect_none(&rn, -1);
	w64(OFFS + 16, MAP);
	w64(MAP, 1);
	w8(MAP + 9, 40);                              /* B = 40 */
	assert_int_equal(go_reflect_name_addr(&rn, -1, &got), -EINVAL);
	go_reflect_names_free(&rn);

	reader(&rn, true);
	w64(MAP, 1);
	w64(MAP + 16, BASE + 0x800);
	w64(MAP + 24, 1u << 30);                      /* dirLen */
	assert_int_equal(go_reflect_name_addr(&rn, -1, &got), -EINVAL);
	go_reflect_names_free(&rn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket_map),
		cmocka_unit_test(test_swiss_small_map),
		cmocka_unit_test(test_swiss_tables),
		cmocka_unit_test(test_absent_or_damaged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
