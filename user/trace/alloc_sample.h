/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alloc_sample.h - which heap allocations --sample N keeps.
 *
 * A keep/skip decision per allocation that is a hash of the allocation
 * (its slot address mixed with its timestamp), not a counter: every
 * allocation is kept with probability 1/N whatever the program's
 * allocation pattern, where "every Nth allocation of a thread" would keep
 * only one type of a loop that allocates N types in turn.  The hash is
 * fixed (no random seed), so the same record stream always gives the
 * same files.
 */
#ifndef ALLOC_SAMPLE_H
#define ALLOC_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

/* splitmix64's finalizer: every input bit reaches every output bit. */
static inline uint64_t alloc_sample_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/*
 * Whether the allocation of `slot` at time `ts` is one of the 1 in `n`
 * kept (n <= 1: all).  Objects present at attach have no allocation time:
 * they pass ts 0.
 */
static inline bool alloc_sampled(uint64_t slot, uint64_t ts, unsigned n)
{
	if (n <= 1)
		return true;
	return alloc_sample_mix(slot ^ alloc_sample_mix(ts)) % n == 0;
}

#endif /* ALLOC_SAMPLE_H */
