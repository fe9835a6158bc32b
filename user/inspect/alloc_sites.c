// SPDX-License-Identifier: BSD-3-Clause
/*
 * alloc_sites.c - one emulated probe site per allocation path inside the
 * runtime's allocation functions, and where the object, size and type are
 * there (see alloc_sites.h for the rules and why they are sound).
 *
 * Instructions are decoded twice: disasm_function (disasm.h) gives the
 * proven tiling, the kinds, branch targets and what a uprobe costs; a
 * capstone pass with operand details gives what each instruction reads and
 * writes, reduced to the few facts the analyses need (struct isem).
 * Anything not understood is treated as clobbering what it may write, so
 * misreading an instruction can only lose a location, never invent one.
 *
 * The analyses track one value through registers and 8-byte stack slots,
 * with a constant addend (state[l] = d: the content of l plus d is the
 * value), which follows ADDQ $8 / LEAQ 8(R), R' as well as moves.
 *
 * The analysis is split over alloc_sites_{x86,cfg,flow,producers,callers}.c
 * (their shared types: alloc_sites_impl.h); this file keeps which
 * functions to analyse (producers, barrier callers).
 */
#include "alloc_sites.h"
#include "inspect/alloc_sites_impl.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inspect/disasm.h"
#include "inspect/go_binary.h"
#include "inspect/go_pclntab.h"

/* --- which functions ---------------------------------------------------- */

int as_env_init(struct as_env *env, const struct go_binary *bin)
{
	static const char *const nonheap[] = {
		"runtime.persistentalloc", "runtime.preMallocgcDebug",
	};
	uint64_t size, e;
	size_t i;

	memset(env, 0, sizeof(*env));
	env->bin = bin;
	if (go_binary_find_func(bin, "runtime.publicationBarrier", &env->barrier, &size))
		return -ENOENT;
	for (i = 0; i < sizeof(nonheap) / sizeof(nonheap[0]); i++)
		if (!go_binary_find_func(bin, nonheap[i], &e, &size))
			env->nonheap[env->nnonheap++] = e;
	return 0;
}

static bool calls_target(const struct go_binary *bin, uint64_t entry,
			 uint64_t size, uint64_t target)
{
	const uint8_t *code = go_binary_bytes(bin, entry, size);
	struct disasm d;
	bool found;
	size_t i;

	if (!code || !as_byte_scan(code, entry, size, &target, 1))
		return false;
	if (disasm_function(code, size, entry, &d, NULL, 0))
		return true;    /* undecodable: say yes, the analysis refuses it */
	found = false;
	for (i = 0; i < d.n_code && !found; i++)
		found = d.insns[i].kind == INSN_CALL && d.insns[i].target == target;
	disasm_free(&d);
	return found;
}

struct collect {
	const struct go_binary *bin;
	uint64_t target;
	char **names;
	uint64_t *entries;
	size_t n, cap;
	int err;
};

static int collect_cb(const char *name, uint64_t entry, uint64_t size, void *arg)
{
	struct collect *c = arg;

	if (!calls_target(c->bin, entry, size, c->target))
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 32;
		char **nn = realloc(c->names, cap * sizeof(*nn));
		uint64_t *ne;

		if (!nn)
			return c->err = -ENOMEM;
		c->names = nn;
		ne = realloc(c->entries, cap * sizeof(*ne));
		if (!ne)
			return c->err = -ENOMEM;
		c->entries = ne;
		c->cap = cap;
	}
	c->names[c->n] = strdup(name);
	if (!c->names[c->n])
		return c->err = -ENOMEM;
	c->entries[c->n++] = entry;
	return 0;
}

void as_names_free(char **names, size_t n)
{
	size_t i;

	for (i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

int as_find_producers(const struct go_binary *bin, char ***names,
		      uint64_t **entries, size_t *n)
{
	struct collect c = { .bin = bin };
	uint64_t size;
	int rc;

	*names = NULL;
	*entries = NULL;
	*n = 0;
	if (go_binary_find_func(bin, "runtime.publicationBarrier", &c.target, &size))
		return -ENOENT;
	rc = go_binary_foreach_func(bin, "runtime.mallocgc", collect_cb, &c);
	if (rc || c.err) {
		as_names_free(c.names, c.n);
		free(c.entries);
		return c.err ? c.err : rc;
	}
	*names = c.names;
	*entries = c.entries;
	*n = c.n;
	return 0;
}

int as_barrier_callers(const struct go_binary *bin, char ***names, size_t *n)
{
	struct collect c = { .bin = bin };
	uint64_t size;
	int rc;

	*names = NULL;
	*n = 0;
	if (go_binary_find_func(bin, "runtime.publicationBarrier", &c.target, &size))
		return -ENOENT;
	rc = go_binary_foreach_func(bin, "", collect_cb, &c);
	free(c.entries);
	if (rc || c.err) {
		as_names_free(c.names, c.n);
		return c.err ? c.err : rc;
	}
	*names = c.names;
	*n = c.n;
	return 0;
}
