// SPDX-License-Identifier: BSD-3-Clause
/*
 * report_html_write: the page escapes every name, loads nothing, picks
 * human units, keeps spikes when it thins out points, and is written
 * whole or not at all.  (tests/e2e/test_report_html.sh renders it.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/report_html.h"
#include "scratch_dir.h"

#define MIB (1024ull * 1024)

static int setup_tmp(void **state)
{
	return scratch_dir_new(state, "test_report_html", "heap.html");
}

static int teardown_tmp(void **state)
{
	return scratch_dir_free(state);
}

/* Entries of DIR (but . and ..). */
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

static char *read_all(const char *path)
{
	struct stat st;
	char *buf;
	FILE *f;

	assert_int_equal(stat(path, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	assert_non_null(buf);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fread(buf, 1, (size_t)st.st_size, f),
			 (size_t)st.st_size);
	fclose(f);
	buf[st.st_size] = '\0';
	return buf;
}

static void assert_contains(const char *haystack, const char *needle)
{
	if (!strstr(haystack, needle))
		fail_msg("\"%s\" not in the page", needle);
}

static void assert_lacks(const char *haystack, const char *needle)
{
	if (strstr(haystack, needle))
		fail_msg("\"%s\" in the page", needle);
}

static const double t3[] = { 0.0, 1.0, 2.0 };

static void test_names_and_title_are_escaped(void **state)
{
	static const uint64_t v[] = { 1, 2, 3 };
	static const struct heap_series s[] = {
		{ "<script>alert(\"x\")</script> & 'y'", v },
		{ "main.Pair[go.shape.*uint8,main.T]", v },
	};
	const struct heap_picture pic = {
		.title = "a<b>&c", .npoints = 3, .t_sec = t3,
		.nseries = 2, .series = s,
	};
	struct tmp *t = *state;
	char *page;

	assert_int_equal(report_html_write(&pic, t->path), 0);
	page = read_all(t->path);
	assert_contains(page, "&lt;script&gt;alert(&quot;x&quot;)"
			      "&lt;/script&gt; &amp; &#39;y&#39;");
	assert_contains(page, "main.Pair[go.shape.*uint8,main.T]");
	assert_contains(page, "<title>Live heap: a&lt;b&gt;&amp;c</title>");
	assert_lacks(page, "<script");
	assert_lacks(page, "a<b>");
	free(page);
}

/* Opens offline: no script, no stylesheet or image, no URL but xmlns. */
static void test_page_loads_nothing(void **state)
{
	static const uint64_t v[] = { 10 * MIB, 20 * MIB, 30 * MIB };
	static const struct heap_series s[] = { { "[]uint8", v } };
	const struct heap_picture pic = {
		.title = "t", .npoints = 3, .t_sec = t3, .nseries = 1,
		.series = s, .total_live_bytes = v,
	};
	static const char *const banned[] = {
		"<script", "<link", "<img", "<iframe", "@import", "url(",
		"src=", "href=", "https:",
	};
	struct tmp *t = *state;
	const char *p;
	char *page;
	size_t i;

	assert_int_equal(report_html_write(&pic, t->path), 0);
	page = read_all(t->path);
	for (i = 0; i < sizeof(banned) / sizeof(banned[0]); i++)
		assert_lacks(page, banned[i]);
	for (p = page; (p = strstr(p, "http:")); p++)
		assert_int_equal(strncmp(p, "http://www.w3.org/2000/svg\"",
					 27), 0);
	assert_contains(page, "<!DOCTYPE html>");
	assert_contains(page, "</svg>\n<table>");
	assert_contains(page, "</html>\n");
	free(page);
}

/* Axis ticks in the peak's binary unit; seconds on the time axis. */
static void test_axis_units_follow_the_peak(void **state)
{
	static const uint64_t gib[] = { 0, 1536 * MIB, 3 * 1024 * MIB };
	static const uint64_t kib[] = { 0, 300 * 1024, 600 * 1024 };
	static const uint64_t bytes[] = { 0, 400, 900 };
	static const struct {
		const uint64_t *v;
		const char *tick, *peak;
	} cases[] = {
		{ gib, ">1 GiB</text>", ">3.00 GiB</td>" },
		{ kib, ">200 KiB</text>", ">600 KiB</td>" },
		{ bytes, ">200 B</text>", ">900 B</td>" },
	};
	struct tmp *t = *state;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct heap_series s = { "T", cases[i].v };
		const struct heap_picture pic = {
			.title = "u", .npoints = 3, .t_sec = t3,
			.nseries = 1, .series = &s,
		};
		char *page;

		assert_int_equal(report_html_write(&pic, t->path), 0);
		page = read_all(t->path);
		assert_contains(page, cases[i].tick);
		assert_contains(page, cases[i].peak);
		assert_contains(page, ">0.5 s</text>");
		assert_contains(page, ">2.0 s</text>");
		free(page);
	}
}

