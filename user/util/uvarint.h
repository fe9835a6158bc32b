/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * uvarint.h - unsigned LEB128 integers as Go's encoding/binary writes
 * them (Uvarint/PutUvarint): the trace format and the stack sidecar both
 * use them, so one reader and one writer serve both.
 */
#ifndef UVARINT_H
#define UVARINT_H

#include <stddef.h>
#include <stdint.h>

#define UVARINT_MAX_LEN 10

/*
 * Reads one value at *P (before END) and advances *P past it.  Returns 0,
 * or -1 if it is truncated or longer than a uint64_t allows, as
 * encoding/binary.Uvarint refuses.
 */
static inline int uvarint_get(const uint8_t **p, const uint8_t *end,
			      uint64_t *v)
{
	uint64_t x = 0;
	unsigned s = 0, i;

	for (i = 0; i < UVARINT_MAX_LEN && *p < end; i++) {
		uint8_t b = *(*p)++;

		if (b < 0x80) {
			if (i == UVARINT_MAX_LEN - 1 && b > 1)
				return -1;
			*v = x | (uint64_t)b << s;
			return 0;
		}
		x |= (uint64_t)(b & 0x7f) << s;
		s += 7;
	}
	return -1;
}

/* Writes V at P (room for UVARINT_MAX_LEN); returns the end. */
static inline uint8_t *uvarint_put(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Bytes uvarint_put writes for V. */
static inline size_t uvarint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

#endif /* UVARINT_H */
