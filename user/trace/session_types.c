// SPDX-License-Identifier: BSD-3-Clause
/*
 * session_types.c - a session's type cache: each type descriptor read once
 * from the target (inspect/go_types.h) into type_tab and its name arena,
 * and its ID in the generation being built, defined on first use.
 */
#include "trace/session.h"
#include "trace/session_impl.h"

#include <stdlib.h>
#include <string.h>

#include "inspect/go_types.h"
#include "util/grow.h"

/* Appends an entry to type_tab (names copied into the arena). */
struct type_entry *session_type_append(struct session *s, uint64_t addr,
				      uint64_t size, uint64_t ptr_bytes,
				      const char *name, size_t name_len)
{
	struct type_entry *e;

	if (!GROW(s->type_tab, s->ntypes, s->type_cap, 64))
		return NULL;
	if (s->names_len + name_len > s->names_cap) {
		size_t cap = s->names_cap ? s->names_cap : 4096;
		char *nn;

		while (cap < s->names_len + name_len)
			cap *= 2;
		nn = realloc(s->names, cap);
		if (!nn)
			return NULL;
		s->names = nn;
		s->names_cap = cap;
	}
	e = &s->type_tab[s->ntypes];
	e->addr = addr;
	e->key = addr;
	e->size = size;
	e->ptr_bytes = ptr_bytes;
	e->name_off = (uint32_t)s->names_len;
	e->name_len = (uint32_t)name_len;
	memcpy(s->names + s->names_len, name, name_len);
	s->names_len += name_len;
	s->ntypes++;
	return e;
}

/* Reads and caches the descriptor at addr; returns its entry or NULL. */
const struct type_entry *session_type_lookup(struct session *s, uint64_t addr)
{
	struct go_type_desc d;
	struct type_entry *e;
	uint64_t idx;

	if (!addr)
		return NULL;
	if (u64_map_get(&s->type_index, addr, &idx))
		return idx ? &s->type_tab[idx - 1] : NULL;
	if (go_type_describe(s->types, addr, &d) != 0) {
		/* Remember the failure; the event keeps "no type". */
		s->counts.type_errors++;
		u64_map_put(&s->type_index, addr, 0);
		return NULL;
	}
	e = session_type_append(s, addr, d.size, d.ptr_bytes, d.name, d.name_len);
	if (!e || u64_map_put(&s->type_index, addr, s->ntypes))
		return NULL;
	return e;
}

/* The shadow heap's type_ref for an entry: index + 1, 0 for none. */
uint32_t session_type_ref_of(const struct session *s, const struct type_entry *e)
{
	return e ? (uint32_t)(e - s->type_tab) + 1 : 0;
}

/* The current generation's ID for a type, defining it on first use. */
uint64_t session_gen_type_id(struct session *s, const struct type_entry *e)
{
	uint64_t id;

	if (!e)
		return 0;
	id = tw_gen_type_id(s->gen, e->key);
	if (id)
		return id;
	return tw_gen_define_type(s->gen, e->key, e->size, e->ptr_bytes,
				  s->names + e->name_off, e->name_len);
}
