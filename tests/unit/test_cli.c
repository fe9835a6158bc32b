// SPDX-License-Identifier: BSD-3-Clause
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <fcntl.h>
#include <unistd.h>

#include "trace/cli.h"

/* cli_parse prints usage errors on stderr: keep the test log readable. */
static enum cli_result quiet_parse(int argc, char **argv, struct taf_options *o)
{
	int saved = dup(2), devnull = open("/dev/null", O_WRONLY);
	enum cli_result r;

	dup2(devnull, 2);
	r = cli_parse(argc, argv, o);
	dup2(saved, 2);
	close(saved);
	close(devnull);
	return r;
}

static void test_duration_units(void **state)
{
	uint64_t ns;

	assert_int_equal(parse_duration_ns("1.5s", &ns), 0);
	assert_int_equal(ns, 1500000000ull);
	assert_int_equal(parse_duration_ns("250ms", &ns), 0);
	assert_int_equal(ns, 250000000ull);
	assert_int_equal(parse_duration_ns("2m", &ns), 0);
	assert_int_equal(ns, 120000000000ull);
	assert_int_equal(parse_duration_ns("90", &ns), 0);
	assert_int_equal(ns, 90000000000ull);
}

static void test_duration_rejects_garbage(void **state)
{
	uint64_t ns;

	assert_int_not_equal(parse_duration_ns("", &ns), 0);
	assert_int_not_equal(parse_duration_ns("-1s", &ns), 0);
	assert_int_not_equal(parse_duration_ns("10 s", &ns), 0);
	assert_int_not_equal(parse_duration_ns("10parsecs", &ns), 0);
	assert_int_not_equal(parse_duration_ns("1e30h", &ns), 0);
}

static void test_size_units(void **state)
{
	uint64_t b;

	assert_int_equal(parse_size("4096", &b), 0);
	assert_int_equal(b, 4096);
	assert_int_equal(parse_size("64K", &b), 0);
	assert_int_equal(b, 65536);
	assert_int_equal(parse_size("256MiB", &b), 0);
	assert_int_equal(b, 256ull << 20);
	assert_int_equal(parse_size("1G", &b), 0);
	assert_int_equal(b, 1ull << 30);
	assert_int_not_equal(parse_size("1X", &b), 0);
	assert_int_not_equal(parse_size("-5", &b), 0);
	assert_int_not_equal(parse_size("99999999999999999999T", &b), 0);
}

static void test_pid_and_defaults(void **state)
{
	char *argv[] = { "traceaf-bpf", "-p", "123", NULL };
	struct taf_options o;

	assert_int_equal(quiet_parse(3, argv, &o), CLI_RUN);
	assert_int_equal(o.pid, 123);
	assert_string_equal(o.output_dir, "./traceaf-out");
	assert_int_equal(o.gen_period_ns, 1000000000ull);
	assert_int_equal(o.duration_ns, 0);
	assert_false(o.tiny_as_runtime);
}

static void test_tiny_as_runtime(void **state)
{
	char *on[] = { "traceaf-bpf", "--tiny-as-runtime", "-p", "1", NULL };
	char *clash[] = { "traceaf-bpf", "--tiny-as-runtime",
			  "--memprofilerate", "512K", "-p", "1", NULL };
	struct taf_options o;

	assert_int_equal(quiet_parse(4, on, &o), CLI_RUN);
	assert_true(o.tiny_as_runtime);
	/* Sampled records have no tiny blocks to shape. */
	assert_int_equal(quiet_parse(6, clash, &o), CLI_ERROR);
}

static void test_long_options(void **state)
{
	char *argv[] = { "traceaf-bpf", "--pid=9", "-o", "/tmp/x",
			 "--duration", "3s", "--generation-period", "200ms",
			 "--rotate-size", "1M", "--rotate-files", "4", "-vv", NULL };
	struct taf_options o;

	assert_int_equal(quiet_parse(13, argv, &o), CLI_RUN);
	assert_int_equal(o.pid, 9);
	assert_string_equal(o.output_dir, "/tmp/x");
	assert_int_equal(o.duration_ns, 3000000000ull);
	assert_int_equal(o.gen_period_ns, 200000000ull);
	assert_int_equal(o.rotate_size, 1 << 20);
	assert_int_equal(o.rotate_files, 4);
	assert_int_equal(o.verbose, 2);
}

static void test_missing_target_is_usage_error(void **state)
{
	char *argv[] = { "traceaf-bpf", "-o", "x", NULL };
	struct taf_options o;

	assert_int_equal(quiet_parse(3, argv, &o), CLI_ERROR);
}

static void test_bad_pid_is_usage_error(void **state)
{
	char *argv[] = { "traceaf-bpf", "-p", "12ab", NULL };
	struct taf_options o;

	assert_int_equal(quiet_parse(3, argv, &o), CLI_ERROR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration_units),
		cmocka_unit_test(test_duration_rejects_garbage),
		cmocka_unit_test(test_size_units),
		cmocka_unit_test(test_pid_and_defaults),
		cmocka_unit_test(test_long_options),
		cmocka_unit_test(test_tiny_as_runtime),
		cmocka_unit_test(test_missing_target_is_usage_error),
		cmocka_unit_test(test_bad_pid_is_usage_error),
	};
	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
