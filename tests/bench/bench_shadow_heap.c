// SPDX-License-Identifier: BSD-3-Clause
/*
 * bench_shadow_heap.c - ns per operation of the shadow heap for 10 M
 * objects.  Prints figures; asserts nothing about time.
 *
 *   gcc -std=gnu11 -O2 -D_GNU_SOURCE -Iinclude -Iuser \
 *       tests/bench/bench_shadow_heap.c user/trace/shadow_heap*.c user/util/u64_map.c \
 *       -o build/bench_shadow_heap
 *
 * Two orders: the allocator's (an mcache fills a span slot after slot, the
 * sweeper frees a span's slots in order), and a random one (no locality at
 * all: the worst case for the page map and the bitmaps).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "trace/shadow_heap.h"

#define NOBJ 10000000ull
#define HEAP 0xc000000000ull
#define ELEM 16ull
#define PER_SPAN (SH_PAGE_SIZE / ELEM)
#define KC_16_SCAN ((2u << 1) << 1)

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(uint64_t n)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return ((rng * 0x2545f4914f6cdd1dull) >> 11) % n;
}

static int run(const char *name, const uint64_t *addr)
{
	struct shadow_heap *h = shadow_heap_new(0);
	uint64_t nspans = (NOBJ + PER_SPAN - 1) / PER_SPAN, i, bad = 0;
	double t0, t1, t2, t3, per_obj;

	if (!h)
		return 1;
	t0 = now_ns();
	for (i = 0; i < nspans; i++)
		bad += shadow_heap_span_alloc(h, HEAP + i * SH_PAGE_SIZE, 1,
					      KC_16_SCAN, ELEM) != 0;
	t1 = now_ns();
	for (i = 0; i < NOBJ; i++)
		bad += shadow_heap_obj_alloc(h, addr[i],
					     1 + (uint32_t)(i & 255)) != 0;
	t2 = now_ns();
	per_obj = (double)shadow_heap_mem_bytes(h) / NOBJ;
	for (i = 0; i < NOBJ; i++)
		bad += shadow_heap_obj_free(h, addr[i]) != 0;
	t3 = now_ns();
	printf("%-10s %10.1f %9.1f %8.1f %10.1f %8.2f\n", name,
	       (t1 - t0) / nspans, (t2 - t1) / NOBJ, (t3 - t2) / NOBJ,
	       (t3 - t1) / NOBJ, per_obj);
	if (bad)
		printf("%-10s %llu inconsistent operations (expected 0)\n",
		       name, (unsigned long long)bad);
	shadow_heap_free(h);
	return bad != 0;
}

int main(void)
{
	uint64_t *addr = malloc(NOBJ * sizeof(*addr)), i, j, t;
	int rc = 0;

	if (!addr)
		return 1;
	for (i = 0; i < NOBJ; i++)
		addr[i] = HEAP + i * ELEM;
	printf("shadow heap, %llu typed 16-byte objects; ns/op, model bytes\n",
	       (unsigned long long)NOBJ);
	printf("%-10s %10s %9s %8s %10s %8s\n", "order", "span_alloc",
	       "obj_alloc", "obj_free", "alloc+free", "B/object");
	rc |= run("sequential", addr);
	for (i = NOBJ - 1; i > 0; i--) {
		j = rnd(i + 1);
		t = addr[i];
		addr[i] = addr[j];
		addr[j] = t;
	}
	rc |= run("random", addr);
	free(addr);
	return rc;
}
