// SPDX-License-Identifier: BSD-3-Clause
/* ring_pos.c - read-only views of a BPF ring buffer's two positions. */
#include "ring_pos.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int ring_pos_open(struct ring_pos *rp, int map_fd)
{
	void *c, *p;

	memset(rp, 0, sizeof(*rp));
	rp->page = sysconf(_SC_PAGESIZE);
	if (rp->page <= 0)
		return -EINVAL;
	/* Layout (kernel/bpf/ringbuf.c): consumer page, producer page, data. */
	c = mmap(NULL, (size_t)rp->page, PROT_READ, MAP_SHARED, map_fd, 0);
	if (c == MAP_FAILED)
		return -errno;
	p = mmap(NULL, (size_t)rp->page, PROT_READ, MAP_SHARED, map_fd,
		 rp->page);
	if (p == MAP_FAILED) {
		int rc = -errno;

		munmap(c, (size_t)rp->page);
		return rc;
	}
	rp->consumer = c;
	rp->producer = p;
	return 0;
}

void ring_pos_close(struct ring_pos *rp)
{
	if (rp->consumer)
		munmap((void *)rp->consumer, (size_t)rp->page);
	if (rp->producer)
		munmap((void *)rp->producer, (size_t)rp->page);
	memset(rp, 0, sizeof(*rp));
}

uint64_t ring_pos_producer(const struct ring_pos *rp)
{
	return rp->producer ?
	       __atomic_load_n(rp->producer, __ATOMIC_ACQUIRE) : 0;
}

uint64_t ring_pos_consumer(const struct ring_pos *rp)
{
	return rp->consumer ?
	       __atomic_load_n(rp->consumer, __ATOMIC_ACQUIRE) : 0;
}

bool ring_pos_passed(const struct ring_pos *rp, uint64_t pos)
{
	/* Not mapped: nothing to wait for (the old behaviour). */
	if (!rp->consumer)
		return true;
	return ring_pos_consumer(rp) >= pos;
}
