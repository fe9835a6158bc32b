/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * atomic_file.h - an output file that appears at its path whole or not at
 * all: written to a temporary file in the same directory (so the final
 * rename(2) stays on one file system and is atomic), synced, then renamed
 * over PATH.  Used by the exporters (pprof profile, HTML picture), whose
 * readers must never see half a file after a full disk or a crash.
 */
#ifndef ATOMIC_FILE_H
#define ATOMIC_FILE_H

#include <stddef.h>
#include <sys/types.h>

struct atomic_file {
	int fd;             /* of the temporary file; -1 when closed */
	char *tmp_path;     /* PATH.tmp.XXXXXX */
	char *path;
	int err;            /* first write error (negative errno), sticky */
};

/*
 * Creates the temporary file beside PATH with permissions MODE (not
 * subject to the umask, as the caller states the final mode).  Returns 0
 * or a negative errno.
 */
int atomic_file_open(struct atomic_file *f, const char *path, mode_t mode);

/*
 * Appends LEN bytes, retrying short writes and EINTR.  Returns 0 or a
 * negative errno (-ENOSPC, -EFBIG, -EIO...); after an error every later
 * call fails with the same error and commit removes the temporary file.
 */
int atomic_file_write(struct atomic_file *f, const void *buf, size_t len);

/*
 * Syncs, closes and renames the file to its PATH.  On any error (also an
 * earlier write error) the temporary file is removed and PATH is left as
 * it was.  Returns 0 or a negative errno; F is released either way.
 */
int atomic_file_commit(struct atomic_file *f);

/* Removes the temporary file and releases F (nothing appears at PATH). */
void atomic_file_abort(struct atomic_file *f);

/*
 * A small file NAME in directory DIRFD replaced whole by LEN bytes: written
 * to NAME.tmp (O_NOFOLLOW, mode 0640) and renamed, so a reader never sees
 * part of it; not synced (the trace sidecars, rewritten often).  0 or a
 * negative errno; on error NAME is left as it was.
 */
int atomic_file_replace_at(int dirfd, const char *name, const void *buf,
			   size_t len);

#endif /* ATOMIC_FILE_H */
