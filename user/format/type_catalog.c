// SPDX-License-Identifier: BSD-3-Clause
/*
 * type_catalog.c - entries kept across generations, marked per generation
 * (type_catalog.h).
 */
#include "format/type_catalog.h"

#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

void type_catalog_init(struct type_catalog *c)
{
	memset(c, 0, sizeof(*c));
	u64_map_init(&c->by_key);
	c->gen_mark = 1;
}

void type_catalog_free(struct type_catalog *c)
{
	free(c->tab);
	free(c->names);
	free(c->gen_refs);
	u64_map_free(&c->by_key);
	memset(c, 0, sizeof(*c));
}

uint32_t type_catalog_add(struct type_catalog *c, uint64_t key, uint64_t addr,
			  uint64_t size, uint64_t ptr_bytes, const char *name,
			  size_t name_len)
{
	struct type_entry *e;

	if (!name)
		name_len = 0;
	if (c->n >= UINT32_MAX || name_len > UINT32_MAX ||
	    c->names_len + name_len > UINT32_MAX ||
	    !GROW(c->tab, c->n, c->cap, 64))
		return 0;
	/* One byte more than needed: names is never NULL once an entry is. */
	if (c->names_len + name_len + 1 > c->names_cap) {
		size_t cap = c->names_cap ? c->names_cap : 4096;
		char *nn;

		while (cap < c->names_len + name_len + 1)
			cap *= 2;
		/*
		 * Moved by hand, not realloc'd: `name` may be an entry's own
		 * (a sampled size is named after its type), so the old arena
		 * stays until the name is copied.
		 */
		nn = malloc(cap);
		if (!nn)
			return 0;
		if (c->names_len)
			memcpy(nn, c->names, c->names_len);
		if (name_len)
			memcpy(nn + c->names_len, name, name_len);
		free(c->names);
		c->names = nn;
		c->names_cap = cap;
	} else if (name_len) {
		memcpy(c->names + c->names_len, name, name_len);
	}
	e = &c->tab[c->n];
	memset(e, 0, sizeof(*e));
	e->key = key;
	e->addr = addr;
	e->size = size;
	e->ptr_bytes = ptr_bytes;
	e->name_off = (uint32_t)c->names_len;
	e->name_len = (uint32_t)name_len;
	c->names_len += name_len;
	return (uint32_t)++c->n;
}

uint32_t type_catalog_find(const struct type_catalog *c, uint64_t key)
{
	uint64_t ref;

	return u64_map_get(&c->by_key, key, &ref) ? (uint32_t)ref : 0;
}

uint32_t type_catalog_intern(struct type_catalog *c, uint64_t key,
			     uint64_t size, uint64_t ptr_bytes,
			     const char *name, size_t name_len)
{
	uint32_t ref = type_catalog_find(c, key);

	if (ref)
		return ref;
	ref = type_catalog_add(c, key, key, size, ptr_bytes, name, name_len);
	if (ref && u64_map_put(&c->by_key, key, ref)) {
		c->n--;   /* not findable: take it back */
		return 0;
	}
	return ref;
}

void type_catalog_begin_gen(struct type_catalog *c)
{
	c->gen_mark++;
	c->ngen = 0;
}

uint64_t type_catalog_gen_id(struct type_catalog *c, uint32_t ref)
{
	struct type_entry *e;

	if (!ref || ref > c->n)
		return 0;
	e = &c->tab[ref - 1];
	if (e->gen_mark == c->gen_mark)
		return e->gen_id;
	if (!GROW(c->gen_refs, c->ngen, c->gen_cap, 64))
		return 0;
	c->gen_refs[c->ngen++] = ref;
	e->gen_mark = c->gen_mark;
	e->gen_id = c->ngen;
	return e->gen_id;
}
