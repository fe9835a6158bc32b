/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stack_sidecar_impl.h - what the sidecar's reader (stack_sidecar.c) and
 * writer (stack_sidecar_write.c) share: the byte format's constants and
 * tags (documented in stack_sidecar.c) and small helpers.  Included by
 * those two files only.
 */
#ifndef STACK_SIDECAR_IMPL_H
#define STACK_SIDECAR_IMPL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define MAGIC "traceaf-stacks "
#define VERSION_LINE "2\n"
#define MAX_STRING 4096
/* Allocations per 'A' record: bounds the writer's buffer. */
#define BLOCK_ALLOCS 1024
/* Smallest encodings, to bound counts by the bytes that remain. */
#define MIN_ALLOC_BYTES 3
#define MAX_FILE_SIZE (1ull << 32)
#define OUT_BUF_SIZE 65536
/* Fields of an 'M' record this version knows. */
#define PROC_FIELDS 8

enum rec_tag {
	TAG_STRING = 'S',
	TAG_FRAME = 'F',
	TAG_STACK = 'K',
	TAG_ALLOCS = 'A',
	TAG_PROCESS = 'M',
	TAG_END = 'E',
};

static const char unknown[] = "?";

static inline uint64_t zigzag(uint64_t delta)
{
	return (delta << 1) ^ (uint64_t)((int64_t)delta >> 63);
}

static inline uint64_t unzigzag(uint64_t v)
{
	return (v >> 1) ^ -(v & 1);
}

#endif /* STACK_SIDECAR_IMPL_H */
