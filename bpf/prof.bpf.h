/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * prof.bpf.h - --memprofilerate: the runtime's own heap-profile samples
 * (part of traceaf.bpf.c).
 */
#ifndef TRACEAF_PROF_BPF_H
#define TRACEAF_PROF_BPF_H

#include "records.bpf.h"
#include "alloc_record.bpf.h"
#include "alloc_site.bpf.h"

/*
 * Entry of mProf_Malloc([mp,] p, size): the runtime picked this object for
 * its heap profile (malloc*.go: c.nextSample ran out).  Only sampled
 * allocations get here, so the allocation fast path carries no probe.
 *
 * The type is not an argument.  The frames below know it: walking frame
 * pointers up from profilealloc, each return address is looked up in
 * `alloc_callers`, which for sampled mode holds the call sites that pass a
 * type (compiler calls of newobject, makeslice, growslice, the SC
 * functions: constants; mallocgc's and the producers' own argument kept in
 * their frame across a call: a slot).  The innermost hit wins, so a nil
 * type the runtime passes (growslice of pointer-free elements) is found
 * as nil before the user's call site with the element type.
 */
SEC("uprobe")
int prof_malloc(struct pt_regs *ctx)
{
	__u32 lidx = TAF_COOKIE_LAYOUT(bpf_get_attach_cookie(ctx));
	struct taf_caller_key key = { .layout = lidx };
	const struct taf_layout *l;
	struct taf_rec_heap_alloc *rec;
	__u64 x, size, bias, ret = 0, sp, bp, type = 0, ax, bx, cx;
	__u32 flags = TAF_ALLOC_F_SAMPLED | TAF_ALLOC_F_NO_TYPE;
	int i;

	if (!tracing_enabled)
		return 0;
	l = layout_of(ctx);
	if (!l)
		return 0;
	ax = ctx->ax;
	bx = ctx->bx;
	cx = ctx->cx;
	/* Loaded before the choice: the verifier refuses a ctx pointer
	 * picked by a branch. */
	asm volatile("" : "+r"(ax), "+r"(bx), "+r"(cx));
	x = l->prof_malloc_has_mp ? bx : ax;
	size = l->prof_malloc_has_mp ? cx : bx;
	if (!x)
		return 0;
	bias = ctx->ip - l->prof_malloc_site;
	/* At the entry site SP still points at the return address. */
	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)ctx->sp))
		ret = 0;
	sp = ctx->sp + 8;
	bp = ctx->bp;
	for (i = 0; i < TAF_PROF_FRAMES && ret; i++) {
		const struct taf_caller *c;

		key.ret = ret - bias;
		c = bpf_map_lookup_elem(&alloc_callers, &key);
		if (c && read_cval(ctx, &c->type, sp, bias, true, false, &type) == 0) {
			flags &= ~TAF_ALLOC_F_NO_TYPE;
			break;
		}
		/* The caller's frame: [BP] its BP, [BP+8] its return address,
		 * and its SP at the call is BP + 16. */
		if (!bp || bpf_probe_read_user(&ret, sizeof(ret), (void *)(bp + 8)))
			break;
		sp = bp + 16;
		if (bpf_probe_read_user(&bp, sizeof(bp), (void *)bp))
			break;
	}
	if (flags & TAF_ALLOC_F_NO_TYPE) {
		type = 0;
		stat_inc(TAF_STAT_ALLOC_NO_TYPE);
	}
	rec = reserve_heap_alloc(ctx, ctx->sp);
	if (!rec)
		return 0;
	rec->hdr.flags |= flags;
	rec->addr = x;
	rec->type = type;
	rec->size = size;
	bpf_ringbuf_submit(rec, submit_flags());
	return 0;
}

/*
 * Entry of freeSpecial(s *special, p unsafe.Pointer, size uintptr): the
 * sweeper frees the specials of a dead object (runtime/mgcsweep.go).
 * Only profile specials (one per sampled object) are ours; p is "the
 * exact byte for which the special was set up", span base + offset, that
 * is the address mProf_Malloc was given (after a malloc header, or inside
 * a tiny block): the alloc record's address.
 */
SEC("uprobe")
int prof_free(struct pt_regs *ctx)
{
	const struct taf_layout *l;
	__u64 s = ctx->ax, p = ctx->bx;

	if (!tracing_enabled)
		return 0;
	l = layout_of(ctx);
	if (!l || !s || !p)
		return 0;
	if (read_field(s, l->special_kind_off, 1) != l->special_kind_profile)
		return 0;
	return emit_addr(TAF_REC_SAMPLED_FREE, p);
}

#endif /* TRACEAF_PROF_BPF_H */
