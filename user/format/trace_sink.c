// SPDX-License-Identifier: BSD-3-Clause
/*
 * trace_sink.c - rotating trace files for one traced process.
 *
 * A file is "<name>-<UTC yyyymmddThhmmssZ>-<seq>.trace", created at the
 * first bytes of the first generation written to it, and holds the
 * 16-byte header followed by whole generations and, while one is being
 * streamed, the part of it written so far: a failed write is cut back to
 * the last whole generation, so every file left behind parses.  Go's
 * parsers refuse a file with no generation, so such a file is removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "format/gc_sidecar.h"
#include "format/sample_sidecar.h"
#include "format/stack_sidecar.h"
#include "trace_sink.h"
#include "format/trace_writer.h"
#include "util/grow.h"

/* Names already taken (a planted file, a clock step) are skipped. */
#define CREATE_ATTEMPTS 100
/* Of the base name: the file name adds 30 bytes, NAME_MAX is 255. */
#define NAME_KEEP 200

struct trace_sink {
	int dirfd;
	char *dir, *name;
	uint64_t rotate_size;
	unsigned keep_files;

	int fd;                  /* current file, -1 when none is open */
	uint64_t file_size;      /* bytes of whole generations in the file */
	uint64_t gen_bytes;      /* of the generation being written, after */
	uint64_t file_gens;      /* generations in the current file */
	unsigned seq;            /* of the last file name tried */
	int err;                 /* sticky -errno once a write failed */

	char **files;            /* files this sink created, oldest first */
	size_t nfiles, files_cap;

	struct {
		trace_sink_new_file_fn fn;
		void *ctx;
	} hooks[TRACE_SINK_MAX_HOOKS]; /* told of each new file */
	unsigned nhooks;

	struct trace_sink_stats st;
};

static int refuse(const struct trace_sink_opts *o, int code,
		  const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int refuse(const struct trace_sink_opts *o, int code,
		  const char *fmt, ...)
{
	va_list ap;

	if (o->err && o->errlen) {
		va_start(ap, fmt);
		vsnprintf(o->err, o->errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

/*
 * Output directory policy. The tracer runs as root; the directory is the
 * user's choice (-o), but no other user may choose where root's files land
 * or change them behind its back:
 *
 *  - The last component of the path may be a symbolic link only if root,
 *    this process's user, or the owner of the directory holding the link
 *    owns the link (fs.protected_symlinks' rule, applied whatever the
 *    sysctl says and outside sticky directories too): a link another user
 *    planted in /tmp or in a shared directory could send the files to
 *    /etc. Components before it are followed as the user wrote them.
 *  - The directory opened must not be writable by every user unless it is
 *    sticky (like /tmp): without the sticky bit anyone can rename, remove
 *    or replace the files between two writes, and rotation would then
 *    delete what they put there. A group-writable directory is trusted to
 *    its group, and one owned by another user to that user.
 *  - The path is checked and opened through the parent's descriptor, and
 *    the entry must still be the one checked after the open (-EAGAIN
 *    otherwise). From then on everything is created through the
 *    directory's descriptor with O_CREAT | O_EXCL | O_NOFOLLOW, mode 0640:
 *    a name planted in the directory is never opened, and names are made
 *    of [A-Za-z0-9._+-] only and never start with '.' (clean_name), so no
 *    file is ever created outside the directory.
 */
static int open_output_dir(const struct trace_sink_opts *o)
{
	const char *parent = ".", *base;
	struct stat lst, now, pst, st;
	char *path = strdup(o->dir), *slash;
	int pfd = -1, fd = -1, rc = 0;
	size_t n;

	if (!path)
		return -ENOMEM;
	n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
	slash = strrchr(path, '/');
	base = path;
	if (slash == path) {
		parent = "/";
		base = slash[1] ? slash + 1 : ".";
	} else if (slash) {
		*slash = '\0';
		parent = path;
		base = slash + 1;
	}
	pfd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0 || fstatat(pfd, base, &lst, AT_SYMLINK_NOFOLLOW) < 0) {
		rc = refuse(o, -errno, "%s: %s", o->dir, strerror(errno));
		goto out;
	}
	if (S_ISLNK(lst.st_mode)) {
		if (fstat(pfd, &pst) < 0) {
			rc = refuse(o, -errno, "%s: %s", o->dir,
				    strerror(errno));
			goto out;
		}
		if (lst.st_uid != 0 && lst.st_uid != geteuid() &&
		    lst.st_uid != pst.st_uid) {
			rc = refuse(o, -ELOOP,
				    "%s is a symbolic link owned by another user (uid %u); give the directory it points to",
				    o->dir, (unsigned)lst.st_uid);
			goto out;
		}
	}
	fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = refuse(o, -errno, "%s: %s", o->dir, strerror(errno));
		goto out;
	}
	/* What was checked is what was opened: the same link, or dir. */
	if (fstatat(pfd, base, &now, AT_SYMLINK_NOFOLLOW) < 0 ||
	    now.st_dev != lst.st_dev || now.st_ino != lst.st_ino ||
	    (!S_ISLNK(lst.st_mode) &&
	     (st.st_dev != lst.st_dev || st.st_ino != lst.st_ino))) {
		rc = refuse(o, -EAGAIN, "%s changed while it was being opened",
			    o->dir);
		goto out;
	}
	if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
		rc = refuse(o, -EPERM,
			    "%s is writable by every user and not sticky (mode %04o): other users could replace the trace files; use another directory or chmod o-w",
			    o->dir, (unsigned)(st.st_mode & 07777));
		goto out;
	}
out:
	if (pfd >= 0)
		close(pfd);
	if (rc && fd >= 0)
		close(fd);
	free(path);
	return rc ? rc : fd;
}

/* The base name as it goes into file names: see trace_sink_opts.name. */
static char *clean_name(const char *name)
{
	size_t n = strlen(name), i;
	char *s;

	if (n > NAME_KEEP)
		n = NAME_KEEP;
	s = strndup(name, n);
	for (i = 0; s && i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-' || c == '+') ||
		    (i == 0 && c == '.'))
			s[i] = '_';
	}
	return s;
}

