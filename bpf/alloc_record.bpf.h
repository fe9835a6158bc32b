/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * alloc_record.bpf.h - the heap-alloc record every allocation probe
 * reserves, with its call stack under --stacks (part of traceaf.bpf.c).
 */
#ifndef TRACEAF_ALLOC_RECORD_BPF_H
#define TRACEAF_ALLOC_RECORD_BPF_H

#include "records.bpf.h"

/*
 * --stacks: set by the loader before load, so without it the verifier
 * drops the stack code and an allocation costs what it did before.
 */
const volatile __u32 capture_stacks = 0;

/*
 * Allocating call stacks (--stacks), deduplicated by content: a record
 * carries a 64-bit hash of its PCs and return address, and the PCs
 * themselves only the first time this process sends that hash, as far
 * as `known_stacks` remembers.  The daemon keeps every stack it was sent
 * by hash, so a hash always means the stack it was first sent with: no
 * kernel stack map whose keys would have to be recycled (it never
 * forgets an entry, so over hours every record ended up carrying its
 * PCs), nothing the daemon reads later that could have changed.  An LRU
 * map: a stack evicted is sent whole once more.  Sized by the loader.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, struct taf_stack_key);
	__type(value, __u8);
} known_stacks SEC(".maps");

/* The walk's PCs, before the record's size is known. */
struct stack_buf {
	__u64 pcs[TAF_STACK_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack_buf);
} stack_scratch SEC(".maps");

/* FNV-1a over the PCs and the return address (the daemon's key). */
static __always_inline __u64 stack_hash(const struct stack_buf *b, __u32 n,
					__u64 ret)
{
	__u64 h = 0xcbf29ce484222325ull ^ ret;
	__u32 i;

	for (i = 0; i < TAF_STACK_DEPTH && i < n; i++)
		h = (h ^ b->pcs[i]) * 0x100000001b3ull;
	return h | 1;	/* 0: no stack */
}

/*
 * Reserves a heap-alloc record, with its call stack under --stacks (RET_AT:
 * where the probed function's return address is).  NULL when the ring is
 * full (counted).
 */
static __always_inline struct taf_rec_heap_alloc *
reserve_heap_alloc(struct pt_regs *ctx, __u64 ret_at)
{
	struct taf_stack_key key = {};
	struct taf_rec_heap_alloc_stack *rs;
	struct taf_rec_heap_alloc_pcs *rp;
	struct stack_buf *b;
	__u32 zero = 0, n = 0;
	__u64 ret = 0;
	__u8 one = 1;
	long len;

	/* Without --stacks the verifier drops everything below. */
	if (!capture_stacks)
		return reserve_rec(TAF_REC_HEAP_ALLOC,
				   sizeof(struct taf_rec_heap_alloc));
	key.pid = bpf_get_current_pid_tgid() >> 32;
	/* Before reserving: the walk is the slow part, hold no ring space. */
	b = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!b)
		return reserve_rec(TAF_REC_HEAP_ALLOC,
				   sizeof(struct taf_rec_heap_alloc));
	len = bpf_get_stack(ctx, b->pcs, sizeof(b->pcs), BPF_F_USER_STACK);
	if (len > 0)
		n = (__u32)(len / sizeof(__u64));
	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)ret_at))
		ret = 0;
	key.hash = n ? stack_hash(b, n, ret) : 0;
	if (!n || bpf_map_lookup_elem(&known_stacks, &key)) {
		rs = reserve_rec(TAF_REC_HEAP_ALLOC, sizeof(*rs));
		if (!rs)
			return NULL;
	} else {
		/* New to this process: the PCs travel in the record. */
		rp = reserve_rec(TAF_REC_HEAP_ALLOC, sizeof(*rp));
		if (!rp)
			return NULL;
		__builtin_memcpy(rp->pcs, b->pcs, sizeof(rp->pcs));
		rp->nr_pcs = n;
		rp->pad = 0;
		/*
		 * Known from now on, and only now that this record has its
		 * place: a record that finds the hash known is reserved after
		 * this one, and the ring is read in reservation order.
		 */
		bpf_map_update_elem(&known_stacks, &key, &one, BPF_ANY);
		rs = &rp->s;
	}
	rs->a.hdr.flags = TAF_ALLOC_F_STACK;
	rs->stack_hash = key.hash;
	rs->ret = ret;
	return &rs->a;
}

#endif /* TRACEAF_ALLOC_RECORD_BPF_H */
