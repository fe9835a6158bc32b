// SPDX-License-Identifier: BSD-3-Clause
/*
 * agree_check - event-by-event agreement of our trace files with the Go
 * runtime's own AllocFree trace of the same process (GODEBUG=
 * traceallocfree=1 and runtime/trace while traceaf-bpf traced it).
 *
 *   agree_check [-t TOL_US] [-T WIDE_US] [-g GOMINOR] [-r] [-v] NATIVE OURS...
 *
 *   -t  match tolerance in microseconds (default 200, see below)
 *   -T  the wide tolerance of the second pass (default 1000000)
 *   -g  the target's Go minor version (tiny allocations differ: 1.23 and
 *       1.24+); default 27
 *   -r  OURS were written with --tiny-as-runtime: the tiny-allocator
 *       differences are then not allowed
 *   -v  print up to 20 unexplained events of each kind on stderr
 *   -a ADDR  print every event within 64 bytes of ADDR, both sides, and
 *       the spans holding it, on stderr (to look into one)
 *
 * Both clocks are CLOCK_MONOTONIC (the runtime's nanotime()/64 on amd64,
 * runtime/tracetime.go; ours bpf_ktime_get_ns()/64) and both frequency
 * batches say 1e9/64 ticks a second: the nanoseconds trace_reader gives
 * compare directly, with no offset to fit.  IDs are turned back into
 * addresses with each file's own info batch (both read minPageHeapAddr
 * from the same process, but nothing is assumed).
 *
 * Matching: the six events HeapObjectAlloc/Free, SpanAlloc/Free,
 * GoroutineStackAlloc/Free are grouped by (kind, address); within a group
 * both sides are in time order and paired greedily: the earliest events
 * pair when they are within the tolerance and of one life of the slot
 * (same_life: neither trace frees it between an alloc and a later
 * partner, nor allocates it between a free and a later partner: then they
 * are the same event, whatever the time between), else the earlier one
 * is unmatched.  Time alone would not do: a span can be freed and
 * allocated again within 110 us, a heap slot within one GC cycle (2.4 ms
 * here); the tool prints that shortest gap ("gap_min_us", tiny spans left
 * out) and the spread of the pairs' time differences ("dt_*": p01..p99
 * within -50..+5 us), the figures behind the tolerance.  A second pass pairs what is
 * left within the wide tolerance ("matched_late"; ours inside the runtime
 * trace's window only): between our allocation probe and the runtime's
 * emission the allocating thread may start a GC (Go 1.24+: gcStart inside
 * mallocgc's size-class paths, a stop-the-world) or the goroutine be
 * preempted (releasem comes before the trace hook) and wait for a P,
 * which on a loaded 2-CPU machine took up to 260 ms; the sweeper likewise
 * (we stamp a span's frees when its sweep starts, the runtime each as its
 * loop reaches it).  A native HeapObjectAlloc that does not match at its
 * address is tried 8 bytes lower: objects with a malloc header (Go 1.22+,
 * pointers, 513..32760 B) are reported by the runtime after the header,
 * by us at the slot base ("matched_after_header" in the output).
 *
 * Every unmatched event gets a reason, each a documented difference
 * (README.md, "Where the output differs from the runtime's, on purpose"),
 * or "unexplained":
 *   outside_window   ours, before the runtime trace's first event or after
 *                    its last, or within EDGE_NS of them (runtime/trace
 *                    runs only between trace.Start and trace.Stop, and
 *                    an M can miss the last few us of it; we trace the
 *                    whole process)
 *   tiny_shared_id   native HeapObjectAlloc of a tiny object whose 8-byte
 *                    ID we already hold live in its block (Go 1.24+ emits
 *                    each tiny object; we merge them; not with -r)
 *   tiny_upper_alloc ours, the upper 8-byte half of a tiny block: Go 1.23
 *                    emits only the first object of a block (not with -r)
 *   tiny_upper_free  ours, the free of a tiny block's upper half: the
 *                    runtime frees a block once, at its base (not with -r)
 *   stack_growth_in_trace_event
 *                    ours, Go 1.23: a stack growth (the new stack and the
 *                    old one's free, and the manual span of the new one,
 *                    paired one to one within GROWTH_NS, mark_growths;
 *                    none of them in the native trace): Go 1.23 emits
 *                    span and stack events through traceTryAcquire
 *                    (stack.go, mheap.go), which gives up
 *                    when the thread is already writing a trace event, and
 *                    the runtime's tracer needs stack (traceStack's 1 KiB
 *                    buffer) exactly there; 1.24+ uses traceAcquire
 *   go123_trace_try_acquire
 *                    ours, Go 1.23: any other span or stack event the
 *                    runtime did not emit, for the same traceTryAcquire
 *                    (a stack freed alone: seen once in ~20 runs); the
 *                    caller bounds how many it accepts
 * Output: "key value" lines (the value is the last field).  Exit status 0
 * when everything was read, whatever the counts (the caller judges them),
 * 1 on unreadable input, 2 on usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/trace_reader.h"

enum {
	EV_SPAN = 128, EV_SPAN_ALLOC, EV_SPAN_FREE,
	EV_HEAP_OBJECT, EV_HEAP_OBJECT_ALLOC, EV_HEAP_OBJECT_FREE,
	EV_STACK, EV_STACK_ALLOC, EV_STACK_FREE,
	NKIND = 9,
	TINY_KINDCLASS = 5 << 1,        /* tinySpanClass (2<<1|noscan) << 1 */
	PAGE = 8192,
	TINY_BLOCK = 16,
};