int trace_sink_open(const struct trace_sink_opts *o, struct trace_sink **out)
{
	struct trace_sink *s;
	int fd;

	*out = NULL;
	if (!o || !o->dir || !*o->dir || !o->name || !*o->name)
		return -EINVAL;
	if (o->err && o->errlen)
		o->err[0] = '\0';
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->fd = -1;
	fd = open_output_dir(o);
	if (fd < 0) {
		free(s);
		return fd;
	}
	s->dirfd = fd;
	s->dir = strdup(o->dir);
	s->name = clean_name(o->name);
	if (!s->dir || !s->name) {
		close(s->dirfd);
		free(s->dir);
		free(s->name);
		free(s);
		return refuse(o, -ENOMEM, "out of memory");
	}
	s->rotate_size = o->rotate_size;
	s->keep_files = o->keep_files;
	*out = s;
	return 0;
}

int trace_sink_dirfd(const struct trace_sink *s)
{
	return s->dirfd;
}

bool trace_sink_at_file_start(const struct trace_sink *s)
{
	return s->fd < 0;
}

const char *trace_sink_file_name(const struct trace_sink *s)
{
	/* The newest file is the current one; keep_files drops old ones. */
	return s->nfiles && s->st.current_path[0] ? s->files[s->nfiles - 1] :
						    NULL;
}

int trace_sink_on_new_file(struct trace_sink *s, trace_sink_new_file_fn fn,
			   void *ctx)
{
	if (s->nhooks == TRACE_SINK_MAX_HOOKS)
		return -ENOSPC;
	s->hooks[s->nhooks].fn = fn;
	s->hooks[s->nhooks].ctx = ctx;
	s->nhooks++;
	return 0;
}

uint64_t trace_sink_next_gen(const struct trace_sink *s)
{
	return trace_sink_at_file_start(s) ? 1 : s->file_gens + 1;
}

/* Writes all of buf, retrying short writes and EINTR.  Returns 0 or -errno. */
static int write_all(int fd, const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static void close_file(struct trace_sink *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->file_size = 0;
	s->file_gens = 0;
	s->gen_bytes = 0;
}

/* Forgets the newest created file (it was removed). */
static void drop_newest(struct trace_sink *s)
{
	if (s->nfiles)
		free(s->files[--s->nfiles]);
}

/* Deletes this sink's oldest files beyond keep_files. */
static void prune(struct trace_sink *s)
{
	size_t drop, i;

	if (!s->keep_files || s->nfiles <= s->keep_files)
		return;
	drop = s->nfiles - s->keep_files;
	for (i = 0; i < drop; i++) {
		char side[PATH_MAX];

		unlinkat(s->dirfd, s->files[i], 0);
		/*
		 * Its stack sidecar (--stacks) goes with it, also one still
		 * being written (with --rotate-files 1 the previous file's
		 * is completed only after this): then it is never completed.
		 */
		if ((size_t)snprintf(side, sizeof(side), "%s%s", s->files[i],
				     STACK_SIDECAR_SUFFIX) < sizeof(side))
			unlinkat(s->dirfd, side, 0);
		if ((size_t)snprintf(side, sizeof(side), "%s%s.tmp",
				     s->files[i], STACK_SIDECAR_SUFFIX) <
		    sizeof(side))
			unlinkat(s->dirfd, side, 0);
		/* And its sampling note (--memprofilerate) and GC marks. */
		if ((size_t)snprintf(side, sizeof(side), "%s%s", s->files[i],
				     SAMPLE_SIDECAR_SUFFIX) < sizeof(side))
			unlinkat(s->dirfd, side, 0);
		if ((size_t)snprintf(side, sizeof(side), "%s%s", s->files[i],
				     GC_SIDECAR_SUFFIX) < sizeof(side))
			unlinkat(s->dirfd, side, 0);
		free(s->files[i]);
	}
	memmove(s->files, s->files + drop,
		(s->nfiles - drop) * sizeof(*s->files));
	s->nfiles -= drop;
}

/*
 * Creates the next file.  O_EXCL|O_NOFOLLOW: never open anything that is
 * already there, a symlink planted at our name least of all.
 */
static int open_file(struct trace_sink *s)
{
	char fname[512], stamp[32];
	struct tm tm;
	time_t now;
	char *copy;
	int i, fd = -1;

	if (!GROW(s->files, s->nfiles, s->files_cap, 16))
		return -ENOMEM;
	now = time(NULL);
	if (!gmtime_r(&now, &tm) ||
	    !strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm))
		return -EINVAL;
	for (i = 0; i < CREATE_ATTEMPTS; i++) {
		if (snprintf(fname, sizeof(fname), "%s-%s-%06u.trace",
			     s->name, stamp, ++s->seq) >= (int)sizeof(fname))
			return -ENAMETOOLONG;
		fd = openat(s->dirfd, fname,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				    O_CLOEXEC,
			    0640);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0)
		return -errno;
	copy = strdup(fname);
	if (!copy) {
		close(fd);
		unlinkat(s->dirfd, fname, 0);
		return -ENOMEM;
	}
	s->files[s->nfiles++] = copy;
	s->fd = fd;
	s->file_size = 0;
	s->file_gens = 0;
	snprintf(s->st.current_path, sizeof(s->st.current_path), "%s/%s",
		 s->dir, fname);
	return 0;
}

