// SPDX-License-Identifier: BSD-3-Clause
/*
 * pprof_cmd.c - `traceaf-bpf pprof FILE|DIR -o OUT.pb.gz`: the replayed
 * heap as a pprof profile (alloc_profile.h, written by pprof_write.c).
 *
 * One sample per (call stack, type) when the trace has stack sidecars,
 * else one per type with a single pseudo-frame named after the type, so
 * `go tool pprof -top` lists types where it would list functions.
 * Objects without a stack in a trace with stacks (they existed before
 * tracing began, or their stack was dropped) get the pseudo-frame too.
 *
 * Each process is one mapping: its executable as the sidecars' process
 * record names it (or --binary), so pprof knows the binary of the PCs.
 * The profile's start is the trace's first event on the wall clock: from
 * the sidecars' clock pair, else from the first file's name (seconds).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/alloc_profile.h"
#include "analysis/heap_replay.h"
#include "analysis/report.h"
#include "inspect/binary_ident.h"
#include "inspect/go_binary.h"
#include "util/u64_map.h"

void pprof_print_help(void)
{
	fputs(
"NAME\n"
"    traceaf-bpf pprof - a trace's heap as a pprof profile\n"
"\n"
"SYNOPSIS\n"
"    traceaf-bpf pprof FILE|DIR -o OUT.pb.gz [--no-stacks] [--binary PATH]\n"
"\n"
"DESCRIPTION\n"
"    Replays the trace (see traceaf-bpf report --help) and writes a\n"
"    gzip-compressed profile.proto that `go tool pprof` opens.  Sample\n"
"    types (README.md, \"pprof\", defines each exactly):\n"
"      alloc_objects, alloc_space      allocated during the trace\n"
"      inuse_objects, inuse_space      live at its end (the default)\n"
"      freed_objects, freed_space      freed during the trace\n"
"      shortlived_objects, _space      allocated and freed by the first\n"
"                                      GC after: the garbage producers\n"
"      survived_objects, _space        survived 2 or more GC cycles\n"
"      lifetime_space                  live bytes x seconds in the trace\n"
"    GC cycles are estimated from the sweeps' frees (the trace has no GC\n"
"    events).  Samples are call stacks when the trace has stack sidecars\n"
"    (made with --stacks), each labelled with the allocated type; without\n"
"    stacks each type is one sample whose only frame is named after the\n"
"    type.  All processes of a DIR go into one profile, one mapping each.\n"
"\n"
"    Example: go tool pprof -sample_index=shortlived_space -top OUT.pb.gz\n"
"\n"
"OPTIONS\n"
"    -o, --output OUT\n"
"        The profile to write (replaced atomically).\n"
"    --no-stacks\n"
"        Ignore stack sidecars: one sample per type.\n"
"    --binary PATH\n"
"        The executable of every process is PATH (its build ID and text\n"
"        segment are read from it), for traces whose sidecars do not\n"
"        name it (made before format 2) or a binary that moved.\n"
"    -h, --help\n"
"        This text.\n"
"\n"
"EXIT STATUS\n"
"    0 on success; 1 if a trace or --binary cannot be read or the profile\n"
"    cannot be written; 2 on bad usage.\n",
	      stdout);
}

#define MAX_COMMENTS 8

struct prof_build {
	struct alloc_profile_sample *samples;
	struct stack_frame *pseudo;     /* one per sample, type frames */
	char **pseudo_names;            /* their names when made here, owned */
	double *life;                   /* lifetime_space per sample, B*s */
	size_t n, cap;
	struct u64_map index;           /* (proc, stack, type) -> sample + 1 */
	struct alloc_profile_mapping *maps;  /* one per process */
	char **files;                   /* the maps' file names, owned */
	char *build_id;                 /* --binary's, owned */
	char *comments[MAX_COMMENTS];
	size_t ncomments;
};

