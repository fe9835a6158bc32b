// SPDX-License-Identifier: BSD-3-Clause
/*
 * exe_sessions.c - the executables the probes are attached to, and the
 * session table (struct traced): opening a session for a process and
 * closing it.
 *
 * Each executable (by device and inode) is opened, planned and attached
 * once, however many processes run it; its go_binary stays open for the
 * sessions that borrow it.  Opening a session finds the process's
 * executable in this cache (adding and attaching it when new), then reads
 * the live heap or starts from an empty one; closing cuts, reports and
 * frees it.
 */
#include "trace/tracer_impl.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach/freeze.h"
#include "util/grow.h"
#include "attach/heap_snapshot.h"
#include "attach/plan_cache.h"
#include "attach/probe_plan.h"
#include "attach/profile_rate.h"
#include "attach/profile_specials.h"
#include "trace/alloc_stacks.h"
#include "attach/target.h"
#include "format/trace_sink.h"

/* ---- executables ------------------------------------------------------ */

struct bin_entry *tracer_bin_find(struct tracer *t, uint64_t dev, uint64_t ino)
{
	size_t i;

	for (i = 0; i < t->nbins; i++)
		if (t->bins[i].dev == dev && t->bins[i].ino == ino)
			return &t->bins[i];
	return NULL;
}

struct bin_entry *tracer_bin_add(struct tracer *t, uint64_t dev, uint64_t ino)
{
	struct bin_entry *b;

	if (!GROW(t->bins, t->nbins, t->bins_cap, 8))
		return NULL;
	b = &t->bins[t->nbins++];
	memset(b, 0, sizeof(*b));
	b->dev = dev;
	b->ino = ino;
	u64_map_init(&b->sample_types);
	return b;
}

/* --memprofilerate: what the attach-time samples are typed by. */
static void keep_sample_types(struct bin_entry *be, const struct probe_plan *plan)
{
	size_t i;

	be->prof_kind = plan->layout.special_kind_profile;
	for (i = 0; i < plan->ncallers; i++)
		if (plan->callers[i].val.type.kind == TAF_CVAL_CONST)
			u64_map_put(&be->sample_types, plan->callers[i].ret,
				    plan->callers[i].val.type.val);
}

/*
 * --memprofilerate without -exact: the plan keeps its mark and cycle
 * probes and drops those on mProf_Malloc and freeSpecial, and the call
 * sites' types go to the daemon only (keep_sample_types), not to the
 * BPF map that typed the probed samples.  A binary whose
 * gcMarkTinyAllocs could not be planned keeps the exact probes.
 */
static bool plan_for_reads(struct probe_plan *plan)
{
	size_t i, k = 0;
	bool mark = false;

	for (i = 0; i < plan->n; i++)
		mark |= plan->sites[i].role == TAF_PROBE_GC_MARK;
	if (!mark)
		return false;
	for (i = 0; i < plan->n; i++)
		if (plan->sites[i].role != TAF_PROBE_PROF_MALLOC &&
		    plan->sites[i].role != TAF_PROBE_PROF_FREE)
			plan->sites[k++] = plan->sites[i];
	plan->n = k;
	plan->ncallers = 0;
	return true;
}

/*
 * With reads in the GC pauses (--pause-budget), one read a cycle, at
 * the mark's end, tells every birth and death (session_reads.c), so one
 * trap a cycle: the probe at the mark's start leaves the plan, kept in
 * BE for the processes whose heap is too big to read in a pause
 * (tracer_mark_probe).
 */
static void hold_mark_probe(struct bin_entry *be, struct probe_plan *plan)
{
	size_t i, k = 0;

	for (i = 0; i < plan->n; i++) {
		if (plan->sites[i].role == TAF_PROBE_GC_MARK && !be->mark_held) {
			be->mark_site = plan->sites[i];
			be->mark_held = true;
			continue;
		}
		plan->sites[k++] = plan->sites[i];
	}
	plan->n = k;
}

