// SPDX-License-Identifier: BSD-3-Clause
/* test_sample_sidecar - F.sampling: written whole, read back, absent = full. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "format/sample_sidecar.h"

static char dir[] = "/tmp/test_sample_sidecar.XXXXXX";

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void test_round_trip(void **state)
{
	char trace[256], side[300], line[64];
	uint64_t rate = 7;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	FILE *f;

	assert_true(dfd >= 0);
	assert_int_equal(sample_sidecar_write(dfd, "p-1.trace", 524288), 0);
	close(dfd);
	path_of(trace, sizeof(trace), "p-1.trace");
	assert_int_equal(sample_sidecar_read(trace, &rate), 0);
	assert_int_equal(rate, 524288);
	/* One line, no temporary left behind. */
	snprintf(side, sizeof(side), "%s.sampling", trace);
	f = fopen(side, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_string_equal(line, "memprofilerate 524288\n");
	snprintf(side, sizeof(side), "%s.sampling.tmp", trace);
	assert_int_equal(access(side, F_OK), -1);
}

static void test_absent_is_a_full_trace(void **state)
{
	char trace[256];
	uint64_t rate = 7;

	path_of(trace, sizeof(trace), "none.trace");
	assert_int_equal(sample_sidecar_read(trace, &rate), 0);
	assert_int_equal(rate, 0);
}

static void test_malformed_is_einval(void **state)
{
	char trace[256], side[300];
	uint64_t rate = 7;
	FILE *f;

	path_of(trace, sizeof(trace), "bad.trace");
	snprintf(side, sizeof(side), "%s.sampling", trace);
	f = fopen(side, "w");
	assert_non_null(f);
	fputs("memprofilerate 0\n", f);
	fclose(f);
	assert_int_equal(sample_sidecar_read(trace, &rate), -EINVAL);
	f = fopen(side, "w");
	fputs("rate=4096\n", f);
	fclose(f);
	assert_int_equal(sample_sidecar_read(trace, &rate), -EINVAL);
}

static int setup(void **state)
{
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_absent_is_a_full_trace),
		cmocka_unit_test(test_malformed_is_einval),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