/* A stack growth's events: copystack allocates, copies, frees: 30-60 us
 * here, up to 8 ms seen on a loaded machine (the thread descheduled). */
#define GROWTH_NS 50000000

static const char *const kind_names[NKIND] = {
	"Span", "SpanAlloc", "SpanFree", "HeapObject", "HeapObjectAlloc",
	"HeapObjectFree", "GoroutineStack", "GoroutineStackAlloc",
	"GoroutineStackFree",
};

/* The six kinds that are matched (the exists forms are not: they are
 * snapshots taken at different moments). */
static bool matched_kind(int k)
{
	return k != EV_SPAN && k != EV_HEAP_OBJECT && k != EV_STACK;
}

enum reason {
	R_NONE, R_UNEXPLAINED, R_WINDOW, R_TINY_SHARED, R_TINY_UPPER_ALLOC,
	R_TINY_UPPER_FREE, R_GROWTH_IN_TRACE, R_TRY_ACQUIRE, NREASON,
};

static const char *const reason_names[NREASON] = {
	"matched", "unexplained", "outside_window", "tiny_shared_id",
	"tiny_upper_alloc", "tiny_upper_free", "stack_growth_in_trace_event",
	"go123_trace_try_acquire",
};

struct ev {
	uint64_t key;        /* (kind - 128) << 56 | address >> 3 */
	int64_t ns;
	uint64_t addr;
	int32_t peer;        /* index in the other side, -1: unmatched */
	uint32_t type;       /* interned type name + 1, 0: none */
	uint8_t kind;
	uint8_t reason;
	bool header;         /* matched 8 bytes lower (malloc header) */
	bool late;           /* matched only within the wide tolerance */
	bool span_taken;     /* a growth's new stack, its span found */
	bool ptrs;           /* HeapObjectAlloc of a type with pointers */
	uint32_t kindclass;  /* Span, SpanAlloc */
	uint32_t order;      /* GoroutineStack, GoroutineStackAlloc */
};

struct side {
	struct ev *v;
	size_t n, cap;
	int64_t lo, hi;      /* first and last event */
	uint64_t min_page_heap_addr;
};

/* Type names, interned so the two sides can be compared. */
static char **names;
static size_t nnames, names_cap;

static uint32_t intern(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < nnames; i++)
		if (strlen(names[i]) == len && !memcmp(names[i], s, len))
			return (uint32_t)i + 1;
	if (nnames == names_cap) {
		names_cap = names_cap ? names_cap * 2 : 256;
		names = realloc(names, names_cap * sizeof(*names));
		if (!names)
			exit(1);
	}
	names[nnames] = strndup(s, len);
	if (!names[nnames])
		exit(1);
	return (uint32_t)++nnames;
}

