// SPDX-License-Identifier: BSD-3-Clause
/* probes.c - load the BPF programs and attach uprobes. */
#include "probes.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "util/grow.h"
#include "attach/probe_plan.h"
#include "traceaf.skel.h"

static int silent_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	/* libbpf's warnings are turned into our own one-line errors. */
	if (level == LIBBPF_WARN && getenv("TRACEAF_LIBBPF_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

/*
 * uprobe_multi links (BPF_TRACE_UPROBE_MULTI, Linux 6.6) attach many
 * offsets of one file in one syscall and, more important, remove them
 * with one RCU grace period: one perf-event uprobe per site costs a grace
 * period each on removal (0.1-0.4 s here, so 56 sites took up to 23 s).
 * libbpf 1.1 has no wrapper for them, so the link is created by hand.
 */
#define TAF_BPF_TRACE_UPROBE_MULTI 48

static bool kernel_has_uprobe_multi(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (getenv("TRACEAF_NO_UPROBE_MULTI"))
		return false;
	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 6);
}

/* The kernel's bpf_attr.link_create for uprobe_multi (include/uapi/linux/bpf.h). */
struct uprobe_multi_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 um_flags;
	__u32 pid;
};

static int uprobe_multi_link(int prog_fd, const char *path,
			     const unsigned long *offsets,
			     const __u64 *cookies, __u32 cnt, pid_t pid)
{
	union {
		union bpf_attr attr;
		struct uprobe_multi_attr um;
		char pad[256];
	} a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.um.prog_fd = (__u32)prog_fd;
	a.um.attach_type = TAF_BPF_TRACE_UPROBE_MULTI;
	a.um.path = (__u64)(unsigned long)path;
	a.um.offsets = (__u64)(unsigned long)offsets;
	a.um.cookies = (__u64)(unsigned long)cookies;
	a.um.cnt = cnt;
	a.um.pid = pid > 0 ? (__u32)pid : 0;
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a.attr));
	return fd < 0 ? -errno : fd;
}

int probes_load(struct probes *p, uint64_t ringbuf_bytes, bool watch_exec,
		bool exec_required, unsigned stack_entries, char *err,
		size_t errlen)
{
	struct bpf_program *prog;
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
	if (stack_entries) {
		p->skel->rodata->capture_stacks = 1;
		rc = bpf_map__set_max_entries(p->skel->maps.known_stacks,
					      stack_entries);
		if (rc) {
			snprintf(err, errlen, "cannot size the stack map: %s",
				 strerror(-rc));
			goto fail;
		}
	}
	bpf_program__set_autoload(p->skel->progs.on_exec, watch_exec);
	p->multi = kernel_has_uprobe_multi();
	if (p->multi)
		bpf_object__for_each_program(prog, p->skel->obj)
			if (prog != p->skel->progs.on_exec)
				bpf_program__set_expected_attach_type(prog,
					(enum bpf_attach_type)TAF_BPF_TRACE_UPROBE_MULTI);
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
	case TAF_PROBE_GC_CYCLE: return p->skel->progs.gc_cycle;
	case TAF_PROBE_GC_MARK: return p->skel->progs.gc_mark;
	case TAF_PROBE_ALLOC_SITE: return p->skel->progs.alloc_site;
	case TAF_PROBE_ALLOC_ARGS: return p->skel->progs.alloc_args;
	case TAF_PROBE_PROF_MALLOC: return p->skel->progs.prof_malloc;
	case TAF_PROBE_PROF_FREE: return p->skel->progs.prof_free;
	case TAF_PROBE_SPAN_SET: return p->skel->progs.span_set;
	default: break;
	}
	return NULL;
}

/*
 * A site's BPF cookie: role and layout; an allocation site also the index
 * of its descriptor, after those earlier plans put in the alloc_sites map;
 * an ALLOC_ARGS probe the register it records the type from.
 */
static __u64 site_cookie(const struct probes *p, const struct probe_site *s)
{
	__u64 c = TAF_COOKIE(s->role, p->last_layout);

	if (s->role == TAF_PROBE_ALLOC_SITE)
		c = TAF_COOKIE_WITH_SITE(c, p->nasites + s->aux);
	else if (s->role == TAF_PROBE_ALLOC_ARGS)
		c = TAF_COOKIE_WITH_SITE(c, s->aux);
	return c;
}

