// SPDX-License-Identifier: BSD-3-Clause
/*
 * alloc_stacks.c - BPF stack IDs to symbolized sidecar stacks.
 *
 * The probes name a stack by a hash of its PCs and return address, and
 * send the PCs with the first record of that hash (bpf/alloc_record.bpf.h
 * known_stacks): each is symbolized then, once per process, and kept by
 * hash for good, so a later record's hash always means the stack it was
 * first sent with.  A hash never sent (its first record lost: dropped
 * or read before the process was traced) is deleted from the probes'
 * map, so that it comes whole next time.  Per trace file, each
 * symbolized stack is written to the sidecar once, at its first
 * allocation there.
 */
#include "alloc_stacks.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attach/probes.h"
#include "inspect/binary_ident.h"
#include "inspect/go_binary.h"
#include "inspect/go_pclntab.h"
#include "util/clock_ns.h"
#include "util/grow.h"
#include "format/stack_sidecar.h"
#include "traceaf_events.h"
#include "util/u64_map.h"

/* One symbolized stack: frames[first .. first + n). */
struct resolved {
	uint32_t first, n;
};

struct pending {
	uint64_t id, ts;
	uint32_t res;
	bool exists;     /* an exists event: not an allocation to count */
};

struct alloc_stacks {
	struct known_stacks known;   /* the probes' map of stacks sent */
	uint32_t pid;
	const struct go_binary *bin;
	const struct go_pclntab *tab;
	uint64_t bias;
	uint64_t gofunc;             /* moduledata.gofunc, 0: no inline tree */

	struct stack_frame *frames;
	size_t nframes, frames_cap;
	struct resolved *res;
	size_t nres, res_cap;
	struct u64_map by_hash;      /* the probes' stack hash -> res + 1 */

	struct pending *pend;        /* the generation being built */
	size_t npend, pend_cap;

	struct stack_sidecar_writer *w;  /* the current trace file's */
	bool file_started;           /* its sidecar was started (w, or
					file_failed): false from the sink's
					new file until its first generation */
	bool file_failed;            /* this file gets no sidecar */
	uint64_t file_allocs;        /* allocations in w so far */
	struct u64_map sid_of;       /* res + 1 -> its stack ID in w */

	/* The sidecars' process record ('M'): which binary the PCs are in. */
	struct binary_ident ident;
	char *exe;

	struct alloc_stacks_counts c;
};

static int read_gofunc(void *ctx, uint64_t off, void *buf, size_t len)
{
	const struct alloc_stacks *a = ctx;

	return go_binary_read(a->bin, a->gofunc + off, buf, len);
}

int alloc_stacks_new(struct known_stacks known, uint32_t pid, const struct go_binary *bin,
		     uint64_t load_bias, struct alloc_stacks **out)
{
	struct alloc_stacks *a = calloc(1, sizeof(*a));

	*out = NULL;
	if (!a)
		return -ENOMEM;
	a->known = known;
	a->pid = pid;
	a->bin = bin;
	a->tab = go_binary_pclntab(bin);
	if (go_binary_gofunc(bin, &a->gofunc))
		a->gofunc = 0;	/* names without inlined calls */
	a->bias = load_bias;
	binary_ident_read(bin, &a->ident);
	u64_map_init(&a->by_hash);
	u64_map_init(&a->sid_of);
	*out = a;
	return 0;
}

/*
 * The runtime's allocator and what calls it on the user's behalf
 * (newobject, makeslice, growslice, the maps of internal/runtime/maps):
 * frames dropped from the inside of a stack.
 */
static bool is_runtime(const char *func)
{
	return !strncmp(func, "runtime.", 8) ||
	       !strncmp(func, "internal/runtime/", 17) ||
	       !strncmp(func, "runtime/internal/", 17);
}

/*
 * The allocator proper: mallocgc and its size-specialized variants, and
 * the entry points that only pass a request on.  In a stack entirely
 * inside the runtime these are dropped, so the site is the runtime code
 * that wanted the memory (procresize, malg...), as in Go's heap profile.
 */
