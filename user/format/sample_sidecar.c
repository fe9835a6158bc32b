// SPDX-License-Identifier: BSD-3-Clause
/* sample_sidecar.c - the F.sampling file of a --memprofilerate trace. */
#include "sample_sidecar.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int sample_sidecar_write(int dirfd, const char *trace_name, uint64_t rate)
{
	char name[512], tmp[520], line[64];
	int fd, n, rc = 0;

	if (snprintf(name, sizeof(name), "%s%s", trace_name,
		     SAMPLE_SIDECAR_SUFFIX) >= (int)sizeof(name))
		return -ENAMETOOLONG;
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
		    O_NOFOLLOW, 0640);
	if (fd < 0)
		return -errno;
	n = snprintf(line, sizeof(line), "memprofilerate %" PRIu64 "\n", rate);
	if (write(fd, line, (size_t)n) != n)
		rc = errno ? -errno : -ENOSPC;
	if (close(fd) && !rc)
		rc = -errno;
	/* Whole or not at all: a reader never sees half a line. */
	if (!rc && renameat(dirfd, tmp, dirfd, name))
		rc = -errno;
	if (rc)
		unlinkat(dirfd, tmp, 0);
	return rc;
}

int sample_sidecar_read(const char *trace_path, uint64_t *rate)
{
	char path[4096], line[64];
	unsigned long long v;
	FILE *f;
	int rc = -EINVAL;

	*rate = 0;
	if (snprintf(path, sizeof(path), "%s%s", trace_path,
		     SAMPLE_SIDECAR_SUFFIX) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	if (fgets(line, sizeof(line), f) &&
	    sscanf(line, "memprofilerate %llu", &v) == 1 && v > 0) {
		*rate = v;
		rc = 0;
	}
	fclose(f);
	return rc;
}