/*
 * Plans and attaches the probes of executable `bin` (reached through
 * `path`) for process `pid`, or for every process running it (-1).
 */
int tracer_attach_binary(struct tracer *t, struct bin_entry *be,
		  const struct go_binary *bin, const char *path,
		  pid_t pid, char *err, size_t errlen)
{
	const struct go_build_info *bi = go_binary_build_info(bin);
	const char *shown = path;
	struct plan_cache_opts popt = { 0 };
	enum plan_cache_result how;
	struct probe_plan plan;
	uint64_t t0 = tracer_now_ns();
	char fdpath[64];
	int rc;

	if (bi->minor > GO_MAX_KNOWN_MINOR)
		tracer_say("warning: %s is newer than the newest Go this version knows (1.%d); trying anyway",
		    bi->version, GO_MAX_KNOWN_MINOR);
	popt.dir = t->opt->cache_dir;
	popt.disabled = t->opt->no_cache;
	popt.verbose = t->opt->verbose;
	popt.sampled = t->opt->memprofilerate != 0;
	rc = plan_cache_build(bin, &popt, &plan, &how, err, errlen);
	if (rc)
		return rc;
	if (t->opt->verbose > 1 || (t->opt->verbose && how == PLAN_CACHE_HIT))
		tracer_say("%s: probe plan %s (%.3f s)", shown,
			   how == PLAN_CACHE_HIT ? "from the cache" :
			   how == PLAN_CACHE_MISS ? "built and cached" : "built",
			   (double)(tracer_now_ns() - t0) / 1e9);
	rc = probes_add_layout(&t->probes, &plan);
	if (rc < 0) {
		snprintf(err, errlen, "cannot configure the BPF programs: %s",
			 strerror(-rc));
		probe_plan_free(&plan);
		return rc;
	}
	be->layout = rc;
	/*
	 * Through our own descriptor of the file, not /proc/PID/exe: that
	 * path goes away when the process exits during the attach (a short
	 * compile under --all), and the uprobes with it (ENOENT).
	 */
	if (go_binary_fd(bin) >= 0) {
		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", go_binary_fd(bin));
		path = fdpath;
	}
	if (plan.sampled) {
		keep_sample_types(be, &plan);
		be->sample_reads = !t->opt->memprofile_exact &&
				   plan_for_reads(&plan);
		if (be->sample_reads && t->opt->pause_budget_us > 0)
			hold_mark_probe(be, &plan);
		if (!t->opt->memprofile_exact && !be->sample_reads)
			tracer_say("warning: %s: runtime.gcMarkTinyAllocs cannot be probed: its samples are probed where they are made and freed (as --memprofilerate-exact)",
				   shown);
	}
	rc = probes_attach(&t->probes, &plan, path, pid, err, errlen);
	if (rc && path == fdpath && !strstr(err, shown)) {
		/* Name the file as the user knows it. */
		char why[256];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "%s (%s)", why, shown);
	}
	if (rc == 0) {
		be->attached = true;
		be->probes = plan.n;
		if (t->opt->verbose)
			tracer_say("%s: %zu probes on %u functions%s", shown, plan.n,
			    plan.funcs,
			    plan.single_stepped ? "" : ", all on emulated instructions");
	}
	probe_plan_free(&plan);
	return rc;
}

/* ---- sessions --------------------------------------------------------- */

static int seed_span(void *ctx, uint64_t base, uint64_t npages,
		     uint8_t alloc_type, uint8_t spanclass)
{
	return session_seed_span(ctx, base, npages, alloc_type, spanclass);
}

static int seed_object(void *ctx, uint64_t slot, uint64_t type_addr)
{
	return session_seed_object(ctx, slot, type_addr);
}

static int seed_span_objects(void *ctx, uint64_t base, const uint8_t *bits,
			     uint32_t nelems, uint32_t freeindex)
{
	return session_seed_span_objects(ctx, base, bits, nelems, freeindex);
}

static int seed_stack(void *ctx, uint64_t lo, uint64_t hi)
{
	return session_seed_stack(ctx, lo, hi);
}

