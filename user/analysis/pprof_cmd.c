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
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/alloc_profile.h"
#include "analysis/heap_replay.h"
#include "analysis/report.h"
#include "util/u64_map.h"

void pprof_print_help(void)
{
	fputs(
"NAME\n"
"    traceaf-bpf pprof - a trace's heap as a pprof profile\n"
"\n"
"SYNOPSIS\n"
"    traceaf-bpf pprof FILE|DIR -o OUT.pb.gz [--no-stacks]\n"
"\n"
"DESCRIPTION\n"
"    Replays the trace (see traceaf-bpf report --help) and writes a\n"
"    gzip-compressed profile.proto that `go tool pprof` opens, with the\n"
"    sample types of Go's heap profiles: alloc_objects, alloc_space (over\n"
"    the whole trace), inuse_objects and inuse_space (live at its end;\n"
"    the default).  Samples are call stacks when the trace has stack\n"
"    sidecars (made with --stacks), each labelled with the allocated\n"
"    type; without stacks each type is one sample whose only frame is\n"
"    named after the type.  All processes of a DIR go into one profile.\n"
"\n"
"    Example: go tool pprof -sample_index=alloc_space -top OUT.pb.gz\n"
"\n"
"OPTIONS\n"
"    -o, --output OUT\n"
"        The profile to write (replaced atomically).\n"
"    --no-stacks\n"
"        Ignore stack sidecars: one sample per type.\n"
"    -h, --help\n"
"        This text.\n"
"\n"
"EXIT STATUS\n"
"    0 on success; 1 if a trace cannot be read or the profile cannot be\n"
"    written; 2 on bad usage.\n",
	      stdout);
}

struct prof_build {
	struct alloc_profile_sample *samples;
	struct stack_frame *pseudo;     /* one per sample, type frames */
	size_t n, cap;
	struct u64_map index;           /* (proc, stack, type) -> sample + 1 */
};

static int sample_for(struct prof_build *b, const struct heap_replay *h,
		      size_t proc, const struct hr_class *c,
		      struct alloc_profile_sample **out)
{
	uint64_t key = ((uint64_t)proc << 48 | (uint64_t)c->stack << 24 |
			c->type) + 1, v;
	struct alloc_profile_sample *s;
	const char *type = h->types[c->type].name;

	if (u64_map_get(&b->index, key, &v)) {
		*out = &b->samples[v - 1];
		return 0;
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		void *ns = realloc(b->samples, cap * sizeof(*b->samples));

		if (!ns)
			return -ENOMEM;
		b->samples = ns;
		ns = realloc(b->pseudo, cap * sizeof(*b->pseudo));
		if (!ns)
			return -ENOMEM;
		b->pseudo = ns;
		b->cap = cap;
	}
	s = &b->samples[b->n];
	memset(s, 0, sizeof(*s));
	s->type_name = type;
	if (c->stack) {
		s->frames = h->stacks[c->stack - 1].frames;
		s->nframes = h->stacks[c->stack - 1].nframes;
	} else {
		b->pseudo[b->n] = (struct stack_frame){ .func = type,
							.file = "" };
		s->nframes = 1;
	}
	if (u64_map_put(&b->index, key, b->n + 1))
		return -ENOMEM;
	*out = &b->samples[b->n++];
	return 0;
}

static int build_profile(struct report_proc *procs, size_t n,
			 struct prof_build *b, struct alloc_profile *p)
{
	uint64_t t0 = UINT64_MAX, t1 = 0;
	size_t i, j;
	int rc;

	for (i = 0; i < n; i++) {
		const struct heap_replay *h = procs[i].h;

		if (h->events && h->t_first_ns < t0)
			t0 = h->t_first_ns;
		if (h->events && h->t_last_ns > t1)
			t1 = h->t_last_ns;
		for (j = 0; j < h->nclasses; j++) {
			const struct hr_class *c = &h->classes[j];
			struct alloc_profile_sample *s;

			if (!c->allocs && !c->live)
				continue;
			rc = sample_for(b, h, i, c, &s);
			if (rc)
				return rc;
			s->alloc_objects += (int64_t)c->allocs;
			s->alloc_space += (int64_t)(c->allocs * c->size);
			s->inuse_objects += (int64_t)c->live;
			s->inuse_space += (int64_t)(c->live * c->size);
		}
	}
	/* Pseudo-frames moved with realloc: point at them only now. */
	for (i = 0; i < b->n; i++)
		if (!b->samples[i].frames)
			b->samples[i].frames = &b->pseudo[i];
	memset(p, 0, sizeof(*p));
	p->samples = b->samples;
	p->nsamples = b->n;
	p->duration_nanos = t1 > t0 ? (int64_t)(t1 - t0) : 0;
	return 0;
}

int pprof_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "no-stacks", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct prof_build b = { 0 };
	struct report_proc *procs = NULL;
	struct alloc_profile prof;
	const char *out = NULL;
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
		case 'h':
			pprof_print_help();
			return 0;
		default:
			fprintf(stderr, "traceaf-bpf: pprof: unknown or incomplete option '%s'; see pprof --help\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc - 1 || !out || !*out) {
		fprintf(stderr, "traceaf-bpf: pprof: give one FILE or DIR and -o OUT.pb.gz; see pprof --help\n");
		return 2;
	}
	if (report_load(argv[optind], stacks, &procs, &n))
		return 1;
	u64_map_init(&b.index);
	rc = build_profile(procs, n, &b, &prof);
	if (rc)
		fprintf(stderr, "traceaf-bpf: out of memory\n");
	else if ((rc = pprof_write(&prof, out)))
		fprintf(stderr, "traceaf-bpf: %s: %s\n", out, strerror(-rc));
	u64_map_free(&b.index);
	free(b.samples);
	free(b.pseudo);
	report_procs_free(procs, n);
	return rc ? 1 : 0;
}
