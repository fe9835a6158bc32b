// SPDX-License-Identifier: BSD-3-Clause
/*
 * Which capabilities the up-front check asks for.  The checks against the
 * running kernel (BTF, uprobes) and real capability sets are end-to-end
 * tests: tests/e2e/test_missing_kernel_features.sh.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "attach/kernel_features.h"

#define CAP(n) (1ull << (n))
#define SYS_PTRACE 19
#define SYS_ADMIN 21
#define PERFMON 38
#define BPF 39

static void test_all_three_present_is_enough(void **state)
{
	char buf[256] = "x";

	assert_int_equal(kf_missing_caps(CAP(BPF) | CAP(PERFMON) |
					 CAP(SYS_PTRACE), true, buf,
					 sizeof(buf)), 0);
	assert_string_equal(buf, "");
}

static void test_sys_admin_stands_for_bpf_and_perfmon(void **state)
{
	char buf[256];

	assert_int_equal(kf_missing_caps(CAP(SYS_ADMIN) | CAP(SYS_PTRACE),
					 true, buf, sizeof(buf)), 0);
}

static void test_missing_bpf_is_named(void **state)
{
	char buf[256];

	assert_int_equal(kf_missing_caps(CAP(PERFMON) | CAP(SYS_PTRACE), true,
					 buf, sizeof(buf)), 1);
	assert_string_equal(buf, "CAP_BPF or CAP_SYS_ADMIN (load BPF programs)");
}

static void test_ptrace_only_needed_for_other_processes(void **state)
{
	char buf[256];

	assert_int_equal(kf_missing_caps(CAP(BPF) | CAP(PERFMON), false, buf,
					 sizeof(buf)), 0);
	assert_int_equal(kf_missing_caps(CAP(BPF) | CAP(PERFMON), true, buf,
					 sizeof(buf)), 1);
	assert_non_null(strstr(buf, "CAP_SYS_PTRACE"));
}

static void test_none_lists_all_three_in_a_short_buffer(void **state)
{
	char buf[256], small[16];

	assert_int_equal(kf_missing_caps(0, true, buf, sizeof(buf)), 3);
	assert_string_equal(buf,
		"CAP_BPF or CAP_SYS_ADMIN (load BPF programs), "
		"CAP_PERFMON or CAP_SYS_ADMIN (attach uprobes), "
		"CAP_SYS_PTRACE (read the target's executable and memory)");
	/* Truncated, still a string. */
	assert_int_equal(kf_missing_caps(0, true, small, sizeof(small)), 3);
	assert_int_equal(strlen(small), sizeof(small) - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_three_present_is_enough),
		cmocka_unit_test(test_sys_admin_stands_for_bpf_and_perfmon),
		cmocka_unit_test(test_missing_bpf_is_named),
		cmocka_unit_test(test_ptrace_only_needed_for_other_processes),
		cmocka_unit_test(test_none_lists_all_three_in_a_short_buffer),
	};
	return cmocka_run_group_tests_name("kernel_features", tests, NULL, NULL);
}
