// SPDX-License-Identifier: BSD-3-Clause
/*
 * go_func_index.c - open-addressing hash of pclntab names (go_func_index.h).
 * A slot holds the one function a name resolves to, so a lookup is one
 * hash and, nearly always, one strcmp.
 */
#include "inspect/go_func_index.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/fnv.h"

/* Names are short and the table is built once. */
static uint64_t name_hash(const char *s)
{
	return fnv1a64(s, strlen(s), FNV1A64_SEED);
}

/* go_pclntab_find's preference: funcID 0 replaces a non-zero one. */
static bool better(const struct go_func *old, const struct go_func *f)
{
	return old->funcid != 0 && f->funcid == 0;
}

int go_func_index_build(struct go_func_index *ix, const struct go_pclntab *t)
{
	uint64_t cap = 16, i;

	memset(ix, 0, sizeof(*ix));
	if (t->nfunc >= UINT32_MAX)
		return 0;     /* leave it empty: lookups scan */
	while (cap < t->nfunc * 2)
		cap <<= 1;
	ix->slots = calloc(cap, sizeof(*ix->slots));
	if (!ix->slots)
		return -ENOMEM;
	ix->mask = cap - 1;
	for (i = 0; i < t->nfunc; i++) {
		struct go_func f, old;
		uint64_t h;

		if (go_pclntab_func(t, i, &f))
			continue;
		for (h = name_hash(f.name) & ix->mask; ix->slots[h];
		     h = (h + 1) & ix->mask) {
			if (go_pclntab_func(t, ix->slots[h] - 1, &old) ||
			    strcmp(old.name, f.name))
				continue;
			if (better(&old, &f))
				ix->slots[h] = (uint32_t)i + 1;
			break;
		}
		if (!ix->slots[h])
			ix->slots[h] = (uint32_t)i + 1;
	}
	return 0;
}

void go_func_index_free(struct go_func_index *ix)
{
	free(ix->slots);
	memset(ix, 0, sizeof(*ix));
}

int go_func_index_find(const struct go_func_index *ix,
		       const struct go_pclntab *t, const char *name,
		       struct go_func *out)
{
	uint64_t h;

	if (!ix->slots)
		return -EAGAIN;
	for (h = name_hash(name) & ix->mask; ix->slots[h]; h = (h + 1) & ix->mask) {
		if (go_pclntab_func(t, ix->slots[h] - 1, out))
			continue;
		if (!strcmp(out->name, name))
			return 0;
	}
	return -ENOENT;
}
