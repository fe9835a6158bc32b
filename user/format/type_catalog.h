/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * type_catalog.h - the one table of types a trace's generations draw on.
 *
 * Owns: every type entry (the address written as its identity, size,
 * pointer bytes, name) across generations, and which of them the
 * generation being written has defined, with their IDs there.  Go's
 * runtime/tracetype.go keeps a table per generation and reads each type
 * again for the next; here reading a type means reading the target's
 * memory, so an entry is kept for good (the session's cache, whose
 * references the shadow heap stores) and a generation only marks the
 * entries it uses: the first use in a generation gives the entry the
 * next ID (1, 2, ...), as the runtime's table does, and the writer
 * (trace_writer.h) emits the marked ones in ID order at the generation's
 * end.  One generation at a time: starting one (type_catalog_begin_gen)
 * forgets the marks of the last.
 */
#ifndef TYPE_CATALOG_H
#define TYPE_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#include "util/u64_map.h"

struct type_entry {
	uint64_t key;          /* written as the type's address: the type
				  descriptor's, or for a sampled size
				  (--memprofilerate) a key of its own */
	uint64_t addr;         /* the descriptor in the target, 0: none */
	uint64_t size;
	uint64_t ptr_bytes;
	uint32_t name_off;     /* into type_catalog.names */
	uint32_t name_len;
	uint64_t gen_mark;     /* the generation that defined it last */
	uint64_t gen_id;       /* its ID there */
};

struct type_catalog {
	struct type_entry *tab;  /* reference r is tab[r - 1] */
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	struct u64_map by_key;   /* key -> reference, for type_catalog_intern */
	uint64_t gen_mark;       /* the current generation's, from 1 */
	uint32_t *gen_refs;      /* its entries in ID order */
	size_t ngen, gen_cap;
};

void type_catalog_init(struct type_catalog *c);
void type_catalog_free(struct type_catalog *c);

/*
 * Appends an entry (the name copied) and returns its reference (>= 1),
 * 0 when out of memory.  Not indexed by key: the caller keeps its own
 * index (the session's by descriptor address, by sampled size).
 */
uint32_t type_catalog_add(struct type_catalog *c, uint64_t key, uint64_t addr,
			  uint64_t size, uint64_t ptr_bytes, const char *name,
			  size_t name_len);

/* The entry with `key` added by this function, or a new one (0: ENOMEM). */
uint32_t type_catalog_intern(struct type_catalog *c, uint64_t key,
			     uint64_t size, uint64_t ptr_bytes,
			     const char *name, size_t name_len);

/* The reference of the entry interned with `key`, 0 if none. */
uint32_t type_catalog_find(const struct type_catalog *c, uint64_t key);

static inline const struct type_entry *
type_catalog_get(const struct type_catalog *c, uint32_t ref)
{
	return ref && ref <= c->n ? &c->tab[ref - 1] : NULL;
}

static inline const char *type_catalog_name(const struct type_catalog *c,
					    const struct type_entry *e)
{
	return c->names + e->name_off;
}

/* Starts a generation: no entry is defined in it yet. */
void type_catalog_begin_gen(struct type_catalog *c);

/* Entry `ref`'s ID in this generation, defining it on first use (0: ENOMEM
 * or no such entry). */
uint64_t type_catalog_gen_id(struct type_catalog *c, uint32_t ref);

/* Its ID in this generation if defined there, else 0. */
static inline uint64_t type_catalog_gen_id_of(const struct type_catalog *c,
					      uint32_t ref)
{
	const struct type_entry *e = type_catalog_get(c, ref);

	return e && e->gen_mark == c->gen_mark ? e->gen_id : 0;
}

/* The entry with ID `id` (1 .. ngen) of this generation. */
static inline const struct type_entry *
type_catalog_gen_entry(const struct type_catalog *c, uint64_t id)
{
	return id && id <= c->ngen ? &c->tab[c->gen_refs[id - 1] - 1] : NULL;
}

#endif /* TYPE_CATALOG_H */
