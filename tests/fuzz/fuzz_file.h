/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_file.h - go_binary_open takes a path: the fuzz input is written to
 * a memfd, opened as /proc/self/fd/N.
 */
#ifndef FUZZ_FILE_H
#define FUZZ_FILE_H

#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_common.h"

/* Writes the input to the (reused) memfd; its path goes to path. */
static inline void fuzz_file(const uint8_t *data, size_t size, char *path,
			     size_t pathlen)
{
	static int fd = -1;
	size_t off = 0;

	if (fd < 0)
		fd = memfd_create("fuzz-input", MFD_CLOEXEC);
	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(ftruncate(fd, 0) == 0);
	while (off < size) {
		ssize_t n = pwrite(fd, data + off, size - off, (off_t)off);

		FUZZ_CHECK(n > 0);
		off += (size_t)n;
	}
	snprintf(path, pathlen, "/proc/self/fd/%d", fd);
}

#endif /* FUZZ_FILE_H */
