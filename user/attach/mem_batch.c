// SPDX-License-Identifier: BSD-3-Clause
/*
 * mem_batch.c - many small reads of a target's memory in few system calls
 * (see mem_batch.h).
 */
#include "mem_batch.h"

#include <errno.h>

#include "attach/target.h"

size_t mem_batch_read(const struct target *t, struct mem_batch *b, size_t n)
{
	size_t i = 0, k, nread = 0;
	bool vm = true;

	if (n > MEM_BATCH_MAX)
		n = MEM_BATCH_MAX;
	while (i < n) {
		ssize_t got = -1;

		if (vm) {
			for (k = i; k < n; k++) {
				b->local[k - i].iov_base = b->dst[k];
				b->local[k - i].iov_len = b->len[k];
				b->remote[k - i].iov_base =
					(void *)(uintptr_t)b->addr[k];
				b->remote[k - i].iov_len = b->len[k];
			}
			got = process_vm_readv(t->pid, b->local, n - i,
					       b->remote, n - i, 0);
			/* EFAULT: the first piece is unreadable, not the call. */
			if (got < 0 && errno != EFAULT)
				vm = false;
		}
		/* The pieces the kernel copied whole. */
		while (i < n && got >= (ssize_t)b->len[i]) {
			b->ok[i] = true;
			got -= (ssize_t)b->len[i];
			i++;
			nread++;
		}
		if (i < n) {
			/* Unreadable, cut short, or no process_vm_readv. */
			b->ok[i] = target_read(t, b->addr[i], b->dst[i],
					       b->len[i]) == 0;
			nread += b->ok[i];
			i++;
		}
	}
	return nread;
}
