// SPDX-License-Identifier: BSD-3-Clause
/*
 * pprof_write: the profile is gzip, decodes with protobuf-c into the
 * values, mapping, comments and times given, calls inlined at one PC
 * become one location, and Go 1.27's `go tool pprof` reads it and shows
 * them without trying to symbolize (no "Main binary filename" warning).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "analysis/alloc_profile.h"
#include "gen/profile.pb-c.h"
#include "scratch_dir.h"

#define GO_1_27 "/usr/lib/go-1.27/bin/go"

/*
 * Two stacks that share their outer frame (main.main), one of them twice
 * as deep, and a third sample without a type, as the analysis gives them.
 */
static const struct stack_frame leak_stack[] = {
	{ "main.leakNode", "/src/app/main.go", 17, 0x4a1010 },
	{ "main.main", "/src/app/main.go", 40, 0x4a2020 },
};

static const struct stack_frame churn_stack[] = {
	{ "main.churnBytes", "/src/app/churn.go", 9, 0x4a3030 },
	{ "main.work", "/src/app/churn.go", 22, 0x4a4040 },
	{ "main.main", "/src/app/main.go", 41, 0x4a2028 },
};

static const struct stack_frame untyped_stack[] = {
	{ "main.leakNode", "/src/app/main.go", 17, 0x4a1010 },
	{ "main.main", "/src/app/main.go", 40, 0x4a2020 },
};

/* The values in enum alloc_profile_value order. */
#define V(ao, as, io, is, fo, fs, so, ss, vo, vs, life)                     \
	{ ao, as, io, is, fo, fs, so, ss, vo, vs, life }

static const struct alloc_profile_sample samples[] = {
	{ leak_stack, 2, "*main.node", 1,
	  V(300, 19200, 280, 17920, 20, 1280, 0, 0, 250, 16000, 40000) },
	{ churn_stack, 3, "[]uint8", 1,
	  V(5000, 5120000, 3, 3072, 4997, 5116928, 4990, 5109760, 0, 0, 12) },
	{ untyped_stack, 2, NULL, 1,
	  V(7, 700, 1, 100, 6, 600, 6, 600, 1, 100, 50) },
};

static const struct alloc_profile_mapping app_mapping = {
	.file = "/srv/app/bin/app",
	.build_id = "0aeca0df9b7750f3380792954f9f5be7645699d0",
	.start = 0x400000,
	.limit = 0x4b0000,
	.offset = 0,
};

static const char *const comments[] = {
	"traceaf-bpf: app-1, 12 GC cycles (estimated from sweeps)",
};

static const struct alloc_profile profile = {
	.samples = samples,
	.nsamples = 3,
	.mappings = &app_mapping,
	.nmappings = 1,
	.comments = comments,
	.ncomments = 1,
	.time_nanos = 1764720000123456789LL,
	.duration_nanos = 2500000000LL,
};