/*
 * A process seen at its exec whose executable was new ran unprobed until
 * it was stopped (the probes went in only then).  What it allocated
 * meanwhile is in its first file as exists events, not allocations: the
 * objects the snapshot found say how much (a GC that early is unlikely,
 * so few can have come and gone unseen).  Said, never left for the
 * counts to show; with -v also when nothing was missed.
 */
static void report_unprobed(struct tracer *t, const struct session *s,
			    const struct exec_info *ei, uint64_t stopped,
			    uint64_t objects)
{
	const struct target *tg = session_target(s);
	double ms;

	if (!ei || !ei->ts || stopped < ei->ts)
		return;
	ms = (stopped - ei->ts) / 1e6;
	if (objects)
		tracer_say("PID %d (%s) ran %.1f ms after its exec before it could be stopped for its new executable's probes: its %llu objects from then are exists events in its first file, not allocations",
		    (int)tg->pid, tg->comm, ms,
		    (unsigned long long)objects);
	else if (t->opt->verbose)
		tracer_say("PID %d stopped %.2f ms after its exec, before it allocated",
		    (int)tg->pid, ms);
}

/*
 * With every probe live, stop the target, read what is already there into
 * the session's shadow heap, resume, and start the first generation at the
 * moment the last thread stopped: records stamped before it describe
 * changes the snapshot already contains.
 */
static void take_snapshot(struct tracer *t, struct session *s,
			  const struct exec_info *ei)
{
	struct heap_snapshot_cb cb = {
		.span = seed_span, .object = seed_object,
		.span_objects = seed_span_objects, .stack = seed_stack, .ctx = s,
	};
	const struct target *tg = session_target(s);
	struct heap_snapshot_stats st;
	int verbose = t->opt->verbose;
	struct frozen fz;
	uint64_t t0, t1, fz_since;
	char err[256];
	int rc = 0;

	if (t->held && t->held->pid == tg->pid) {
		/* Stopped since its exec hint: the snapshot takes it over. */
		fz = *t->held;
		memset(t->held, 0, sizeof(*t->held));
		t->held = NULL;
	} else {
		rc = tracer_freeze(t, tg->pid, &fz);
	}
	t0 = tracer_now_ns();
	if (rc) {
		tracer_say("warning: cannot stop PID %d to read its heap (%s): its first file starts without exists events",
		    (int)tg->pid, strerror(-rc));
		session_begin(s, t0);
		return;
	}
	fz_since = fz.since;
	rc = heap_snapshot_read(tg, session_binary(s), session_load_bias(s),
				&cb, &st, err, sizeof(err));
	tracer_thaw(t, &fz);
	t1 = tracer_now_ns();
	if (rc)
		tracer_say("warning: PID %d: %s: its first file starts without a full snapshot",
		    (int)tg->pid, err);
	else
		report_unprobed(t, s, ei, fz_since, st.objects);
	if (verbose)
		tracer_say("PID %d snapshot: %llu spans, %llu objects (%llu typed), %llu stacks; stopped %.1f ms",
		    (int)tg->pid, (unsigned long long)st.spans,
		    (unsigned long long)st.objects,
		    (unsigned long long)st.typed_objects,
		    (unsigned long long)st.stacks, (t1 - t0) / 1e6);
	session_begin(s, t0);
}

/*
 * --memprofilerate: nothing to stop the target for (no spans, and the
 * objects sampled before we came are not ours to know); the probes are
 * live, so set the rate and begin.  AT_EXEC: the process may be before
 * its runtime's schedinit (profile_rate.h).
 */
struct seed_ctx {
	struct session *s;
	const struct bin_entry *be;
	uint64_t untyped;
};

/* A live sample: typed by the first call site of its stack we know. */
static int seed_sample(void *arg, const struct ps_sample *ps)
{
	struct seed_ctx *c = arg;
	uint64_t bias = session_load_bias(c->s), type;
	bool known = sample_stack_type(&c->be->sample_types, bias, ps, &type);

	if (!known)
		c->untyped++;
	return session_seed_sample(c->s, ps->addr, ps->size,
				   type ? type + bias : 0, known, ps->bucket,
				   ps->pcs, (uint32_t)ps->npcs);
}