static struct ev *push(struct side *sd)
{
	if (sd->n == sd->cap) {
		sd->cap = sd->cap ? sd->cap * 2 : 1 << 16;
		sd->v = realloc(sd->v, sd->cap * sizeof(*sd->v));
		if (!sd->v) {
			fprintf(stderr, "agree_check: out of memory\n");
			exit(1);
		}
	}
	memset(&sd->v[sd->n], 0, sizeof(sd->v[0]));
	sd->v[sd->n].peer = -1;
	return &sd->v[sd->n++];
}

static uint64_t ev_addr(const struct trace_heap_info *in, int kind,
			uint64_t id)
{
	switch (kind) {
	case EV_SPAN: case EV_SPAN_ALLOC: case EV_SPAN_FREE:
		return in->min_page_heap_addr + id * in->page_size;
	case EV_STACK: case EV_STACK_ALLOC: case EV_STACK_FREE:
		return in->min_page_heap_addr + id * in->fixed_stack;
	default:
		return in->min_page_heap_addr + id * in->min_heap_align;
	}
}

static uint64_t mkkey(int kind, uint64_t addr)
{
	return (uint64_t)(kind - EV_SPAN) << 56 | addr >> 3;
}

static int read_file(struct side *sd, const char *path)
{
	struct trace_reader *r;
	struct trace_event e;
	int rc;

	rc = trace_reader_open(path, &r);
	if (rc) {
		fprintf(stderr, "agree_check: %s: %s\n", path, strerror(-rc));
		return -1;
	}
	while ((rc = trace_reader_next_gen(r)) == 1) {
		const struct trace_heap_info *in = trace_reader_info(r);

		if (!in->valid) {
			fprintf(stderr, "agree_check: %s: no AllocFree info batch\n", path);
			trace_reader_close(r);
			return -1;
		}
		sd->min_page_heap_addr = in->min_page_heap_addr;
		while ((rc = trace_reader_next_event(r, &e)) == 1) {
			struct ev *x;

			if (e.kind < EV_SPAN || e.kind > EV_STACK_FREE)
				continue;
			x = push(sd);
			x->kind = e.kind;
			x->ns = (int64_t)e.ns;
			x->addr = ev_addr(in, e.kind, e.args[0]);
			x->key = mkkey(e.kind, x->addr);
			if (e.kind == EV_SPAN || e.kind == EV_SPAN_ALLOC)
				x->kindclass = (uint32_t)e.args[2];
			if (e.kind == EV_STACK || e.kind == EV_STACK_ALLOC)
				x->order = (uint32_t)e.args[1];
			if (e.kind == EV_HEAP_OBJECT_ALLOC && e.args[1]) {
				const struct trace_type *t =
					trace_reader_type(r, e.args[1]);

				if (t) {
					x->type = intern(t->name, t->name_len);
					x->ptrs = t->ptr_bytes > 0;
				}
			}
			if (sd->n == 1 || x->ns < sd->lo)
				sd->lo = x->ns;
			if (sd->n == 1 || x->ns > sd->hi)
				sd->hi = x->ns;
		}
		if (rc < 0)
			break;
	}
	if (rc < 0)
		fprintf(stderr, "agree_check: %s: %s\n", path,
			*trace_reader_error(r) ? trace_reader_error(r) : strerror(-rc));
	trace_reader_close(r);
	return rc < 0 ? -1 : 0;
}

static int by_key_ns(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	return 0;
}

/* Index of the first event of S with key >= KEY. */
static size_t lower_bound(const struct side *s, uint64_t key)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}


/* The event that ends or begins the life an event of KIND belongs to. */
static int opposite(int kind)
{
	switch (kind) {
	case EV_SPAN_ALLOC: return EV_SPAN_FREE;
	case EV_SPAN_FREE: return EV_SPAN_ALLOC;
	case EV_HEAP_OBJECT_ALLOC: return EV_HEAP_OBJECT_FREE;
	case EV_HEAP_OBJECT_FREE: return EV_HEAP_OBJECT_ALLOC;
	case EV_STACK_ALLOC: return EV_STACK_FREE;
	default: return EV_STACK_ALLOC;
	}
}

