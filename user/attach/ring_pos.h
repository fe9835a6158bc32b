/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ring_pos.h - the producer and consumer positions of a BPF ring buffer,
 * read-only, beside libbpf's own consumer (libbpf 1.1 does not expose
 * them).
 *
 * Why: records are consumed in the order they were reserved, and libbpf
 * stops at the first one still being written.  A process that has exited
 * can still have records queued behind such a record; they all lie below
 * the producer position read after its exit, so its files may be closed
 * once the consumer position has passed that point, not before.
 */
#ifndef RING_POS_H
#define RING_POS_H

#include <stdbool.h>
#include <stdint.h>

struct ring_pos {
	const volatile unsigned long *consumer;
	const volatile unsigned long *producer;
	long page;
};

/* Maps the two position pages of ring buffer map MAP_FD; 0 or -errno. */
int ring_pos_open(struct ring_pos *rp, int map_fd);
void ring_pos_close(struct ring_pos *rp);

/* Byte positions (monotonic); both 0 when not mapped. */
uint64_t ring_pos_producer(const struct ring_pos *rp);
uint64_t ring_pos_consumer(const struct ring_pos *rp);

/* True once everything reserved before position POS has been consumed. */
bool ring_pos_passed(const struct ring_pos *rp, uint64_t pos);

#endif
