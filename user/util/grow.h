/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * grow.h - room for one more element in a doubling array, the one way the
 * daemon's growing tables (links, sessions, binaries, sites, types...)
 * are grown.
 */
#ifndef GROW_H
#define GROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

/*
 * Returns `base` when len < *cap, else base reallocated to twice *cap
 * (`first` slots when empty) with *cap updated, or NULL (base untouched).
 */
static inline void *grow_array(void *base, size_t *cap, size_t len,
			       size_t elem, size_t first)
{
	size_t ncap;
	void *n;

	if (len < *cap)
		return base;
	ncap = *cap ? *cap * 2 : first;
	n = realloc(base, ncap * elem);
	if (n)
		*cap = ncap;
	return n;
}

/* Room for arr[len]: true, or false when out of memory (arr unchanged). */
#define GROW(arr, len, cap, first)                                          \
	({                                                                  \
		void *grow_p_ = grow_array((arr), &(cap), (len),            \
					   sizeof(*(arr)), (first));        \
		if (grow_p_)                                                \
			(arr) = grow_p_;                                    \
		grow_p_ != NULL;                                            \
	})

#endif /* GROW_H */