static const char *const type_names[AP_NVALUES][2] = {
	{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
	{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
	{ "freed_objects", "count" }, { "freed_space", "bytes" },
	{ "shortlived_objects", "count" }, { "shortlived_space", "bytes" },
	{ "survived_objects", "count" }, { "survived_space", "bytes" },
	{ "lifetime_space", "byte-seconds" },
};

static int setup_tmp(void **state)
{
	return scratch_dir_new(state, "test_pprof_write", "heap.pb.gz");
}

static int teardown_tmp(void **state)
{
	return scratch_dir_free(state);
}

/* Names of the entries of DIR, sorted, joined by spaces. */
static void dir_listing(const char *dir, char *buf, size_t len)
{
	struct dirent **names;
	int i, n;

	buf[0] = '\0';
	n = scandir(dir, &names, NULL, alphasort);
	assert_true(n >= 0);
	for (i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.') {
			strncat(buf, names[i]->d_name, len - strlen(buf) - 2);
			strcat(buf, " ");
		}
		free(names[i]);
	}
	free(names);
}

/* The whole file, gunzipped. */
static uint8_t *gunzip_file(const char *path, size_t *len)
{
	size_t cap = 1 << 16;
	uint8_t *buf = malloc(cap);
	gzFile gz = gzopen(path, "rb");
	int n;

	assert_non_null(gz);
	assert_non_null(buf);
	*len = 0;
	while ((n = gzread(gz, buf + *len, (unsigned)(cap - *len))) > 0) {
		*len += (size_t)n;
		if (*len == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	assert_int_equal(n, 0);
	gzclose(gz);
	return buf;
}

static Perftools__Profiles__Profile *read_profile(const char *path)
{
	Perftools__Profiles__Profile *p;
	uint8_t magic[2];
	size_t len;
	uint8_t *raw;
	FILE *f;

	/* gzopen also reads plain files; insist on the gzip magic. */
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(magic, 1, 2, f), 2);
	fclose(f);
	assert_int_equal(magic[0], 0x1f);
	assert_int_equal(magic[1], 0x8b);

	raw = gunzip_file(path, &len);
	p = perftools__profiles__profile__unpack(NULL, len, raw);
	free(raw);
	assert_non_null(p);
	return p;
}

static const char *str_at(const Perftools__Profiles__Profile *p, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < p->n_string_table);
	return p->string_table[i];
}

static const Perftools__Profiles__Location *
location(const Perftools__Profiles__Profile *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->n_location; i++)
		if (p->location[i]->id == id)
			return p->location[i];
	fail_msg("no location %llu", (unsigned long long)id);
	return NULL;
}

static const Perftools__Profiles__Function *
function(const Perftools__Profiles__Profile *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->n_function; i++)
		if (p->function[i]->id == id)
			return p->function[i];
	fail_msg("no function %llu", (unsigned long long)id);
	return NULL;
}

