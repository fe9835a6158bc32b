// SPDX-License-Identifier: BSD-3-Clause
/*
 * atomic_file: PATH shows the old content or the whole new one, never a
 * part, and no temporary file outlives a failure.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/atomic_file.h"
#include "scratch_dir.h"

static int setup_tmp(void **state)
{
	return scratch_dir_new(state, "test_atomic_file", "out");
}

static int teardown_tmp(void **state)
{
	return scratch_dir_free(state);
}

static int count_entries(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

static void assert_file_is(const char *path, const char *text)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	assert_true(fgets(buf, sizeof(buf), f) || !text[0]);
	fclose(f);
	assert_string_equal(buf, text);
}

static void write_old(const char *path)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs("old\n", f);
	assert_int_equal(fclose(f), 0);
}

static void test_path_unchanged_until_commit(void **state)
{
	struct tmp *t = *state;
	struct atomic_file af;
	struct stat st;

	write_old(t->path);
	assert_int_equal(atomic_file_open(&af, t->path, 0640), 0);
	assert_int_equal(atomic_file_write(&af, "new\n", 4), 0);
	assert_file_is(t->path, "old\n");
	assert_int_equal(count_entries(t->dir), 2);
	assert_int_equal(atomic_file_commit(&af), 0);
	assert_file_is(t->path, "new\n");
	assert_int_equal(count_entries(t->dir), 1);
	/* The caller's mode, whatever the umask. */
	assert_int_equal(stat(t->path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
}

static void test_abort_leaves_old_file_only(void **state)
{
	struct tmp *t = *state;
	struct atomic_file af;

	write_old(t->path);
	assert_int_equal(atomic_file_open(&af, t->path, 0644), 0);
	assert_int_equal(atomic_file_write(&af, "half", 4), 0);
	atomic_file_abort(&af);
	assert_file_is(t->path, "old\n");
	assert_int_equal(count_entries(t->dir), 1);
}

/*
 * A write the file size limit cuts short (write(2) returns fewer bytes,
 * then EFBIG; a full disk does the same with ENOSPC): the error sticks
 * to every later write and to commit, which removes the temporary.
 */
static void test_short_write_error_is_sticky_and_cleaned_up(void **state)
{
	static char block[4096];
	struct tmp *t = *state;
	struct rlimit old, lim;
	struct atomic_file af;
	int err;

	write_old(t->path);
	memset(block, 'x', sizeof(block));
	assert_int_equal(atomic_file_open(&af, t->path, 0644), 0);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 1000;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	err = atomic_file_write(&af, block, sizeof(block));
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);

	assert_int_equal(err, -EFBIG);
	/* Room again, but the file already has a hole in its content. */
	assert_int_equal(atomic_file_write(&af, "y", 1), -EFBIG);
	assert_int_equal(atomic_file_commit(&af), -EFBIG);
	assert_file_is(t->path, "old\n");
	assert_int_equal(count_entries(t->dir), 1);
}

static void test_open_in_missing_directory_fails(void **state)
{
	struct tmp *t = *state;
	struct atomic_file af;
	char path[256];

	snprintf(path, sizeof(path), "%s/none/out", t->dir);
	assert_int_equal(atomic_file_open(&af, path, 0644), -ENOENT);
	assert_int_equal(count_entries(t->dir), 0);
}

#define TMP_TEST(f) cmocka_unit_test_setup_teardown(f, setup_tmp, teardown_tmp)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TMP_TEST(test_path_unchanged_until_commit),
		TMP_TEST(test_abort_leaves_old_file_only),
		TMP_TEST(test_short_write_error_is_sticky_and_cleaned_up),
		TMP_TEST(test_open_in_missing_directory_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
