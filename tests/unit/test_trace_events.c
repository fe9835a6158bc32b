// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_trace_events - the event table is Go's: every entry's name,
 * arguments and timedness equal the specs() of each installed toolchain's
 * internal/trace/tracev2/events.go (Go 1.25+; 1.23 and 1.24 keep theirs in
 * internal/trace/event/go122 and are covered by the e2e validators), and
 * the table is consistent with itself.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "format/trace_events.h"

static const struct tw_event_spec *by_name(const char *name)
{
	for (unsigned ev = 0; ev <= TW_EV_LAST; ev++)
		if (tw_events[ev].name && !strcmp(tw_events[ev].name, name))
			return &tw_events[ev];
	return NULL;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = 0;
	fclose(f);
	return buf;
}

/* "a", "b" -> "a b"; returns how many. */
static unsigned go_args(const char *p, const char *end, char *out, size_t cap)
{
	unsigned n = 0;
	size_t len = 0;

	out[0] = 0;
	while ((p = memchr(p, '"', (size_t)(end - p))) && p < end) {
		const char *q = memchr(p + 1, '"', (size_t)(end - p - 1));

		if (!q)
			break;
		len += (size_t)snprintf(out + len, cap - len, "%s%.*s",
					n ? " " : "", (int)(q - p - 1), p + 1);
		n++;
		p = q + 1;
	}
	return n;
}

/* Checks every spec of one events.go; returns how many were compared. */
static unsigned check_go_specs(const char *src)
{
	const char *p = strstr(src, "var specs = [...]EventSpec{");
	unsigned checked = 0;

	assert_non_null(p);
	while ((p = strstr(p, "\t\tName:"))) {
		const char *q = strchr(p, '"'), *r = q ? strchr(q + 1, '"') : NULL;
		const char *blk_end = strstr(p, "\n\t},");
		const struct tw_event_spec *s;
		char name[64], args[256];
		const char *a, *aend;
		unsigned n = 0;
		bool timed;

		assert_non_null(r);
		assert_non_null(blk_end);
		snprintf(name, sizeof(name), "%.*s", (int)(r - q - 1), q + 1);
		a = strstr(p, "Args:");
		if (a && a < blk_end) {
			aend = strchr(a, '}');
			n = go_args(a, aend, args, sizeof(args));
		} else {
			args[0] = 0;
		}
		timed = (q = strstr(p, "IsTimedEvent: true")) && q < blk_end;
		s = by_name(name);
		if (!s)
			fail_msg("Go's event %s is not in the table", name);
		assert_string_equal(s->args, args);
		assert_int_equal(s->nargs, n);
		assert_int_equal(s->timed, timed);
		checked++;
		p = blk_end;
	}
	return checked;
}

static void test_table_equals_go_specs(void **state)
{
	static const char *const vers[] = { "1.25", "1.26", "1.27" };
	unsigned seen = 0;

	for (size_t i = 0; i < sizeof(vers) / sizeof(vers[0]); i++) {
		char path[128];
		char *src;

		snprintf(path, sizeof(path),
			 "/usr/lib/go-%s/src/internal/trace/tracev2/events.go",
			 vers[i]);
		src = slurp(path);
		if (!src)
			continue;
		/* Go 1.27 has every event of the table. */
		assert_true(check_go_specs(src) >= (i == 2 ? 61u : 50u));
		free(src);
		seen++;
	}
	if (!seen)
		skip();
}

static void test_table_is_consistent(void **state)
{
	unsigned named = 0;

	for (unsigned ev = 0; ev <= TW_EV_LAST; ev++) {
		const struct tw_event_spec *s = tw_event_spec(ev);
		unsigned words = 0;

		if (!s)
			continue;
		named++;
		for (const char *p = s->args; *p; p++)
			words += (p == s->args || p[-1] == ' ') && *p != ' ';
		assert_int_equal(words, s->nargs);
		/* A timed event starts with its timestamp delta. */
		assert_int_equal(s->timed, !strncmp(s->args, "dt", 2));
	}
	/* 52 of the format, 9 of AllocFree. */
	assert_int_equal(named, 61);
	for (unsigned ev = TW_EV_FIRST; ev <= TW_EV_LAST; ev++) {
		assert_true(tw_events[ev].timed);
		/* The writer's events carry one to three arguments. */
		assert_in_range(tw_events[ev].nargs, 2, 4);
	}
	assert_string_equal(tw_event_name(TW_EV_HEAP_OBJECT_ALLOC),
			    "HeapObjectAlloc");
	assert_string_equal(tw_event_name(TW_EV_FIRST - 1), "?");
	assert_null(tw_event_spec(0));
	assert_null(tw_event_spec(TW_EV_LAST + 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_equals_go_specs),
		cmocka_unit_test(test_table_is_consistent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
