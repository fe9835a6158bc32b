// SPDX-License-Identifier: BSD-3-Clause
/*
 * go_dwarf.c - Go struct layouts and globals from DWARF (libdw).
 *
 * What the Go linker emits (cmd/link/internal/ld/dwarf.go): every type and
 * package-level variable as a top-level DIE of some compile unit, named with
 * its package path ("runtime.mspan"); a named type is a DW_TAG_typedef of
 * the underlying DIE; members carry a constant DW_AT_data_member_location;
 * DW_AT_go_runtime_type (0x2904) is the type descriptor's offset from
 * runtime.types. One sorted index of the top-level names answers lookups.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "go_dwarf.h"
#include "util/grow.h"

#define DW_AT_go_runtime_type 0x2904

struct name_ent {
	const char *name;  /* points into .debug_str, valid while dw is open */
	Dwarf_Off off;     /* DIE offset */
	bool is_var;
};

struct go_dwarf {
	Dwarf *dw;
	struct name_ent *ents;
	size_t nents, cap;
	int error;         /* -ENODATA once we know there is nothing */
};

static int cmp_ent(const void *a, const void *b)
{
	const struct name_ent *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	/* Types before variables of the same name; then by offset. */
	if (x->is_var != y->is_var)
		return x->is_var ? 1 : -1;
	return x->off < y->off ? -1 : x->off > y->off;
}

static int add_ent(struct go_dwarf *g, const char *name, Dwarf_Off off,
		   bool is_var)
{
	if (!GROW(g->ents, g->nents, g->cap, 4096))
		return -ENOMEM;
	g->ents[g->nents].name = name;
	g->ents[g->nents].off = off;
	g->ents[g->nents].is_var = is_var;
	g->nents++;
	return 0;
}

static bool is_type_tag(int tag)
{
	switch (tag) {
	case DW_TAG_structure_type:
	case DW_TAG_typedef:
	case DW_TAG_base_type:
	case DW_TAG_pointer_type:
	case DW_TAG_array_type:
	case DW_TAG_subroutine_type:
	case DW_TAG_unspecified_type:
		return true;
	}
	return false;
}