static void prof_build_free(struct prof_build *b, size_t nprocs)
{
	size_t i;

	u64_map_free(&b->index);
	free(b->samples);
	for (i = 0; b->pseudo_names && i < b->n; i++)
		free(b->pseudo_names[i]);
	free(b->pseudo_names);
	free(b->pseudo);
	free(b->life);
	for (i = 0; b->files && i < nprocs; i++)
		free(b->files[i]);
	free(b->files);
	free(b->maps);
	free(b->build_id);
	for (i = 0; i < b->ncomments; i++)
		free(b->comments[i]);
}

static int grow_samples(struct prof_build *b)
{
	size_t cap = b->cap ? b->cap * 2 : 64;
	void *ns = realloc(b->samples, cap * sizeof(*b->samples));

	if (!ns)
		return -ENOMEM;
	b->samples = ns;
	ns = realloc(b->pseudo, cap * sizeof(*b->pseudo));
	if (!ns)
		return -ENOMEM;
	b->pseudo = ns;
	ns = realloc(b->pseudo_names, cap * sizeof(*b->pseudo_names));
	if (!ns)
		return -ENOMEM;
	b->pseudo_names = ns;
	ns = realloc(b->life, cap * sizeof(*b->life));
	if (!ns)
		return -ENOMEM;
	b->life = ns;
	b->cap = cap;
	return 0;
}

/*
 * The name of the one frame a sample without a stack gets: its type, as
 * pprof shows it.  pprof takes a name in angle brackets for C++
 * template arguments and one in parentheses for a parameter list, and
 * drops both (the frame then shows as the mapping, "[binary]"), so
 * "<notype>" and "<unknown>" lose their brackets.  Objects
 * already live when the trace began (a class with no allocation in the
 * trace, only "exists" events) say so: the trace holds no allocation
 * site of theirs, and no allocation.
 */
static char *pseudo_name(const char *type, bool before)
{
	char *name;

	if (!strcmp(type, "<notype>"))
		type = "notype";
	else if (!strcmp(type, "<unknown>"))
		type = "unknown";
	if (asprintf(&name, "%s%s", type,
		     before ? " [live before the trace]" : "") < 0)
		return NULL;
	return name;
}

static int sample_for(struct prof_build *b, const struct heap_replay *h,
		      size_t proc, const struct hr_class *c,
		      struct alloc_profile_sample **out)
{
	/* No stack and no allocation in the trace: live before it. */
	bool before = !c->stack && !c->allocs;
	uint64_t key = ((uint64_t)proc << 48 | (uint64_t)c->stack << 24 |
			c->type) + 1 + ((uint64_t)before << 63), v;
	struct alloc_profile_sample *s;
	const char *type = h->types[c->type].name;

	if (u64_map_get(&b->index, key, &v)) {
		*out = &b->samples[v - 1];
		return 0;
	}
	if (b->n == b->cap && grow_samples(b))
		return -ENOMEM;
	s = &b->samples[b->n];
	memset(s, 0, sizeof(*s));
	b->life[b->n] = 0;
	b->pseudo_names[b->n] = NULL;
	s->type_name = type;
	s->mapping = (uint32_t)proc + 1;
	if (c->stack) {
		s->frames = h->stacks[c->stack - 1].frames;
		s->nframes = h->stacks[c->stack - 1].nframes;
	} else {
		char *name = pseudo_name(type, before);

		if (!name)
			return -ENOMEM;
		b->pseudo_names[b->n] = name;
		b->pseudo[b->n] = (struct stack_frame){ .func = name,
							.file = "" };
		s->nframes = 1;
	}
	if (u64_map_put(&b->index, key, b->n + 1))
		return -ENOMEM;
	*out = &b->samples[b->n++];
	return 0;
}

/* Adds class C's objects to sample S (one slot size: bytes = n * size). */
static void add_class(struct alloc_profile_sample *s, double *life,
		      const struct hr_class *c)
{
	static const struct {
		enum alloc_profile_value objects;
		size_t off;
	} counts[] = {
		{ AP_ALLOC_OBJECTS, offsetof(struct hr_class, allocs) },
		{ AP_INUSE_OBJECTS, offsetof(struct hr_class, live) },
		{ AP_FREED_OBJECTS, offsetof(struct hr_class, frees) },
		{ AP_SHORTLIVED_OBJECTS, offsetof(struct hr_class, shortlived) },
		{ AP_SURVIVED_OBJECTS, offsetof(struct hr_class, survived) },
	};
	size_t i;

	/* Each count's _space is the value right after its _objects. */
	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		uint64_t n = *(const uint64_t *)((const char *)c +
						 counts[i].off);

		s->v[counts[i].objects] += (int64_t)n;
		s->v[counts[i].objects + 1] += (int64_t)(n * c->size);
	}
	*life += c->live_s * (double)c->size;
}

