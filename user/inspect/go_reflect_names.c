// SPDX-License-Identifier: BSD-3-Clause
/*
 * go_reflect_names.c - runtime.reflectOffs.m read from the target: the
 * names of types made at run time (go_reflect_names.h says why).
 *
 * reflectOffs is struct { lock mutex; next int32; m map[int32]unsafe.Pointer;
 * minv map[unsafe.Pointer]int32 } (runtime/runtime1.go): mutex is one
 * word in every release build (lockrank_off.go), so m is the word at +16.
 * A map value is a pointer to the map header.
 */
#include "go_reflect_names.h"

#include <errno.h>
#include <string.h>

#include "inspect/go_binary.h"
#include "inspect/runtime_globals.h"

#define REFLECT_OFFS_M 16

/*
 * Bounds on a walk of memory that another program owns and keeps
 * changing: a map of run-time type names holds hundreds of entries, not
 * millions.
 */
#define MAX_BUCKETS (1u << 16)
#define MAX_OVERFLOW 64
#define MAX_TABLES 1024
#define MAX_GROUPS (1u << 16)

static uint64_t le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static int32_t le32s(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return v;
}

int go_reflect_names_init(struct go_reflect_names *rn,
			  const struct go_binary *bin, uint64_t load_bias,
			  go_reflect_read_fn read, void *ctx)
{
	uint64_t addr;
	int rc;

	memset(rn, 0, sizeof(*rn));
	rc = go_runtime_global_addr(bin, "runtime.reflectOffs", &addr);
	if (rc)
		return -ENOENT;
	rn->read = read;
	rn->ctx = ctx;
	rn->offs = addr + load_bias;
	rn->swiss = go_binary_build_info(bin)->minor >= 24;
	u64_map_init(&rn->names);
	return 0;
}

void go_reflect_names_free(struct go_reflect_names *rn)
{
	u64_map_free(&rn->names);
	memset(rn, 0, sizeof(*rn));
}

static int put(struct go_reflect_names *rn, int32_t id, uint64_t name)
{
	/* Key 0 is the map's empty mark: IDs are negative, never 0. */
	if (!id || !name)
		return 0;
	return u64_map_put(&rn->names, (uint32_t)id, name);
}

/*
 * Go 1.21-1.23 (runtime/map.go): hmap { count int; flags uint8; B uint8;
 * noverflow uint16; hash0 uint32; buckets, oldbuckets unsafe.Pointer; ... }.
 * A bucket of map[int32]unsafe.Pointer is tophash [8]uint8, keys
 * [8]int32, elems [8]unsafe.Pointer, overflow *bmap: 112 bytes.  A slot
 * is full when its tophash is >= minTopHash (5); 2-4 mark slots already
 * moved out of an old bucket while the map grows.
 */
#define HMAP_FLAGS 8
#define HMAP_B 9
#define HMAP_BUCKETS 16
#define HMAP_OLDBUCKETS 24
#define HMAP_SAME_SIZE_GROW 8
#define BMAP_KEYS 8
#define BMAP_ELEMS 40
#define BMAP_OVERFLOW 104
#define BMAP_SIZE 112
#define MIN_TOP_HASH 5

static int walk_buckets(struct go_reflect_names *rn, uint64_t arr,
			uint64_t nbuckets)
{
	uint8_t b[BMAP_SIZE];
	uint64_t i, at;
	unsigned k, chain;
	int rc;

	for (i = 0; arr && i < nbuckets; i++) {
		at = arr + i * BMAP_SIZE;
		for (chain = 0; at && chain < MAX_OVERFLOW; chain++) {
			rc = rn->read(rn->ctx, at, b, sizeof(b));
			if (rc)
				return rc;
			for (k = 0; k < 8; k++) {
				if (b[k] < MIN_TOP_HASH)
					continue;
				rc = put(rn, le32s(b + BMAP_KEYS + 4 * k),
					 le64(b + BMAP_ELEMS + 8 * k));
				if (rc)
					return rc;
			}
			at = le64(b + BMAP_OVERFLOW);
		}
	}
	return 0;
}

static int walk_hmap(struct go_reflect_names *rn, uint64_t h,
		     uint64_t *len)
{
	uint8_t hdr[32];
	uint64_t n;
	unsigned B;
	int rc;

	rc = rn->read(rn->ctx, h, hdr, sizeof(hdr));
	if (rc)
		return rc;
	*len = le64(hdr);
	B = hdr[HMAP_B];
	if (B > 16)
		return -EINVAL;
	n = 1ull << B;
	rc = walk_buckets(rn, le64(hdr + HMAP_BUCKETS), n);
	if (rc == 0 && le64(hdr + HMAP_OLDBUCKETS))
		rc = walk_buckets(rn, le64(hdr + HMAP_OLDBUCKETS),
				  (hdr[HMAP_FLAGS] & HMAP_SAME_SIZE_GROW) || !B ?
				  n : n / 2);
	return rc;
}

