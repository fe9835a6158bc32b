// SPDX-License-Identifier: BSD-3-Clause
/*
 * pprof_cmd: `traceaf-bpf pprof` on a trace with a stack sidecar whose
 * lifetimes and GC cycles are known: the profile's mapping and start come
 * from the sidecar's process record, and each sample's values from the
 * replay; without a sidecar the start comes from the file name.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "analysis/alloc_profile.h"
#include "analysis/report.h"
#include "format/stack_sidecar.h"
#include "format/trace_writer.h"
#include "gen/profile.pb-c.h"

typedef Perftools__Profiles__Profile pb_profile;

static const struct tw_heap_info info = {
	.min_page_heap_addr = 0xc000000000ull,
	.page_size = 8192,
	.min_heap_align = 8,
	.fixed_stack = 2048,
};

/* Span 5: one page of 48-byte slots (size class 5, scan). */
#define SPAN 5
#define KC48 (5 << 2)
#define OBJ(k) (SPAN * 1024 + (k) * 6)
#define S 1000000000ull
#define NAME "app-7-20261203T120000Z-000001.trace"
#define WALL (1764720000ull * S)

static char dir[] = "/tmp/test_pprof_cmd.XXXXXX";

static const struct stack_frame churn[] = {
	{ "main.churn", "/src/app/main.go", 12, 0x401010 },
	{ "main.main", "/src/app/main.go", 30, 0x401500 },
};
static const struct stack_frame leak[] = {
	{ "main.leak", "/src/app/main.go", 20, 0x401200 },
	{ "main.main", "/src/app/main.go", 31, 0x401508 },
};

struct ev {
	uint64_t ts;
	enum tw_event e;
	uint64_t a, b;
	const struct stack_frame *stack;  /* allocs with a stack */
};

/*
 * Times in seconds/10: c0..c2 and c3 are allocated at 0.1 s; the sweep at
 * 1 s frees c0..c2 (cycle 1 begins), c4 comes at 2 s; the sweep at 4 s
 * frees c3 (cycle 2), the one at 6 s c4 (cycle 3); c5 at 8 s ends it.
 * c0..c2 survived 0 cycles, c3 and c4 one; l0, live at the end, two.
 */
static const struct ev events[] = {
	{ S / 10, TW_EV_SPAN_ALLOC, SPAN, 1, NULL },
	{ S / 10 + 1, TW_EV_HEAP_OBJECT_ALLOC, OBJ(0), 1, churn },
	{ S / 10 + 2, TW_EV_HEAP_OBJECT_ALLOC, OBJ(1), 1, churn },
	{ S / 10 + 3, TW_EV_HEAP_OBJECT_ALLOC, OBJ(2), 1, churn },
	{ S / 10 + 4, TW_EV_HEAP_OBJECT_ALLOC, OBJ(3), 1, churn },
	{ S / 10 + 5, TW_EV_HEAP_OBJECT_ALLOC, OBJ(9), 2, leak },
	{ S, TW_EV_HEAP_OBJECT_FREE, OBJ(0), 0, NULL },
	{ S, TW_EV_HEAP_OBJECT_FREE, OBJ(1), 0, NULL },
	{ S, TW_EV_HEAP_OBJECT_FREE, OBJ(2), 0, NULL },
	{ 2 * S, TW_EV_HEAP_OBJECT_ALLOC, OBJ(4), 1, churn },
	{ 4 * S, TW_EV_HEAP_OBJECT_FREE, OBJ(3), 0, NULL },
	{ 6 * S, TW_EV_HEAP_OBJECT_FREE, OBJ(4), 0, NULL },
	{ 8 * S, TW_EV_HEAP_OBJECT_ALLOC, OBJ(5), 1, churn },
};

