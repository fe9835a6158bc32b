/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * session.h - one traced process, from ring-buffer records to trace files.
 *
 * Owns: the mapping from runtime addresses to the experiment's IDs (the
 * info batch), the type cache (type pointer -> name, size, ptrBytes, read
 * once from the target), the generation under construction and the file
 * sink.  Records come in; whole generations go out.
 */
#ifndef SESSION_H
#define SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target.h"
#include "trace_writer.h"
#include "traceaf_events.h"
#include "u64_map.h"

struct go_binary;
struct go_type_reader;
struct trace_sink;

struct session_opts {
	const char *dir;
	uint64_t rotate_size;
	unsigned keep_files;
};

/* One cached type description; names live in a shared arena. */
struct type_entry {
	uint64_t size;
	uint64_t ptr_bytes;
	uint32_t name_off;     /* into session.names */
	uint32_t name_len;
};

struct session_counts {
	uint64_t records[TAF_REC_KIND_MAX];  /* records received, per kind */
	uint64_t events;                     /* trace events written */
	uint64_t generations;
	uint64_t type_errors;                /* type pointers we couldn't read */
	uint64_t lost_on_write;              /* events in generations not written */
};

struct session {
	struct target target;
	struct go_binary *bin;
	struct go_type_reader *types;
	uint64_t load_bias;
	struct tw_heap_info info;

	struct u64_map type_index;       /* type addr -> index in type_tab */
	struct type_entry *type_tab;
	size_t ntypes, type_cap;
	char *names;
	size_t names_len, names_cap;

	struct tw_gen *gen;              /* generation under construction */
	uint64_t last_ts;                /* floor for the next generation */
	struct trace_sink *sink;
	bool sink_failed;
	int sink_error;

	struct session_counts counts;
};

/*
 * Starts tracing state for an already opened target and binary (the session
 * takes ownership of both).  Reads the heap layout from the target.
 */
int session_start(struct session *s, struct target *t, struct go_binary *bin,
		  uint64_t load_bias, const struct session_opts *o, char *err,
		  size_t errlen);

/* Feeds one ring-buffer record. */
int session_record(struct session *s, const void *data, size_t len);

/*
 * Ends the current generation: encodes it and appends it to the current file
 * (or a new one).  Empty generations are skipped.  Returns 0 or -errno of a
 * failed write; after one, later generations are counted as lost.
 */
int session_cut(struct session *s);

/* Cuts the last generation and closes everything. */
void session_finish(struct session *s);

#endif /* SESSION_H */
