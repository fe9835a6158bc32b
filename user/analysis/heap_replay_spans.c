// SPDX-License-Identifier: BSD-3-Clause
/*
 * heap_replay_spans.c - the replay's spans and goroutine stacks: pages
 * in heap and manual spans, stacks live and their bytes, now and at
 * their peak (Span*, GoroutineStack* events; heap_replay.c dispatches).
 * The object table (object_table.h) learns of heap spans here.
 */

#include "analysis/heap_replay_impl.h"
#include "format/trace_events.h"

static void pages_add(struct heap_replay *h, uint64_t v, int dir)
{
	uint64_t npages = v >> 16;
	uint64_t *ctr = (v & 1) ? &h->manual_pages : &h->heap_pages;

	*ctr = dir > 0 ? *ctr + npages : (*ctr > npages ? *ctr - npages : 0);
	if (h->heap_pages > h->peak_heap_pages)
		h->peak_heap_pages = h->heap_pages;
	if (h->manual_pages > h->peak_manual_pages)
		h->peak_manual_pages = h->manual_pages;
}

int hr_span_event(struct heap_replay *h, const struct trace_event *e)
{
	struct hr_private *p = h->priv;
	uint64_t key = e->args[0] + 1, v, nv;
	int rc;

	if (!key)
		return 0;
	if (e->kind == TW_EV_SPAN_FREE) {
		if (!u64_map_get(&p->spans, key, &v)) {
			h->anom.span_free_unknown++;
			return 0;
		}
		pages_add(h, v, -1);
		u64_map_del(&p->spans, key);
		h->span_frees++;
		return object_table_span_gone(&p->objects, e->args[0]);
	}
	nv = (e->args[1] < (1ull << 47) ? e->args[1] : (1ull << 47) - 1) << 16 |
	     (e->args[2] & 0xffff);
	if (u64_map_get(&p->spans, key, &v)) {
		if (e->kind == TW_EV_SPAN)
			return 0;
		pages_add(h, v, -1);
	}
	if (e->kind == TW_EV_SPAN_ALLOC)
		h->span_allocs++;
	pages_add(h, nv, 1);
	rc = u64_map_put(&p->spans, key, nv);
	return rc ? rc : object_table_span(&p->objects, e->args[0], nv >> 16,
					   nv & 0xffff);
}

static uint64_t order_bytes(uint64_t order)
{
	/* traceCompressStackSize: sys.Len64(size), log2(size) + 1. */
	return order >= 1 && order <= 48 ? 1ull << (order - 1) : 0;
}

static void stacks_peak(struct heap_replay *h)
{
	if (h->stacks_live > h->peak_stacks)
		h->peak_stacks = h->stacks_live;
	if (h->stack_bytes > h->peak_stack_bytes)
		h->peak_stack_bytes = h->stack_bytes;
}

int hr_stack_event(struct heap_replay *h, const struct trace_event *e)
{
	struct hr_private *p = h->priv;
	uint64_t key = e->args[0] + 1, v;

	if (!key)
		return 0;
	if (e->kind == TW_EV_GOROUTINE_STACK_FREE) {
		if (!u64_map_get(&p->gstacks, key, &v)) {
			h->anom.stack_free_unknown++;
			return 0;
		}
		h->stacks_live--;
		h->stack_bytes -= order_bytes(v);
		h->stack_frees++;
		u64_map_del(&p->gstacks, key);
		return 0;
	}
	if (u64_map_get(&p->gstacks, key, &v)) {
		if (e->kind == TW_EV_GOROUTINE_STACK)
			return 0;
		h->stacks_live--;
		h->stack_bytes -= order_bytes(v);
	}
	if (e->kind == TW_EV_GOROUTINE_STACK_ALLOC)
		h->stack_allocs++;
	h->stacks_live++;
	h->stack_bytes += order_bytes(e->args[1]);
	stacks_peak(h);
	return u64_map_put(&p->gstacks, key, e->args[1]);
}
