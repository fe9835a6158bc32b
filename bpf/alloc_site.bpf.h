/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * alloc_site.bpf.h - the one probe of an allocation path and what it
 * reads (user/inspect/alloc_sites.h): site descriptors, call sites,
 * the frame-pointer climb, and the values captured before a call
 * (part of traceaf.bpf.c).
 */
#ifndef TRACEAF_ALLOC_SITE_BPF_H
#define TRACEAF_ALLOC_SITE_BPF_H

#include "records.bpf.h"
#include "alloc_record.bpf.h"

/* Site descriptors, indexed by TAF_COOKIE_SITE(cookie). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TAF_MAX_ALLOC_SITES);
	__type(key, __u32);
	__type(value, struct taf_alloc_site);
} alloc_sites SEC(".maps");

/* What each call site of a producer knows of the size and type. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 20);
	__type(key, struct taf_caller_key);
	__type(value, struct taf_caller);
} alloc_callers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TAF_MAX_LAYOUTS);
	__type(key, __u32);
	__type(value, struct taf_hot_callers);
} alloc_hot SEC(".maps");

/* The climb's window (TAF_CLIMB_WINDOW): too big for the BPF stack. */
struct climb_window {
	__u64 w[TAF_CLIMB_WINDOW / 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct climb_window);
} climb_scratch SEC(".maps");

/* The entry of the call returning to ret (a link address): 0, or -1. */
static __always_inline int find_caller(__u32 layout, __u64 ret,
				       struct taf_caller *out)
{
	struct taf_caller_key key = { .layout = layout, .ret = ret };
	const struct taf_hot_callers *h = bpf_map_lookup_elem(&alloc_hot, &layout);
	const struct taf_caller *c;
	int i;

	if (h) {
		for (i = 0; i < TAF_HOT_CALLERS; i++) {
			if (i >= h->n)
				break;
			if (h->ret[i] == ret) {
				*out = h->val[i];
				return 0;
			}
		}
	}
	c = bpf_map_lookup_elem(&alloc_callers, &key);
	if (!c)
		return -1;
	*out = *c;
	return 0;
}

/*
 * AX and the type register before a call whose callee loses its type
 * (ALLOC_ARGS), per goroutine and frame (struct taf_pending_key: R14 is g
 * in Go's register ABI; the depth of the calling frame on the goroutine's
 * stack).  Not per thread: the callee's prologue can call morestack,
 * which can preempt the goroutine and resume it on another thread, where
 * a per-thread slot would hold that goroutine's values of an earlier call
 * and give the allocation an earlier type (seen on Go 1.27: reflect.New
 * of an 8-byte type named as the 32-byte type of the call before).  Per
 * frame, so that a capture deeper in the same allocation's path (the
 * callee allocating something else first) cannot stand for this one.
 * Taken when read (one allocation per capture): an entry left by a call
 * whose probe missed the next one is never read for it, the record goes
 * out flagged instead of wrong; an entry evicted (LRU: dead goroutines
 * age out) is such a miss too.
 */
struct pending_val {
	__u64 size;
	__u64 type;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct taf_pending_key);
	__type(value, struct pending_val);
} alloc_pending SEC(".maps");

static __always_inline __u64 reg_value(struct pt_regs *ctx, __u8 reg)
{
	/*
	 * An array, not a switch: clang turns a switch over ctx fields into
	 * arithmetic on the ctx pointer, which the verifier refuses.
	 */
	__u64 r[16] = {
		ctx->ax, ctx->bx, ctx->cx, ctx->dx, ctx->si, ctx->di, ctx->bp,
		ctx->r8, ctx->r9, ctx->r10, ctx->r11, ctx->r12, ctx->r13,
		ctx->r14, ctx->r15, 0,
	};

	return r[reg & 15];
}

/* The site's stack window, read once (taf_alloc_site.win_*). */
struct site_window {
	__u64 w[TAF_SITE_WINDOW / 8];
	__s32 off;
	__s32 len;    /* 0: no window, -1: unreadable */
};

/* 0 and *v set, or -1 when the location is unknown or unreadable. */
static __always_inline int read_loc(struct pt_regs *ctx,
				    const struct taf_loc *l,
				    const struct site_window *win, __u64 *v)
{
	if (l->kind == TAF_LOC_REG) {
		*v = reg_value(ctx, l->reg);
	} else if (l->kind == TAF_LOC_STACK) {
		__s32 rel = l->off - win->off;

		if (win->len > 0 && rel >= 0 && rel + 8 <= win->len) {
			*v = win->w[(rel / 8) & (TAF_SITE_WINDOW / 8 - 1)];
		} else if (bpf_probe_read_user(v, sizeof(*v),
					       (void *)(ctx->sp + (__s64)l->off))) {
			return -1;
		}
	} else {
		return -1;
	}
	*v += (__s64)l->add;
	return 0;
}

