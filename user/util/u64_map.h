/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * u64_map.h - open-addressing hash map from a non-zero uint64 key to a
 * uint64 value.  Used where the daemon looks something up per event (type
 * pointers, PIDs), so it is small, flat and never allocates per lookup.
 */
#ifndef U64_MAP_H
#define U64_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64_map_slot {
	uint64_t key;     /* 0 = empty slot */
	uint64_t val;
};

struct u64_map {
	struct u64_map_slot *slots;
	size_t cap;       /* power of two */
	size_t len;
};

void u64_map_init(struct u64_map *m);
void u64_map_free(struct u64_map *m);

/* Key 0 is reserved.  Returns 0 or -ENOMEM / -EINVAL. */
int u64_map_put(struct u64_map *m, uint64_t key, uint64_t val);
bool u64_map_get(const struct u64_map *m, uint64_t key, uint64_t *val);
bool u64_map_del(struct u64_map *m, uint64_t key);

/*
 * The value of KEY, inserted as 0 if missing (*FOUND says which): one
 * probe where a get and a put would take two.  The pointer is good until
 * the next insertion or deletion.  NULL for key 0 or on -ENOMEM.
 */
uint64_t *u64_map_ref(struct u64_map *m, uint64_t key, bool *found);

/* Starts loading KEY's home slot into the cache (a lookup to come). */
void u64_map_prefetch(const struct u64_map *m, uint64_t key);

/* Iteration: for (i = 0; u64_map_next(m, &i, &k, &v);) */
bool u64_map_next(const struct u64_map *m, size_t *iter, uint64_t *key,
		  uint64_t *val);

#endif /* U64_MAP_H */
