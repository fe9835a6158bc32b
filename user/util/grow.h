/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * grow.h - room in a doubling array, for one more element (GROW) or for N
 * (grow_to): the one way the tools' growing tables (links, sessions,
 * binaries, sites, types, buffers...) are grown.
 */
#ifndef GROW_H
#define GROW_H

#include <errno.h>
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

/*
 * Room for NEED elements of ELEM bytes in the array *ARRP points to (a
 * T **): 0, or -ENOMEM with the array untouched.  Its capacity *CAP
 * doubles, from FIRST (> 0) when empty, until it holds NEED; the new
 * elements are not cleared.
 */
static inline int grow_to(void *arrp, size_t *cap, size_t need, size_t elem,
			  size_t first)
{
	void **arr = arrp;
	size_t ncap = *cap ? *cap : first;
	void *n;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	n = reallocarray(*arr, ncap, elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

#endif /* GROW_H */
