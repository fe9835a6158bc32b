// SPDX-License-Identifier: BSD-3-Clause
/*
 * alloc_sites_par.c - the callers scans (alloc_sites_callers.c) over every
 * function of a binary, on several threads.
 *
 * The per-function work (capstone decoding with details, the CFG, the data
 * flow) is independent from one function to the next and reads only the
 * mapped file, so functions are handed out in chunks to a few workers,
 * each with its own context; the caller merges the workers' results in
 * address order, which is the order of the one-thread walk (the function
 * table is sorted by entry and a function's calls are found in address
 * order), so the plan does not depend on the thread count.
 */
#include "inspect/alloc_sites_impl.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "inspect/go_binary.h"
#include "util/grow.h"

#define PAR_CHUNK 64          /* functions per hand-out: few atomics */
#define PAR_MAX_WORKERS 8

struct par_func {
	const char *name;
	uint64_t entry, size;
};

struct par_job {
	struct par_func *v;
	size_t n, cap;
	atomic_size_t next;
	atomic_int err;
	go_func_cb cb;
};

struct par_worker {
	struct par_job *job;
	void *ctx;
	pthread_t tid;
};

static int collect(const char *name, uint64_t entry, uint64_t size, void *arg)
{
	struct par_job *j = arg;

	if (!GROW(j->v, j->n, j->cap, 4096))
		return -ENOMEM;
	j->v[j->n++] = (struct par_func){ name, entry, size };
	return 0;
}

static void *work(void *arg)
{
	struct par_worker *w = arg;
	struct par_job *j = w->job;

	while (!atomic_load(&j->err)) {
		size_t i = atomic_fetch_add(&j->next, PAR_CHUNK), k;

		if (i >= j->n)
			break;
		for (k = i; k < j->n && k < i + PAR_CHUNK; k++) {
			int rc = j->cb(j->v[k].name, j->v[k].entry, j->v[k].size,
				       w->ctx);

			if (rc) {
				int zero = 0;

				atomic_compare_exchange_strong(&j->err, &zero, rc);
				break;
			}
		}
	}
	return NULL;
}

unsigned as_par_workers(void)
{
	const char *e = getenv(AS_THREADS_ENV);
	long n = e && *e ? strtol(e, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		n = 1;
	return n > PAR_MAX_WORKERS ? PAR_MAX_WORKERS : (unsigned)n;
}

static int cmp_call(const void *a, const void *b)
{
	const struct as_caller *x = a, *y = b;

	return x->call < y->call ? -1 : x->call > y->call;
}

void as_callers_sort(struct as_caller *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_call);
}

int as_par_foreach_func(const struct go_binary *bin, go_func_cb cb,
			void *const *ctx, unsigned nw)
{
	struct par_worker w[PAR_MAX_WORKERS];
	struct par_job j = { .cb = cb };
	unsigned i, started = 0;
	csh cs;
	int rc;

	if (nw < 1 || nw > PAR_MAX_WORKERS)
		return -EINVAL;
	rc = go_binary_foreach_func(bin, "", collect, &j);
	if (rc)
		goto out;
	/* capstone sets up its architecture tables on the first cs_open: do
	 * it here, before the workers open their own handles. */
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) == CS_ERR_OK)
		cs_close(&cs);
	for (i = 0; i < nw; i++) {
		w[i].job = &j;
		w[i].ctx = ctx[i];
		/* The first worker is this thread. */
		if (i && pthread_create(&w[i].tid, NULL, work, &w[i]))
			break;
		started = i + 1;
	}
	work(&w[0]);
	for (i = 1; i < started; i++)
		pthread_join(w[i].tid, NULL);
	rc = atomic_load(&j.err);
out:
	free(j.v);
	return rc;
}
