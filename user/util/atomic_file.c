// SPDX-License-Identifier: BSD-3-Clause
/*
 * atomic_file.c - write-to-temporary-then-rename output files.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"

static void release(struct atomic_file *f)
{
	free(f->tmp_path);
	free(f->path);
	f->tmp_path = NULL;
	f->path = NULL;
	f->fd = -1;
}

int atomic_file_open(struct atomic_file *f, const char *path, mode_t mode)
{
	int err;

	f->fd = -1;
	f->err = 0;
	f->path = strdup(path);
	if (!f->path || asprintf(&f->tmp_path, "%s.tmp.XXXXXX", path) < 0) {
		f->tmp_path = NULL;
		release(f);
		return -ENOMEM;
	}
	f->fd = mkostemp(f->tmp_path, O_CLOEXEC);
	if (f->fd < 0) {
		err = -errno;
		release(f);
		return err;
	}
	/* mkostemp creates 0600; the caller's MODE is what PATH would get. */
	if (fchmod(f->fd, mode) < 0) {
		err = -errno;
		atomic_file_abort(f);
		return err;
	}
	return 0;
}

int atomic_file_write(struct atomic_file *f, const void *buf, size_t len)
{
	const char *p = buf;

	if (f->err)
		return f->err;
	while (len) {
		ssize_t n = write(f->fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			f->err = -errno;
			return f->err;
		}
		/* write(2) returns 0 only for len 0; do not spin on it. */
		if (n == 0) {
			f->err = -EIO;
			return f->err;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int atomic_file_commit(struct atomic_file *f)
{
	int err = f->err;

	/*
	 * fsync before rename: otherwise a crash can leave PATH renamed
	 * but empty on ext4/xfs.  NFS and some file systems report a
	 * failed write only here or at close, so both are checked.
	 */
	if (!err && fsync(f->fd) < 0)
		err = -errno;
	if (close(f->fd) < 0 && !err)
		err = -errno;
	f->fd = -1;
	if (!err && rename(f->tmp_path, f->path) < 0)
		err = -errno;
	if (err)
		unlink(f->tmp_path);
	release(f);
	return err;
}

void atomic_file_abort(struct atomic_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	if (f->tmp_path)
		unlink(f->tmp_path);
	release(f);
}

int atomic_file_replace_at(int dirfd, const char *name, const void *buf,
			   size_t len)
{
	const char *p = buf;
	char tmp[PATH_MAX];
	int fd, rc = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", name) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
		    O_NOFOLLOW, 0640);
	if (fd < 0)
		return -errno;
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -ENOSPC;
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && renameat(dirfd, tmp, dirfd, name))
		rc = -errno;
	if (rc)
		unlinkat(dirfd, tmp, 0);
	return rc;
}