/*
 * The callers into alloc_callers a few thousand per bpf(2) call: with
 * --memprofilerate a big service has 100 000-200 000 of them, and one
 * syscall each was most of a cached attach.  Returns how many
 * went in; the caller puts the rest one by one (a kernel without batch
 * operations on hash maps, or a full map: its errors are handled there).
 */
#define CALLER_BATCH 4096

static size_t load_callers_batched(int cfd, unsigned layout,
				   const struct probe_plan *plan)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o, .elem_flags = BPF_ANY);
	struct taf_caller_key *k = malloc(CALLER_BATCH * sizeof(*k));
	struct taf_caller *v = malloc(CALLER_BATCH * sizeof(*v));
	size_t done = 0, i;

	while (k && v && done < plan->ncallers) {
		__u32 n = 0, count;

		for (i = done; i < plan->ncallers && n < CALLER_BATCH; i++, n++) {
			memset(&k[n], 0, sizeof(k[n]));
			k[n].layout = (__u32)layout;
			k[n].ret = plan->callers[i].ret;
			v[n] = plan->callers[i].val;
		}
		count = n;
		if (bpf_map_update_batch(cfd, k, v, &count, &o) || count != n)
			break;
		done += n;
	}
	free(k);
	free(v);
	return done;
}

/*
 * The plan's allocation site descriptors and the call sites of their
 * producers (probe_plan.h) into the alloc_sites and alloc_callers maps.
 */
static int load_alloc_maps(struct probes *p, const struct probe_plan *plan,
			   char *err, size_t errlen)
{
	int sfd = bpf_map__fd(p->skel->maps.alloc_sites);
	int cfd = bpf_map__fd(p->skel->maps.alloc_callers);
	size_t i;
	int rc;

	if (p->nasites + plan->nasites > TAF_MAX_ALLOC_SITES) {
		snprintf(err, errlen, "too many allocation probe sites (%zu)",
			 p->nasites + plan->nasites);
		return -ENOSPC;
	}
	for (i = 0; i < plan->nasites; i++) {
		struct taf_alloc_site a = plan->asites[i];
		__u32 idx = p->nasites + (__u32)i;

		a.layout = (__u32)p->last_layout;
		if (bpf_map_update_elem(sfd, &idx, &a, BPF_ANY))
			goto fail;
	}
	if (plan->nhot) {
		int hfd = bpf_map__fd(p->skel->maps.alloc_hot);
		struct taf_hot_callers h;
		__u32 idx = (__u32)p->last_layout;
		unsigned k;

		memset(&h, 0, sizeof(h));
		for (k = 0; k < plan->nhot && k < TAF_HOT_CALLERS; k++) {
			h.ret[k] = plan->hot[k].ret;
			h.val[k] = plan->hot[k].val;
		}
		h.n = k;
		if (bpf_map_update_elem(hfd, &idx, &h, BPF_ANY))
			goto fail;
	}
	i = load_callers_batched(cfd, p->last_layout, plan);
	for (; i < plan->ncallers; i++) {
		struct taf_caller_key k = { .layout = (__u32)p->last_layout,
					    .ret = plan->callers[i].ret };

		/* A full map costs types (flagged records), not the attach. */
		if (bpf_map_update_elem(cfd, &k, &plan->callers[i].val, BPF_ANY) &&
		    errno != E2BIG && errno != ENOMEM)
			goto fail;
	}
	return 0;
fail:
	rc = -errno;
	snprintf(err, errlen, "cannot fill the allocation site maps: %s",
		 strerror(-rc));
	return rc;
}

static int add_link(struct probes *p, struct bpf_link *l)
{
	if (!GROW(p->links, p->nlinks, p->cap, 64))
		return -ENOMEM;
	p->links[p->nlinks++] = l;
	return 0;
}

static int add_mfd(struct probes *p, int fd)
{
	if (!GROW(p->mfds, p->nmfds, p->mcap, 16))
		return -ENOMEM;
	p->mfds[p->nmfds++] = fd;
	return 0;
}

