/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * session_impl.h - what the parts of a session share: session.c,
 * session_types.c, session_gen.c, session_records.c, session_sampled.c
 * and session_gc.c; not for other modules (they use session.h).
 */
#ifndef SESSION_IMPL_H
#define SESSION_IMPL_H

#include <stdint.h>

#include "trace/session.h"

/* runtime/malloc.go minAlign on linux/amd64: the trace's heap ID unit. */
#define GO_MIN_HEAP_ALIGN 8

/* ---- IDs ------------------------------------------------------------ */

static inline uint64_t session_heap_object_id(const struct session *s,
					      uint64_t addr)
{
	return (addr - s->info.min_page_heap_addr) / s->info.min_heap_align;
}

static inline uint64_t span_id(const struct session *s, uint64_t base)
{
	return (base - s->info.min_page_heap_addr) / s->info.page_size;
}

static inline uint64_t stack_id(const struct session *s, uint64_t lo)
{
	return (lo - s->info.min_page_heap_addr) / s->info.fixed_stack;
}

/* runtime.traceCompressStackSize: sys.Len64(size), i.e. log2(size) + 1. */
static inline uint64_t stack_order(uint64_t size)
{
	return size ? 64 - (uint64_t)__builtin_clzll(size) : 0;
}

/* traceSpanTypeAndClass: spanclass << 1 for heap spans, 1 for manual ones. */
static inline uint32_t span_kindclass(uint8_t alloc_type, uint8_t spanclass)
{
	return alloc_type == 0 ? (uint32_t)spanclass << 1 : 1;
}

/* session.c */
int session_read_min_page_heap_addr(struct session *s, uint64_t *out);

/* session_types.c */
const struct type_entry *session_type_lookup(struct session *s, uint64_t addr);
uint32_t session_type_ref_of(const struct session *s,
			     const struct type_entry *e);
uint64_t session_gen_type_id(struct session *s, const struct type_entry *e);

/* session_gen.c */
int session_flush_exists(struct session *s);
int session_emit(struct session *s, uint64_t thread, enum tw_event ev,
		 uint64_t ts, uint64_t a, uint64_t b, uint64_t c);
int session_emit_alloc(struct session *s, const struct taf_rec_heap_alloc *r,
		       const struct alloc_stack_view *st, uint64_t id,
		       uint64_t type_id);
int session_ensure_generation(struct session *s, const struct record_view *v);

/* session_sampled.c (--memprofilerate) */
int session_sampled_alloc(struct session *s, const struct taf_rec_heap_alloc *r,
			  const struct alloc_stack_view *st);
int session_sampled_free(struct session *s, const struct taf_rec_addr *r);
/* fn for every live sample (ID address, type_ref); stops at non-zero. */
int session_sampled_for_each(struct session *s,
			     int (*fn)(void *arg, uint64_t addr, uint32_t type_ref),
			     void *arg);
void session_sampling_gen_written(struct session *s);

/* session_gc.c: GC cycle marks (TAF_REC_GC_CYCLE) and each file's F.gc */
int session_gc_mark(struct session *s, const struct taf_rec_addr *r);
void session_gc_gen_written(struct session *s);
void session_gc_gen_dropped(struct session *s);
void session_gc_free(struct session *s);

#endif /* SESSION_IMPL_H */
