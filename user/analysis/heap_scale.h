/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * heap_scale.h - estimates from heap-profile samples (--memprofilerate
 * traces): a replay's counts scaled the way the runtime scales its own
 * heap profile (runtime/pprof/protomem.go, scaleHeapSample).
 *
 * An object of slot size s sampled at rate R stands for
 * 1 / (1 - exp(-s / R)) objects (the probability that a Poisson sampler
 * with mean distance R picks an allocation of s bytes is 1 - exp(-s/R)).
 * The runtime groups samples by (stack, size); a replay's classes are
 * (type, stack, size), so scaling each class is exactly the runtime's
 * estimate, and types and sites are their classes' sums.
 */
#ifndef HEAP_SCALE_H
#define HEAP_SCALE_H

#include <stdint.h>

struct heap_replay;

/* Objects one sample of `size` bytes stands for at `rate` (>= 1). */
double heap_scale_factor(uint64_t size, uint64_t rate);

/*
 * Scales a finished replay's classes, types, sites and checkpoints to
 * estimates and records the rate in h->sample_rate.  Rate 0 or 1 (every
 * allocation) changes nothing but the record.  0 or -ENOMEM.
 */
int heap_replay_scale(struct heap_replay *h, uint64_t rate);

#endif /* HEAP_SCALE_H */
