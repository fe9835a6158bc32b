// SPDX-License-Identifier: BSD-3-Clause
/*
 * report_input.c - the trace files of FILE|DIR, grouped by process and
 * replayed, for `report` and `pprof`.
 *
 * The tracer names a process's files COMM-PID-YYYYMMDDTHHMMSSZ-NNNNNN.trace
 * (trace_sink.c): dropping the last two dash-separated fields gives the
 * process, and name order is time order.  Every rotated file starts with
 * "exists" events for what is live, so reading them in order continues one
 * heap.  A file not named that way is a process of its own.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "analysis/heap_replay.h"
#include "analysis/heap_scale.h"
#include "analysis/report.h"
#include "format/sample_sidecar.h"
#include "util/grow.h"

static bool all_digits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return n > 0;
}

/* Length of the process part of file name BASE (".trace" included). */
static size_t process_len(const char *base)
{
	size_t n = strlen(base);
	const char *seq, *ts;

	if (n < 6 || strcmp(base + n - 6, ".trace"))
		return n;
	n -= 6;
	seq = memrchr(base, '-', n);
	if (!seq || !all_digits(seq + 1, (size_t)(base + n - seq - 1)))
		return strlen(base);
	/* -YYYYMMDDTHHMMSSZ */
	ts = seq - 17;
	if (seq - base < 18 || *ts != '-' || !all_digits(ts + 1, 8) ||
	    ts[9] != 'T' || !all_digits(ts + 10, 6) || ts[16] != 'Z')
		return strlen(base);
	return (size_t)(ts - base);
}

int report_name_time(const char *path, int64_t *unix_s)
{
	const char *base = strrchr(path, '/');
	size_t plen;
	struct tm tm;

	base = base ? base + 1 : path;
	plen = process_len(base);
	if (plen == strlen(base))
		return -ENOENT;
	/* base + plen is "-YYYYMMDDTHHMMSSZ-", checked by process_len. */
	memset(&tm, 0, sizeof(tm));
	if (sscanf(base + plen + 1, "%4d%2d%2dT%2d%2d%2dZ", &tm.tm_year,
		   &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
		   &tm.tm_sec) != 6)
		return -ENOENT;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*unix_s = (int64_t)timegm(&tm);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_file(struct report_proc **procs, size_t *n, const char *dir,
		    const char *base)
{
	size_t plen = process_len(base), i;
	struct report_proc *p = NULL;
	char *path, **nf;

	for (i = 0; i < *n; i++)
		if (strlen((*procs)[i].name) == plen &&
		    !strncmp((*procs)[i].name, base, plen))
			p = &(*procs)[i];
	if (!p) {
		struct report_proc *np = realloc(*procs,
						 (*n + 1) * sizeof(*np));

		if (!np)
			return -ENOMEM;
		*procs = np;
		p = &np[(*n)++];
		memset(p, 0, sizeof(*p));
		p->name = strndup(base, plen);
		if (!p->name)
			return -ENOMEM;
	}
	if (dir) {
		if (asprintf(&path, "%s/%s", dir, base) < 0)
			return -ENOMEM;
	} else {
		path = strdup(base);
		if (!path)
			return -ENOMEM;
	}
	nf = realloc(p->files, (p->nfiles + 1) * sizeof(*nf));
	if (!nf) {
		free(path);
		return -ENOMEM;
	}
	p->files = nf;
	p->files[p->nfiles++] = path;
	return 0;
}

static int list_dir(const char *dir, char ***names, size_t *n)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	size_t cap = 0;

	*names = NULL;
	*n = 0;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len < 7 || strcmp(de->d_name + len - 6, ".trace"))
			continue;
		if (!GROW(*names, *n, cap, 16))
			goto nomem;
		(*names)[*n] = strdup(de->d_name);
		if (!(*names)[*n])
			goto nomem;
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(*names, *n, sizeof(**names), cmp_str);
	return 0;
nomem:
	closedir(d);
	return -ENOMEM;
}

void report_procs_free(struct report_proc *p, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		free(p[i].name);
		for (j = 0; j < p[i].nfiles; j++)
			free(p[i].files[j]);
		free(p[i].files);
		heap_replay_free(p[i].h);
	}
	free(p);
}

int report_load(const char *path, bool use_stacks, struct report_proc **out,
		size_t *n)
{
	struct report_proc *procs = NULL;
	size_t np = 0, i, j, nnames = 0;
	char **names = NULL;
	struct stat st;
	int rc = 0;

	if (stat(path, &st)) {
		rc = -errno;
		fprintf(stderr, "traceaf-bpf: %s: %s\n", path, strerror(-rc));
		return rc;
	}
	if (S_ISDIR(st.st_mode)) {
		rc = list_dir(path, &names, &nnames);
		for (i = 0; !rc && i < nnames; i++)
			rc = add_file(&procs, &np, path, names[i]);
		for (i = 0; i < nnames; i++)
			free(names[i]);
		free(names);
		if (!rc && !np) {
			fprintf(stderr, "traceaf-bpf: %s: no *.trace files\n",
				path);
			report_procs_free(procs, np);
			return -ENOENT;
		}
	} else {
		const char *base = strrchr(path, '/');

		rc = add_file(&procs, &np, NULL, path);
		if (!rc) {
			/* Name the process after the file, not its path. */
			free(procs[0].name);
			base = base ? base + 1 : path;
			procs[0].name = strndup(base, process_len(base));
			if (!procs[0].name)
				rc = -ENOMEM;
		}
	}
	if (rc) {
		fprintf(stderr, "traceaf-bpf: %s: %s\n", path, strerror(-rc));
		report_procs_free(procs, np);
		return rc;
	}
	for (i = 0; i < np; i++) {
		struct heap_replay *h = heap_replay_new();
		uint64_t rate = 0;

		procs[i].h = h;
		if (!h) {
			rc = -ENOMEM;
			break;
		}
		for (j = 0; j < procs[i].nfiles; j++) {
			rc = heap_replay_file(h, procs[i].files[j], use_stacks);
			if (rc)
				break;
			/* One process's files share its one rate. */
			if (!rate && sample_sidecar_read(procs[i].files[j], &rate) < 0)
				rate = 0;
		}
		if (!rc)
			rc = heap_replay_finish(h);
		if (!rc)
			rc = heap_replay_scale(h, rate);
		if (rc) {
			fprintf(stderr, "traceaf-bpf: %s\n",
				h->err[0] ? h->err : strerror(-rc));
			break;
		}
	}
	if (rc) {
		report_procs_free(procs, np);
		return rc;
	}
	*out = procs;
	*n = np;
	return 0;
}
