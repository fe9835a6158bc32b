/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mem_batch.h - many small reads of a target's memory in few system calls.
 *
 * Why: the attach snapshot reads two small pieces (an mspan struct, an
 * alloc bitmap) per span of the heap, over 100 000 spans for 1 GiB, while
 * the target is stopped; one pread of /proc/PID/mem each cost more than
 * half of the pause.  process_vm_readv takes up to MEM_BATCH_MAX pieces
 * per call.
 *
 * Owns: the iovecs and the recovery from unreadable pieces; knows nothing
 * of what is read.
 */
#ifndef MEM_BATCH_H
#define MEM_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct target;

#define MEM_BATCH_MAX 1024      /* IOV_MAX */

/* The pieces to read (the caller fills addr, len, dst) and the result. */
struct mem_batch {
	uint64_t addr[MEM_BATCH_MAX];   /* target address */
	size_t len[MEM_BATCH_MAX];      /* bytes, > 0 */
	uint8_t *dst[MEM_BATCH_MAX];    /* where they go */
	bool ok[MEM_BATCH_MAX];         /* out: the piece was read whole */
	struct iovec local[MEM_BATCH_MAX], remote[MEM_BATCH_MAX];
};

/*
 * Reads pieces 0..n-1 (n <= MEM_BATCH_MAX) and sets ok[] for each.  One
 * process_vm_readv when every piece is readable; the kernel stops at the
 * first piece it cannot read whole, which is then retried alone through
 * /proc/PID/mem (target_read) and the rest go in another call.  Where
 * process_vm_readv is refused (seccomp, no permission, ENOSYS) every piece
 * is read through /proc/PID/mem.  Returns the number of pieces read.
 */
size_t mem_batch_read(const struct target *t, struct mem_batch *b, size_t n);

#endif /* MEM_BATCH_H */
