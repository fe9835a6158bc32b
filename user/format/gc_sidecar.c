// SPDX-License-Identifier: BSD-3-Clause
/* gc_sidecar.c - the F.gc file of a trace: GC cycle marks (gc_sidecar.h). */
#include "gc_sidecar.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/atomic_file.h"
#include "util/grow.h"

#define GC_SIDECAR_MAGIC "traceaf-bpf gc 1"

int gc_sidecar_write(int dirfd, const char *trace_name,
		     const struct gc_mark *marks, size_t n)
{
	char name[512], *buf = NULL;
	size_t len = 0, i;
	FILE *f;
	int rc;

	if (snprintf(name, sizeof(name), "%s%s", trace_name,
		     GC_SIDECAR_SUFFIX) >= (int)sizeof(name))
		return -ENAMETOOLONG;
	f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	fprintf(f, "%s\n", GC_SIDECAR_MAGIC);
	for (i = 0; i < n; i++)
		fprintf(f, "%" PRIu64 " %" PRIu32 "\n", marks[i].ns,
			marks[i].mode);
	rc = fclose(f) ? -ENOMEM : 0;
	if (rc == 0)
		rc = atomic_file_replace_at(dirfd, name, buf, len);
	free(buf);
	return rc;
}

int gc_sidecar_read(const char *trace_path, struct gc_mark **marks,
		    size_t *n)
{
	char path[4096], line[128];
	struct gc_mark *out = NULL;
	size_t len = 0, cap = 0;
	unsigned long long ns;
	unsigned mode;
	FILE *f;
	int rc = 0;

	*marks = NULL;
	*n = 0;
	if (snprintf(path, sizeof(path), "%s%s", trace_path,
		     GC_SIDECAR_SUFFIX) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	if (!fgets(line, sizeof(line), f) ||
	    strncmp(line, GC_SIDECAR_MAGIC "\n", sizeof(GC_SIDECAR_MAGIC))) {
		fclose(f);
		return -EINVAL;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llu %u", &ns, &mode) != 2 ||
		    (len && ns < out[len - 1].ns)) {
			rc = -EINVAL;
			break;
		}
		if (!GROW(out, len, cap, 64)) {
			rc = -ENOMEM;
			break;
		}
		out[len].ns = ns;
		out[len].mode = mode;
		len++;
	}
	fclose(f);
	if (rc) {
		free(out);
		return rc;
	}
	*marks = out;
	*n = len;
	return 0;
}
