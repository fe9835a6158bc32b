/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stack_sidecar.h - allocation-site call stacks beside each trace file.
 *
 * The AllocFree events carry no stack argument, and an experimental batch
 * of any other experiment makes Go 1.25-1.27 parsers panic, so with
 * --stacks every trace file F.trace gets a sidecar F.trace.stacks that no
 * Go tool looks at.  It names, for each HeapObjectAlloc in F, the call
 * stack that made it, symbolized (function, file, line) when it was
 * written, so the sidecar and its trace can be read anywhere, without the
 * binary.  An allocation is keyed by (generation, object ID, timestamp),
 * the three values its event has in the trace, so the link survives any
 * batch order.  The byte format is documented in README.md ("Stack
 * sidecar") and in user/format/stack_sidecar.c.
 */
#ifndef STACK_SIDECAR_H
#define STACK_SIDECAR_H

#include <stddef.h>
#include <stdint.h>

#define STACK_SIDECAR_SUFFIX ".stacks"

struct stack_frame {
	const char *func;   /* "main.leak", never NULL ("?" if unknown) */
	const char *file;   /* "/src/app/main.go", never NULL ("?") */
	uint32_t line;      /* 0 if unknown */
	uint64_t pc;        /* link address (not load address) */
};

/*
 * What the daemon knew of the traced process when it wrote the sidecar
 * (format version 2; a version 1 sidecar has none): where the frames'
 * PCs come from, so a pprof profile can name the binary, and one moment
 * on both clocks, so trace timestamps (CLOCK_MONOTONIC) can be dated.
 */
struct stack_sidecar_process {
	const char *exe;           /* executable's path as the kernel names
				      it (readlink /proc/PID/exe); "" if unknown */
	const char *go_build_id;   /* .note.go.buildid; "" if none */
	const char *gnu_build_id;  /* NT_GNU_BUILD_ID in hex; "" if none */
	uint64_t text_start;       /* the executable segment (PT_LOAD, PF_X) */
	uint64_t text_limit;       /* at link addresses, page-aligned; */
	uint64_t text_offset;      /* its file offset; all 0 if unknown */
	uint64_t wall_ns;          /* CLOCK_REALTIME, ns since the epoch, */
	uint64_t mono_ns;          /* and CLOCK_MONOTONIC at that moment; 0 */
};

/* ---- reading (report, pprof) ---- */

struct stack_sidecar;

/*
 * Opens TRACE_PATH's sidecar (TRACE_PATH STACK_SIDECAR_SUFFIX).  Returns 0,
 * -ENOENT if there is none (the trace was made without --stacks), or
 * another negative errno if it is unreadable or malformed.
 */
int stack_sidecar_open(const char *trace_path, struct stack_sidecar **out);

/*
 * The stack of the allocation whose HeapObjectAlloc event in the trace has
 * generation GEN, object ID ID and timestamp TS (the event's absolute
 * timestamp in trace ticks, as the parser reports it).  Returns 0 and sets
 * *STACK_ID, -ENOENT if the sidecar has no stack for it (dropped, or an
 * object that existed before tracing began), -ENOMEM, or -EBADMSG if
 * GEN's allocations name a stack not defined before them (open finds
 * where each allocation record ends, not what its entries say).  Only one
 * generation's allocations are held: a lookup in another generation first
 * decodes that one's, so lookups are fast generation after generation.
 */
int stack_sidecar_lookup(struct stack_sidecar *s, uint64_t gen,
			 uint64_t id, uint64_t ts, uint32_t *stack_id);


/*
 * Frames of STACK_ID, innermost first (the allocating function's caller
 * chain starting at the first frame outside the runtime's allocator).
 * Returns 0, or -ENOENT for an unknown ID.  Pointers live as long as S.
 */
int stack_sidecar_frames(const struct stack_sidecar *s, uint32_t stack_id,
			 const struct stack_frame **frames, size_t *n);

/* The process record, or NULL if the sidecar has none (version 1). */
const struct stack_sidecar_process *
stack_sidecar_process(const struct stack_sidecar *s);

void stack_sidecar_close(struct stack_sidecar *s);

/*
 * The same from a sidecar's bytes in memory (tests, fuzzing): -EBADMSG if
 * they are malformed or end before the end record.  DATA is copied.
 */
int stack_sidecar_parse(const uint8_t *data, size_t len,
			struct stack_sidecar **out);

/* ---- writing (the daemon, with --stacks) ---- */

/* Frames per stack a sidecar holds; deeper stacks keep the innermost. */
#define STACK_SIDECAR_MAX_FRAMES 256

struct stack_sidecar_writer;

/*
 * Starts the sidecar of trace file TRACE_NAME, relative to DIRFD (or
 * AT_FDCWD), under a temporary name (TRACE_NAME ".stacks.tmp", mode 0640,
 * O_NOFOLLOW): only stack_sidecar_writer_close() gives it its real name,
 * so a sidecar that exists under its real name is always complete.
 * Returns 0 or -errno.
 */
int stack_sidecar_writer_open_at(int dirfd, const char *trace_name,
				 struct stack_sidecar_writer **out);
int stack_sidecar_writer_open(const char *trace_path,
			      struct stack_sidecar_writer **out);

/*
 * Interns one frame (equal frames get the same ID; the strings are
 * copied) or one stack of interned frames, innermost first (equal stacks
 * get the same ID; at most STACK_SIDECAR_MAX_FRAMES).  IDs are >= 1 and
 * valid in this sidecar only.  Returns 0 or -errno.
 */
int stack_sidecar_writer_add_frame(struct stack_sidecar_writer *w,
				   const struct stack_frame *f,
				   uint32_t *frame_id);
int stack_sidecar_writer_add_stack(struct stack_sidecar_writer *w,
				   const uint32_t *frame_ids, size_t n,
				   uint32_t *stack_id);

/*
 * Writes the process record (strings are copied); at most once, before
 * the first add_alloc.  Returns 0 or -errno (-EINVAL out of order).
 */
int stack_sidecar_writer_set_process(struct stack_sidecar_writer *w,
				     const struct stack_sidecar_process *p);

/*
 * Records that the HeapObjectAlloc (GEN, ID, TS) of the trace was made by
 * STACK_ID (from add_stack).  Returns 0 or -errno.
 */
int stack_sidecar_writer_add_alloc(struct stack_sidecar_writer *w,
				   uint64_t gen, uint64_t id, uint64_t ts,
				   uint32_t stack_id);

/*
 * Writes the end record, closes the file and renames it to its real name
 * (TRACE_NAME STACK_SIDECAR_SUFFIX).  On any error, now or in an earlier
 * call, the temporary file is removed instead and -errno is returned (the
 * trace then has no sidecar, never a partial one).  Frees W (NULL is fine).
 */
int stack_sidecar_writer_close(struct stack_sidecar_writer *w);

/* Removes the temporary file and frees W (NULL is fine). */
void stack_sidecar_writer_discard(struct stack_sidecar_writer *w);

struct stack_sidecar_writer_stats {
	uint64_t allocs;          /* add_alloc calls accepted */
	uint32_t frames;          /* distinct frames */
	uint32_t stacks;          /* distinct stacks */
	uint64_t bytes;           /* written so far (buffered included) */
};
void stack_sidecar_writer_get_stats(const struct stack_sidecar_writer *w,
				    struct stack_sidecar_writer_stats *st);

#endif /* STACK_SIDECAR_H */
