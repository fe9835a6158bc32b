// SPDX-License-Identifier: BSD-3-Clause
/* probes.c - load the BPF programs and attach uprobes. */
#include "probes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "probe_plan.h"
#include "traceaf.skel.h"

static int silent_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	/* libbpf's warnings are turned into our own one-line errors. */
	if (level == LIBBPF_WARN && getenv("TRACEAF_LIBBPF_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

int probes_load(struct probes *p, uint64_t ringbuf_bytes, bool watch_exec,
		bool exec_required, char *err, size_t errlen)
{
	int rc;

	memset(p, 0, sizeof(*p));
	libbpf_set_print(silent_print);

	p->skel = traceaf_bpf__open();
	if (!p->skel) {
		rc = -errno;
		snprintf(err, errlen, "cannot open BPF object: %s", strerror(errno));
		return rc;
	}
	rc = bpf_map__set_max_entries(p->skel->maps.events, (__u32)ringbuf_bytes);
	if (rc) {
		snprintf(err, errlen, "cannot size ring buffer: %s", strerror(-rc));
		goto fail;
	}
	bpf_program__set_autoload(p->skel->progs.on_exec, watch_exec);
	rc = traceaf_bpf__load(p->skel);
	if (rc) {
		if (rc == -EPERM || rc == -EACCES)
			snprintf(err, errlen,
				 "cannot load BPF programs: %s (needs root: CAP_BPF, CAP_PERFMON)",
				 strerror(-rc));
		else
			snprintf(err, errlen,
				 "cannot load BPF programs: %s (kernel without BPF ring buffer or BTF?)",
				 strerror(-rc));
		goto fail;
	}
	if (watch_exec) {
		p->exec_link = bpf_program__attach(p->skel->progs.on_exec);
		if (!p->exec_link && exec_required) {
			rc = -errno;
			snprintf(err, errlen, "cannot watch exec: %s (kernel without BTF tracepoints?)",
				 strerror(errno));
			goto fail;
		}
	}
	return 0;
fail:
	traceaf_bpf__destroy(p->skel);
	p->skel = NULL;
	return rc;
}

static struct bpf_program *program_for(struct probes *p,
				       enum taf_probe_role role)
{
	switch (role) {
	case TAF_PROBE_ALLOC_ENTER: return p->skel->progs.alloc_enter;
	case TAF_PROBE_ALLOC_EXIT: return p->skel->progs.alloc_exit;
	case TAF_PROBE_SWEEP: return p->skel->progs.span_sweep;
	case TAF_PROBE_SPAN_INIT: return p->skel->progs.span_init;
	case TAF_PROBE_SPAN_FREE: return p->skel->progs.span_free;
	case TAF_PROBE_STACK_ALLOC: return p->skel->progs.stack_alloc;
	case TAF_PROBE_STACK_FREE: return p->skel->progs.stack_free;
	}
	return NULL;
}

static int add_link(struct probes *p, struct bpf_link *l)
{
	if (p->nlinks == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct bpf_link **nl = realloc(p->links, cap * sizeof(*nl));

		if (!nl)
			return -ENOMEM;
		p->links = nl;
		p->cap = cap;
	}
	p->links[p->nlinks++] = l;
	return 0;
}

int probes_attach(struct probes *p, const struct probe_plan *plan,
		  const char *binary_path, pid_t pid, char *err, size_t errlen)
{
	size_t first = p->nlinks, i;
	int rc = 0;

	for (i = 0; i < plan->n; i++) {
		const struct probe_site *s = &plan->sites[i];
		LIBBPF_OPTS(bpf_uprobe_opts, opts,
			    .bpf_cookie = TAF_COOKIE(s->role, p->last_layout));
		struct bpf_program *prog = program_for(p, s->role);
		struct bpf_link *l;

		if (!prog) {
			rc = -EINVAL;
			snprintf(err, errlen, "internal: no program for probe role %d", s->role);
			goto fail;
		}
		l = bpf_program__attach_uprobe_opts(prog, pid, binary_path,
						    s->file_off, &opts);
		if (!l) {
			rc = -errno;
			if (rc == -ENOENT && access("/sys/bus/event_source/devices/uprobe", F_OK))
				snprintf(err, errlen, "uprobes are not available in this kernel (CONFIG_UPROBE_EVENTS)");
			else if (rc == -EPERM || rc == -EACCES)
				snprintf(err, errlen, "cannot attach uprobe: %s (needs root)", strerror(-rc));
			else
				snprintf(err, errlen, "cannot attach uprobe to %s+0x%llx (%s): %s",
					 s->func, (unsigned long long)s->file_off,
					 binary_path, strerror(-rc));
			goto fail;
		}
		rc = add_link(p, l);
		if (rc) {
			bpf_link__destroy(l);
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
	}
	return 0;
fail:
	while (p->nlinks > first)
		bpf_link__destroy(p->links[--p->nlinks]);
	return rc;
}

int probes_add_layout(struct probes *p, const struct probe_plan *plan)
{
	__u32 idx = p->nlayouts;
	int rc;

	if (idx >= TAF_MAX_LAYOUTS)
		return -ENOSPC;
	rc = bpf_map_update_elem(bpf_map__fd(p->skel->maps.layouts), &idx,
				 &plan->layout, BPF_ANY);
	if (rc)
		return -errno;
	p->nlayouts++;
	p->last_layout = (int)idx;
	return (int)idx;
}

int probes_ringbuf_fd(const struct probes *p)
{
	return bpf_map__fd(p->skel->maps.events);
}

int probes_read_stats(const struct probes *p, uint64_t out[TAF_STAT_MAX])
{
	int ncpu = libbpf_num_possible_cpus();
	int fd = bpf_map__fd(p->skel->maps.stats);
	__u64 *vals;
	__u32 k;

	memset(out, 0, sizeof(uint64_t) * TAF_STAT_MAX);
	if (ncpu <= 0)
		return -EINVAL;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (k = 0; k < TAF_STAT_MAX; k++) {
		int c;

		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (c = 0; c < ncpu; c++)
			out[k] += vals[c];
	}
	free(vals);
	return 0;
}

void probes_detach(struct probes *p)
{
	while (p->nlinks)
		bpf_link__destroy(p->links[--p->nlinks]);
}

void probes_destroy(struct probes *p)
{
	probes_detach(p);
	if (p->exec_link)
		bpf_link__destroy(p->exec_link);
	p->exec_link = NULL;
	free(p->links);
	p->links = NULL;
	p->cap = 0;
	if (p->skel)
		traceaf_bpf__destroy(p->skel);
	p->skel = NULL;
}
