/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fnv.h - FNV-1a, 64 bits: the one hash of the tools' tables and keys
 * (interned names, stacks and frames, the plan cache's key and checksum).
 * Fast on short keys and good enough where a collision costs a probe or a
 * duplicate, never a wrong answer; nothing here needs to resist an
 * attacker.  The probes hash their PCs with the same constants
 * (bpf/alloc_record.bpf.h), 8 bytes at a time.
 */
#ifndef FNV_H
#define FNV_H

#include <stddef.h>
#include <stdint.h>

/* The FNV-1a 64 offset basis: the hash of nothing. */
#define FNV1A64_SEED 0xcbf29ce484222325ull

/*
 * The hash of N bytes at P, continuing from SEED (FNV1A64_SEED to start;
 * a previous result to hash more bytes after those).
 */
static inline uint64_t fnv1a64(const void *p, size_t n, uint64_t seed)
{
	const uint8_t *b = p;
	uint64_t h = seed;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

#endif /* FNV_H */