/*
 * The samples the runtime holds already (its live heap profile) become
 * the first file's exists events: the live sampled heap, however old.
 * The target keeps running: records from t0 on are kept, and one of an
 * object the walk also saw is merged (session_sampled.c, session_sampled_alloc).
 */
static void seed_samples(struct tracer *t, struct session *s)
{
	const struct target *tg = session_target(s);
	struct seed_ctx c = { s, tracer_bin_find(t, tg->exe_dev, tg->exe_ino),
			      0 };
	struct ps_stats st;
	char err[256];
	uint64_t t0 = tracer_now_ns();
	int rc;

	if (!c.be)
		return;
	rc = profile_specials_read(tg, session_binary(s), session_load_bias(s),
				   c.be->prof_kind, seed_sample, &c, &st,
				   err, sizeof(err));
	if (rc)
		tracer_say("warning: PID %d: cannot read its live heap-profile samples (%s): its first file starts without them",
		    (int)tg->pid, rc == -ENOENT ? err : strerror(-rc));
	else if (t->opt->verbose)
		tracer_say("PID %d: %llu live heap-profile samples (%llu untyped, %llu unreadable) in %llu spans, read in %.1f ms",
		    (int)tg->pid, (unsigned long long)st.samples,
		    (unsigned long long)c.untyped,
		    (unsigned long long)st.read_errors,
		    (unsigned long long)st.spans,
		    (tracer_now_ns() - t0) / 1e6);
	/* The lists are read while the target runs: a node or bucket that
	 * could not be read is a sample the first file lacks. */
	if (!rc && st.read_errors && !t->opt->verbose)
		tracer_say("warning: PID %d: %llu live heap-profile samples or lists could not be read: the first file lacks them",
		    (int)tg->pid, (unsigned long long)st.read_errors);
}

/*
 * --memprofilerate's reads must begin while the mark lasts (1-3 ms on a
 * small, busy heap): woken by the mark's record, the daemon must run at
 * once, not after the target's threads' time slices (median 0.4 ms, up
 * to 1.5 ms measured on two busy cores).  So it runs SCHED_FIFO at the
 * lowest priority: in this mode it has little else to do (a few records
 * per GC, a read each), and the kernel's RT throttling bounds it even
 * so.  Not inherited by what it forks.  Without the privilege, it runs
 * as it is and misses more reads, which it counts.
 */
static void reads_realtime(struct tracer *t)
{
	struct sched_param sp = { .sched_priority = 1 };

	if (t->reads_realtime)
		return;
	t->reads_realtime = true;
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) &&
	    t->opt->verbose)
		tracer_say("cannot run SCHED_FIFO (%s): reads of the samples may begin late",
			   strerror(errno));
}

static void sampled_begin(struct tracer *t, struct traced *p, bool at_exec)
{
	struct session *s = p->s;
	const struct target *tg = session_target(s);
	uint64_t t0 = tracer_now_ns();
	char err[256];

	/* A process at its exec has no heap yet. */
	if (!tg->gone && !at_exec)
		seed_samples(t, s);
	if (session_reads(s))
		reads_realtime(t);
	session_begin(s, t0);
	if (tg->gone)
		return;
	if (profile_rate_set(tg->pid, session_binary(s), session_load_bias(s),
			     (int64_t)t->opt->memprofilerate,
			     at_exec,
			     &p->rate_ctl, err, sizeof(err)))
		tracer_say("warning: PID %d: %s: it is traced at the rate it has",
		    (int)tg->pid, err);
	else if (t->opt->verbose)
		tracer_say("PID %d: runtime.MemProfileRate %lld -> %lld while traced",
		    (int)tg->pid, (long long)p->rate_ctl.old,
		    (long long)p->rate_ctl.rate);
}