/* consume: the last read of this capture (it is taken). */
static __always_inline int read_cval(struct pt_regs *ctx,
				     const struct taf_cval *c, __u64 caller_sp,
				     __u64 bias, bool is_type, bool consume,
				     __u64 *v)
{
	struct taf_pending_key key;
	struct pending_val *p;

	switch (c->kind) {
	case TAF_CVAL_CONST:
		/* A type is a link address; nil stays nil. */
		*v = c->val && is_type ? c->val + bias : c->val;
		return 0;
	case TAF_CVAL_STACK:
		return bpf_probe_read_user(v, sizeof(*v),
					   (void *)(caller_sp + (__s64)c->off)) ? -1 : 0;
	case TAF_CVAL_GLOBAL:
		return bpf_probe_read_user(v, sizeof(*v),
					   (void *)(c->val + bias)) ? -1 : 0;
	case TAF_CVAL_PENDING:
		key.g = ctx->r14;
		key.depth = goroutine_depth(ctx, caller_sp);
		p = bpf_map_lookup_elem(&alloc_pending, &key);
		if (!key.depth || !p)
			return -1;
		*v = is_type ? p->type : p->size;
		if (consume)
			bpf_map_delete_elem(&alloc_pending, &key);
		if (is_type)
			stat_inc(TAF_STAT_TYPE_CAPTURED);
		return 0;
	}
	return -1;
}

/* read_cval, a slot read from the window (at wbase) when it lies there. */
static __always_inline int read_cval_win(struct pt_regs *ctx,
					 const struct taf_cval *c, __u64 caller_sp,
					 __u64 bias, bool is_type, bool consume,
					 const struct climb_window *win, __u64 wbase,
					 __u64 *v)
{
	__u64 rel = caller_sp + (__s64)c->off - wbase;

	if (win && c->kind == TAF_CVAL_STACK &&
	    caller_sp + (__s64)c->off >= wbase &&
	    rel + 8 <= TAF_CLIMB_WINDOW && !(rel & 7)) {
		*v = win->w[(rel / 8) & (TAF_CLIMB_WINDOW / 8 - 1)];
		return 0;
	}
	return read_cval(ctx, c, caller_sp, bias, is_type, consume, v);
}

/*
 * A type the call site passes on (TAF_CVAL_PASS): climb the frame
 * pointers until an entry says where the type is.  `callee` is the base
 * of the frame the described call made, `caller` the base of the frame
 * that made it ([callee] holds it, [callee + 8] is the call's return
 * address).  Every frame on the way must be described: a return address
 * without an entry ends the climb unresolved, never at some outer
 * frame's type.
 */
static __always_inline int climb_type(struct pt_regs *ctx, __u64 callee,
				      __u64 caller, const struct taf_cval *first,
				      const struct climb_window *win, bool have_win,
				      __u32 layout, __u64 bias, __u64 *type)
{
	struct taf_cval c = *first;
	struct taf_caller e;
	__u64 deref = 0, fr[2], v, base = callee;
	bool have_deref = false;
	int i;

	for (i = 0; i < TAF_TYPE_HOPS; i++) {
		__u64 rel = caller - base;

		if (c.kind == TAF_CVAL_PASS_DEREF) {
			if (have_deref)
				return -1;   /* the plan makes chains of one */
			have_deref = true;
			deref = (__u64)(__s64)c.off;
		} else if (c.kind != TAF_CVAL_PASS) {
			break;
		}
		/* The caller's own frame: its BP and its return address. */
		if (!caller)
			return -1;
		if (have_win && caller >= base && rel + 16 <= sizeof(win->w) && !(rel & 7)) {
			fr[0] = win->w[(rel / 8) & (TAF_CLIMB_WINDOW / 8 - 1)];
			fr[1] = win->w[(rel / 8 + 1) & (TAF_CLIMB_WINDOW / 8 - 1)];
		} else if (bpf_probe_read_user(fr, sizeof(fr), (void *)caller)) {
			return -1;
		}
		if (find_caller(layout, fr[1] - bias, &e))
			return -1;
		c = e.type;
		callee = caller;
		caller = fr[0];
	}
	if (c.kind == TAF_CVAL_PASS || c.kind == TAF_CVAL_PASS_DEREF)
		return -1;           /* more hops than TAF_TYPE_HOPS */
	/* The SP of the frame that made the last call was callee + 16. */
	if (read_cval_win(ctx, &c, callee + 16, bias, true, true,
			  have_win ? win : NULL, base, &v))
		return -1;
	if (have_deref && (!v || bpf_probe_read_user(&v, sizeof(v),
						     (void *)(v + deref))))
		return -1;
	*type = v;
	return 0;
}

/*
 * The one probe of an allocation path (TAF_PROBE_ALLOC_SITE): the object,
 * the requested size and the type where the site descriptor says, or,
 * for what the producer no longer holds, from its call site.
 */