static uint32_t sidecar_stack(struct stack_sidecar_writer *w,
			      const struct stack_frame *f)
{
	uint32_t ids[2], sid;
	int i;

	for (i = 0; i < 2; i++)
		assert_int_equal(stack_sidecar_writer_add_frame(w, &f[i],
								&ids[i]), 0);
	assert_int_equal(stack_sidecar_writer_add_stack(w, ids, 2, &sid), 0);
	return sid;
}

/* The trace in D (and its sidecar with a process record, if SIDECAR). */
static void write_trace(const char *d, bool sidecar)
{
	static const struct stack_sidecar_process proc = {
		.exe = "/srv/app/bin/app (deleted)",
		.go_build_id = "goid",
		.gnu_build_id = "beef",
		.text_start = 0x400000,
		.text_limit = 0x480000,
		.text_offset = 0,
		.wall_ns = WALL,
		.mono_ns = S / 20,
	};
	struct stack_sidecar_writer *w = NULL;
	char path[256];
	struct tw_gen *g;
	uint64_t node, rec;
	uint8_t *buf;
	size_t len, i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/" NAME, d);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(TW_HEADER, 1, TW_HEADER_LEN, f), TW_HEADER_LEN);
	g = tw_gen_new(1, S, &info, 0);
	assert_non_null(g);
	node = tw_gen_define_type(g, 0x4a0000, 48, 48, "main.Node", 9);
	rec = tw_gen_define_type(g, 0x4a0040, 48, 48, "main.Rec", 8);
	if (sidecar) {
		assert_int_equal(stack_sidecar_writer_open(path, &w), 0);
		assert_int_equal(stack_sidecar_writer_set_process(w, &proc), 0);
	}
	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		const struct ev *e = &events[i];
		uint64_t b = e->b == 1 ? node : e->b == 2 ? rec : e->b;

		if (e->e == TW_EV_SPAN_ALLOC)
			b = 1;
		assert_int_equal(tw_gen_event(g, 1, e->e, e->ts, e->a, b,
					      e->e == TW_EV_SPAN_ALLOC ? KC48 : 0),
				 0);
		if (w && e->stack)
			assert_int_equal(stack_sidecar_writer_add_alloc(
				w, 1, e->a, e->ts, sidecar_stack(w, e->stack)), 0);
	}
	assert_int_equal(tw_gen_encode(g, &buf, &len), 0);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	free(buf);
	tw_gen_free(g);
	assert_int_equal(fclose(f), 0);
	if (w)
		assert_int_equal(stack_sidecar_writer_close(w), 0);
}

static pb_profile *run_pprof(const char *d, const char *extra)
{
	char out[256];
	char *argv[6] = { "pprof", (char *)d, "-o", out, NULL, NULL };
	uint8_t *raw = malloc(1 << 20);
	pb_profile *p;
	gzFile gz;
	int n;

	snprintf(out, sizeof(out), "%s/heap.pb.gz", d);
	if (extra)
		argv[4] = (char *)extra;
	assert_int_equal(pprof_main(extra ? 5 : 4, argv), 0);
	gz = gzopen(out, "rb");
	assert_non_null(gz);
	n = gzread(gz, raw, 1 << 20);
	gzclose(gz);
	assert_true(n > 0);
	p = perftools__profiles__profile__unpack(NULL, (size_t)n, raw);
	assert_non_null(p);
	free(raw);
	unlink(out);
	return p;
}

static int value_index(const pb_profile *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->n_sample_type; i++)
		if (!strcmp(p->string_table[p->sample_type[i]->type], name))
			return (int)i;
	fail_msg("no sample type %s", name);
	return -1;
}

/* The sample whose innermost frame is function FUNC. */
static const Perftools__Profiles__Sample *sample_of(const pb_profile *p,
						    const char *func)
{
	size_t i, j, k;

	for (i = 0; i < p->n_sample; i++) {
		uint64_t lid = p->sample[i]->location_id[0];

		for (j = 0; j < p->n_location; j++) {
			const Perftools__Profiles__Location *l = p->location[j];

			if (l->id != lid)
				continue;
			for (k = 0; k < p->n_function; k++)
				if (p->function[k]->id ==
					    l->line[0]->function_id &&
				    !strcmp(p->string_table[p->function[k]->name],
					    func))
					return p->sample[i];
		}
	}
	fail_msg("no sample at %s", func);
	return NULL;
}

