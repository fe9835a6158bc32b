// SPDX-License-Identifier: BSD-3-Clause
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "format/trace_sink.h"
#include "format/trace_writer.h"

struct fixture {
	char dir[64];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	strcpy(f->dir, "/tmp/test_trace_sink.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	struct dirent *de;
	char path[512];
	DIR *d = opendir(f->dir);

	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", f->dir, de->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(f->dir);
	free(f);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names in dir ending in .trace, sorted; returns how many. */
static size_t list_traces(const char *dir, char **names, size_t max)
{
	struct dirent *de;
	size_t n = 0, l;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((de = readdir(d))) {
		l = strlen(de->d_name);
		if (l < 6 || strcmp(de->d_name + l - 6, ".trace"))
			continue;
		if (n < max)
			names[n] = strdup(de->d_name);
		n++;
	}
	closedir(d);
	qsort(names, n < max ? n : max, sizeof(*names), cmp_str);
	return n;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
}

static off_t file_size(const char *dir, const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (lstat(path, &st) < 0)
		return -1;
	return st.st_size;
}

static void read_file(const char *dir, const char *name, uint8_t *buf,
		      size_t len)
{
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "rb");
	assert_non_null(fp);
	assert_int_equal(fread(buf, 1, len, fp), len);
	fclose(fp);
}

static struct trace_sink *open_sink(const char *dir, uint64_t rotate,
				    unsigned keep)
{
	struct trace_sink_opts o = {
		.dir = dir, .name = "prog-123",
		.rotate_size = rotate, .keep_files = keep,
	};
	struct trace_sink *s;

	assert_int_equal(trace_sink_open(&o, &s), 0);
	assert_null(trace_sink_file_name(s));  /* nothing written yet */
	return s;
}

static void test_sink_creates_file_lazily(void **state)
{
	struct fixture *f = *state;
	uint8_t gen[100], got[116];
	struct trace_sink *s = open_sink(f->dir, 0, 0);
	struct trace_sink_stats st;
	char *names[4];
	unsigned y, mo, d, h, mi, sec, seq;
	char z;

	memset(gen, 0xab, sizeof(gen));
	assert_true(trace_sink_at_file_start(s));
	assert_int_equal(trace_sink_next_gen(s), 1);
	assert_int_equal(list_traces(f->dir, names, 4), 0);
	/* An empty generation creates nothing. */
	assert_int_equal(trace_sink_write_gen(s, gen, 0), 0);
	assert_int_equal(list_traces(f->dir, names, 4), 0);

	assert_int_equal(trace_sink_write_gen(s, gen, sizeof(gen)), 0);
	assert_false(trace_sink_at_file_start(s));
	assert_int_equal(trace_sink_next_gen(s), 2);
	assert_int_equal(list_traces(f->dir, names, 4), 1);
	assert_int_equal(sscanf(names[0],
				"prog-123-%4u%2u%2uT%2u%2u%2u%c-%6u.trace", &y,
				&mo, &d, &h, &mi, &sec, &z, &seq),
			 8);
	assert_int_equal(z, 'Z');
	assert_int_equal(seq, 1);
	assert_int_equal(strlen(names[0]),
			 strlen("prog-123-20260101T000000Z-000001.trace"));
	read_file(f->dir, names[0], got, sizeof(got));
	assert_memory_equal(got, TW_HEADER, TW_HEADER_LEN);
	assert_memory_equal(got + 16, gen, sizeof(gen));

	trace_sink_get_stats(s, &st);
	assert_int_equal(st.files_written, 1);
	assert_int_equal(st.gens_written, 1);
	assert_int_equal(st.bytes_written, 116);
	assert_int_equal(st.last_error, 0);
	assert_non_null(strstr(st.current_path, names[0]));
	/* The sink names the file it wrote the generation to. */
	assert_non_null(trace_sink_file_name(s));
	assert_string_equal(trace_sink_file_name(s), names[0]);
	free_names(names, 1);
	trace_sink_close(s);
}

static void test_sink_file_mode_is_0640(void **state)
{
	struct fixture *f = *state;
	struct trace_sink *s = open_sink(f->dir, 0, 0);
	uint8_t gen[8] = { 0 };
	char *names[2], path[512];
	struct stat st;
	mode_t old = umask(0);

	assert_int_equal(trace_sink_write_gen(s, gen, sizeof(gen)), 0);
	umask(old);
	assert_int_equal(list_traces(f->dir, names, 2), 1);
	snprintf(path, sizeof(path), "%s/%s", f->dir, names[0]);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0640);
	free_names(names, 1);
	trace_sink_close(s);
}

