/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * go_sizeclasses.h - the Go allocator's size classes.
 *
 * The table (runtime/sizeclasses.go, internal/runtime/gc/sizeclasses.go
 * from Go 1.25) is the same in every Go 1.21..1.27; tests/unit/
 * test_go_sizeclasses.c checks it against each installed toolchain.
 */
#ifndef GO_SIZECLASSES_H
#define GO_SIZECLASSES_H

#include <stdint.h>

#define GO_NUM_SIZE_CLASSES 68
#define GO_PAGE_SIZE 8192
#define GO_TINY_SPANCLASS 5        /* size class 2 (16 B), noscan */
#define GO_MALLOC_HEADER_SIZE 8
#define GO_MIN_SIZE_FOR_HEADER 512 /* heapBitsInSpan: larger ones have a header */
#define GO_MAX_SMALL_SIZE 32768

extern const uint16_t go_class_to_size[GO_NUM_SIZE_CLASSES];

/*
 * Slot size of a heap span of class `spanclass` (sizeclass << 1 | noscan)
 * and `npages` pages: the class size, or the whole span for size class 0
 * (large objects).  0 for an unknown class.
 */
uint64_t go_span_elemsize(uint8_t spanclass, uint64_t npages);

#endif /* GO_SIZECLASSES_H */
