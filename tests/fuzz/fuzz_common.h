/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_common.h - shared by the libFuzzer harnesses in tests/fuzz.
 *
 * Each harness feeds one reader of untrusted input (a target's binary, its
 * memory, a trace file) with the fuzzer's bytes and checks, besides what
 * ASan and UBSan catch, the promises of the reader's header: an output that
 * breaks one is a bug, reported with FUZZ_CHECK (abort, so libFuzzer keeps
 * the input).
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(cond)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: check failed: %s\n",         \
				__FILE__, __LINE__, #cond);                  \
			abort();                                             \
		}                                                            \
	} while (0)

/* Target memory made of the fuzz input: [base, base + len). */
struct fuzz_mem {
	const uint8_t *data;
	size_t len;
	uint64_t base;
};

/* A go_vaddr_read_fn / go_mem_read_fn: -EFAULT outside the input. */
static inline int fuzz_mem_read(void *ctx, uint64_t addr, void *buf,
				size_t len)
{
	const struct fuzz_mem *m = ctx;

	if (addr < m->base || addr - m->base > m->len ||
	    len > m->len - (addr - m->base))
		return -EFAULT;
	memcpy(buf, m->data + (addr - m->base), len);
	return 0;
}

static inline uint32_t fuzz_le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

#endif /* FUZZ_COMMON_H */