/* " (deleted)" ends the exe link of a binary replaced since it ran. */
static char *exe_name(const char *exe)
{
	static const char del[] = " (deleted)";
	size_t n = strlen(exe), d = sizeof(del) - 1;

	if (n > d && !strcmp(exe + n - d, del))
		n -= d;
	return strndup(exe, n);
}

/* Process I's mapping, from its sidecars' process record. */
static int proc_mapping(struct prof_build *b, size_t i,
			const struct heap_replay *h)
{
	struct alloc_profile_mapping *m = &b->maps[i];

	memset(m, 0, sizeof(*m));
	b->files[i] = exe_name(h->proc.valid ? h->proc.exe : "");
	if (!b->files[i])
		return -ENOMEM;
	m->file = b->files[i];
	m->build_id = h->proc.valid ? h->proc.gnu_build_id : "";
	if (h->proc.valid) {
		m->start = h->proc.text_start;
		m->limit = h->proc.text_limit;
		m->offset = h->proc.text_offset;
	}
	return 0;
}

/* The trace's first event on the wall clock, ns; 0 if not known. */
static int64_t start_wall_ns(const struct report_proc *pr)
{
	const struct heap_replay *h = pr->h;
	int64_t s;

	if (h->proc.valid && h->proc.wall_ns && h->proc.mono_ns)
		return (int64_t)h->proc.wall_ns +
		       ((int64_t)h->t_first_ns - (int64_t)h->proc.mono_ns);
	if (pr->nfiles && !report_name_time(pr->files[0], &s))
		return s * 1000000000;
	return 0;
}

