/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * trace_events.h - the one table of the trace format's events: number,
 * name and arguments of every event type, as Go's own
 * internal/trace/tracev2/events.go gives them (Go 1.27; Go 1.23's
 * internal/trace/event/go122 has the same numbers).
 *
 * The writer encodes the AllocFree events by it, the reader decodes every
 * event of an event batch by it, and the summary and the analysis name
 * events by it, so an event's shape is written down once.
 */
#ifndef TRACE_EVENTS_H
#define TRACE_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The event types this project names; the rest are in the table only. */
enum tw_event {
	TW_EV_EVENT_BATCH = 1,
	TW_EV_STACKS = 2,
	TW_EV_STRINGS = 4,
	TW_EV_CPU_SAMPLES = 6,
	TW_EV_FREQUENCY = 8,
	TW_EV_GO_STATUS_STACK = 48,      /* the last event of format 1.23 */
	TW_EV_EXPERIMENTAL_BATCH = 49,
	TW_EV_SYNC = 50,                 /* format 1.25+ */
	TW_EV_CLOCK_SNAPSHOT = 51,       /* format 1.25+ */
	TW_EV_END_OF_GENERATION = 52,    /* format 1.26+ */
	/* The AllocFree experiment's (127 + iota): */
	TW_EV_SPAN = 128,                /* [dt, id, npages, kindclass] */
	TW_EV_SPAN_ALLOC = 129,          /* [dt, id, npages, kindclass] */
	TW_EV_SPAN_FREE = 130,           /* [dt, id] */
	TW_EV_HEAP_OBJECT = 131,         /* [dt, id, type] */
	TW_EV_HEAP_OBJECT_ALLOC = 132,   /* [dt, id, type] */
	TW_EV_HEAP_OBJECT_FREE = 133,    /* [dt, id] */
	TW_EV_GOROUTINE_STACK = 134,     /* [dt, id, order] */
	TW_EV_GOROUTINE_STACK_ALLOC = 135, /* [dt, id, order] */
	TW_EV_GOROUTINE_STACK_FREE = 136,  /* [dt, id] */
};

/* The AllocFree events, for per-event counters: TW_EV_FIRST + i. */
#define TW_EV_FIRST TW_EV_SPAN
#define TW_EV_LAST TW_EV_GOROUTINE_STACK_FREE
#define TW_EV_COUNT (TW_EV_LAST - TW_EV_FIRST + 1)

/* The experiment's number in an experimental batch (tracev2.AllocFree). */
#define TW_EXP_ALLOC_FREE 1

struct tw_event_spec {
	const char *name;   /* tracev2's Name; NULL: no such event */
	const char *args;   /* its Args, space-separated ("dt": the
			       timestamp delta of a timed event) */
	uint8_t nargs;      /* how many: every one a uvarint */
	bool timed;         /* IsTimedEvent: belongs in an event batch */
};

/* Indexed by event type, 0 .. TW_EV_LAST. */
extern const struct tw_event_spec tw_events[TW_EV_LAST + 1];

/* The spec of event type EV, or NULL if there is no such event. */
static inline const struct tw_event_spec *tw_event_spec(unsigned ev)
{
	return ev <= TW_EV_LAST && tw_events[ev].name ? &tw_events[ev] : NULL;
}

/* "HeapObjectAlloc" for an AllocFree event, "?" otherwise. */
static inline const char *tw_event_name(unsigned ev)
{
	const struct tw_event_spec *s = tw_event_spec(ev);

	return s ? s->name : "?";
}

#endif
