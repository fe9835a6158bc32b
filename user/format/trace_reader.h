/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * trace_reader.h - reads the AllocFree experiment back out of one Go
 * execution trace (wire format "go 1.22" .. "go 1.26 trace": what
 * traceaf-bpf writes and what the Go 1.23-1.27 runtimes write with
 * GODEBUG=traceallocfree=1 and runtime/trace).
 *
 * Owns: batch framing, generations, the frequency (or 1.25+ sync) batch,
 * the experiment's info and type-table batches, and the merge of the
 * per-thread event batches into one timestamp-ordered stream per
 * generation.  Every other event is decoded only far enough to skip it
 * (its argument count, internal/trace/tracev2/events.go); string, stack
 * and CPU-sample batches are skipped whole.  Malformed input gives an
 * error, never a crash: files come from anywhere.
 */
#ifndef TRACE_READER_H
#define TRACE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The AllocFree info batch (runtime/traceallocfree.go). */
struct trace_heap_info {
	bool valid;               /* an info batch was seen in this file */
	uint64_t min_page_heap_addr;
	uint64_t page_size;
	uint64_t min_heap_align;
	uint64_t fixed_stack;
};

/* One record of the generation's type table (runtime/tracetype.go). */
struct trace_type {
	uint64_t id, addr, size, ptr_bytes;
	const char *name;         /* not NUL-terminated; valid while open */
	size_t name_len;
};

/* One AllocFree event (kind: TW_EV_FIRST..TW_EV_LAST, format/trace_events.h). */
struct trace_event {
	uint8_t kind;
	uint64_t gen;
	uint64_t ticks;           /* absolute, in the trace's clock */
	uint64_t ns;              /* ticks * 1e9 / frequency */
	uint64_t args[3];         /* the arguments after the timestamp */
};

struct trace_reader;

/* Opens PATH (mapped, not read whole).  Returns 0 or a negative errno. */
int trace_reader_open(const char *path, struct trace_reader **out);

/* Reads from BUF (not copied; must outlive the reader). */
int trace_reader_open_mem(const void *buf, size_t len,
			  struct trace_reader **out);

void trace_reader_close(struct trace_reader *r);

/* Format version from the header: 22, 23, 25 or 26. */
unsigned trace_reader_version(const struct trace_reader *r);

/*
 * Loads the next generation: its type table, frequency and the cursors of
 * its event batches.  Returns 1, 0 at the end of the file, or a negative
 * errno (-EBADMSG for malformed input; trace_reader_error says where).
 */
int trace_reader_next_gen(struct trace_reader *r);

/* Of the loaded generation. */
uint64_t trace_reader_gen(const struct trace_reader *r);
uint64_t trace_reader_freq(const struct trace_reader *r);
size_t trace_reader_ntypes(const struct trace_reader *r);
const struct trace_type *trace_reader_type_at(const struct trace_reader *r,
					      size_t i);
/* Type ID ID of the loaded generation, or NULL if it defines none. */
const struct trace_type *trace_reader_type(const struct trace_reader *r,
					   uint64_t id);

/* The latest info batch of this file (valid=false before the first). */
const struct trace_heap_info *trace_reader_info(const struct trace_reader *r);

/*
 * Next AllocFree event of the loaded generation, in timestamp order over
 * all its batches (ties: file order).  Returns 1, 0 at the generation's
 * end, or a negative errno.
 */
int trace_reader_next_event(struct trace_reader *r, struct trace_event *e);

/* What went wrong, with the file offset ("" if nothing did). */
const char *trace_reader_error(const struct trace_reader *r);

#endif /* TRACE_READER_H */