static struct traced *add_session(struct tracer *t, struct session *s)
{
	struct traced *p;

	if (!GROW(t->procs, t->nprocs, t->procs_cap, 8))
		return NULL;
	p = &t->procs[t->nprocs++];
	memset(p, 0, sizeof(*p));
	p->s = s;
	p->pid = session_target(s)->pid;
	p->mark_link.fd = -1;
	return p;
}

/* A Go executable we cannot trace: its later processes say why too. */
static void refuse(struct bin_entry *be, const char *why)
{
	be->go = false;
	be->refused = true;
	snprintf(be->why, sizeof(be->why), "%s", why);
}

/* runtime address = link address + bias; 0 for position-dependent code. */
static int find_load_bias(const struct go_binary *bin, const struct target *tg,
			  uint64_t *bias)
{
	uint64_t vaddr, off;
	int rc;

	*bias = 0;
	if (!go_binary_is_pie(bin))
		return 0;
	rc = go_binary_first_load(bin, &vaddr, &off);
	if (rc)
		return rc;
	return target_load_bias(tg, vaddr, off, bias);
}

/*
 * Starts tracing process `pid`: identifies its executable, attaches to it
 * if that was not done yet (for `attach_pid`, -1 = every process running
 * it), opens the session, and either reads the live heap (`snapshot`, and
 * whenever the executable was not attached yet: the process may have run
 * unobserved since its exec) or starts from an empty one (a process seen
 * at exec whose executable was already probed).  Fills err and returns
 * -errno when the process is not one we can trace.
 */
