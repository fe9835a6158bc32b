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

#include "trace_sink.h"
#include "trace_writer.h"

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
	o.name = "a/b";
	assert_int_equal(trace_sink_open(&o, &s), -EINVAL);
	o.name = "";
	assert_int_equal(trace_sink_open(&o, &s), -EINVAL);
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
			test_sink_removes_file_that_would_hold_only_the_header,
			setup, teardown),
		cmocka_unit_test_setup_teardown(test_sink_keeps_newest_n_files,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_sink_refuses_symlink,
						setup, teardown),
		cmocka_unit_test(test_sink_rejects_bad_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