/*
 * Go 1.24+ (internal/runtime/maps): Map { used uint64; seed uintptr;
 * dirPtr unsafe.Pointer; dirLen int; ... }.  With dirLen 0, dirPtr is one
 * group (a small map); else it is an array of dirLen *table, several
 * entries naming the same table.  table { used, capacity, growthLeft
 * uint16; localDepth uint8; index int; groups { data unsafe.Pointer;
 * lengthMask uint64 } }.  A group of map[int32]unsafe.Pointer is a
 * control word (one byte per slot, full when its top bit is clear) and 8
 * slots { key int32; elem unsafe.Pointer }: 8 + 8 * 16 bytes.
 */
#define SMAP_DIRPTR 16
#define SMAP_DIRLEN 24
#define TABLE_GROUPS 16
#define TABLE_MASK 24
#define SLOT_SIZE 16
#define GROUP_SIZE (8 + 8 * SLOT_SIZE)

static int walk_group(struct go_reflect_names *rn, uint64_t at)
{
	uint8_t g[GROUP_SIZE];
	unsigned k;
	int rc;

	rc = rn->read(rn->ctx, at, g, sizeof(g));
	if (rc)
		return rc;
	for (k = 0; k < 8; k++) {
		const uint8_t *slot = g + 8 + k * SLOT_SIZE;

		if (g[k] & 0x80)
			continue; /* empty or deleted */
		rc = put(rn, le32s(slot), le64(slot + 8));
		if (rc)
			return rc;
	}
	return 0;
}

static int walk_table(struct go_reflect_names *rn, uint64_t t)
{
	uint8_t hdr[32];
	uint64_t data, mask, i;
	int rc;

	rc = rn->read(rn->ctx, t, hdr, sizeof(hdr));
	if (rc)
		return rc;
	data = le64(hdr + TABLE_GROUPS);
	mask = le64(hdr + TABLE_MASK);
	if (mask >= MAX_GROUPS)
		return -EINVAL;
	for (i = 0; rc == 0 && data && i <= mask; i++)
		rc = walk_group(rn, data + i * GROUP_SIZE);
	return rc;
}

static int walk_swiss(struct go_reflect_names *rn, uint64_t m, uint64_t *len)
{
	uint8_t hdr[32];
	uint64_t dir, ndir, i, t, prev = 0;
	int rc;

	rc = rn->read(rn->ctx, m, hdr, sizeof(hdr));
	if (rc)
		return rc;
	*len = le64(hdr);
	dir = le64(hdr + SMAP_DIRPTR);
	ndir = le64(hdr + SMAP_DIRLEN);
	if (!dir)
		return 0;
	if (ndir == 0)
		return walk_group(rn, dir);
	if (ndir > MAX_TABLES)
		return -EINVAL;
	for (i = 0; i < ndir; i++) {
		rc = rn->read(rn->ctx, dir + 8 * i, &t, sizeof(t));
		if (rc)
			return rc;
		/* A table of local depth < global depth fills adjacent
		 * directory entries: walk it once. */
		if (!t || t == prev)
			continue;
		prev = t;
		rc = walk_table(rn, t);
		if (rc)
			return rc;
	}
	return 0;
}

int go_reflect_name_addr(struct go_reflect_names *rn, int32_t id,
			 uint64_t *addr)
{
	uint64_t m, len = 0;
	int rc;

	if (!rn->read || !id)
		return -ENOENT;
	if (u64_map_get(&rn->names, (uint32_t)id, addr))
		return 0;
	rc = rn->read(rn->ctx, rn->offs + REFLECT_OFFS_M, &m, sizeof(m));
	if (rc)
		return rc;
	if (!m)
		return -ENOENT;
	/* The length is the first word of both layouts (hmap.count,
	 * Map.used).  Walked at this length already: the ID is not there. */
	rc = rn->read(rn->ctx, m, &len, sizeof(len));
	if (rc)
		return rc;
	if (rn->scanned_len == len + 1)
		return -ENOENT;
	rc = rn->swiss ? walk_swiss(rn, m, &len) : walk_hmap(rn, m, &len);
	if (rc)
		return rc;
	rn->scanned_len = len + 1;
	return u64_map_get(&rn->names, (uint32_t)id, addr) ? 0 : -ENOENT;
}