static void test_sink_rotates_at_generation_boundary(void **state)
{
	struct fixture *f = *state;
	struct trace_sink *s = open_sink(f->dir, 250, 0);
	uint8_t gen[100];
	char *names[8];
	size_t n, i;

	memset(gen, 0x11, sizeof(gen));
	/* 16 + 100 + 100 < 250 <= 16 + 3 * 100: three generations a file. */
	for (i = 0; i < 7; i++) {
		assert_int_equal(trace_sink_next_gen(s), i % 3 + 1);
		assert_int_equal(trace_sink_at_file_start(s), i % 3 == 0);
		assert_int_equal(trace_sink_write_gen(s, gen, sizeof(gen)), 0);
	}
	n = list_traces(f->dir, names, 8);
	assert_int_equal(n, 3);
	assert_int_equal(file_size(f->dir, names[0]), 316);
	assert_int_equal(file_size(f->dir, names[1]), 316);
	assert_int_equal(file_size(f->dir, names[2]), 116);
	/* Names of one sink sort in creation order: seq breaks ties. */
	for (i = 0; i < n; i++) {
		char want[32];

		snprintf(want, sizeof(want), "-%06zu.trace", i + 1);
		assert_non_null(strstr(names[i], want));
	}
	free_names(names, n);
	trace_sink_close(s);
}

/*
 * RLIMIT_FSIZE makes a write that crosses the limit short and the next one
 * fail with EFBIG (SIGXFSZ ignored): a disk filling up mid-generation.
 */
static void limit_file_size(rlim_t bytes, struct rlimit *old)
{
	struct rlimit rl;

	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, old), 0);
	rl.rlim_cur = bytes;
	rl.rlim_max = old->rlim_max;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &rl), 0);
}

static void test_sink_truncates_on_write_error(void **state)
{
	struct fixture *f = *state;
	struct trace_sink *s = open_sink(f->dir, 0, 0);
	struct trace_sink_stats st;
	static uint8_t gen1[1000], gen2[5000];
	struct rlimit old;
	char *names[4];
	uint8_t got[1016];

	memset(gen1, 1, sizeof(gen1));
	memset(gen2, 2, sizeof(gen2));
	assert_int_equal(trace_sink_write_gen(s, gen1, sizeof(gen1)), 0);
	limit_file_size(3000, &old);
	assert_int_equal(trace_sink_write_gen(s, gen2, sizeof(gen2)), -EFBIG);
	setrlimit(RLIMIT_FSIZE, &old);

	/* The file is cut back to its last whole generation. */
	assert_int_equal(list_traces(f->dir, names, 4), 1);
	assert_int_equal(file_size(f->dir, names[0]), 1016);
	read_file(f->dir, names[0], got, sizeof(got));
	assert_memory_equal(got, TW_HEADER, TW_HEADER_LEN);
	assert_memory_equal(got + 16, gen1, sizeof(gen1));

	/* The sink stays stopped, even once writing would work again. */
	assert_int_equal(trace_sink_write_gen(s, gen1, sizeof(gen1)), -EFBIG);
	assert_int_equal(list_traces(f->dir, names + 1, 3), 1);
	assert_int_equal(file_size(f->dir, names[0]), 1016);
	trace_sink_get_stats(s, &st);
	assert_int_equal(st.last_error, EFBIG);
	assert_int_equal(st.gens_written, 1);
	assert_int_equal(st.bytes_written, 1016);
	free_names(names, 2);
	trace_sink_close(s);
}

