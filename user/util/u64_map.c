// SPDX-License-Identifier: BSD-3-Clause
/* u64_map.c - open addressing with linear probing, backward-shift deletion. */
#include "u64_map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static inline size_t slot_of(uint64_t key, size_t cap)
{
	/* Pointers and PIDs have low-entropy low bits: mix them first. */
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

void u64_map_init(struct u64_map *m)
{
	memset(m, 0, sizeof(*m));
}

void u64_map_free(struct u64_map *m)
{
	free(m->keys);
	free(m->vals);
	u64_map_init(m);
}

static int grow(struct u64_map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 16, i;
	uint64_t *nk = calloc(ncap, sizeof(*nk));
	uint64_t *nv = calloc(ncap, sizeof(*nv));

	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		size_t s;

		if (!m->keys[i])
			continue;
		s = slot_of(m->keys[i], ncap);
		while (nk[s])
			s = (s + 1) & (ncap - 1);
		nk[s] = m->keys[i];
		nv[s] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->cap = ncap;
	return 0;
}

int u64_map_put(struct u64_map *m, uint64_t key, uint64_t val)
{
	size_t s;

	if (!key)
		return -EINVAL;
	/* Keep the load factor under 3/4. */
	if ((m->len + 1) * 4 > m->cap * 3) {
		int rc = grow(m);

		if (rc)
			return rc;
	}
	s = slot_of(key, m->cap);
	while (m->keys[s] && m->keys[s] != key)
		s = (s + 1) & (m->cap - 1);
	if (!m->keys[s]) {
		m->keys[s] = key;
		m->len++;
	}
	m->vals[s] = val;
	return 0;
}

bool u64_map_get(const struct u64_map *m, uint64_t key, uint64_t *val)
{
	size_t s;

	if (!key || !m->cap)
		return false;
	s = slot_of(key, m->cap);
	while (m->keys[s]) {
		if (m->keys[s] == key) {
			if (val)
				*val = m->vals[s];
			return true;
		}
		s = (s + 1) & (m->cap - 1);
	}
	return false;
}

bool u64_map_del(struct u64_map *m, uint64_t key)
{
	size_t s, next;

	if (!key || !m->cap)
		return false;
	s = slot_of(key, m->cap);
	while (m->keys[s] && m->keys[s] != key)
		s = (s + 1) & (m->cap - 1);
	if (!m->keys[s])
		return false;
	/* Backward-shift: move later members of the cluster into the hole. */
	for (next = (s + 1) & (m->cap - 1); m->keys[next];
	     next = (next + 1) & (m->cap - 1)) {
		size_t home = slot_of(m->keys[next], m->cap);

		/* Movable if its home is not cyclically within (s, next]. */
		if ((next > s && (home <= s || home > next)) ||
		    (next < s && (home <= s && home > next))) {
			m->keys[s] = m->keys[next];
			m->vals[s] = m->vals[next];
			s = next;
		}
	}
	m->keys[s] = 0;
	m->len--;
	return true;
}

bool u64_map_next(const struct u64_map *m, size_t *iter, uint64_t *key,
		  uint64_t *val)
{
	while (*iter < m->cap) {
		size_t i = (*iter)++;

		if (m->keys[i]) {
			if (key)
				*key = m->keys[i];
			if (val)
				*val = m->vals[i];
			return true;
		}
	}
	return false;
}