/* One uprobe_multi link per BPF program for all of the plan's sites. */
static int attach_multi(struct probes *p, const struct probe_plan *plan,
			const char *binary_path, pid_t pid, char *err,
			size_t errlen)
{
	size_t first = p->nmfds, i, n;
	unsigned long *offs = calloc(plan->n + 1, sizeof(*offs));
	__u64 *cookies = calloc(plan->n + 1, sizeof(*cookies));
	bool *done = calloc(plan->n + 1, sizeof(*done));
	int rc = 0;

	if (!offs || !cookies || !done) {
		rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < plan->n && rc == 0; i++) {
		struct bpf_program *prog;
		size_t j;
		int fd;

		if (done[i])
			continue;
		prog = program_for(p, plan->sites[i].role);
		if (!prog) {
			rc = -EINVAL;
			snprintf(err, errlen, "internal: no program for probe role %d",
				 plan->sites[i].role);
			break;
		}
		for (n = 0, j = i; j < plan->n; j++) {
			if (done[j] || program_for(p, plan->sites[j].role) != prog)
				continue;
			offs[n] = plan->sites[j].file_off;
			cookies[n] = site_cookie(p, &plan->sites[j]);
			done[j] = true;
			n++;
		}
		fd = uprobe_multi_link(bpf_program__fd(prog), binary_path, offs,
				       cookies, (__u32)n, pid);
		if (fd < 0) {
			rc = fd;
			if (rc == -EPERM || rc == -EACCES)
				snprintf(err, errlen, "cannot attach uprobes: %s (needs root)",
					 strerror(-rc));
			else
				snprintf(err, errlen, "cannot attach %zu uprobes for %s in %s: %s",
					 n, plan->sites[i].func, binary_path,
					 strerror(-rc));
			break;
		}
		rc = add_mfd(p, fd);
		if (rc) {
			close(fd);
			snprintf(err, errlen, "out of memory");
		}
	}
	if (rc)
		while (p->nmfds > first)
			close(p->mfds[--p->nmfds]);
out:
	free(offs);
	free(cookies);
	free(done);
	return rc;
}

int probes_attach(struct probes *p, const struct probe_plan *plan,
		  const char *binary_path, pid_t pid, char *err, size_t errlen)
{
	size_t first = p->nlinks, i;
	int rc = 0;

	rc = load_alloc_maps(p, plan, err, errlen);
	if (rc)
		return rc;
	if (p->multi) {
		rc = attach_multi(p, plan, binary_path, pid, err, errlen);
		if (rc == 0)
			p->nasites += (unsigned)plan->nasites;
		return rc;
	}
	for (i = 0; i < plan->n; i++) {
		const struct probe_site *s = &plan->sites[i];
		LIBBPF_OPTS(bpf_uprobe_opts, opts,
			    .bpf_cookie = site_cookie(p, s));
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
	p->nasites += (unsigned)plan->nasites;
	return 0;
fail:
	while (p->nlinks > first)
		bpf_link__destroy(p->links[--p->nlinks]);
	return rc;
}

int probes_attach_one(struct probes *p, const struct probe_site *s,
		      int layout, const char *binary_path, pid_t pid,
		      struct probe_link *out, char *err, size_t errlen)
{
	struct bpf_program *prog = program_for(p, s->role);
	__u64 cookie = TAF_COOKIE(s->role, layout);
	unsigned long off = (unsigned long)s->file_off;

	out->link = NULL;
	out->fd = -1;
	if (!prog || s->role == TAF_PROBE_ALLOC_SITE ||
	    s->role == TAF_PROBE_ALLOC_ARGS) {
		snprintf(err, errlen, "internal: probe role %d cannot be attached alone",
			 s->role);
		return -EINVAL;
	}
	if (p->multi) {
		int fd = uprobe_multi_link(bpf_program__fd(prog), binary_path,
					   &off, &cookie, 1, pid);

		if (fd < 0) {
			snprintf(err, errlen, "cannot attach the uprobe on %s: %s",
				 s->func, strerror(-fd));
			return fd;
		}
		out->fd = fd;
		return 0;
	}
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = cookie);

	out->link = bpf_program__attach_uprobe_opts(prog, pid, binary_path,
						    s->file_off, &opts);
	if (!out->link) {
		int rc = -errno;

		snprintf(err, errlen, "cannot attach the uprobe on %s: %s",
			 s->func, strerror(-rc));
		return rc;
	}
	return 0;
}