int tracer_open_session(struct tracer *t, pid_t pid, pid_t attach_pid,
		 bool snapshot, const struct exec_info *ei, char *err,
		 size_t errlen)
{
	struct session_opts so = {
		.dir = t->opt->output_dir,
		.rotate_size = t->opt->rotate_size,
		.gen_size = t->opt->gen_size,
		.keep_files = t->opt->rotate_files,
		.sample = t->opt->sample,
		.stacks = t->opt->stacks,
		.known_stacks = probes_known_stacks(&t->probes),
		.memprofilerate = t->opt->memprofilerate,
		.check_reads = t->opt->check_reads,
		.pause_budget_ns = (uint64_t)t->opt->pause_budget_us * 1000,
		.tiny_as_runtime = t->opt->tiny_as_runtime,
	};
	struct go_binary *bin = NULL;
	struct target tg;
	struct bin_entry *be;
	struct session *s;
	struct traced *p = NULL;
	uint64_t bias = 0;
	char berr[256];
	int rc;

	if (mkdir(t->opt->output_dir, 0750) != 0 && errno != EEXIST) {
		rc = -errno;
		snprintf(err, errlen, "cannot create output directory %s: %s",
			 t->opt->output_dir, strerror(errno));
		return rc;
	}
	rc = target_open(pid, &tg, err, errlen);
	if (rc) {
		/*
		 * Gone already (a short-lived process): its records are in
		 * the ring buffer, and its executable is known from the exec.
		 */
		be = ei ? tracer_bin_find(t, ei->dev, ei->ino) : NULL;
		if (!be || !be->go || !be->attached)
			return rc;
		target_init_gone(&tg, pid, ei->comm, ei->dev, ei->ino);
		snapshot = false;
	}
	be = tracer_bin_find(t, tg.exe_dev, tg.exe_ino);
	if (be && !be->go) {
		if (be->refused)
			snprintf(err, errlen, "PID %d (%s): %s", (int)pid,
				 tg.comm, be->why);
		else
			snprintf(err, errlen, "PID %d (%s) is not a Go program",
				 (int)pid, tg.comm);
		target_close(&tg);
		return be->refused ? TRACER_REFUSED_GO : -ENOEXEC;
	}
	if (!be) {
		bool is_go;

		rc = go_binary_open(tg.exe_path, &bin, berr, sizeof(berr));
		is_go = rc == 0;
		if (rc == 0)
			rc = go_binary_check_version(bin, berr, sizeof(berr));
		be = tracer_bin_add(t, tg.exe_dev, tg.exe_ino);
		if (rc) {
			snprintf(err, errlen, "PID %d (%s) is not a Go program we can trace: %s",
				 (int)pid, tg.comm, berr);
			if (be && is_go)
				refuse(be, err);
			go_binary_close(bin);
			target_close(&tg);
			return is_go ? TRACER_REFUSED_GO : rc;
		}
		if (!be) {
			go_binary_close(bin);
			target_close(&tg);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		be->go = true;
		be->bin = bin;
		if (readlink(tg.exe_path, be->path, sizeof(be->path) - 1) < 0)
			be->path[0] = '\0';
	}
	bin = be->bin;
	if (!tg.gone) {
		rc = find_load_bias(bin, &tg, &bias);
		if (rc) {
			snprintf(err, errlen, "cannot find where %s is loaded in PID %d",
				 tg.exe_path, (int)pid);
			target_close(&tg);
			return rc;
		}
	}
	if (!be->attached) {
		snapshot = true;
		rc = tracer_attach_binary(t, be, bin, tg.exe_path, attach_pid, berr,
				   sizeof(berr));
		if (rc) {
			snprintf(err, errlen, "PID %d (%s): %s", (int)pid,
				 tg.comm, berr);
			refuse(be, berr);
			target_close(&tg);
			return TRACER_REFUSED_GO;
		}
	}
	so.sample_reads = be->sample_reads;
	/* The session owns the target from here on, and borrows bin. */
	rc = session_start(&s, &tg, bin, bias, &so, err, errlen);
	if (rc)
		return rc;
	if (session_stacks(s))
		rc = alloc_stacks_set_exe(session_stacks(s), be->path);
	if (rc == 0) {
		p = add_session(t, s);
		if (!p) {
			snprintf(err, errlen, "out of memory");
			rc = -ENOMEM;
		}
	}
	if (rc) {
		session_finish(s);
		return rc;
	}
	/* --memprofilerate: what the session's reads are typed by. */
	if (t->opt->memprofilerate) {
		session_set_sample_reader(s, &t->probes, &be->sample_types,
					  be->prof_kind);
		tracer_mark_probe(t, s);
	}
	t->processes_seen++;
	if (t->opt->memprofilerate) {
		/* Seen at its exec (--all) or stopped there (-- CMD): the
		 * runtime may not have initialised yet. */
		sampled_begin(t, p, ei != NULL ||
			      (t->child && pid == t->child));
		return 0;
	}
	if (snapshot)
		take_snapshot(t, s, ei);
	else
		session_begin(s, 0);
	return 0;
}

/*
 * --memprofilerate: the probe at each mark's start, held back from its
 * binary's plan (hold_mark_probe), attached for one process while its
 * session wants it (session_wants_mark_probe: the daemon reads its
 * samples during the marks, or a cut is near) and detached when not: a
 * trap a cycle more only where the heap is too big to read in a pause.
 * An attach that fails is said once and not tried again.
 */
static struct traced *traced_of(struct tracer *t, const struct session *s)
{
	size_t i;

	for (i = 0; i < t->nprocs; i++)
		if (t->procs[i].s == s)
			return &t->procs[i];
	return NULL;
}

void tracer_mark_probe(struct tracer *t, struct session *s)
{
	const struct target *tg = session_target(s);
	struct bin_entry *be;
	struct traced *p = traced_of(t, s);
	char path[64], err[256];
	uint64_t t0;
	bool has;

	if (!p || p->mark_failed)
		return;
	has = p->mark_link.link || p->mark_link.fd >= 0;
	if (session_wants_mark_probe(s, has) == has)
		return;
	t0 = tracer_now_ns();
	if (has) {
		probes_link_destroy(&p->mark_link);
		p->mark_detached++;
		if (t->opt->verbose > 1)
			tracer_say("PID %d: each mark's start not probed any more (%.2f ms)",
				   (int)tg->pid, (tracer_now_ns() - t0) / 1e6);
		return;
	}
	be = tracer_bin_find(t, tg->exe_dev, tg->exe_ino);
	if (!be || !be->mark_held || go_binary_fd(be->bin) < 0 || tg->gone)
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", go_binary_fd(be->bin));
	if (probes_attach_one(&t->probes, &be->mark_site, be->layout, path,
			      tg->pid, &p->mark_link, err, sizeof(err))) {
		p->mark_failed = true;
		tracer_say("warning: PID %d: %s: when its heap is too big to read in a GC pause, its samples are read by the daemon at each mark's end only",
			   (int)tg->pid, err);
	} else if (t->opt->verbose > 1) {
		tracer_say("PID %d: probing each mark's start too (%.2f ms)",
			   (int)tg->pid, (tracer_now_ns() - t0) / 1e6);
	}
}

/*
 * --memprofilerate: a program may set runtime.MemProfileRate itself after
 * the tracer did (a flag of its own, a debug endpoint): from then on its
 * samples are made at its rate, not the one asked for, and at 0 none at
 * all, which looked like a program that allocates nothing.  Read at each
 * GC cycle (one word), said once per process; the program's choice is
 * left alone (at detach the old value goes back only where ours stands).
 */
void tracer_watch_rate(struct tracer *t, struct session *s)
{
	struct traced *p = traced_of(t, s);
	int64_t now;

	if (!p || !p->rate_ctl.set || p->rate_change_said ||
	    session_target(s)->gone ||
	    profile_rate_read(p->pid, p->rate_ctl.addr, &now) ||
	    now == p->rate_ctl.rate)
		return;
	p->rate_change_said = true;
	if (now == 0)
		tracer_say("warning: PID %d set runtime.MemProfileRate to 0 itself (--memprofilerate had set %lld): it makes no heap-profile sample from here on, so none is traced",
		    (int)p->pid, (long long)p->rate_ctl.rate);
	else
		tracer_say("warning: PID %d set runtime.MemProfileRate to %lld itself (--memprofilerate had set %lld): its samples are made at its rate from here on, and the report's estimates, scaled by the rate asked for, are off by the ratio",
		    (int)p->pid, (long long)now, (long long)p->rate_ctl.rate);
}

/*
 * Cuts the last generation, reports (stderr and the JSON sidecar), and
 * frees the session at index i.
 */
void tracer_close_session(struct tracer *t, size_t i, const char *reason)
{
	struct traced *p = &t->procs[i];
	struct session *s = p->s;
	pid_t pid = p->pid;
	struct trace_sink_stats ss;
	uint64_t st[TAF_STAT_MAX];
	int rc;

	/* Stopped by us, the process alive: what it sampled since its
	 * last GC mark (before the rate goes back). */
	if (strcmp(reason, "exit") && strcmp(reason, "exec"))
		session_sampled_read_final(s);
	probes_gc_forget(&t->probes, pid);
	probes_link_destroy(&p->mark_link);
	tracer_watch_rate(t, s);        /* set since its last GC cycle */
	rc = profile_rate_restore(&p->rate_ctl);
	if (rc && rc != -ESRCH)
		tracer_say("warning: PID %d: cannot restore runtime.MemProfileRate (%s)",
		    (int)pid, strerror(-rc));
	session_cut(s);
	session_stacks_close(s);
	if (session_write_error(s))
		t->write_failed = true;
	tracer_report_session(t, s);
	probes_read_stats(&t->probes, st);
	rc = session_summary_write(s, st, reason, p->rate_ctl.old);
	if (rc)
		tracer_say("PID %d: cannot write the summary file: %s",
		    (int)pid, strerror(-rc));
	session_sink_stats(s, &ss);
	tracer_add_counts(&t->done, session_counts(s));
	t->done_bytes += ss.bytes_written;
	t->done_files += ss.files_written;
	if (t->last_sess == s)
		t->last_sess = NULL;
	session_finish(s);
	t->procs[i] = t->procs[--t->nprocs];
}
