// SPDX-License-Identifier: BSD-3-Clause
/* sample_sidecar.c - the F.sampling file of a --memprofilerate trace. */
#include "sample_sidecar.h"
#include "util/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int sample_sidecar_write(int dirfd, const char *trace_name, uint64_t rate)
{
	char name[512], line[64];
	int n;

	if (snprintf(name, sizeof(name), "%s%s", trace_name,
		     SAMPLE_SIDECAR_SUFFIX) >= (int)sizeof(name))
		return -ENAMETOOLONG;
	n = snprintf(line, sizeof(line), "memprofilerate %" PRIu64 "\n", rate);
	return atomic_file_replace_at(dirfd, name, line, (size_t)n);
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