void probes_link_destroy(struct probe_link *l)
{
	if (l->link)
		bpf_link__destroy(l->link);
	if (l->fd >= 0)
		close(l->fd);
	l->link = NULL;
	l->fd = -1;
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

void probes_enable(struct probes *p, bool on)
{
	if (p->skel && p->skel->bss)
		__atomic_store_n(&p->skel->bss->tracing_enabled, on ? 1 : 0,
				 __ATOMIC_SEQ_CST);
}

int probes_ringbuf_fd(const struct probes *p)
{
	return bpf_map__fd(p->skel->maps.events);
}

int probes_exec_hints_fd(const struct probes *p)
{
	return bpf_map__fd(p->skel->maps.exec_hints);
}

struct known_stacks probes_known_stacks(const struct probes *p)
{
	struct known_stacks k = { .fd = -1 };

	if (p->skel && p->skel->rodata->capture_stacks)
		k.fd = bpf_map__fd(p->skel->maps.known_stacks);
	return k;
}

void known_stacks_forget(struct known_stacks k, uint32_t pid, uint64_t hash)
{
	struct taf_stack_key key = { .pid = pid, .hash = hash };

	if (k.fd >= 0)
		bpf_map_delete_elem(k.fd, &key);
}

uint64_t probes_gc_sweeps(const struct probes *p, pid_t pid)
{
	__u32 key = (__u32)pid;
	__u64 v = 0;

	if (p->skel && bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.gc_sweeps),
					   &key, &v))
		v = 0;
	return v;
}

void probes_gc_forget(const struct probes *p, pid_t pid)
{
	__u32 key = (__u32)pid;

	if (p->skel) {
		bpf_map_delete_elem(bpf_map__fd(p->skel->maps.gc_sweeps), &key);
		bpf_map_delete_elem(bpf_map__fd(p->skel->maps.snap_targets), &key);
	}
}

void probes_snap_forget(const struct probes *p, pid_t pid)
{
	__u32 key = (__u32)pid;

	if (p && p->skel)
		bpf_map_delete_elem(bpf_map__fd(p->skel->maps.snap_targets), &key);
}

int probes_snap_target(const struct probes *p, pid_t pid,
		       const struct taf_snap_target *t)
{
	__u32 key = (__u32)pid;

	if (!p || !p->skel)
		return -ENOENT;
	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.snap_targets), &key,
				t, BPF_ANY))
		return -errno;
	return 0;
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

struct detach_job {
	struct bpf_link **links;
	int *fds;
	size_t n;
};

static void *detach_worker(void *arg)
{
	struct detach_job *j = arg;
	size_t i;

	for (i = 0; i < j->n; i++) {
		if (j->links)
			bpf_link__destroy(j->links[i]);
		else
			close(j->fds[i]);
	}
	return NULL;
}

/*
 * Removing uprobes waits for RCU grace periods: one per perf-event link,
 * one per uprobe_multi link.  Links are closed from several threads so
 * that, where the kernel lets them, the waits overlap.
 */
#define DETACH_THREADS 16

static void detach_all(struct bpf_link **links, int *fds, size_t count)
{
	struct detach_job jobs[DETACH_THREADS];
	pthread_t th[DETACH_THREADS];
	bool started[DETACH_THREADS] = { false };
	size_t nt = count < DETACH_THREADS ? count : DETACH_THREADS;
	size_t i, per, off = 0;

	if (!count)
		return;
	per = (count + nt - 1) / nt;
	for (i = 0; i < nt; i++) {
		jobs[i].links = links ? links + off : NULL;
		jobs[i].fds = fds ? fds + off : NULL;
		jobs[i].n = off + per <= count ? per : count - off;
		off += jobs[i].n;
		started[i] = jobs[i].n &&
			     pthread_create(&th[i], NULL, detach_worker, &jobs[i]) == 0;
		if (!started[i])
			detach_worker(&jobs[i]);
	}
	for (i = 0; i < nt; i++)
		if (started[i])
			pthread_join(th[i], NULL);
}

void probes_detach(struct probes *p)
{
	detach_all(p->links, NULL, p->nlinks);
	p->nlinks = 0;
	detach_all(NULL, p->mfds, p->nmfds);
	p->nmfds = 0;
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
	free(p->mfds);
	p->mfds = NULL;
	p->mcap = 0;
	if (p->skel)
		traceaf_bpf__destroy(p->skel);
	p->skel = NULL;
}