/*
 * Stops the sink after a failed write: the file goes back to its last
 * whole generation, or away when it had none.
 */
static int fail(struct trace_sink *s, int err)
{
	if (s->fd >= 0) {
		if (s->file_gens == 0) {
			close(s->fd);
			s->fd = -1;
			unlinkat(s->dirfd, s->files[s->nfiles - 1], 0);
			drop_newest(s);
			s->st.current_path[0] = '\0';
		} else if (ftruncate(s->fd, (off_t)s->file_size) < 0) {
			/*
			 * Rare (the write's error still says why we stopped):
			 * the file keeps a partial generation at its end.
			 */
		}
	}
	close_file(s);
	s->err = err;
	s->st.last_error = -err;
	return err;
}

int trace_sink_append(struct trace_sink *s, const uint8_t *buf, size_t len)
{
	unsigned i;
	int err;

	if (s->err)
		return s->err;
	if (len == 0)
		return 0;
	if (s->fd < 0) {
		err = open_file(s);
		if (err)
			return fail(s, err);
		err = write_all(s->fd, (const uint8_t *)TW_HEADER,
				TW_HEADER_LEN);
		if (err)
			return fail(s, err);
		/* What a cut back keeps once a generation is whole. */
		s->file_size = TW_HEADER_LEN;
		for (i = 0; i < s->nhooks; i++)
			s->hooks[i].fn(s->hooks[i].ctx,
				       s->files[s->nfiles - 1]);
	}
	err = write_all(s->fd, buf, len);
	if (err)
		return fail(s, err);
	s->gen_bytes += len;
	return 0;
}

/* The trace_writer output that streams a generation here. */
int trace_sink_write_cb(void *sink, const uint8_t *buf, size_t len)
{
	return trace_sink_append(sink, buf, len);
}

int trace_sink_end_gen(struct trace_sink *s)
{
	if (s->err)
		return s->err;
	if (!s->gen_bytes)
		return 0;
	if (s->file_gens == 0) {
		/* The file now holds a generation: it counts, and is kept. */
		s->st.files_written++;
		s->st.bytes_written += TW_HEADER_LEN;
		prune(s);
	}
	s->file_size += s->gen_bytes;
	s->st.bytes_written += s->gen_bytes;
	s->gen_bytes = 0;
	s->file_gens++;
	s->st.gens_written++;
	/* Rotate at the generation boundary: the next one opens a file. */
	if (s->rotate_size && s->file_size >= s->rotate_size)
		close_file(s);
	return 0;
}

int trace_sink_write_gen(struct trace_sink *s, const uint8_t *buf, size_t len)
{
	int err = trace_sink_append(s, buf, len);

	return err ? err : trace_sink_end_gen(s);
}

void trace_sink_rotate(struct trace_sink *s)
{
	close_file(s);
}

void trace_sink_close(struct trace_sink *s)
{
	size_t i;

	if (!s)
		return;
	close_file(s);
	for (i = 0; i < s->nfiles; i++)
		free(s->files[i]);
	free(s->files);
	close(s->dirfd);
	free(s->dir);
	free(s->name);
	free(s);
}

void trace_sink_get_stats(const struct trace_sink *s,
			  struct trace_sink_stats *st)
{
	*st = s->st;
}
