/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * scratch_dir.h - a fresh directory under /tmp per cmocka test, with one
 * output path in it, removed with whatever the test left there (files
 * and empty subdirectories).
 */
#ifndef SCRATCH_DIR_H
#define SCRATCH_DIR_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct tmp {
	char dir[64];
	char path[128];   /* DIR/FILE, what the test writes */
};

/* *STATE = a new struct tmp: /tmp/PREFIX.XXXXXX and FILE in it. */
static inline int scratch_dir_new(void **state, const char *prefix,
				  const char *file)
{
	struct tmp *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	snprintf(t->dir, sizeof(t->dir), "/tmp/%s.XXXXXX", prefix);
	if (!mkdtemp(t->dir)) {
		free(t);
		return -1;
	}
	snprintf(t->path, sizeof(t->path), "%s/%s", t->dir, file);
	*state = t;
	return 0;
}

static inline int scratch_dir_free(void **state)
{
	struct tmp *t = *state;
	struct dirent *de;
	char p[512];
	DIR *d;

	d = opendir(t->dir);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", t->dir, de->d_name);
		if (unlink(p))
			rmdir(p);
	}
	if (d)
		closedir(d);
	rmdir(t->dir);
	free(t);
	return 0;
}

#endif /* SCRATCH_DIR_H */
