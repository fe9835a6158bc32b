/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * go_func_index.h - functions of a pclntab by name, in O(1).
 *
 * The funcname table is not sorted, so go_pclntab_find is a linear scan.
 * That was fine for a few dozen lookups, but go_binary_foreach_func asks
 * for the name of every wrapper (to skip the ABI twin of a function): on
 * a service with 200k functions and tens of thousands of wrappers that is
 * billions of name comparisons, most of the 5 minutes once measured on
 * Prometheus.  One pass builds this table (a few ms); lookups then follow
 * go_pclntab_find's rule exactly (the entry with funcID 0 wins, else the
 * first one in table order).
 */
#ifndef GO_FUNC_INDEX_H
#define GO_FUNC_INDEX_H

#include <stdint.h>

#include "inspect/go_pclntab.h"

struct go_func_index {
	uint32_t *slots;      /* function index + 1; 0 = empty */
	uint64_t mask;        /* slots - 1, a power of two minus one */
};

/* 0 or -ENOMEM. An empty index (slots NULL) is valid: lookups fail. */
int go_func_index_build(struct go_func_index *ix, const struct go_pclntab *t);
void go_func_index_free(struct go_func_index *ix);

/* As go_pclntab_find. 0, -ENOENT, or -EAGAIN when the index is empty
 * (the caller then scans). */
int go_func_index_find(const struct go_func_index *ix,
		       const struct go_pclntab *t, const char *name,
		       struct go_func *out);

#endif /* GO_FUNC_INDEX_H */
