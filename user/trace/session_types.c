// SPDX-License-Identifier: BSD-3-Clause
/*
 * session_types.c - a session's types: each type descriptor read once
 * from the target (inspect/go_types.h) into the session's catalogue
 * (format/type_catalog.h), whose references the shadow heap keeps, and
 * its ID in the generation being built, defined there on first use.
 */
#include "trace/session.h"
#include "trace/session_impl.h"

#include "inspect/go_types.h"

/* Reads and caches the descriptor at addr; returns its entry or NULL. */
const struct type_entry *session_type_lookup(struct session *s, uint64_t addr)
{
	struct go_type_desc d;
	uint64_t ref;

	if (!addr)
		return NULL;
	if (u64_map_get(&s->type_index, addr, &ref))
		return type_catalog_get(&s->catalog, (uint32_t)ref);
	if (go_type_describe(s->types, addr, &d) != 0) {
		/* Remember the failure; the event keeps "no type". */
		s->counts.type_errors++;
		u64_map_put(&s->type_index, addr, 0);
		return NULL;
	}
	ref = type_catalog_add(&s->catalog, addr, addr, d.size, d.ptr_bytes,
			       d.name, d.name_len);
	if (!ref || u64_map_put(&s->type_index, addr, ref))
		return NULL;
	return type_catalog_get(&s->catalog, (uint32_t)ref);
}

/* The shadow heap's type_ref for an entry: its catalogue reference, 0 for
 * none. */
uint32_t session_type_ref_of(const struct session *s, const struct type_entry *e)
{
	return e ? (uint32_t)(e - s->catalog.tab) + 1 : 0;
}

/* The current generation's ID for a type, defining it on first use. */
uint64_t session_gen_type_id(struct session *s, const struct type_entry *e)
{
	return e ? tw_gen_type(s->gen, session_type_ref_of(s, e)) : 0;
}