/* Whether S has an event of KIND at ADDR strictly between LO and HI. */
static bool any_between(const struct side *s, int kind, uint64_t addr,
			int64_t lo, int64_t hi)
{
	uint64_t key = mkkey(kind, addr);
	size_t j;

	for (j = lower_bound(s, key); j < s->n && s->v[j].key == key &&
	     s->v[j].ns < hi; j++)
		if (s->v[j].ns > lo)
			return true;
	return false;
}

/*
 * A pair must belong to one life of its slot: looking forward from each
 * side's own event to its partner, that side has no event of the
 * opposite kind at the slot (an alloc whose partner comes after the
 * slot's free in the same trace is of the next life).  Backward is no
 * test: our alloc comes before the runtime's, so the runtime's free of
 * the previous life may lie between them.  That keeps a tolerance from
 * pairing two lives when the slot is reused sooner than it (spans within
 * 110 us).  Events within SKEW_NS of the partner do not count: clocks of
 * two vCPUs differ by that much, and a large object's span is swept, freed
 * and reused on another CPU within microseconds.  Where ours came first
 * and our trace starts the next life before the runtime's event, the pair
 * is refused only if the runtime's trace starts one there too: we stamp a
 * span's frees as its sweep starts and allocations before the runtime
 * does, so on a busy host a slot swept and reused at once can show our
 * free, our next allocation, and 25 us later the runtime's free and then
 * its allocation, one life (Go 1.23 regexp, 1 run in 4 on 2026-12-07).
 * NADDR, OADDR: the slot on each side (they differ by a malloc header;
 * the runtime frees a header object at the slot base and reports its
 * allocation 8 bytes up).
 */
#define SKEW_NS 20000

static bool same_life(const struct side *nat, const struct side *our,
		      int kind, uint64_t naddr, uint64_t oaddr, int64_t a,
		      int64_t b)
{
	int op = opposite(kind);

	if (b > a + SKEW_NS &&
	    (any_between(nat, op, naddr, a, b - SKEW_NS) ||
	     (naddr != oaddr && any_between(nat, op, oaddr, a, b - SKEW_NS))))
		return false;
	if (a > b + SKEW_NS && any_between(our, op, oaddr, b, a - SKEW_NS) &&
	    (any_between(nat, op, naddr, b, a) ||
	     (kind == EV_HEAP_OBJECT_FREE &&
	      any_between(nat, op, naddr + 8, b, a))))
		return false;
	return true;
}

/*
 * Greedy in-order pairing of the two sorted sides, group by group, of the
 * events not paired yet; pairs get LATE (and must be of one life).
 */
static void match(struct side *nat, struct side *our, int64_t tol, bool late)
{
	size_t i = 0, j = 0;

	while (i < nat->n && j < our->n) {
		struct ev *a = &nat->v[i], *b = &our->v[j];
		int64_t d;

		if (a->peer >= 0 || !matched_kind(a->kind)) {
			i++;
			continue;
		}
		/* Ours out of the native window never pair late. */
		if (b->peer >= 0 ||
		    (late && (b->ns < nat->lo || b->ns > nat->hi))) {
			j++;
			continue;
		}
		if (a->key != b->key) {
			if (a->key < b->key)
				i++;
			else
				j++;
			continue;
		}
		d = b->ns - a->ns;
		if (d <= tol && d >= -tol &&
		    same_life(nat, our, a->kind, a->addr, b->addr, a->ns, b->ns)) {
			a->peer = (int32_t)j;
			b->peer = (int32_t)i;
			a->late = b->late = late;
			i++;
			j++;
		} else if (a->ns < b->ns) {
			i++;
		} else {
			j++;
		}
	}
}