static bool is_allocator(const char *func)
{
	static const char *const entries[] = {
		"runtime.newobject", "runtime.newarray", "runtime.makeslice",
		"runtime.makeslicecopy", "runtime.growslice",
		"runtime.rawbyteslice", "runtime.rawstring",
		"runtime.rawstringtmp", "runtime.rawruneslice",
	};
	size_t i;

	if (!strncmp(func, "runtime.mallocgc", 16) ||
	    !strncmp(func, "runtime.heapSetType", 19))
		return true;
	for (i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
		if (!strcmp(func, entries[i]))
			return true;
	return false;
}

/* Inlined calls one PC expands to, at most. */
#define MAX_SRC_FRAMES 16

/*
 * The source frames of PC (link address), innermost first, into OUT (room
 * for MAX); returns how many.  Inlined calls get their own frames, all
 * with PC.
 */
static size_t symbolize(struct alloc_stacks *a, uint64_t pc,
			struct stack_frame *out, size_t max)
{
	struct go_src_frame src[MAX_SRC_FRAMES];
	struct go_func fn;
	int n, i;

	if (!max)
		return 0;
	out[0].func = "?";
	out[0].file = "?";
	out[0].line = 0;
	out[0].pc = pc;
	if (!a->tab || go_pclntab_find_pc(a->tab, pc, &fn))
		return 1;
	n = go_pclntab_src_frames(a->tab, &fn, pc,
				  a->gofunc ? read_gofunc : NULL, a,
				  src, max < MAX_SRC_FRAMES ? max :
				  MAX_SRC_FRAMES);
	if (n <= 0)
		return 1;
	for (i = 0; i < n; i++) {
		out[i].func = src[i].func;
		out[i].file = src[i].file;
		out[i].line = src[i].line;
		out[i].pc = pc;
	}
	return (size_t)n;
}

/*
 * Symbolizes the N PCS of a stack.  PCs after the first are return
 * addresses: their call instruction (PC - 1) is what is looked up and
 * kept, as Go's tracebacks do.  Returns the resolved index or -errno.
 */
static int resolve_ips(struct alloc_stacks *a, const uint64_t *ips,
		       size_t n, uint64_t ret)
{
	uint64_t pcs[TAF_STACK_DEPTH + 1];
	struct stack_frame tmp[STACK_SIDECAR_MAX_FRAMES];
	size_t np = 0, nf = 0, i, skip;
	struct resolved *r;

	if (n == 0)
		return -ENOENT;
	if (n > TAF_STACK_DEPTH)
		n = TAF_STACK_DEPTH;
	pcs[np++] = ips[0];
	/* The walk skipped the probed function's caller: put it back. */
	if (ret && (n < 2 || ips[1] != ret))
		pcs[np++] = ret;
	for (i = 1; i < n; i++)
		pcs[np++] = ips[i];
	/*
	 * Deeper than the sidecar holds: the innermost frames are kept.  The
	 * allocator's frames are dropped by physical frame (its code inlines
	 * helpers of other packages, internal/abi...): up to the first whose
	 * function is not the runtime's, and in that one the runtime calls
	 * inlined into it.  A stack entirely inside the runtime (its own
	 * goroutines) loses only the allocator's frames (is_allocator).
	 */
	skip = SIZE_MAX;
	for (i = 0; i < np; i++) {
		size_t first = nf;

		nf += symbolize(a, pcs[i] - a->bias - (i ? 1 : 0), &tmp[nf],
				STACK_SIDECAR_MAX_FRAMES - nf);
		if (skip != SIZE_MAX || nf == first ||
		    is_runtime(tmp[nf - 1].func))
			continue;
		for (skip = first; skip + 1 < nf &&
				   is_runtime(tmp[skip].func); skip++)
			;
	}
	if (skip == SIZE_MAX) {
		/* Up to the last allocator frame before the first frame of
		 * other runtime code; helpers of other packages inlined into
		 * the allocator (internal/abi...) go with it. */
		skip = 0;
		for (i = 0; i + 1 < nf; i++) {
			if (is_allocator(tmp[i].func))
				skip = i + 1;
			else if (!strncmp(tmp[i].func, "runtime.", 8))
				break;
		}
	}
	nf -= skip;
	while (a->nframes + nf > a->frames_cap) {
		if (!GROW(a->frames, a->frames_cap, a->frames_cap, 256))
			return -ENOMEM;
	}
	if (!GROW(a->res, a->nres, a->res_cap, 64))
		return -ENOMEM;
	memcpy(&a->frames[a->nframes], &tmp[skip], nf * sizeof(*tmp));
	r = &a->res[a->nres];
	r->first = (uint32_t)a->nframes;
	r->n = (uint32_t)nf;
	a->nframes += nf;
	return (int)a->nres++;
}

/*
 * The probes sent a stack hash the kernel no longer remembers having
 * sent (or never did): forget it there too, so the next record of it
 * carries the PCs.
 */
static void forget_hash(struct alloc_stacks *a, uint64_t hash)
{
	known_stacks_forget(a->known, a->pid, hash);
}

void alloc_stacks_record(struct alloc_stacks *a, uint64_t hash,
			 const uint64_t *pcs, uint32_t npcs, uint64_t ret)
{
	int res;

	a->c.seen++;
	if (!npcs)
		return;
	a->c.inline_pcs++;
	if (!hash || u64_map_get(&a->by_hash, hash, NULL))
		return;	/* sent again: evicted from the probes' LRU map */
	res = resolve_ips(a, pcs, npcs, ret);
	if (res >= 0)
		u64_map_put(&a->by_hash, hash, (uint64_t)res + 1);
}

/* Queues event (ID, TS) of resolved stack RES for the sidecar. */
static bool add_pending(struct alloc_stacks *a, uint64_t id, uint64_t ts,
			uint32_t res, bool exists)
{
	struct pending *p;

	if (!GROW(a->pend, a->npend, a->pend_cap, 1024))
		return false;
	p = &a->pend[a->npend++];
	p->id = id;
	p->ts = ts;
	p->res = res;
	p->exists = exists;
	return true;
}

void alloc_stacks_note(struct alloc_stacks *a, uint64_t id, uint64_t ts,
		       uint64_t hash)
{
	uint64_t v;

	if (!hash || !u64_map_get(&a->by_hash, hash, &v)) {
		a->c.without_stack++;
		if (hash) {
			a->c.unknown++;
			forget_hash(a, hash);
		}
		return;
	}
	if (!add_pending(a, id, ts, (uint32_t)(v - 1), false))
		a->c.without_stack++;
}

uint32_t alloc_stacks_learn(struct alloc_stacks *a, const uint64_t *pcs,
			    uint32_t n)
{
	uint64_t ips[TAF_STACK_DEPTH];
	uint32_t i;
	int res;

	if (n > TAF_STACK_DEPTH)
		n = TAF_STACK_DEPTH;
	if (!n || pcs[0] <= a->bias)
		return 0;
	/*
	 * resolve_ips takes the first PC as the probed instruction itself
	 * and the rest as return addresses; a bucket holds only return
	 * addresses, so its first goes in as its call instruction.
	 */
	ips[0] = pcs[0] - 1;
	for (i = 1; i < n; i++)
		ips[i] = pcs[i];
	res = resolve_ips(a, ips, n, 0);
	return res >= 0 ? (uint32_t)res + 1 : 0;
}

uint32_t alloc_stacks_ref(const struct alloc_stacks *a, uint64_t hash)
{
	uint64_t v;

	return hash && u64_map_get(&a->by_hash, hash, &v) ? (uint32_t)v : 0;
}

void alloc_stacks_note_ref(struct alloc_stacks *a, uint64_t id, uint64_t ts,
			   uint32_t ref)
{
	if (!ref || ref > a->nres || !add_pending(a, id, ts, ref - 1, false))
		a->c.without_stack++;
}

void alloc_stacks_note_exists(struct alloc_stacks *a, uint64_t id,
			      uint64_t ts, uint32_t ref)
{
	if (ref && ref <= a->nres)
		add_pending(a, id, ts, ref - 1, true);
}

void alloc_stacks_gen_dropped(struct alloc_stacks *a)
{
	a->c.lost += a->npend;
	a->npend = 0;
}

/* The current file's sidecar is given up: what it held is lost. */
static void sidecar_failed(struct alloc_stacks *a, int err)
{
	stack_sidecar_writer_discard(a->w);
	a->w = NULL;
	a->file_failed = true;
	a->c.lost += a->file_allocs;
	a->file_allocs = 0;
	a->c.last_error = -err;
}

int alloc_stacks_close_file(struct alloc_stacks *a)
{
	int rc = 0;

	if (a->w) {
		rc = stack_sidecar_writer_close(a->w);
		a->w = NULL;
		if (rc) {
			a->c.lost += a->file_allocs;
			a->c.last_error = -rc;
		} else {
			a->c.with_stack += a->file_allocs;
			a->c.sidecars++;
		}
	}
	a->file_allocs = 0;
	a->file_started = false;
	a->file_failed = false;
	u64_map_free(&a->sid_of);
	return rc;
}

int alloc_stacks_set_exe(struct alloc_stacks *a, const char *path)
{
	char *p = strdup(path ? path : "");

	if (!p)
		return -ENOMEM;
	free(a->exe);
	a->exe = p;
	return 0;
}

/*
 * The new sidecar's process record.  The clock pair dates the trace's
 * timestamps (bpf_ktime_get_ns, CLOCK_MONOTONIC): the wall clock is read
 * between two monotonic reads and paired with their middle.
 */
static int write_process(struct alloc_stacks *a)
{
	struct stack_sidecar_process p = {
		.exe = a->exe ? a->exe : "",
		.go_build_id = a->ident.go_build_id,
		.gnu_build_id = a->ident.gnu_build_id,
		.text_start = a->ident.text_start,
		.text_limit = a->ident.text_limit,
		.text_offset = a->ident.text_offset,
	};
	uint64_t m0 = clock_ns(CLOCK_MONOTONIC), m1;

	p.wall_ns = clock_ns(CLOCK_REALTIME);
	m1 = clock_ns(CLOCK_MONOTONIC);
	p.mono_ns = p.wall_ns ? m0 + (m1 - m0) / 2 : 0;
	return stack_sidecar_writer_set_process(a->w, &p);
}

void alloc_stacks_new_file(void *ctx, const char *trace_name)
{
	struct alloc_stacks *a = ctx;

	a->file_started = false;
}

/*
 * Starts the sidecar of TRACE_NAME, the file the sink started last,
 * unless that was done (and completes the previous file's).
 */
static int switch_file(struct alloc_stacks *a, int dirfd,
		       const char *trace_name)
{
	int rc;

	if (a->file_started)
		return a->file_failed ? -EIO : 0;
	alloc_stacks_close_file(a);
	a->file_started = true;
	rc = stack_sidecar_writer_open_at(dirfd, trace_name, &a->w);
	if (rc == 0)
		rc = write_process(a);
	if (rc)
		sidecar_failed(a, rc);
	return rc;
}

/* The sidecar stack ID of resolved stack RES, written on first use. */
static int sidecar_stack(struct alloc_stacks *a, uint32_t res, uint32_t *sid)
{
	const struct resolved *r = &a->res[res];
	uint32_t ids[TAF_STACK_DEPTH + 1];
	uint64_t v;
	uint32_t i;
	int rc;

	if (u64_map_get(&a->sid_of, (uint64_t)res + 1, &v)) {
		*sid = (uint32_t)v;
		return 0;
	}
	for (i = 0; i < r->n; i++) {
		rc = stack_sidecar_writer_add_frame(a->w,
						    &a->frames[r->first + i],
						    &ids[i]);
		if (rc)
			return rc;
	}
	rc = stack_sidecar_writer_add_stack(a->w, ids, r->n, sid);
	if (rc)
		return rc;
	return u64_map_put(&a->sid_of, (uint64_t)res + 1, *sid);
}

int alloc_stacks_gen_written(struct alloc_stacks *a, int dirfd,
			     const char *trace_name, uint64_t gen)
{
	size_t i = 0;
	int rc;

	rc = switch_file(a, dirfd, trace_name);
	for (; rc == 0 && i < a->npend; i++) {
		const struct pending *p = &a->pend[i];
		uint32_t sid;

		rc = sidecar_stack(a, p->res, &sid);
		if (rc == 0)
			rc = stack_sidecar_writer_add_alloc(a->w, gen, p->id,
							    p->ts, sid);
		if (rc == 0 && !p->exists)
			a->file_allocs++;
	}
	if (rc) {
		/* The one that failed and those after it. */
		a->c.lost += a->npend - (i ? i - 1 : 0);
		if (a->w)
			sidecar_failed(a, rc);
	}
	a->npend = 0;
	return rc;
}

void alloc_stacks_get_counts(const struct alloc_stacks *a,
			     struct alloc_stacks_counts *c)
{
	*c = a->c;
}

void alloc_stacks_free(struct alloc_stacks *a)
{
	if (!a)
		return;
	alloc_stacks_close_file(a);
	free(a->exe);
	free(a->frames);
	free(a->res);
	u64_map_free(&a->by_hash);
	free(a->pend);
	free(a);
}
