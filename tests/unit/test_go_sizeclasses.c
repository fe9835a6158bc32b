// SPDX-License-Identifier: BSD-3-Clause
/*
 * The built-in size class table must be the one of every installed Go
 * toolchain: read each toolchain's sizeclasses.go and compare.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "inspect/go_sizeclasses.h"

static int read_go_table(const char *path, unsigned *out, int max)
{
	static char buf[1 << 20];
	FILE *f = fopen(path, "r");
	size_t n;
	char *p;
	int count = 0;

	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strstr(buf, "class_to_size = [_NumSizeClasses]uint16{");
	if (!p)
		p = strstr(buf, "SizeClassToSize = [NumSizeClasses]uint16{");
	if (!p)
		return -1;
	p = strchr(p, '{') + 1;
	while (*p && *p != '}' && count < max) {
		out[count++] = (unsigned)strtoul(p, &p, 10);
		while (*p == ',' || *p == ' ')
			p++;
	}
	return count;
}

static void test_table_matches_every_installed_toolchain(void **state)
{
	int minor, checked = 0;

	for (minor = 21; minor <= 27; minor++) {
		unsigned t[GO_NUM_SIZE_CLASSES + 4];
		char path[128];
		int n, i;

		snprintf(path, sizeof(path),
			 "/usr/lib/go-1.%d/src/runtime/sizeclasses.go", minor);
		n = read_go_table(path, t, GO_NUM_SIZE_CLASSES + 4);
		if (n < 0) {
			snprintf(path, sizeof(path),
				 "/usr/lib/go-1.%d/src/internal/runtime/gc/sizeclasses.go",
				 minor);
			n = read_go_table(path, t, GO_NUM_SIZE_CLASSES + 4);
		}
		assert_int_equal(n, GO_NUM_SIZE_CLASSES);
		for (i = 0; i < n; i++)
			assert_int_equal(t[i], go_class_to_size[i]);
		checked++;
	}
	assert_int_equal(checked, 7);
}

static void test_span_elemsize_small_large_and_bad(void **state)
{
	assert_int_equal(go_span_elemsize(GO_TINY_SPANCLASS, 1), 16);
	assert_int_equal(go_span_elemsize(5 << 1, 1), 48);
	assert_int_equal(go_span_elemsize(0, 5), 5 * 8192);
	assert_int_equal(go_span_elemsize(1, 3), 3 * 8192);
	assert_int_equal(go_span_elemsize(68 << 1, 1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_matches_every_installed_toolchain),
		cmocka_unit_test(test_span_elemsize_small_large_and_bad),
	};
	return cmocka_run_group_tests_name("go_sizeclasses", tests, NULL, NULL);
}
