// SPDX-License-Identifier: BSD-3-Clause
/*
 * binary_ident: the Go build ID agrees with `go tool buildid`, the text
 * segment and the GNU build ID with what readelf shows, for plain and
 * PIE binaries (Go 1.23's linker writes no GNU build ID, 1.24+'s do).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "gobin.h"
#include "inspect/binary_ident.h"

#define GO_1_27 "/usr/lib/go-1.27/bin/go"

/* The first line COMMAND prints, without its newline. */
static void first_line(const char *command, char *buf, size_t len)
{
	FILE *p = popen(command, "r");

	assert_non_null(p);
	buf[0] = '\0';
	if (!fgets(buf, (int)len, p))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	pclose(p);
}

static void check(int minor, const char *flavour)
{
	struct binary_ident id;
	struct go_binary *bin = open_bin(minor, flavour);
	char path[512], cmd[1024], want[512];
	unsigned long long off, vaddr, memsz;

	assert_int_equal(binary_ident_read(bin, &id), 0);
	bin_path(path, sizeof(path), minor, flavour);
	snprintf(cmd, sizeof(cmd),
		 "GOTOOLCHAIN=local %s tool buildid %s 2>/dev/null", GO_1_27,
		 path);
	first_line(cmd, want, sizeof(want));
	assert_string_equal(id.go_build_id, want);
	snprintf(cmd, sizeof(cmd),
		 "readelf -n %s | awk '$1 == \"Build\" && $2 == \"ID:\" "
		 "{ print $3 }'", path);
	first_line(cmd, want, sizeof(want));
	assert_string_equal(id.gnu_build_id, want);
	if (minor >= 27)
		assert_int_equal(strlen(id.gnu_build_id), 40);

	/* readelf -lW: "LOAD off vaddr paddr filesz memsz flags align". */
	snprintf(cmd, sizeof(cmd),
		 "readelf -lW %s | awk '$1 == \"LOAD\" && / R E / "
		 "{ print $2, $3, $6; exit }'", path);
	first_line(cmd, want, sizeof(want));
	assert_int_equal(sscanf(want, "%llx %llx %llx", &off, &vaddr, &memsz),
			 3);
	assert_int_equal(id.text_start, vaddr & ~0xfffull);
	assert_int_equal(id.text_limit, (vaddr + memsz + 0xfff) & ~0xfffull);
	assert_int_equal(id.text_offset, off & ~0xfffull);
	assert_true(go_binary_text_start(bin) >= id.text_start &&
		    go_binary_text_start(bin) < id.text_limit);
	go_binary_close(bin);
}

static void test_plain_binary(void **state)
{
	check(23, "");
	check(27, "");
}

static void test_stripped_pie_binary(void **state)
{
	check(23, "-stripped-pie");
	check(27, "-stripped-pie");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_binary),
		cmocka_unit_test(test_stripped_pie_binary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
