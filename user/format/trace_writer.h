/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * trace_writer.h - encoder for Go execution traces ("go 1.23 trace") that
 * carry the AllocFree experiment, one generation at a time.
 *
 * Owns: the wire format (varints, batches, frequency/string/stack/type/info
 * batches).  Knows nothing of BPF or of target processes.  The ground truth
 * is the Go runtime: runtime/trace*.go, runtime/traceallocfree.go,
 * runtime/tracetype.go and the parser in internal/trace.
 */
#ifndef TRACE_WRITER_H
#define TRACE_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "format/trace_events.h"

/* File header: 16 bytes, "go 1.23 trace\0\0\0". */
#define TW_HEADER "go 1.23 trace\0\0\0"
#define TW_HEADER_LEN 16

/* The info batch: how to turn IDs back into addresses. */
struct tw_heap_info {
	uint64_t min_page_heap_addr;
	uint64_t page_size;       /* 8192 */
	uint64_t min_heap_align;  /* 8 */
	uint64_t fixed_stack;     /* 2048 on linux */
};

struct tw_gen;

/*
 * Where a generation's bytes go: whole batches, in file order.  Returns 0
 * or -errno; after an error the generation writes nothing more.
 */
typedef int (*tw_write_fn)(void *ctx, const uint8_t *buf, size_t len);

/*
 * Starts generation number `gen` (>= 1), kept in memory for tw_gen_encode
 * until tw_gen_stream gives it an output.  `freq` is timestamp units per
 * second (1e9 for nanoseconds).  `ts_floor` is the smallest timestamp this
 * generation may carry (the previous generation's last one): earlier
 * timestamps are raised to it so that time never goes backwards.
 * Returns NULL on allocation failure.
 */
struct tw_gen *tw_gen_new(uint64_t gen, uint64_t freq,
			  const struct tw_heap_info *info, uint64_t ts_floor);
void tw_gen_free(struct tw_gen *g);

/*
 * Appends one experimental event to thread `thread`'s batch.  Arguments
 * beyond the event's arity are ignored.  Timestamps of one thread are
 * clamped to be non-decreasing.  Returns 0 or -ENOMEM / -EINVAL (unknown
 * event, thread 2^64-1 which the parsers refuse, or a HeapObject(Alloc)
 * whose type ID is not defined in this generation).
 */
int tw_gen_event(struct tw_gen *g, uint64_t thread, enum tw_event ev,
		 uint64_t ts, uint64_t a, uint64_t b, uint64_t c);

/*
 * Types: a generation defines the ones its events use, in a catalogue of
 * its own or, after tw_gen_use_types, in the caller's (type_catalog.h),
 * which outlives it and serves the next generations too.
 */
struct type_catalog;

/*
 * Draws the generation's types from `cat` (before its first type) and
 * starts a generation in it: the entries this one uses are marked there,
 * and `cat` must not start another before this one is finished.
 */
void tw_gen_use_types(struct tw_gen *g, struct type_catalog *cat);

/* The ID of catalogue entry `ref` in this generation, defining it on first
 * use (0: no such entry, or out of memory). */
uint64_t tw_gen_type(struct tw_gen *g, uint32_t ref);

/* The type ID of type address `addr` in this generation, 0 if undefined. */
uint64_t tw_gen_type_id(const struct tw_gen *g, uint64_t addr);

/*
 * Defines type `addr` in this generation's type table and returns its ID
 * (>= 1; the same ID again if already defined).  IDs count up from 1 in
 * order of definition.  Names longer than 4096 bytes are cut there (a type
 * record must fit in one batch).  Returns 0 on failure or when addr is 0
 * (a nil type, like the runtime's, has ID 0: "no type").
 */
uint64_t tw_gen_define_type(struct tw_gen *g, uint64_t addr, uint64_t size,
			    uint64_t ptr_bytes, const char *name,
			    size_t name_len);

uint64_t tw_gen_events(const struct tw_gen *g);    /* events appended */
uint64_t tw_gen_last_ts(const struct tw_gen *g);   /* largest ts written */
/* Timestamp of the last event appended, as written: tw_gen_event raises
 * one below its thread's previous event to that one's. */
uint64_t tw_gen_last_event_ts(const struct tw_gen *g);
/* Bytes of encoded event data so far: O(1), cheap after every event. */
size_t tw_gen_event_bytes(const struct tw_gen *g);

/*
 * Sends the generation's batches to `write` as they fill (64 KiB at most
 * each, the size the parsers accept) instead of keeping them: call it
 * before the first event.  Then the generation holds one batch per thread
 * whatever its length, as the runtime's tracer does.
 */
void tw_gen_stream(struct tw_gen *g, tw_write_fn write, void *ctx);

/*
 * Ends the generation: writes each thread's last batch, then the
 * frequency batch, the AllocFree info batch and the types batches (the
 * parsers read a generation whole, so its tables may come last, as the
 * runtime writes its stacks and strings).  A generation with no events
 * writes nothing: Go 1.23/1.24 refuse empty generations.  No event may
 * follow.  Returns 0, or the first write's error (then the generation is
 * incomplete wherever it went), or -ENOMEM.
 */
int tw_gen_finish(struct tw_gen *g);

/*
 * For a generation without an output: tw_gen_finish, and the bytes it
 * wrote in a malloc'd buffer (*len = 0 and *buf = NULL when it had no
 * events).  Returns 0, -ENOMEM, or -EINVAL for a streamed generation.
 */
int tw_gen_encode(struct tw_gen *g, uint8_t **buf, size_t *len);

#endif /* TRACE_WRITER_H */