/* Native allocs after a malloc header: the same object 8 bytes lower. */
static void match_headers(struct side *nat, struct side *our, int64_t tol,
			  bool late)
{
	size_t i, j;

	for (i = 0; i < nat->n; i++) {
		struct ev *a = &nat->v[i];

		if (a->peer >= 0 || a->kind != EV_HEAP_OBJECT_ALLOC || !a->ptrs)
			continue;
		for (j = lower_bound(our, a->key - 1);
		     j < our->n && our->v[j].key == a->key - 1; j++) {
			struct ev *b = &our->v[j];
			int64_t d = b->ns - a->ns;

			if (b->peer < 0 && d <= tol && d >= -tol &&
			    (!late || (b->ns >= nat->lo && b->ns <= nat->hi)) &&
			    same_life(nat, our, a->kind, a->addr, b->addr,
				      a->ns, b->ns)) {
				a->peer = (int32_t)j;
				b->peer = (int32_t)i;
				a->header = b->header = true;
				a->late = b->late = late;
				break;
			}
		}
	}
}

/*
 * The latest event of group KEY in S at or before NS (within SLACK
 * after it), or NULL.  The sides are sorted by (key, ns).
 */
static const struct ev *latest(const struct side *s, uint64_t key, int64_t ns,
			       int64_t slack)
{
	const struct ev *best = NULL;
	size_t j;

	for (j = lower_bound(s, key); j < s->n && s->v[j].key == key &&
	     s->v[j].ns <= ns + slack; j++)
		best = &s->v[j];
	return best;
}

/* Whether the page of ADDR was a tiny span at NS, by either side's span
 * events (our attach snapshot's Span events included). */
static bool in_tiny_span(const struct side *nat, const struct side *our,
			 uint64_t addr, int64_t ns)
{
	uint64_t page = addr & ~(uint64_t)(PAGE - 1);
	const struct side *sides[2] = { our, nat };
	int k, s;

	for (s = 0; s < 2; s++) {
		const struct ev *best = NULL;

		/* Span (exists) and SpanAlloc, the later of the two. */
		for (k = EV_SPAN; k <= EV_SPAN_ALLOC; k++) {
			const struct ev *e = latest(sides[s], mkkey(k, page), ns, 0);

			if (e && (!best || e->ns > best->ns))
				best = e;
		}
		if (best)
			return best->kindclass == TINY_KINDCLASS;
	}
	return false;
}

/* Whether we held the heap ID of ADDR live at NS. */
static bool ours_live(const struct side *our, uint64_t addr, int64_t ns)
{
	const struct ev *a = latest(our, mkkey(EV_HEAP_OBJECT_ALLOC, addr), ns, 0);
	const struct ev *x = latest(our, mkkey(EV_HEAP_OBJECT, addr), ns, 0);
	const struct ev *f = latest(our, mkkey(EV_HEAP_OBJECT_FREE, addr), ns, 0);

	if (x && (!a || x->ns > a->ns))
		a = x;
	return a && (!f || f->ns < a->ns);
}

struct opts {
	int64_t tol, wide;
	int go_minor;
	bool tiny_as_runtime;
	bool verbose;
	uint64_t dump_addr;
};

static int by_ns(const void *a, const void *b)
{
	const struct ev *x = *(struct ev *const *)a, *y = *(struct ev *const *)b;

	return x->ns < y->ns ? -1 : x->ns > y->ns;
}

/*
 * Go 1.23: the stack growths the runtime did not emit, paired one to one
 * among our unmatched events inside the window, in time order: a new
 * stack with the next free (copystack frees the old one once it has
 * moved), and a manual span with the next new stack (a stack too large
 * for the stack cache comes from a span of its own).  Marks them
 * R_GROWTH_IN_TRACE.
 */