/*
 * 200000 points, one 10 MiB spike among 1 MiB: the page stays small, and
 * the spike is still drawn (at the top of the plot, y 34.0, below the
 * GC strip), and the hover bands are per pixel column, not per point.
 */
static void test_many_points_are_thinned_but_keep_spikes(void **state)
{
	enum { N = 200000 };
	double *t_sec = calloc(N, sizeof(*t_sec));
	uint64_t *v = calloc(N, sizeof(*v));
	const struct heap_series s = { "*main.node", v };
	const struct heap_picture pic = {
		.title = "many", .npoints = N, .t_sec = t_sec,
		.nseries = 1, .series = &s,
	};
	struct tmp *t = *state;
	struct stat st;
	char *page;
	size_t i;

	assert_true(t_sec && v);
	for (i = 0; i < N; i++) {
		t_sec[i] = i * 0.001;
		v[i] = i == 123457 ? 10 * MIB : MIB;
	}
	assert_int_equal(report_html_write(&pic, t->path), 0);
	assert_int_equal(stat(t->path, &st), 0);
	/* About 330 hover bands of ~100 bytes come on top of the lines. */
	assert_true(st.st_size < 80 * 1024);
	page = read_all(t->path);
	assert_contains(page, ",34.0 ");
	assert_contains(page, ">10.0 MiB</td>");
	free(page);
	free(v);
	free(t_sec);
}

static void test_no_points_gives_page_that_says_so(void **state)
{
	const struct heap_picture pic = { .title = "idle" };
	struct tmp *t = *state;
	char *page;

	assert_int_equal(report_html_write(&pic, t->path), 0);
	page = read_all(t->path);
	assert_contains(page, "No heap samples");
	assert_lacks(page, "<svg");
	assert_contains(page, "</html>\n");
	free(page);
}

static void test_one_point_is_drawn_as_a_dot(void **state)
{
	static const double t1[] = { 5.0 };
	static const uint64_t v[] = { 4096 };
	const struct heap_series s = { "T", v };
	const struct heap_picture pic = {
		.npoints = 1, .t_sec = t1, .nseries = 1, .series = &s,
	};
	struct tmp *t = *state;
	char *page;

	assert_int_equal(report_html_write(&pic, t->path), 0);
	page = read_all(t->path);
	assert_contains(page, "<circle ");
	free(page);
}

static void test_time_running_backwards_is_rejected(void **state)
{
	static const double back[] = { 0.0, 2.0, 1.0 };
	static const uint64_t v[] = { 1, 2, 3 };
	const struct heap_series s = { "T", v };
	const struct heap_picture pic = {
		.npoints = 3, .t_sec = back, .nseries = 1, .series = &s,
	};
	struct tmp *t = *state;

	assert_int_equal(report_html_write(&pic, t->path), -EINVAL);
	assert_int_equal(report_html_write(NULL, t->path), -EINVAL);
	assert_int_equal(count_entries(t->dir), 0);
}

static void test_replaces_file_atomically_with_mode_0644(void **state)
{
	static const uint64_t v[] = { 1, 2, 3 };
	const struct heap_series s = { "T", v };
	const struct heap_picture pic = {
		.npoints = 3, .t_sec = t3, .nseries = 1, .series = &s,
	};
	struct tmp *t = *state;
	struct stat st;
	char *page;
	FILE *f;

	f = fopen(t->path, "w");
	assert_non_null(f);
	fputs("old", f);
	fclose(f);
	assert_int_equal(report_html_write(&pic, t->path), 0);
	page = read_all(t->path);
	assert_contains(page, "<!DOCTYPE html>");
	free(page);
	assert_int_equal(stat(t->path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(count_entries(t->dir), 1);

	/* rename(2) onto a directory fails: no temporary is left behind. */
	assert_int_equal(unlink(t->path), 0);
	assert_int_equal(mkdir(t->path, 0755), 0);
	assert_int_equal(report_html_write(&pic, t->path), -EISDIR);
	assert_int_equal(count_entries(t->dir), 1);
}

#define TMP_TEST(f) cmocka_unit_test_setup_teardown(f, setup_tmp, teardown_tmp)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TMP_TEST(test_names_and_title_are_escaped),
		TMP_TEST(test_page_loads_nothing),
		TMP_TEST(test_axis_units_follow_the_peak),
		TMP_TEST(test_many_points_are_thinned_but_keep_spikes),
		TMP_TEST(test_no_points_gives_page_that_says_so),
		TMP_TEST(test_one_point_is_drawn_as_a_dot),
		TMP_TEST(test_time_running_backwards_is_rejected),
		TMP_TEST(test_replaces_file_atomically_with_mode_0644),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
