// SPDX-License-Identifier: BSD-3-Clause
/*
 * session_sampled.c - a session's --memprofilerate records: the runtime's
 * heap-profile samples (mProf_Malloc) and their frees (profile specials),
 * the samples live at attach, and each file's F.sampling.  No spans in
 * this mode, so no shadow heap: session.sampled holds the live samples.
 */
#include "trace/session.h"
#include "trace/session_impl.h"

#include <errno.h>
#include <string.h>

#include "format/sample_sidecar.h"
#include "format/trace_writer.h"
#include "trace/alloc_stacks.h"
#include "format/trace_sink.h"

/*
 * A sampled object's type entry carries the slot size the runtime
 * sampled: with no span events in this mode, that is how the analysis
 * knows an object's size (a []byte's type is byte).  One entry per (type,
 * size); sizes below 64 KiB exactly, larger ones (whole pages) by pages.
 */
static uint64_t size_code(uint64_t size)
{
	if (size < 0x8000)
		return size;
	size >>= 13;
	return 0x8000 | (size < 0x7fff ? size : 0x7fff);
}

const struct type_entry *session_sampled_type(struct session *s,
					  const struct taf_rec_heap_alloc *r)
{
	bool unknown = r->hdr.flags & TAF_ALLOC_F_NO_TYPE;
	const struct type_entry *t = unknown ? NULL : session_type_lookup(s, r->type);
	uint64_t key, idx;
	const char *name;
	size_t len;
	uint32_t ref;

	/* A type we could not read is as unknown as one we did not find. */
	if (!unknown && r->type && !t)
		unknown = true;
	key = ((t ? t->addr : unknown ? 1 : 0) << 16) | size_code(r->size);
	if (u64_map_get(&s->sized_index, key, &idx))
		return type_catalog_get(&s->catalog, (uint32_t)idx);
	if (t) {
		name = type_catalog_name(&s->catalog, t);
		len = t->name_len;
	} else {
		/* The runtime passes nil for pointer-free buffers (strings,
		 * growslice of pointer-free elements): the report's name
		 * for type ID 0. */
		name = unknown ? "<unknown>" : "<notype>";
		len = strlen(name);
	}
	/* Written with an address of its own: one entry per sampled size. */
	ref = type_catalog_add(&s->catalog, (1ull << 63) | (s->catalog.n + 1),
			       t ? t->addr : 0, r->size, t ? t->ptr_bytes : 0,
			       name, len);
	if (!ref || u64_map_put(&s->sized_index, key, ref))
		return NULL;
	return type_catalog_get(&s->catalog, ref);
}

/*
 * A live sample's value in s->sampled: its type_ref, and in the upper
 * half the reference of its allocation stack (alloc_stacks.h; 0: none).
 */
uint64_t session_sampled_value(struct session *s, const struct type_entry *e,
			      uint32_t stack_ref)
{
	return (uint64_t)stack_ref << 32 | session_type_ref_of(s, e);
}

/*
 * A heap-profile sample (mProf_Malloc).  Its ID is the address the runtime
 * samples (after a malloc header, as the runtime's own HeapObjectAlloc;
 * the free record names the same address).  Two samples inside one 8-byte
 * ID (tiny objects, at --memprofilerate 1) are one event, like full
 * mode's merged tiny objects.
 */
int session_sampled_alloc(struct session *s,
			    const struct taf_rec_heap_alloc *r,
			    const struct alloc_stack_view *st)
{
	uint64_t key = r->addr & ~(uint64_t)(GO_MIN_HEAP_ALIGN - 1);
	const struct type_entry *e;

	if (r->hdr.flags & TAF_ALLOC_F_NO_TYPE)
		s->counts.samples_untyped++;
	/* --check-reads: a read saw it before this record came. */
	if (s->check_reads)
		u64_map_del(&s->reads.unconfirmed, key);
	if (u64_map_get(&s->sampled, key, NULL)) {
		s->counts.tiny_merged++;
		return 0;
	}
	e = session_sampled_type(s, r);
	if (u64_map_put(&s->sampled, key, session_sampled_value(s, e,
			s->stacks && st->stack ?
			alloc_stacks_ref(s->stacks, st->stack->stack_hash) : 0)))
		return -ENOMEM;
	return session_emit_alloc(s, r, st, session_heap_object_id(s, key), session_gen_type_id(s, e));
}

int session_seed_sample(struct session *s, uint64_t addr, uint64_t size,
			uint64_t type, bool known, uint64_t bucket,
			const uint64_t *pcs, uint32_t npcs)
{
	struct taf_rec_heap_alloc r = {
		.hdr.flags = TAF_ALLOC_F_SAMPLED | (known ? 0 : TAF_ALLOC_F_NO_TYPE),
		.addr = addr, .type = type, .size = size,
	};
	uint64_t key = addr & ~(uint64_t)(GO_MIN_HEAP_ALIGN - 1);
	const struct type_entry *e;

	if (!addr || !size || u64_map_get(&s->sampled, key, NULL))
		return 0;
	e = session_sampled_type(s, &r);
	/* The reads free it like one they found (sample_counts.h). */
	if (s->sample_reads && sample_counts_born(&s->reads.sc, key, bucket))
		return -ENOMEM;
	return u64_map_put(&s->sampled, key, session_sampled_value(s, e, s->stacks ?
			   alloc_stacks_learn(s->stacks, pcs, npcs) : 0));
}

int session_sampled_free(struct session *s, const struct taf_rec_addr *r)
{
	uint64_t key = r->addr & ~(uint64_t)(GO_MIN_HEAP_ALIGN - 1);

	if (s->check_reads) {
		u64_map_del(&s->reads.ever, key);
		u64_map_del(&s->reads.never_read, key);
		/* The next read's allocBits must tell a sample at this
		 * address from this one (read_sample). */
		if (u64_map_put(&s->reads.freed_since, key, 1))
			return -ENOMEM;
	}
	if (!u64_map_del(&s->sampled, key)) {
		/* Sampled before we came: not in this trace. */
		s->counts.sample_frees_unknown++;
		return 0;
	}
	return session_emit(s, r->hdr.tid, TW_EV_HEAP_OBJECT_FREE, r->hdr.ts,
		    session_heap_object_id(s, key), 0, 0);
}

int session_sampled_for_each(struct session *s,
			     int (*fn)(void *arg, uint64_t addr, uint32_t type_ref),
			     void *arg)
{
	uint64_t key, v;
	size_t it = 0;
	int rc = 0;

	while (rc == 0 && u64_map_next(&s->sampled, &it, &key, &v)) {
		rc = fn(arg, key, (uint32_t)v);
		/* The exists event just written gets its allocation stack
		 * in the sidecar, so every file names the live samples'
		 * sites, also of those older than the tracer. */
		if (rc == 0 && s->stacks && v >> 32 && s->gen)
			alloc_stacks_note_exists(s->stacks,
				session_heap_object_id(s, key),
				tw_gen_last_event_ts(s->gen), (uint32_t)(v >> 32));
	}
	return rc;
}

/* --memprofilerate: a new file is due its F.sampling, */
void session_sampling_new_file(void *ctx, const char *name)
{
	struct session *s = ctx;

	s->sampling_due = true;
}

/* which comes with the first of its generations to be written (a failed
 * one is tried again with the next). */
void session_sampling_gen_written(struct session *s)
{
	const char *name = trace_sink_file_name(s->sink);

	if (!name || !s->sampling_due)
		return;
	if (sample_sidecar_write(trace_sink_dirfd(s->sink), name,
				 s->memprofilerate) == 0)
		s->sampling_due = false;
}