static void mark_growths(struct side *nat, struct side *our)
{
	struct ev **u;
	size_t n = 0, i, j;

	u = calloc(our->n + 1, sizeof(*u));
	if (!u)
		exit(1);
	for (i = 0; i < our->n; i++) {
		struct ev *e = &our->v[i];

		if (e->peer < 0 && e->ns >= nat->lo && e->ns <= nat->hi &&
		    (e->kind == EV_STACK_ALLOC || e->kind == EV_STACK_FREE ||
		     (e->kind == EV_SPAN_ALLOC && e->kindclass == 1)))
			u[n++] = e;
	}
	qsort(u, n, sizeof(*u), by_ns);
	/* New stacks with the next free not taken yet. */
	for (i = 0; i < n; i++) {
		if (u[i]->kind != EV_STACK_ALLOC)
			continue;
		for (j = i + 1; j < n && u[j]->ns <= u[i]->ns + GROWTH_NS; j++) {
			if (u[j]->kind == EV_STACK_FREE &&
			    u[j]->reason != R_GROWTH_IN_TRACE) {
				u[i]->reason = u[j]->reason = R_GROWTH_IN_TRACE;
				break;
			}
		}
	}
	/* Manual spans with the next such new stack not taken by a span. */
	for (i = 0; i < n; i++) {
		if (u[i]->kind != EV_SPAN_ALLOC)
			continue;
		for (j = i + 1; j < n && u[j]->ns <= u[i]->ns + GROWTH_NS; j++) {
			if (u[j]->kind == EV_STACK_ALLOC && !u[j]->span_taken &&
			    u[j]->reason == R_GROWTH_IN_TRACE) {
				u[j]->span_taken = true;
				u[i]->reason = R_GROWTH_IN_TRACE;
				break;
			}
		}
	}
	free(u);
}

/*
 * The runtime's trace is started and stopped while the program runs: once
 * trace.Stop has set the generation to 0 an M's traceAcquire fails, while
 * Ms already inside one still write events stamped a few microseconds
 * later.  Ours that close to either end of the window count as outside it
 * (seen: a SpanFree 1 us before the runtime's last event, whose own
 * SpanFree of it was never written, Go 1.27, 1 run in ~40).
 */
#define EDGE_NS 50000