static void test_writes_gzip_that_decodes_to_the_same_values(void **state)
{
	struct tmp *t = *state;
	Perftools__Profiles__Profile *p;
	const Perftools__Profiles__Mapping *m;
	size_t i, j;

	assert_int_equal(pprof_write(&profile, t->path), 0);
	p = read_profile(t->path);

	assert_true(p->n_string_table > 0);
	assert_string_equal(p->string_table[0], "");
	assert_int_equal(p->n_sample_type, AP_NVALUES);
	for (i = 0; i < AP_NVALUES; i++) {
		assert_string_equal(str_at(p, p->sample_type[i]->type),
				    type_names[i][0]);
		assert_string_equal(str_at(p, p->sample_type[i]->unit),
				    type_names[i][1]);
	}
	/* The binary, marked symbolized so pprof does not look again. */
	assert_int_equal(p->n_mapping, 1);
	m = p->mapping[0];
	assert_int_equal(m->id, 1);
	assert_string_equal(str_at(p, m->filename), app_mapping.file);
	assert_string_equal(str_at(p, m->build_id), app_mapping.build_id);
	assert_int_equal(m->memory_start, 0x400000);
	assert_int_equal(m->memory_limit, 0x4b0000);
	assert_int_equal(m->file_offset, 0);
	assert_true(m->has_functions && m->has_filenames &&
		    m->has_line_numbers && m->has_inline_frames);
	assert_int_equal(p->n_comment, 1);
	assert_string_equal(str_at(p, p->comment[0]), comments[0]);
	/* A string index, not a position in sample_type (protomem.go). */
	assert_string_equal(str_at(p, p->default_sample_type), "inuse_space");
	assert_string_equal(str_at(p, p->period_type->type), "space");
	assert_string_equal(str_at(p, p->period_type->unit), "bytes");
	assert_int_equal(p->period, 1);
	assert_int_equal(p->time_nanos, profile.time_nanos);
	assert_int_equal(p->duration_nanos, profile.duration_nanos);

	/* leakNode, main (2 lines) and churnBytes, work: 5 locations. */
	assert_int_equal(p->n_location, 5);
	assert_int_equal(p->n_function, 4);

	assert_int_equal(p->n_sample, 3);
	for (i = 0; i < 3; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		const struct alloc_profile_sample *want = &samples[i];

		assert_int_equal(s->n_value, AP_NVALUES);
		assert_memory_equal(s->value, want->v, sizeof(want->v));
		assert_int_equal(s->n_location_id, want->nframes);
		for (j = 0; j < want->nframes; j++) {
			const Perftools__Profiles__Location *l =
				location(p, s->location_id[j]);
			const Perftools__Profiles__Function *f;

			assert_int_equal(l->address, want->frames[j].pc);
			assert_int_equal(l->mapping_id, 1);
			assert_int_equal(l->n_line, 1);
			assert_int_equal(l->line[0]->line,
					 want->frames[j].line);
			f = function(p, l->line[0]->function_id);
			assert_string_equal(str_at(p, f->name),
					    want->frames[j].func);
			assert_string_equal(str_at(p, f->filename),
					    want->frames[j].file);
		}
		if (!want->type_name) {
			assert_int_equal(s->n_label, 0);
			continue;
		}
		assert_int_equal(s->n_label, 1);
		assert_string_equal(str_at(p, s->label[0]->key), "type");
		assert_string_equal(str_at(p, s->label[0]->str),
				    want->type_name);
	}
	/* Equal stacks share their location IDs. */
	assert_memory_equal(p->sample[0]->location_id,
			    p->sample[2]->location_id, 2 * sizeof(uint64_t));

	/* Every string once. */
	for (i = 0; i < p->n_string_table; i++)
		for (j = i + 1; j < p->n_string_table; j++)
			assert_string_not_equal(p->string_table[i],
						p->string_table[j]);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

/*
 * Output of `go tool pprof ARGS PATH` (stdout and stderr, runs of blanks
 * squeezed to one space, so the checks do not depend on column widths);
 * fails unless it exits 0.
 */
static char *go_tool_pprof(const char *args, const char *path)
{
	char cmd[1024], *out = NULL;
	size_t len = 0;
	FILE *f, *mem;
	int c, prev = 0, status;

	/* make deps installs Go 1.27: a missing one is a failure. */
	if (access(GO_1_27, X_OK))
		fail_msg("%s missing (run make deps)", GO_1_27);
	/* HOME may be unset under a test runner; go needs a GOCACHE. */
	snprintf(cmd, sizeof(cmd),
		 "HOME=${HOME:-/tmp} GOFLAGS= GOTOOLCHAIN=local "
		 "%s tool pprof %s %s 2>&1", GO_1_27, args, path);
	f = popen(cmd, "r");
	assert_non_null(f);
	mem = open_memstream(&out, &len);
	assert_non_null(mem);
	while ((c = fgetc(f)) != EOF) {
		if (c == '\t')
			c = ' ';
		if (c != ' ' || prev != ' ')
			fputc(c, mem);
		prev = c;
	}
	fclose(mem);
	status = pclose(f);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg("%s: status %d\n%s", cmd, status, out);
	return out;
}

static void assert_contains(const char *haystack, const char *needle)
{
	if (!strstr(haystack, needle))
		fail_msg("\"%s\" not in:\n%s", needle, haystack);
}

/* The line after the one containing HEADER, or fails. */
static const char *line_after(const char *text, const char *header)
{
	const char *p = strstr(text, header);

	if (!p)
		fail_msg("\"%s\" not in:\n%s", header, text);
	p = strchr(p, '\n');
	assert_non_null(p);
	return p + 1;
}

static void assert_line_starts(const char *line, const char *want)
{
	size_t n = strcspn(line, "\n");

	if (strncmp(line, want, strlen(want)))
		fail_msg("line \"%.*s\" does not start with \"%s\"", (int)n,
			 line, want);
}

/* pprof's own dump: every value, label and frame as it was given. */
static void test_go_tool_pprof_raw_shows_samples(void **state)
{
	struct tmp *t = *state;
	char *out;

	assert_int_equal(pprof_write(&profile, t->path), 0);
	out = go_tool_pprof("-raw", t->path);
	assert_contains(out, "PeriodType: space bytes\nPeriod: 1\n");
	assert_contains(out, "Duration: 2.5s\n");
	assert_contains(out, "Comment: traceaf-bpf: app-1, 12 GC cycles");
	assert_contains(out, "alloc_objects/count alloc_space/bytes "
			     "inuse_objects/count inuse_space/bytes[dflt] "
			     "freed_objects/count freed_space/bytes "
			     "shortlived_objects/count shortlived_space/bytes "
			     "survived_objects/count survived_space/bytes "
			     "lifetime_space/byte-seconds\n");
	assert_contains(out, " 300 19200 280 17920 20 1280 0 0 250 16000 "
			     "40000: 1 2 \n type:[*main.node]\n");
	assert_contains(out, " 5000 5120000 3 3072 4997 5116928 4990 5109760 "
			     "0 0 12: 3 4 5 \n type:[[]uint8]\n");
	assert_contains(out, " 7 700 1 100 6 600 6 600 1 100 50: 1 2 \n"
			     "Locations\n");
	assert_contains(out, " 1: 0x4a1010 M=1 main.leakNode "
			     "/src/app/main.go:17:0 ");
	assert_contains(out, " 2: 0x4a2020 M=1 main.main "
			     "/src/app/main.go:40:0 ");
	assert_contains(out, " 3: 0x4a3030 M=1 main.churnBytes "
			     "/src/app/churn.go:9:0 ");
	assert_contains(out, " 4: 0x4a4040 M=1 main.work "
			     "/src/app/churn.go:22:0 ");
	assert_contains(out, " 5: 0x4a2028 M=1 main.main "
			     "/src/app/main.go:41:0 ");
	assert_null(strstr(out, " 6: "));
	assert_contains(out, "Mappings\n1: 0x400000/0x4b0000/0x0 "
			     "/srv/app/bin/app "
			     "0aeca0df9b7750f3380792954f9f5be7645699d0 "
			     "[FN][FL][LN][IN]\n");
	assert_null(strstr(out, "binary"));
	free(out);
}

/* The garbage producer is first by shortlived_space, the leak by survived. */
static void test_go_tool_pprof_top_by_our_sample_types(void **state)
{
	struct tmp *t = *state;
	const char *row;
	char *out;

	assert_int_equal(pprof_write(&profile, t->path), 0);
	out = go_tool_pprof("-top -sample_index=shortlived_space", t->path);
	assert_contains(out, "Type: shortlived_space\n");
	row = line_after(out, " flat flat% sum% cum cum%\n");
	assert_line_starts(row, " 4.87MB 100% 100% 4.87MB 100% "
				"main.churnBytes\n");
	assert_null(strstr(out, "Main binary filename not available"));
	free(out);
	out = go_tool_pprof("-top -sample_index=survived_space", t->path);
	row = line_after(out, " flat flat% sum% cum cum%\n");
	assert_line_starts(row, " 15.72kB 100% 100% 15.72kB 100% "
				"main.leakNode\n");
	free(out);
	out = go_tool_pprof("-top -sample_index=lifetime_space", t->path);
	assert_contains(out, "Total samples = 40062byte-seconds");
	free(out);
}

/*
 * -diff_base between two of our profiles: the base run allocated half as
 * many []uint8 in churnBytes; the difference is that half, nothing else.
 */
static void test_go_tool_pprof_diff_base(void **state)
{
	struct tmp *t = *state;
	struct alloc_profile_sample half[3];
	struct alloc_profile base = profile;
	char base_path[300], args[400];
	const char *row;
	char *out;

	memcpy(half, samples, sizeof(half));
	half[1].v[AP_ALLOC_OBJECTS] /= 2;
	half[1].v[AP_ALLOC_SPACE] /= 2;
	base.samples = half;
	snprintf(base_path, sizeof(base_path), "%s/base.pb.gz", t->dir);
	assert_int_equal(pprof_write(&profile, t->path), 0);
	assert_int_equal(pprof_write(&base, base_path), 0);
	snprintf(args, sizeof(args), "-top -sample_index=alloc_space "
		 "-diff_base %s", base_path);
	out = go_tool_pprof(args, t->path);
	/* 2560000 bytes more, of the base's 2.46MB (2579900 B) total. */
	assert_contains(out, "Showing nodes accounting for 2.44MB, 99.23% of "
			     "2.46MB total\n");
	row = line_after(out, " flat flat% sum% cum cum%\n");
	assert_line_starts(row, " 2.44MB 99.23% 99.23% 2.44MB 99.23% "
				"main.churnBytes\n");
	free(out);
	unlink(base_path);
}

/*
 * Calls inlined at one PC are frames of their own in a sidecar stack: they
 * become one location whose lines are innermost first.  The same function
 * and line twice at one PC is recursion, two frames.
 */
static void test_inlined_frames_share_a_location(void **state)
{
	static const struct stack_frame frames[] = {
		{ "main.inner", "/src/a.go", 5, 0x401000 },
		{ "main.outer", "/src/a.go", 9, 0x401000 },
		{ "main.rec", "/src/a.go", 20, 0x402000 },
		{ "main.rec", "/src/a.go", 20, 0x402000 },
		{ "main.main", "/src/a.go", 30, 0x403000 },
	};
	static const struct alloc_profile_sample one[] = {
		{ frames, 5, NULL, 1, { 1, 16 } },
	};
	const struct alloc_profile prof = {
		.samples = one, .nsamples = 1,
		.mappings = &app_mapping, .nmappings = 1,
	};
	struct tmp *t = *state;
	Perftools__Profiles__Profile *p;
	const Perftools__Profiles__Location *l;
	const Perftools__Profiles__Sample *s;

	assert_int_equal(pprof_write(&prof, t->path), 0);
	p = read_profile(t->path);
	s = p->sample[0];
	assert_int_equal(p->n_location, 3);
	assert_int_equal(s->n_location_id, 4);
	l = location(p, s->location_id[0]);
	assert_int_equal(l->address, 0x401000);
	assert_int_equal(l->n_line, 2);
	assert_string_equal(str_at(p, function(p, l->line[0]->function_id)->name),
			    "main.inner");
	assert_string_equal(str_at(p, function(p, l->line[1]->function_id)->name),
			    "main.outer");
	assert_int_equal(l->line[1]->line, 9);
	assert_int_equal(s->location_id[1], s->location_id[2]);
	assert_int_equal(location(p, s->location_id[1])->n_line, 1);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

static void test_go_tool_pprof_top_orders_by_alloc_space(void **state)
{
	struct tmp *t = *state;
	const char *row;
	char *out;

	assert_int_equal(pprof_write(&profile, t->path), 0);
	out = go_tool_pprof("-top -sample_index=alloc_space", t->path);
	assert_contains(out, "Type: alloc_space\n");
	/* 5120000 + 19200 + 700 bytes. */
	assert_contains(out, "Total samples = 4.90MB");
	row = line_after(out, " flat flat% sum% cum cum%\n");
	assert_line_starts(row, " 4.88MB 99.61% 99.61% 4.88MB 99.61% "
				"main.churnBytes\n");
	free(out);
}

/* Without -sample_index pprof shows inuse_space, as for Go heap profiles. */
static void test_go_tool_pprof_top_defaults_to_inuse_space(void **state)
{
	struct tmp *t = *state;
	const char *row;
	char *out;

	assert_int_equal(pprof_write(&profile, t->path), 0);
	out = go_tool_pprof("-top", t->path);
	assert_contains(out, "Type: inuse_space\n");
	/* 17920 + 100 bytes in leakNode, 3072 in churnBytes. */
	row = line_after(out, " flat flat% sum% cum cum%\n");
	assert_line_starts(row, " 17.60kB 85.44% 85.44% 17.60kB 85.44% "
				"main.leakNode\n");
	row = line_after(row, "main.leakNode");
	assert_line_starts(row, " 3kB 14.56% 100% 3kB 14.56% "
				"main.churnBytes\n");
	free(out);
}

static void test_go_tool_pprof_tags_shows_type_label(void **state)
{
	struct tmp *t = *state;
	char *out;

	assert_int_equal(pprof_write(&profile, t->path), 0);
	out = go_tool_pprof("-tags -sample_index=alloc_objects", t->path);
	/* The untyped sample (7 objects) has no label. */
	assert_contains(out, " type: Total 5300 of 5307 (99.87%)\n"
			     " 5000 (94.22%): []uint8\n"
			     " 300 ( 5.65%): *main.node\n");
	free(out);
}

/* No samples is still a profile pprof opens. */
static void test_empty_profile_is_valid(void **state)
{
	static const struct alloc_profile empty;
	struct tmp *t = *state;
	Perftools__Profiles__Profile *p;
	char *out;

	assert_int_equal(pprof_write(&empty, t->path), 0);
	p = read_profile(t->path);
	assert_int_equal(p->n_sample, 0);
	assert_int_equal(p->n_sample_type, AP_NVALUES);
	assert_int_equal(p->n_mapping, 0);
	perftools__profiles__profile__free_unpacked(p, NULL);
	out = go_tool_pprof("-raw", t->path);
	assert_contains(out, "lifetime_space/byte-seconds\nLocations\n");
	free(out);
}

/*
 * Many distinct frames: the indexes grow many times and the gzip output
 * spans several 64 KiB chunks; every frame still maps back to itself.
 */
static void test_many_frames_round_trip(void **state)
{
	enum { N = 20000 };
	struct tmp *t = *state;
	struct stack_frame *frames = calloc(N, sizeof(*frames));
	struct alloc_profile_sample *s = calloc(N, sizeof(*s));
	char (*names)[32] = calloc(N, sizeof(*names));
	struct alloc_profile big = { .samples = s, .nsamples = N };
	Perftools__Profiles__Profile *p;
	struct stat st;
	size_t i;

	assert_true(frames && s && names);
	for (i = 0; i < N; i++) {
		/* Scrambled so that gzip cannot squeeze the names away. */
		snprintf(names[i], sizeof(names[i]), "pkg.f%08zx",
			 (i * 2654435761u) & 0xffffffff);
		frames[i].func = names[i];
		frames[i].file = "/src/pkg/f.go";
		frames[i].line = (uint32_t)i;
		frames[i].pc = 0x400000 + i * 16;
		s[i].frames = &frames[i];
		s[i].nframes = 1;
		s[i].v[AP_ALLOC_OBJECTS] = (int64_t)i;
		s[i].v[AP_ALLOC_SPACE] = (int64_t)i * 8;
	}
	assert_int_equal(pprof_write(&big, t->path), 0);
	assert_int_equal(stat(t->path, &st), 0);
	assert_true(st.st_size > 128 * 1024);
	p = read_profile(t->path);
	assert_int_equal(p->n_sample, N);
	assert_int_equal(p->n_location, N);
	assert_int_equal(p->n_function, N);
	for (i = 0; i < N; i += 997) {
		const Perftools__Profiles__Location *l =
			location(p, p->sample[i]->location_id[0]);

		assert_int_equal(l->address, frames[i].pc);
		assert_string_equal(
			str_at(p, function(p, l->line[0]->function_id)->name),
			names[i]);
		assert_int_equal(p->sample[i]->value[1], (int64_t)i * 8);
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(names);
	free(s);
	free(frames);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void assert_file_is(const char *path, const char *text)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, text);
}

/*
 * A write that fails half way (here: the file size limit, which makes
 * write(2) return short and then EFBIG, as a full disk gives a short
 * write and then ENOSPC) leaves the old file at PATH and no temporary.
 */
static void test_failed_write_leaves_old_file_and_no_temporary(void **state)
{
	struct tmp *t = *state;
	struct rlimit old, lim;
	char listing[256];
	int err;

	write_file(t->path, "old profile\n");
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 100;   /* the profile gzips to about 500 bytes */
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	err = pprof_write(&profile, t->path);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);

	assert_int_equal(err, -EFBIG);
	assert_file_is(t->path, "old profile\n");
	dir_listing(t->dir, listing, sizeof(listing));
	assert_string_equal(listing, "heap.pb.gz ");
}

static void test_replaces_existing_file(void **state)
{
	struct tmp *t = *state;
	Perftools__Profiles__Profile *p;
	struct stat st;
	char listing[256];

	write_file(t->path, "old profile\n");
	assert_int_equal(pprof_write(&profile, t->path), 0);
	p = read_profile(t->path);
	assert_int_equal(p->n_sample, 3);
	perftools__profiles__profile__free_unpacked(p, NULL);
	assert_int_equal(stat(t->path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	dir_listing(t->dir, listing, sizeof(listing));
	assert_string_equal(listing, "heap.pb.gz ");
}

static void test_missing_directory_fails_with_enoent(void **state)
{
	struct tmp *t = *state;
	char path[256];

	snprintf(path, sizeof(path), "%s/no/such/heap.pb.gz", t->dir);
	assert_int_equal(pprof_write(&profile, path), -ENOENT);
}

/* The last step, rename(2), fails: the temporary must still go. */
static void test_path_naming_a_directory_fails_and_cleans_up(void **state)
{
	struct tmp *t = *state;
	char listing[256];

	assert_int_equal(mkdir(t->path, 0755), 0);
	assert_int_equal(pprof_write(&profile, t->path), -EISDIR);
	dir_listing(t->dir, listing, sizeof(listing));
	assert_string_equal(listing, "heap.pb.gz ");
	assert_int_equal(rmdir(t->path), 0);
}

static void test_null_arguments_fail_with_einval(void **state)
{
	static const struct alloc_profile no_samples = { .nsamples = 2 };
	static const struct alloc_profile_sample no_frames[] = {
		{ .nframes = 3 },
	};
	static const struct alloc_profile no_frames_p = {
		.samples = no_frames, .nsamples = 1,
	};
	static const struct alloc_profile_sample bad_map[] = {
		{ leak_stack, 2, NULL, 2, { 1 } },
	};
	static const struct alloc_profile bad_map_p = {
		.samples = bad_map, .nsamples = 1,
		.mappings = &app_mapping, .nmappings = 1,
	};
	struct tmp *t = *state;
	char listing[256];

	assert_int_equal(pprof_write(&bad_map_p, t->path), -EINVAL);
	assert_int_equal(pprof_write(NULL, t->path), -EINVAL);
	assert_int_equal(pprof_write(&profile, NULL), -EINVAL);
	assert_int_equal(pprof_write(&no_samples, t->path), -EINVAL);
	assert_int_equal(pprof_write(&no_frames_p, t->path), -EINVAL);
	dir_listing(t->dir, listing, sizeof(listing));
	assert_string_equal(listing, "");
}

#define TMP_TEST(f) cmocka_unit_test_setup_teardown(f, setup_tmp, teardown_tmp)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TMP_TEST(test_writes_gzip_that_decodes_to_the_same_values),
		TMP_TEST(test_go_tool_pprof_raw_shows_samples),
		TMP_TEST(test_go_tool_pprof_top_orders_by_alloc_space),
		TMP_TEST(test_go_tool_pprof_top_defaults_to_inuse_space),
		TMP_TEST(test_go_tool_pprof_tags_shows_type_label),
		TMP_TEST(test_go_tool_pprof_top_by_our_sample_types),
		TMP_TEST(test_go_tool_pprof_diff_base),
		TMP_TEST(test_inlined_frames_share_a_location),
		TMP_TEST(test_empty_profile_is_valid),
		TMP_TEST(test_many_frames_round_trip),
		TMP_TEST(test_failed_write_leaves_old_file_and_no_temporary),
		TMP_TEST(test_replaces_existing_file),
		TMP_TEST(test_missing_directory_fails_with_enoent),
		TMP_TEST(test_path_naming_a_directory_fails_and_cleans_up),
		TMP_TEST(test_null_arguments_fail_with_einval),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