static void test_sink_cuts_a_streamed_generation_back_whole(void **state)
{
	struct fixture *f = *state;
	struct trace_sink *s = open_sink(f->dir, 0, 0);
	struct trace_sink_stats st;
	static uint8_t gen1[1000], part[700];
	struct rlimit old;
	char *names[2];
	int i, rc = 0;

	memset(gen1, 1, sizeof(gen1));
	memset(part, 2, sizeof(part));
	assert_int_equal(trace_sink_write_gen(s, gen1, sizeof(gen1)), 0);
	/* The next generation streams in pieces: they reach the file now. */
	assert_int_equal(trace_sink_append(s, part, sizeof(part)), 0);
	assert_int_equal(trace_sink_append(s, part, sizeof(part)), 0);
	assert_int_equal(list_traces(f->dir, names, 2), 1);
	assert_int_equal(file_size(f->dir, names[0]), 1016 + 1400);
	free_names(names, 1);
	trace_sink_get_stats(s, &st);
	assert_int_equal(st.gens_written, 1);  /* not whole yet */
	/* The disk fills a few pieces later. */
	limit_file_size(5000, &old);
	for (i = 0; i < 10 && rc == 0; i++)
		rc = trace_sink_append(s, part, sizeof(part));
	setrlimit(RLIMIT_FSIZE, &old);
	assert_int_equal(rc, -EFBIG);
	assert_true(i > 2);
	/* Back to the first generation, whatever the pieces that fitted. */
	assert_int_equal(list_traces(f->dir, names, 2), 1);
	assert_int_equal(file_size(f->dir, names[0]), 1016);
	assert_int_equal(trace_sink_end_gen(s), -EFBIG);
	assert_int_equal(trace_sink_append(s, part, sizeof(part)), -EFBIG);
	trace_sink_get_stats(s, &st);
	assert_int_equal(st.gens_written, 1);
	assert_int_equal(st.bytes_written, 1016);
	free_names(names, 1);
	trace_sink_close(s);
}

static void test_sink_end_of_nothing_is_no_generation(void **state)
{
	struct fixture *f = *state;
	struct trace_sink *s = open_sink(f->dir, 0, 0);
	struct trace_sink_stats st;
	char *names[2];

	assert_int_equal(trace_sink_end_gen(s), 0);
	assert_true(trace_sink_at_file_start(s));
	assert_int_equal(list_traces(f->dir, names, 2), 0);
	trace_sink_get_stats(s, &st);
	assert_int_equal(st.gens_written, 0);
	trace_sink_close(s);
}

static void test_sink_removes_file_that_would_hold_only_the_header(void **state)
{
	struct fixture *f = *state;
	struct trace_sink *s = open_sink(f->dir, 0, 0);
	struct trace_sink_stats st;
	static uint8_t gen[5000];
	struct rlimit old;
	char *names[2];

	limit_file_size(1000, &old);
	assert_int_equal(trace_sink_write_gen(s, gen, sizeof(gen)), -EFBIG);
	setrlimit(RLIMIT_FSIZE, &old);
	assert_int_equal(list_traces(f->dir, names, 2), 0);
	trace_sink_get_stats(s, &st);
	assert_int_equal(st.files_written, 0);
	assert_int_equal(st.last_error, EFBIG);
	assert_int_equal(trace_sink_write_gen(s, gen, 10), -EFBIG);
	trace_sink_close(s);
}

static void test_sink_keeps_newest_n_files(void **state)
{
	struct fixture *f = *state;
	struct trace_sink *s = open_sink(f->dir, 1, 2);
	uint8_t gen[20] = { 7 };
	char *names[8], path[512];
	size_t n, i;
	int fd;

	/* Someone else's file, with a name like ours: never ours to delete. */
	snprintf(path, sizeof(path), "%s/prog-123-20000101T000000Z-000001.trace",
		 f->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);

	for (i = 0; i < 5; i++)
		assert_int_equal(trace_sink_write_gen(s, gen, sizeof(gen)), 0);
	n = list_traces(f->dir, names, 8);
	assert_int_equal(n, 3);
	assert_string_equal(names[0], "prog-123-20000101T000000Z-000001.trace");
	assert_non_null(strstr(names[1], "-000004.trace"));
	assert_non_null(strstr(names[2], "-000005.trace"));
	free_names(names, n);
	trace_sink_close(s);
}