static enum reason classify(const struct side *nat, const struct side *our,
			    const struct ev *e, bool native,
			    const struct opts *o)
{
	bool tiny;

	if (!native && (e->ns < nat->lo + EDGE_NS || e->ns > nat->hi - EDGE_NS))
		return R_WINDOW;
	if (!native && e->reason == R_GROWTH_IN_TRACE)
		return R_GROWTH_IN_TRACE;
	if (!native && o->go_minor <= 23 &&
	    e->kind != EV_HEAP_OBJECT_ALLOC && e->kind != EV_HEAP_OBJECT_FREE)
		return R_TRY_ACQUIRE;
	if (e->kind != EV_HEAP_OBJECT_ALLOC && e->kind != EV_HEAP_OBJECT_FREE)
		return R_UNEXPLAINED;
	tiny = !o->tiny_as_runtime && in_tiny_span(nat, our, e->addr, e->ns);
	if (!tiny)
		return R_UNEXPLAINED;
	if (native && e->kind == EV_HEAP_OBJECT_ALLOC && o->go_minor >= 24 &&
	    ours_live(our, e->addr, e->ns))
		return R_TINY_SHARED;
	if (!native && (e->addr & (TINY_BLOCK / 2))) {
		if (e->kind == EV_HEAP_OBJECT_FREE)
			return R_TINY_UPPER_FREE;
		if (o->go_minor <= 23)
			return R_TINY_UPPER_ALLOC;
	}
	return R_UNEXPLAINED;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

struct kstat {
	uint64_t nat, our, our_in, matched, late, header, type_diff;
	int64_t late_max;    /* largest |dt| of a late pair */
	uint64_t nat_only[NREASON], our_only[NREASON];
	int64_t gap_min;     /* shortest gap within a native group */
	int64_t *dt;
	size_t ndt;
};

static void report(const struct side *nat, const struct side *our,
		   const struct opts *o)
{
	static struct kstat ks[NKIND];
	uint64_t unexplained = 0, shown[NKIND][2] = { { 0 } };
	size_t i;
	int k, r;

	for (k = 0; k < NKIND; k++) {
		ks[k].gap_min = INT64_MAX;
		ks[k].dt = calloc(nat->n + 1, sizeof(int64_t));
		if (!ks[k].dt)
			exit(1);
	}
	for (i = 0; i < nat->n; i++) {
		const struct ev *e = &nat->v[i];
		struct kstat *s = &ks[e->kind - EV_SPAN];

		s->nat++;
		if (i > 0 && nat->v[i - 1].key == e->key &&
		    e->ns - nat->v[i - 1].ns < s->gap_min &&
		    !((e->kind == EV_HEAP_OBJECT_ALLOC || e->kind == EV_HEAP_OBJECT_FREE) &&
		      in_tiny_span(nat, our, e->addr, e->ns)))
			s->gap_min = e->ns - nat->v[i - 1].ns;
		if (!matched_kind(e->kind))
			continue;
		if (e->peer >= 0) {
			const struct ev *p = &our->v[e->peer];
			int64_t d = p->ns - e->ns;

			s->matched++;
			s->header += e->header;
			if (e->late) {
				s->late++;
				if (d < 0)
					d = -d;
				if (d > s->late_max)
					s->late_max = d;
			} else {
				s->dt[s->ndt++] = d;
			}
			if (e->kind == EV_HEAP_OBJECT_ALLOC && e->type != p->type)
				s->type_diff++;
			continue;
		}
		r = classify(nat, our, e, true, o);
		s->nat_only[r]++;
		if (r == R_UNEXPLAINED && o->verbose && shown[e->kind - EV_SPAN][0]++ < 20)
			fprintf(stderr, "native-only %s %#" PRIx64 " at %.6f s\n",
				kind_names[e->kind - EV_SPAN], e->addr, e->ns / 1e9);
	}
	for (i = 0; i < our->n; i++) {
		const struct ev *e = &our->v[i];
		struct kstat *s = &ks[e->kind - EV_SPAN];

		s->our++;
		if (e->ns >= nat->lo && e->ns <= nat->hi)
			s->our_in++;
		if (!matched_kind(e->kind) || e->peer >= 0)
			continue;
		r = classify(nat, our, e, false, o);
		s->our_only[r]++;
		if (r == R_UNEXPLAINED && o->verbose && shown[e->kind - EV_SPAN][1]++ < 20)
			fprintf(stderr, "ours-only %s %#" PRIx64 " at %.6f s (kindclass %u, order %u)\n",
				kind_names[e->kind - EV_SPAN], e->addr, e->ns / 1e9,
				e->kindclass, e->order);
	}

	printf("tolerance_us %" PRId64 "\n", o->tol / 1000);
	printf("tolerance_wide_us %" PRId64 "\n", o->wide / 1000);
	printf("go_minor %d\n", o->go_minor);
	printf("tiny_as_runtime %d\n", o->tiny_as_runtime);
	printf("native_window_ms %.3f\n", (nat->hi - nat->lo) / 1e6);
	printf("native_window_s %.6f %.6f\n", nat->lo / 1e9, nat->hi / 1e9);
	printf("min_page_heap_addr_equal %d\n",
	       nat->min_page_heap_addr == our->min_page_heap_addr);
	for (k = 0; k < NKIND; k++) {
		struct kstat *s = &ks[k];
		const char *n = kind_names[k];
		uint64_t un;

		if (!matched_kind(k + EV_SPAN)) {
			printf("%s native %" PRIu64 "\n", n, s->nat);
			printf("%s ours %" PRIu64 "\n", n, s->our);
			continue;
		}
		printf("%s native %" PRIu64 "\n", n, s->nat);
		printf("%s ours %" PRIu64 "\n", n, s->our);
		printf("%s ours_in_window %" PRIu64 "\n", n, s->our_in);
		printf("%s matched %" PRIu64 "\n", n, s->matched);
		printf("%s matched_pct %.3f\n", n,
		       s->nat ? 100.0 * (double)s->matched / (double)s->nat : 100.0);
		printf("%s matched_late %" PRIu64 "\n", n, s->late);
		if (s->late)
			printf("%s late_max_us %.2f\n", n, s->late_max / 1e3);
		if (k + EV_SPAN == EV_HEAP_OBJECT_ALLOC) {
			printf("%s matched_after_header %" PRIu64 "\n", n, s->header);
			printf("%s type_differs %" PRIu64 "\n", n, s->type_diff);
		}
		for (r = R_UNEXPLAINED; r < NREASON; r++) {
			if (s->nat_only[r] || r == R_UNEXPLAINED)
				printf("%s native_only %s %" PRIu64 "\n", n,
				       reason_names[r], s->nat_only[r]);
			if (s->our_only[r] || r == R_UNEXPLAINED)
				printf("%s ours_only %s %" PRIu64 "\n", n,
				       reason_names[r], s->our_only[r]);
		}
		un = s->nat_only[R_UNEXPLAINED] + s->our_only[R_UNEXPLAINED];
		unexplained += un;
		printf("%s unexplained %" PRIu64 "\n", n, un);
		if (s->ndt) {
			qsort(s->dt, s->ndt, sizeof(int64_t), cmp_i64);
			printf("%s dt_p01_us %.2f\n", n, s->dt[s->ndt / 100] / 1e3);
			printf("%s dt_p50_us %.2f\n", n, s->dt[s->ndt / 2] / 1e3);
			printf("%s dt_p99_us %.2f\n", n, s->dt[s->ndt * 99 / 100] / 1e3);
			printf("%s dt_min_us %.2f\n", n, s->dt[0] / 1e3);
			printf("%s dt_max_us %.2f\n", n, s->dt[s->ndt - 1] / 1e3);
		}
		if (s->gap_min != INT64_MAX)
			printf("%s gap_min_us %.2f\n", n, s->gap_min / 1e3);
	}
	printf("unexplained %" PRIu64 "\n", unexplained);
	for (k = 0; k < NKIND; k++)
		free(ks[k].dt);
}

static void dump(const struct side *s, const char *what, uint64_t addr)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		const struct ev *e = &s->v[i];
		bool span = e->kind <= EV_SPAN_FREE;

		if ((span && (e->addr >> 13) == (addr >> 13)) ||
		    (!span && e->addr + 64 >= addr && e->addr <= addr + 64))
			fprintf(stderr, "%-6s %-19s %#" PRIx64 " %.6f %s%s kc %u type %s\n",
				what, kind_names[e->kind - EV_SPAN], e->addr,
				e->ns / 1e9, e->peer >= 0 ? "matched" : "UNMATCHED",
				e->late ? " late" : "", e->kindclass,
				e->type ? names[e->type - 1] : "-");
	}
}

