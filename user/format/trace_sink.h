/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * trace_sink.h - rotating trace files for one traced process.
 *
 * Owns: file naming, creation (O_EXCL|O_NOFOLLOW, 0640), the 16-byte header,
 * appending encoded generations (streamed a batch at a time, or whole),
 * size-based rotation at generation boundaries, keeping only the newest N
 * files, leaving every file valid when a write fails (the file is cut
 * back to its last whole generation), and telling who asked when it
 * starts a file (trace_sink_on_new_file).
 * Also which output directories are safe for a root process to write into
 * (trace_sink.c, open_output_dir, states the policy).
 */
#ifndef TRACE_SINK_H
#define TRACE_SINK_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

struct trace_sink_opts {
	const char *dir;          /* output directory, must exist */
	const char *name;         /* base name, e.g. "myprog-1234"; bytes
				     other than [A-Za-z0-9._+-] and a leading
				     '.' become '_', at most 200 are kept */
	uint64_t rotate_size;     /* start a new file once this many bytes; 0 = never */
	unsigned keep_files;      /* keep newest N files; 0 = keep all */
	char *err;                /* optional: why the directory was refused */
	size_t errlen;
};

struct trace_sink;

/*
 * Opens the output directory and checks it (see open_output_dir in
 * trace_sink.c). Returns 0, -EINVAL (no dir or empty name), -ELOOP (the
 * last component is a symlink owned by another user), -EPERM (writable by
 * every user and not sticky), -EAGAIN (the path changed while it was
 * checked), or the errno of opening it; o->err, when given, says which in
 * one line that starts with the directory.
 */
int trace_sink_open(const struct trace_sink_opts *o, struct trace_sink **out);

/*
 * The output directory, open: a caller that writes a file next to the
 * traces creates it with openat() here, so it lands where they do even if
 * the path is renamed or replaced meanwhile.
 */
int trace_sink_dirfd(const struct trace_sink *s);

/*
 * True when the next generation goes to a new file (none open yet, or the
 * current one reached rotate_size).  The caller then starts that
 * generation with the snapshot ("exists") events so the file stands alone.
 */
bool trace_sink_at_file_start(const struct trace_sink *s);

/*
 * Appends part of the generation being written (trace_writer streams its
 * batches here as they fill).  Opens a new file first when
 * trace_sink_at_file_start() (files are created only here, so no file is
 * ever empty or header-only).  On a write error (ENOSPC, EIO...) the file
 * is truncated back to its last whole generation (removed if it held
 * none), the sink stops accepting writes, and -errno is returned, again by
 * every later call.  A daemon killed meanwhile (SIGKILL) leaves the part
 * written so far at the file's end, as the runtime's tracer would.
 */
int trace_sink_append(struct trace_sink *s, const uint8_t *buf, size_t len);

/* trace_sink_append as a trace_writer output (tw_write_fn; ctx: the sink). */
int trace_sink_write_cb(void *sink, const uint8_t *buf, size_t len);

/*
 * The generation appended since the last call is whole: it counts, the
 * file rotates when it reached rotate_size, and keep_files is applied once
 * a new file holds its first generation.  Nothing appended: a no-op.
 * Returns 0, or the sink's error after a failed write.
 */
int trace_sink_end_gen(struct trace_sink *s);

/* One whole generation: trace_sink_append then trace_sink_end_gen. */
int trace_sink_write_gen(struct trace_sink *s, const uint8_t *buf, size_t len);

/*
 * The name, inside the output directory, of the file the last generation
 * went to (a sidecar written for that generation goes beside it); NULL
 * before the first write.
 */
const char *trace_sink_file_name(const struct trace_sink *s);

/*
 * Who is told when the sink starts a file: FN(CTX, NAME), NAME the new
 * file's name inside the output directory, once the file exists (its
 * header written), before its first generation is whole.  The sidecars
 * of a trace file (F.trace.stacks, F.trace.gc, F.trace.sampling) start
 * over then, without comparing names to find out.  At most
 * TRACE_SINK_MAX_HOOKS, called in the order added.  Returns 0 or -ENOSPC.
 */
#define TRACE_SINK_MAX_HOOKS 4

typedef void (*trace_sink_new_file_fn)(void *ctx, const char *name);

int trace_sink_on_new_file(struct trace_sink *s, trace_sink_new_file_fn fn,
			   void *ctx);

/*
 * Ends the current file now (SIGUSR1): the next generation written opens a
 * new one.  Call it between generations (after trace_sink_end_gen, before
 * the next append): the file then holds only whole generations and is
 * complete as it is.  No-op when no file is open.
 */
void trace_sink_rotate(struct trace_sink *s);

/* Generation number the next generation must carry in the current/next file. */
uint64_t trace_sink_next_gen(const struct trace_sink *s);

/* Closes the current file and frees the sink (NULL is fine). */
void trace_sink_close(struct trace_sink *s);

struct trace_sink_stats {
	uint64_t files_written;
	uint64_t bytes_written;
	uint64_t gens_written;
	int last_error;           /* errno of the write that stopped the sink */
	char current_path[4096];
};
void trace_sink_get_stats(const struct trace_sink *s, struct trace_sink_stats *st);

#endif /* TRACE_SINK_H */