static void test_sink_refuses_symlink(void **state)
{
	struct fixture *f = *state;
	struct trace_sink *s;
	char victim[256], link[512], stamp[32], *names[8];
	uint8_t gen[50], got[66];
	struct stat st;
	struct tm tm;
	time_t now = time(NULL);
	size_t n, i;
	int k;

	/* Plant symlinks where this second's (and the next ones') file goes. */
	snprintf(victim, sizeof(victim), "%s/victim", f->dir);
	k = open(victim, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(k >= 0);
	close(k);
	for (k = 0; k < 3; k++) {
		time_t t = now + k;

		gmtime_r(&t, &tm);
		strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
		snprintf(link, sizeof(link), "%s/prog-123-%s-000001.trace",
			 f->dir, stamp);
		assert_int_equal(symlink(victim, link), 0);
	}

	s = open_sink(f->dir, 0, 0);
	memset(gen, 5, sizeof(gen));
	assert_int_equal(trace_sink_write_gen(s, gen, sizeof(gen)), 0);
	trace_sink_close(s);

	assert_int_equal(stat(victim, &st), 0);
	assert_int_equal(st.st_size, 0);
	n = list_traces(f->dir, names, 8);
	assert_int_equal(n, 4);
	for (i = 0; i < n; i++) {
		char path[512];

		snprintf(path, sizeof(path), "%s/%s", f->dir, names[i]);
		assert_int_equal(lstat(path, &st), 0);
		if (S_ISLNK(st.st_mode))
			continue;
		/* Ours: the next name, a regular file. */
		assert_non_null(strstr(names[i], "-000002.trace"));
		read_file(f->dir, names[i], got, sizeof(got));
		assert_memory_equal(got + 16, gen, sizeof(gen));
	}
	free_names(names, n);
}

static void test_sink_rejects_bad_options(void **state)
{
	struct trace_sink_opts o = { .dir = "/nonexistent-dir-xyz",
				     .name = "p" };
	struct trace_sink *s = (struct trace_sink *)1;

	assert_int_equal(trace_sink_open(&o, &s), -ENOENT);
	assert_null(s);
	o.dir = "/tmp";
	o.name = "";
	assert_int_equal(trace_sink_open(&o, &s), -EINVAL);
	o.dir = "";
	o.name = "p";
	assert_int_equal(trace_sink_open(&o, &s), -EINVAL);
}

/* Opens a sink on dir named "prog-123"; returns trace_sink_open's result. */
static int try_open(const char *dir, char *err, size_t errlen,
		    struct trace_sink **s)
{
	struct trace_sink_opts o = { .dir = dir, .name = "prog-123",
				     .err = err, .errlen = errlen };

	err[0] = '\0';
	return trace_sink_open(&o, s);
}

/* Writes one generation through s and closes it. */
static void write_one(struct trace_sink *s)
{
	uint8_t gen[20];

	memset(gen, 7, sizeof(gen));
	assert_int_equal(trace_sink_write_gen(s, gen, sizeof(gen)), 0);
	trace_sink_close(s);
}

/*
 * The base name comes from the target's comm: whatever it holds, the file
 * is created in the directory, under a name of [A-Za-z0-9._+-] that does
 * not start with '.', and at most 200 bytes of it are used.
 */
static void test_sink_name_is_cleaned_and_stays_in_the_directory(void **state)
{
	struct fixture *f = *state;
	struct trace_sink_opts o = { .dir = f->dir,
				     .name = "../../etc/x y\n" };
	struct trace_sink *s;
	char *names[4], longname[301];
	size_t n;

	assert_int_equal(trace_sink_open(&o, &s), 0);
	write_one(s);
	n = list_traces(f->dir, names, 4);
	assert_int_equal(n, 1);
	assert_int_equal(strncmp(names[0], "_._.._etc_x_y_-", 15), 0);
	free_names(names, n);

	memset(longname, 'a', 300);
	longname[300] = '\0';
	o.name = longname;
	assert_int_equal(trace_sink_open(&o, &s), 0);
	write_one(s);
	n = list_traces(f->dir, names, 4);
	assert_int_equal(n, 2);
	/* aaa...-YYYYmmddTHHMMSSZ-000001.trace */
	assert_int_equal(strlen(names[1]), 200 + 1 + 16 + 1 + 6 + 6);
	free_names(names, n);
}

static void test_sink_refuses_a_world_writable_directory(void **state)
{
	struct fixture *f = *state;
	struct trace_sink *s = NULL;
	char err[256];

	assert_int_equal(chmod(f->dir, 0777), 0);
	assert_int_equal(try_open(f->dir, err, sizeof(err), &s), -EPERM);
	assert_null(s);
	assert_non_null(strstr(err, "writable by every user"));
	assert_int_equal(strncmp(err, f->dir, strlen(f->dir)), 0);
}

/* Sticky like /tmp (others cannot touch our files), or group-writable. */
static void test_sink_accepts_sticky_and_group_writable_directories(void **state)
{
	struct fixture *f = *state;
	struct trace_sink *s;
	char err[256];

	assert_int_equal(chmod(f->dir, 01777), 0);
	assert_int_equal(try_open(f->dir, err, sizeof(err), &s), 0);
	trace_sink_close(s);
	assert_int_equal(chmod(f->dir, 0770), 0);
	assert_int_equal(try_open(f->dir, err, sizeof(err), &s), 0);
	trace_sink_close(s);
}

/* f->dir/real, and f->dir/link -> real owned by uid (-1: ours). */
static void make_link(const struct fixture *f, char *real, char *link,
		      size_t len, int uid)
{
	snprintf(real, len, "%s/real", f->dir);
	snprintf(link, len, "%s/link", f->dir);
	assert_int_equal(mkdir(real, 0750), 0);
	assert_int_equal(symlink("real", link), 0);
	if (uid >= 0)
		assert_int_equal(lchown(link, uid, uid), 0);
}

static void remove_link(const char *real, const char *link)
{
	char path[600];
	struct dirent *de;
	DIR *d = opendir(real);

	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", real, de->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	unlink(link);
	rmdir(real);
}

/*
 * A link another user planted (here: in a directory root owns) is not
 * followed: it could point root's files anywhere.
 */
static void test_sink_refuses_a_symlink_owned_by_another_user(void **state)
{
	struct fixture *f = *state;
	struct trace_sink *s = NULL;
	char real[512], link[512], err[256];

	if (geteuid() != 0)
		skip(); /* lchown to another user needs root */
	make_link(f, real, link, sizeof(real), 65534);
	assert_int_equal(try_open(link, err, sizeof(err), &s), -ELOOP);
	assert_null(s);
	assert_non_null(strstr(err, "symbolic link owned by another user"));
	/* With a trailing slash too (it would make open() follow it). */
	snprintf(link + strlen(link), sizeof(link) - strlen(link), "//");
	assert_int_equal(try_open(link, err, sizeof(err), &s), -ELOOP);
	link[strlen(link) - 2] = '\0';
	remove_link(real, link);
}

/*
 * Links of root, of ourselves, or of the owner of the directory holding
 * them (a user's link in their home) are followed: the files land in the
 * directory linked to.
 */
static void test_sink_follows_a_symlink_of_a_trusted_owner(void **state)
{
	struct fixture *f = *state;
	struct trace_sink *s;
	char real[512], link[512], err[256], *names[2];
	struct stat st;
	size_t n;

	make_link(f, real, link, sizeof(real), -1);
	assert_int_equal(try_open(link, err, sizeof(err), &s), 0);
	assert_int_equal(fstat(trace_sink_dirfd(s), &st), 0);
	write_one(s);
	n = list_traces(real, names, 2);
	assert_int_equal(n, 1);
	free_names(names, n);
	remove_link(real, link);

	if (geteuid() != 0)
		return;
	/* The link's owner owns the directory it is in. */
	make_link(f, real, link, sizeof(real), 65534);
	assert_int_equal(chown(f->dir, 65534, 65534), 0);
	assert_int_equal(try_open(link, err, sizeof(err), &s), 0);
	trace_sink_close(s);
	assert_int_equal(chown(f->dir, 0, 0), 0);
	remove_link(real, link);
}

static void test_sink_refuses_an_output_path_that_is_a_file(void **state)
{
	struct fixture *f = *state;
	struct trace_sink *s = NULL;
	char path[512], err[256];
	int fd;

	snprintf(path, sizeof(path), "%s/file", f->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(try_open(path, err, sizeof(err), &s), -ENOTDIR);
	assert_null(s);
	assert_non_null(strstr(err, "Not a directory"));
	unlink(path);
}

/* What a new-file hook saw: the files it was told of, in order. */
struct seen {
	char names[8][64];
	unsigned n;
	int tag;                  /* which hook, to check the call order */
	unsigned *order, *norder;
};

static void note_new_file(void *ctx, const char *name)
{
	struct seen *w = ctx;

	assert_true(w->n < 8);
	snprintf(w->names[w->n++], sizeof(w->names[0]), "%s", name);
	w->order[(*w->norder)++] = (unsigned)w->tag;
}

/*
 * Each hook hears of each file once, when the sink starts it (its header
 * on disk, before its first generation is whole), in the order added,
 * and by the name trace_sink_file_name gives once a generation is in.
 */
static void test_sink_tells_its_hooks_of_each_new_file(void **state)
{
	struct fixture *f = *state;
	struct trace_sink *s = open_sink(f->dir, 250, 0);
	unsigned order[16], norder = 0, i;
	struct seen a = { .tag = 1, .order = order, .norder = &norder };
	struct seen b = { .tag = 2, .order = order, .norder = &norder };
	uint8_t gen[100];
	char *names[4];

	memset(gen, 0x22, sizeof(gen));
	assert_int_equal(trace_sink_on_new_file(s, note_new_file, &a), 0);
	assert_int_equal(trace_sink_on_new_file(s, note_new_file, &b), 0);
	/* Nothing written, nothing started. */
	assert_int_equal(trace_sink_write_gen(s, gen, 0), 0);
	assert_int_equal(a.n, 0);
	/* Streamed: told at the first bytes, the file's header there. */
	assert_int_equal(trace_sink_append(s, gen, 10), 0);
	assert_int_equal(a.n, 1);
	assert_int_equal(list_traces(f->dir, names, 4), 1);
	assert_string_equal(a.names[0], names[0]);
	assert_int_equal(file_size(f->dir, names[0]), TW_HEADER_LEN + 10);
	free_names(names, 1);
	assert_int_equal(trace_sink_end_gen(s), 0);
	assert_string_equal(trace_sink_file_name(s), a.names[0]);
	/* Rotated by size (16 + 10 + 3 * 100 >= 250), then by hand. */
	for (i = 0; i < 3; i++)
		assert_int_equal(trace_sink_write_gen(s, gen, sizeof(gen)), 0);
	assert_int_equal(a.n, 1);
	assert_true(trace_sink_at_file_start(s));
	assert_int_equal(trace_sink_write_gen(s, gen, sizeof(gen)), 0);
	assert_int_equal(a.n, 2);
	assert_string_equal(trace_sink_file_name(s), a.names[1]);
	trace_sink_rotate(s);
	assert_int_equal(a.n, 2);
	assert_int_equal(trace_sink_write_gen(s, gen, sizeof(gen)), 0);
	assert_int_equal(a.n, 3);
	assert_int_equal(b.n, 3);
	for (i = 0; i < 3; i++)
		assert_string_equal(a.names[i], b.names[i]);
	assert_string_not_equal(a.names[1], a.names[2]);
	for (i = 0; i < norder; i++)
		assert_int_equal(order[i], i % 2 + 1);
	trace_sink_close(s);
}

static void test_sink_hooks_are_bounded(void **state)
{
	struct fixture *f = *state;
	struct trace_sink *s = open_sink(f->dir, 0, 0);
	unsigned order[1], norder = 0, i;
	struct seen a = { .order = order, .norder = &norder };

	for (i = 0; i < TRACE_SINK_MAX_HOOKS; i++)
		assert_int_equal(trace_sink_on_new_file(s, note_new_file, &a),
				 0);
	assert_int_equal(trace_sink_on_new_file(s, note_new_file, &a),
			 -ENOSPC);
	trace_sink_close(s);
}

/* The descriptor callers use for files next to the traces. */
static void test_sink_dirfd_is_the_output_directory(void **state)
{
	struct fixture *f = *state;
	struct trace_sink *s;
	struct stat a, b;
	char path[512], err[256];

	snprintf(path, sizeof(path), "%s///", f->dir);
	assert_int_equal(try_open(path, err, sizeof(err), &s), 0);
	assert_int_equal(fstat(trace_sink_dirfd(s), &a), 0);
	assert_int_equal(stat(f->dir, &b), 0);
	assert_true(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
	trace_sink_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sink_creates_file_lazily,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_sink_file_mode_is_0640,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_sink_rotates_at_generation_boundary, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_sink_truncates_on_write_error, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_sink_cuts_a_streamed_generation_back_whole, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_sink_end_of_nothing_is_no_generation, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_sink_removes_file_that_would_hold_only_the_header,
			setup, teardown),
		cmocka_unit_test_setup_teardown(test_sink_keeps_newest_n_files,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_sink_refuses_symlink,
						setup, teardown),
		cmocka_unit_test(test_sink_rejects_bad_options),
		cmocka_unit_test_setup_teardown(
			test_sink_name_is_cleaned_and_stays_in_the_directory,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_sink_refuses_a_world_writable_directory, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_sink_accepts_sticky_and_group_writable_directories,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_sink_refuses_a_symlink_owned_by_another_user,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_sink_follows_a_symlink_of_a_trusted_owner, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_sink_refuses_an_output_path_that_is_a_file, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_sink_dirfd_is_the_output_directory, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_sink_tells_its_hooks_of_each_new_file, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_sink_hooks_are_bounded,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