int main(int argc, char **argv)
{
	struct opts o = { .tol = 200 * 1000, .wide = 1000000 * 1000, .go_minor = 27 };
	struct side nat = { 0 }, our = { 0 };
	int c, i;

	while ((c = getopt(argc, argv, "t:T:g:rva:")) != -1) {
		switch (c) {
		case 'a': o.dump_addr = strtoull(optarg, NULL, 0); break;
		case 't': o.tol = (int64_t)(strtod(optarg, NULL) * 1000); break;
		case 'T': o.wide = (int64_t)(strtod(optarg, NULL) * 1000); break;
		case 'g': o.go_minor = atoi(optarg); break;
		case 'r': o.tiny_as_runtime = true; break;
		case 'v': o.verbose = true; break;
		default:
			goto usage;
		}
	}
	if (argc - optind < 2 || o.tol <= 0 || o.wide < o.tol)
		goto usage;
	if (read_file(&nat, argv[optind]))
		return 1;
	for (i = optind + 1; i < argc; i++)
		if (read_file(&our, argv[i]))
			return 1;
	if (!nat.n || !our.n) {
		fprintf(stderr, "agree_check: no AllocFree events in %s\n",
			nat.n ? "our files" : "the native trace");
		return 1;
	}
	qsort(nat.v, nat.n, sizeof(*nat.v), by_key_ns);
	qsort(our.v, our.n, sizeof(*our.v), by_key_ns);
	match(&nat, &our, o.tol, false);
	match_headers(&nat, &our, o.tol, false);
	match(&nat, &our, o.wide, true);
	match_headers(&nat, &our, o.wide, true);
	if (o.go_minor <= 23)
		mark_growths(&nat, &our);
	report(&nat, &our, &o);
	if (o.dump_addr) {
		dump(&nat, "native", o.dump_addr);
		dump(&our, "ours", o.dump_addr);
	}
	return 0;
usage:
	fprintf(stderr, "usage: agree_check [-t TOL_US] [-T WIDE_US] [-g GOMINOR] [-r] [-v] NATIVE.trace OURS.trace...\n");
	return 2;
}