static int add_comment(struct prof_build *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int add_comment(struct prof_build *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	if (b->ncomments == MAX_COMMENTS)
		return 0;
	va_start(ap, fmt);
	rc = vasprintf(&b->comments[b->ncomments], fmt, ap);
	va_end(ap);
	if (rc < 0)
		return -ENOMEM;
	b->ncomments++;
	return 0;
}

/* One line per process: pprof prints the comments above every report. */
static int proc_comment(struct prof_build *b, const struct report_proc *pr)
{
	const struct heap_replay *h = pr->h;
	const struct hr_process *p = &h->proc;
	/* The GNU build ID is in the mapping; Go before 1.24 writes none. */
	bool go_id = p->valid && *p->go_build_id && !*p->gnu_build_id;

	int rc = add_comment(b, "traceaf-bpf: %s, %" PRIu64 " GC cycles (%s)%s%s",
			     pr->name, h->gc_cycles,
			     h->gc_exact ? "the runtime's" : "estimated from sweeps",
			     go_id ? ", Go build ID " : "",
			     go_id ? p->go_build_id : "");

	if (!rc && h->sample_rate > 1)
		rc = add_comment(b, "traceaf-bpf: %s: ESTIMATES scaled from heap-profile samples at memprofilerate %" PRIu64,
				 pr->name, h->sample_rate);
	return rc;
}

static int build_profile(struct report_proc *procs, size_t n,
			 struct prof_build *b, struct alloc_profile *p)
{
	uint64_t t0 = UINT64_MAX, t1 = 0;
	int64_t wall = 0;
	size_t i, j;
	int rc;

	b->maps = calloc(n + 1, sizeof(*b->maps));
	b->files = calloc(n + 1, sizeof(*b->files));
	if (!b->maps || !b->files)
		return -ENOMEM;
	for (i = 0, rc = 0; !rc && i < n; i++) {
		const struct heap_replay *h = procs[i].h;

		rc = proc_mapping(b, i, h);
		if (!rc)
			rc = proc_comment(b, &procs[i]);
		if (h->events && h->t_first_ns < t0) {
			t0 = h->t_first_ns;
			wall = start_wall_ns(&procs[i]);
		}
		if (h->events && h->t_last_ns > t1)
			t1 = h->t_last_ns;
		for (j = 0; !rc && j < h->nclasses; j++) {
			const struct hr_class *c = &h->classes[j];
			struct alloc_profile_sample *s;

			if (!c->allocs && !c->live && !c->frees)
				continue;
			rc = sample_for(b, h, i, c, &s);
			if (!rc)
				add_class(s, &b->life[s - b->samples], c);
		}
	}
	if (rc)
		return rc;
	for (i = 0; i < b->n; i++) {
		/* Pseudo-frames moved with realloc: point at them only now. */
		if (!b->samples[i].frames)
			b->samples[i].frames = &b->pseudo[i];
		b->samples[i].v[AP_LIFETIME_SPACE] = (int64_t)llround(b->life[i]);
	}
	memset(p, 0, sizeof(*p));
	p->samples = b->samples;
	p->nsamples = b->n;
	p->mappings = b->maps;
	p->nmappings = n;
	p->comments = (const char *const *)b->comments;
	p->ncomments = b->ncomments;
	p->time_nanos = wall > 0 ? wall : 0;
	p->duration_nanos = t1 > t0 ? (int64_t)(t1 - t0) : 0;
	for (i = 0; i < n; i++)
		if ((int64_t)procs[i].h->sample_rate > p->period)
			p->period = (int64_t)procs[i].h->sample_rate;
	return 0;
}

/* --binary PATH: every mapping names PATH, with its ID and text. */
static int override_binary(struct prof_build *b, size_t n, const char *path)
{
	struct go_binary *bin = NULL;
	struct binary_ident id;
	char err[512];
	size_t i;

	if (go_binary_open(path, &bin, err, sizeof(err))) {
		fprintf(stderr, "traceaf-bpf: pprof --binary: %s\n", err);
		return -EINVAL;
	}
	binary_ident_read(bin, &id);
	go_binary_close(bin);
	b->build_id = strdup(id.gnu_build_id);
	if (!b->build_id)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		char *f = strdup(path);

		if (!f)
			return -ENOMEM;
		free(b->files[i]);
		b->files[i] = f;
		b->maps[i].file = f;
		b->maps[i].build_id = b->build_id;
		b->maps[i].start = id.text_start;
		b->maps[i].limit = id.text_limit;
		b->maps[i].offset = id.text_offset;
	}
	return 0;
}

int pprof_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "no-stacks", no_argument, NULL, 'S' },
		{ "binary", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct prof_build b = { 0 };
	struct report_proc *procs = NULL;
	struct alloc_profile prof;
	const char *out = NULL, *binary = NULL;
	bool stacks = true;
	size_t n = 0;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'S':
			stacks = false;
			break;
		case 'B':
			binary = optarg;
			break;
		case 'h':
			pprof_print_help();
			return 0;
		default:
			fprintf(stderr, "traceaf-bpf: pprof: unknown or incomplete option '%s'; see pprof --help\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc - 1 || !out || !*out || (binary && !*binary)) {
		fprintf(stderr, "traceaf-bpf: pprof: give one FILE or DIR and -o OUT.pb.gz; see pprof --help\n");
		return 2;
	}
	if (report_load(argv[optind], stacks, &procs, &n))
		return 1;
	u64_map_init(&b.index);
	rc = build_profile(procs, n, &b, &prof);
	if (rc == -ENOMEM)
		fprintf(stderr, "traceaf-bpf: out of memory\n");
	if (!rc && binary) {
		rc = override_binary(&b, n, binary);
		prof.mappings = b.maps;
	}
	if (!rc && (rc = pprof_write(&prof, out)))
		fprintf(stderr, "traceaf-bpf: %s: %s\n", out, strerror(-rc));
	prof_build_free(&b, n);
	report_procs_free(procs, n);
	return rc ? 1 : 0;
}