SEC("uprobe")
int alloc_site(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 idx = TAF_COOKIE_SITE(cookie);
	const struct taf_alloc_site *s;
	struct taf_rec_heap_alloc *rec;
	struct site_window win;
	__u64 obj = 0, size = 0, type = 0;
	__u32 flags = 0, wlen;
	int hs, ht;

	if (!tracing_enabled)
		return 0;
	s = bpf_map_lookup_elem(&alloc_sites, &idx);
	if (!s)
		return 0;
	win.off = s->win_off;
	wlen = s->win_len;
	if (wlen > TAF_SITE_WINDOW)
		wlen = 0;
	win.len = (__s32)wlen;
	if (wlen && bpf_probe_read_user(win.w, wlen, (void *)(ctx->sp + (__s64)win.off)))
		win.len = -1;
	if (read_loc(ctx, &s->obj, &win, &obj) || !obj) {
		stat_inc(TAF_STAT_ALLOC_NO_OBJ);
		return 0;
	}
	hs = read_loc(ctx, &s->size, &win, &size);
	ht = read_loc(ctx, &s->type, &win, &type);
	if (hs || ht) {
		struct taf_caller c;
		__u64 ret = 0, ret_at = ctx->sp + (__s64)s->ret_off;
		__u64 bias = ctx->ip - s->addr;
		struct climb_window *win;
		bool have_win;
		__u32 zero = 0;

		/*
		 * The producer's frame, with mallocgc's and its callers'
		 * above it, in one read when BP is the frame whose return
		 * address is wanted ([BP] is then the caller's BP): the
		 * climb reads its first frames from there, and slots of the
		 * caller's frame (mallocgc's arguments, Go 1.24+) come from
		 * it too: on a loaded machine each read costs about what a
		 * hash lookup does.
		 */
		win = bpf_map_lookup_elem(&climb_scratch, &zero);
		have_win = win && ctx->bp + 8 == ret_at &&
			   !bpf_probe_read_user(win->w, sizeof(win->w), (void *)ctx->bp);
		if (have_win)
			ret = win->w[1];
		else if (bpf_probe_read_user(&ret, sizeof(ret), (void *)ret_at))
			ret = 0;
		if (ret && !find_caller(s->layout, ret - bias, &c)) {
			struct taf_cval ct = c.type;
			bool tp = ht && ct.kind == TAF_CVAL_PENDING;

			if (hs && c.size.kind == TAF_CVAL_BOUND) {
				size = s->size_max;
				hs = size ? 0 : -1;
				flags |= hs ? 0 : TAF_ALLOC_F_SIZE_MAX;
			} else if (hs) {
				hs = read_cval_win(ctx, &c.size, ret_at + 8,
						   bias, false, !tp,
						   have_win ? win : NULL,
						   ctx->bp, &size);
			}
			if (ht && (ct.kind == TAF_CVAL_PASS ||
				   ct.kind == TAF_CVAL_PASS_DEREF)) {
				/* Only from the producer's own frame. */
				ht = -1;
				if (have_win)
					ht = climb_type(ctx, ctx->bp, win->w[0], &ct,
							win, have_win, s->layout,
							bias, &type);
				stat_inc(ht ? TAF_STAT_TYPE_CHAIN_MISS
					    : TAF_STAT_TYPE_CHAIN);
			} else if (ht) {
				ht = read_cval_win(ctx, &ct, ret_at + 8,
						   bias, true, true,
						   have_win ? win : NULL,
						   ctx->bp, &type);
			}
		}
		if (hs) {
			size = 0;
			flags |= TAF_ALLOC_F_NO_SIZE;
		}
		if (ht) {
			type = 0;
			flags |= TAF_ALLOC_F_NO_TYPE;
		}
		if (flags & (TAF_ALLOC_F_NO_SIZE | TAF_ALLOC_F_NO_TYPE))
			stat_inc(TAF_STAT_ALLOC_NO_TYPE);
	}

	rec = reserve_heap_alloc(ctx, ctx->sp + (__s64)s->ret_off);
	if (!rec)
		return 0;
	rec->hdr.flags |= flags;
	rec->addr = obj;
	rec->type = type;
	rec->size = size;
	bpf_ringbuf_submit(rec, submit_flags());
	return 0;
}

/*
 * Before a call whose callee loses its type (TAF_PROBE_ALLOC_ARGS):
 * remember AX (a producer's size) and the type register the cookie names
 * (BX for mallocgc and the producers, AX for newobject, SI for
 * growslice) for this goroutine's frame.  The probe sits in the body,
 * where SP is the frame's SP at the call.
 */
SEC("uprobe")
int alloc_args(struct pt_regs *ctx)
{
	struct taf_pending_key key = { .g = ctx->r14 };
	struct pending_val v;

	if (!tracing_enabled)
		return 0;
	key.depth = goroutine_depth(ctx, ctx->sp);
	if (!key.depth)
		return 0;
	v.size = ctx->ax;
	v.type = reg_value(ctx, (__u8)TAF_COOKIE_SITE(bpf_get_attach_cookie(ctx)));
	bpf_map_update_elem(&alloc_pending, &key, &v, BPF_ANY);
	return 0;
}

#endif /* TRACEAF_ALLOC_SITE_BPF_H */