static int build_index(struct go_dwarf *g)
{
	Dwarf_Off off = 0, next;
	size_t hdr;

	while (dwarf_nextcu(g->dw, off, &next, &hdr, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, die;
		int rc;

		if (!dwarf_offdie(g->dw, off + hdr, &cu)) {
			off = next;
			continue;
		}
		off = next;
		if (dwarf_child(&cu, &die) != 0)
			continue;
		do {
			int tag = dwarf_tag(&die);
			const char *name;

			if (tag != DW_TAG_variable && !is_type_tag(tag))
				continue;
			name = dwarf_diename(&die);
			if (!name)
				continue;
			rc = add_ent(g, name, dwarf_dieoffset(&die),
				     tag == DW_TAG_variable);
			if (rc)
				return rc;
		} while (dwarf_siblingof(&die, &die) == 0);
	}
	/* No names at all leaves ents NULL, which qsort must not see. */
	if (g->nents)
		qsort(g->ents, g->nents, sizeof(*g->ents), cmp_ent);
	return 0;
}

void go_dwarf_free(struct go_dwarf *g)
{
	if (!g)
		return;
	if (g->dw)
		dwarf_end(g->dw);
	free(g->ents);
	free(g);
}

struct go_dwarf *go_dwarf_open(struct Elf *elf)
{
	struct go_dwarf *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->dw = elf ? dwarf_begin_elf((Elf *)elf, DWARF_C_READ, NULL) : NULL;
	if (!g->dw)
		g->error = -ENODATA;
	else
		g->error = build_index(g);
	return g;
}

/* The index of G, or its error: -ENOMEM for no G at all. */
static int get_dwarf(struct go_dwarf *g)
{
	return g ? g->error : -ENOMEM;
}

static int lookup(struct go_dwarf *g, const char *name, bool is_var,
		  Dwarf_Die *die)
{
	size_t lo = 0, hi = g->nents;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(g->ents[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < g->nents && !strcmp(g->ents[lo].name, name); lo++) {
		if (g->ents[lo].is_var != is_var)
			continue;
		if (dwarf_offdie(g->dw, g->ents[lo].off, die))
			return 0;
	}
	return -ENOENT;
}

/* Follows DW_AT_type through typedefs to the DIE that has the layout. */
static int strip_typedefs(Dwarf_Die *die)
{
	int depth;

	for (depth = 0; depth < 16 && dwarf_tag(die) == DW_TAG_typedef;
	     depth++) {
		Dwarf_Attribute at;

		if (!dwarf_attr(die, DW_AT_type, &at) ||
		    !dwarf_formref_die(&at, die))
			return -ENOENT;
	}
	return dwarf_tag(die) == DW_TAG_typedef ? -ENOENT : 0;
}

static int find_type(struct go_dwarf *g, const char *type, Dwarf_Die *die)
{
	int rc = get_dwarf(g);

	if (rc)
		return rc;
	rc = lookup(g, type, false, die);
	if (rc)
		return rc;
	return strip_typedefs(die);
}

static int member_in(Dwarf_Die *st, const char *name, size_t len,
		     Dwarf_Word *off, Dwarf_Die *type)
{
	Dwarf_Die m;

	if (dwarf_tag(st) != DW_TAG_structure_type || dwarf_child(st, &m) != 0)
		return -ENOENT;
	do {
		const char *mn;
		Dwarf_Attribute at;

		if (dwarf_tag(&m) != DW_TAG_member)
			continue;
		mn = dwarf_diename(&m);
		if (!mn || strlen(mn) != len || strncmp(mn, name, len))
			continue;
		/* Go writes the location as a plain constant. */
		if (!dwarf_attr(&m, DW_AT_data_member_location, &at) ||
		    dwarf_formudata(&at, off))
			return -ENOENT;
		if (!dwarf_attr(&m, DW_AT_type, &at) ||
		    !dwarf_formref_die(&at, type))
			return -ENOENT;
		return strip_typedefs(type);
	} while (dwarf_siblingof(&m, &m) == 0);
	return -ENOENT;
}

static int die_size(Dwarf_Die *die, uint64_t *size)
{
	Dwarf_Word sz;

	if (dwarf_aggregate_size(die, &sz))
		return -ENOENT;
	*size = sz;
	return 0;
}

int go_dwarf_member(struct go_dwarf *g, const char *type,
		    const char *member_path, uint64_t *off, uint64_t *size)
{
	const char *p = member_path;
	Dwarf_Die cur;
	uint64_t total = 0;
	int rc;

	rc = find_type(g, type, &cur);
	if (rc)
		return rc;
	for (;;) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);
		Dwarf_Word moff;
		Dwarf_Die mtype;

		rc = member_in(&cur, p, len, &moff, &mtype);
		if (rc)
			return rc;
		total += moff;
		cur = mtype;
		if (!dot)
			break;
		p = dot + 1;
	}
	if (size) {
		rc = die_size(&cur, size);
		if (rc)
			return rc;
	}
	*off = total;
	return 0;
}

int go_dwarf_type_size(struct go_dwarf *g, const char *type,
		       uint64_t *size)
{
	Dwarf_Die die;
	int rc = find_type(g, type, &die);

	if (rc)
		return rc;
	return die_size(&die, size);
}

int go_dwarf_var_addr(struct go_dwarf *g, const char *var, uint64_t *addr)
{
	Dwarf_Die die;
	Dwarf_Attribute at;
	Dwarf_Op *ops;
	size_t nops;

	if (get_dwarf(g) == 0 && lookup(g, var, true, &die) == 0 &&
	    dwarf_attr(&die, DW_AT_location, &at) &&
	    dwarf_getlocation(&at, &ops, &nops) == 0 && nops == 1 &&
	    ops[0].atom == DW_OP_addr) {
		*addr = ops[0].number;
		return 0;
	}
	return -ENOENT;
}

int go_dwarf_runtime_type_off(struct go_dwarf *g, const char *type,
			      uint64_t *off)
{
	Dwarf_Die die;
	int depth, rc;

	rc = get_dwarf(g);
	if (rc)
		return rc;
	rc = lookup(g, type, false, &die);
	if (rc)
		return rc;
	/* On the typedef for some types, on the underlying DIE for others. */
	for (depth = 0; depth < 16; depth++) {
		Dwarf_Attribute at;
		Dwarf_Addr v;

		if (dwarf_attr(&die, DW_AT_go_runtime_type, &at) &&
		    dwarf_formaddr(&at, &v) == 0) {
			*off = v;
			return 0;
		}
		if (dwarf_tag(&die) != DW_TAG_typedef ||
		    !dwarf_attr(&die, DW_AT_type, &at) ||
		    !dwarf_formref_die(&at, &die))
			break;
	}
	return -ENOENT;
}
