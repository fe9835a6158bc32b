// SPDX-License-Identifier: BSD-3-Clause
/*
 * go_layout.c - pick the runtime struct layout for a binary: its DWARF, or
 * the generated per-version table (go_layout_table.c).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "inspect/go_binary.h"
#include "inspect/go_dwarf.h"
#include "go_layout.h"

const struct go_layout_field_desc go_layout_fields[] = {
#define GO_LAYOUT_DESC(name, type, path, since) \
	{ #name, type, path, since, offsetof(struct go_layout, name) },
	GO_LAYOUT_FIELDS(GO_LAYOUT_DESC)
#undef GO_LAYOUT_DESC
};
const size_t go_layout_nfields =
	sizeof(go_layout_fields) / sizeof(go_layout_fields[0]);

static struct go_field *field_rw(struct go_layout *l, size_t i)
{
	return (struct go_field *)((char *)l + go_layout_fields[i].offset);
}

const struct go_layout *go_layout_lookup(int major, int minor)
{
	size_t i;

	for (i = 0; i < go_layout_table_len; i++)
		if (go_layout_table[i].major == major &&
		    go_layout_table[i].minor == minor)
			return &go_layout_table[i];
	return NULL;
}

int go_layout_from_dwarf(const struct go_binary *bin, struct go_layout *out)
{
	const struct go_build_info *bi = go_binary_build_info(bin);
	size_t i;

	memset(out, 0, sizeof(*out));
	out->major = bi->major;
	out->minor = bi->minor;
	if (!go_binary_has_dwarf(bin))
		return -ENODATA;
	for (i = 0; i < go_layout_nfields; i++) {
		const struct go_layout_field_desc *d = &go_layout_fields[i];
		struct go_field *f = field_rw(out, i);
		uint64_t off, size;
		int rc = go_dwarf_member(go_binary_dwarf(bin), d->type,
					 d->path, &off, &size);

		if (rc == -ENODATA || rc == -ENOMEM)
			return rc;
		/*
		 * DWARF is read from the target's file: an offset or size
		 * beyond int32 would turn into a negative one (or into the
		 * GO_FIELD_* sentinels) here. No struct the tracer reads is
		 * that large: such a member is not described.
		 */
		if (rc == 0 && (off > INT32_MAX || size > INT32_MAX))
			rc = -ERANGE;
		if (rc) {
			f->off = bi->major == 1 &&
				 go_layout_absent_in(d->since, bi->minor) ?
				 GO_FIELD_ABSENT : GO_FIELD_UNKNOWN;
			f->size = 0;
			continue;
		}
		f->off = (int32_t)off;
		f->size = (int32_t)size;
	}
	out->source = GO_LAYOUT_DWARF;
	return 0;
}

int go_layout_resolve(const struct go_binary *bin, struct go_layout *out,
		      go_layout_report_fn report, void *ctx)
{
	const struct go_build_info *bi = go_binary_build_info(bin);
	const struct go_layout *table = go_layout_lookup(bi->major, bi->minor);
	int rc, diffs = 0;
	size_t i;

	rc = go_layout_from_dwarf(bin, out);
	if (rc == -ENODATA) {
		if (!table)
			return -ENOENT;
		*out = *table;
		out->source = GO_LAYOUT_TABLE;
		return 0;
	}
	if (rc)
		return rc;
	for (i = 0; i < go_layout_nfields; i++) {
		struct go_field *f = field_rw(out, i);
		const struct go_field *t = table ? go_layout_field(table, i) : NULL;

		if (f->off == GO_FIELD_UNKNOWN) {
			/* DWARF is silent on it: the table may still know. */
			if (!t || !go_field_present(t))
				return -ENOENT;
			*f = *t;
			continue;
		}
		/* Present in one and absent in the other is a difference too. */
		if (t && (t->off != f->off || t->size != f->size)) {
			diffs++;
			if (report)
				report(ctx, go_layout_fields[i].name, *f, *t);
		}
	}
	return diffs;
}