static int64_t val(const pb_profile *p, const char *func, const char *type)
{
	return sample_of(p, func)->value[value_index(p, type)];
}

static void test_values_mapping_and_start_from_the_sidecar(void **state)
{
	char d[300];
	pb_profile *p;
	const Perftools__Profiles__Mapping *m;

	snprintf(d, sizeof(d), "%s/with", dir);
	assert_int_equal(mkdir(d, 0755), 0);
	write_trace(d, true);
	p = run_pprof(d, NULL);

	assert_int_equal(p->n_mapping, 1);
	m = p->mapping[0];
	/* " (deleted)" of the exe link is not part of the file's name. */
	assert_string_equal(p->string_table[m->filename], "/srv/app/bin/app");
	assert_string_equal(p->string_table[m->build_id], "beef");
	assert_int_equal(m->memory_start, 0x400000);
	assert_int_equal(m->memory_limit, 0x480000);
	assert_true(m->has_functions);
	/* First event 0.1 s, the clock pair's monotonic 0.05 s. */
	assert_true(p->time_nanos == (int64_t)(WALL + S / 20));
	assert_true(p->duration_nanos == (int64_t)(8 * S - S / 10));
	assert_string_equal(p->string_table[p->default_sample_type],
			    "inuse_space");

	assert_int_equal(val(p, "main.churn", "alloc_objects"), 6);
	assert_int_equal(val(p, "main.churn", "alloc_space"), 6 * 48);
	assert_int_equal(val(p, "main.churn", "inuse_objects"), 1);
	assert_int_equal(val(p, "main.churn", "freed_objects"), 5);
	assert_int_equal(val(p, "main.churn", "freed_space"), 5 * 48);
	assert_int_equal(val(p, "main.churn", "shortlived_objects"), 3);
	assert_int_equal(val(p, "main.churn", "shortlived_space"), 3 * 48);
	assert_int_equal(val(p, "main.churn", "survived_objects"), 0);
	/* (3 * 0.9 + 3.9 + 4 + 0) s * 48 B = 508.8 B*s. */
	assert_int_equal(val(p, "main.churn", "lifetime_space"), 509);
	assert_int_equal(val(p, "main.leak", "survived_objects"), 1);
	assert_int_equal(val(p, "main.leak", "survived_space"), 48);
	assert_int_equal(val(p, "main.leak", "shortlived_objects"), 0);
	/* 7.9 s * 48 B. */
	assert_int_equal(val(p, "main.leak", "lifetime_space"), 379);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

/* No sidecar: by type, no binary, the start from the file's name. */
static void test_without_sidecar_start_from_the_file_name(void **state)
{
	struct tm tm = { .tm_year = 2026 - 1900, .tm_mon = 11, .tm_mday = 3,
			 .tm_hour = 12 };
	char d[300];
	pb_profile *p;

	snprintf(d, sizeof(d), "%s/without", dir);
	assert_int_equal(mkdir(d, 0755), 0);
	write_trace(d, false);
	p = run_pprof(d, NULL);
	assert_true(p->time_nanos == (int64_t)timegm(&tm) * (int64_t)S);
	assert_int_equal(p->n_mapping, 1);
	assert_string_equal(p->string_table[p->mapping[0]->filename], "");
	assert_true(p->mapping[0]->has_functions);
	assert_int_equal(val(p, "main.Node", "shortlived_objects"), 3);
	assert_int_equal(val(p, "main.Rec", "survived_objects"), 1);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

static int setup(void **state)
{
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values_mapping_and_start_from_the_sidecar),
		cmocka_unit_test(test_without_sidecar_start_from_the_file_name),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
