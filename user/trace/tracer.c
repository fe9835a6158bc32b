// SPDX-License-Identifier: BSD-3-Clause
/*
 * tracer.c - the daemon: targets, probes, sessions and the event loop.
 *
 * Flow: load BPF; depending on the mode, open the target(s), attach each
 * executable once, read each running process's heap (snapshot), then poll
 * the ring buffer, cut generations on the period, finish sessions whose
 * process exited, until stopped; detach, drain, finalize, report.
 */
#include "tracer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "attach/freeze.h"
#include "inspect/go_binary.h"
#include "util/grow.h"
#include "attach/heap_snapshot.h"
#include "attach/kernel_features.h"
#include "attach/probe_plan.h"
#include "attach/probes.h"
#include "trace/rec_names.h"
#include "attach/ring_pos.h"
#include "trace/session.h"
#include "trace/summary_json.h"
#include "attach/target.h"
#include "format/trace_sink.h"
#include "util/u64_map.h"

/* Oldest Go whose runtime we know; newer ones are tried with a warning. */
#define GO_MIN_MINOR 21
#define GO_MAX_KNOWN_MINOR 27

/* An executable the probes are attached to (or that was refused). */
struct bin_entry {
	uint64_t dev, ino;
	bool go;              /* a Go program we can trace */
	bool attached;
	size_t probes;
	struct go_binary *bin;  /* kept open: sessions borrow it */
	char path[4096];        /* where it was found, for --include */
};

/*
 * What an exec record tells about a process: enough to trace it from its
 * records even when it has exited before we get to open it.
 */
struct exec_info {
	uint64_t dev, ino;    /* st_dev encoding */
	char comm[16];
};

struct tracer {
	const struct taf_options *opt;
	struct probes probes;
	struct ring_buffer *rb;
	struct ring_pos rpos;         /* where producers and we are in rb */

	struct bin_entry *bins;
	size_t nbins, bins_cap;

	struct session **sess;
	size_t nsess, sess_cap;
	struct session *last_sess;    /* find_session's last hit */
	struct u64_map ignored;       /* PIDs not to look at again */

	pid_t child;                  /* -- CMD */
	struct exec_info child_exec;  /* its exec, once seen */
	bool child_done;
	int child_status;

	uint64_t poll_started;        /* when the current poll began */
	bool yield_poll;              /* ask ring_buffer__poll to return */
	bool draining;                /* consume everything, no yielding */
	unsigned since_clock_check;
	struct session_counts done;   /* sums over finished sessions */
	uint64_t done_bytes, done_files;
	bool write_failed;            /* some session could not write */
	unsigned processes_seen;
	/* Records of a PID with no session: never traced, or closed. */
	uint64_t orphan_records;
	bool stop;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	fputs("traceaf-bpf: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- executables ------------------------------------------------------ */

static struct bin_entry *bin_find(struct tracer *t, uint64_t dev, uint64_t ino)
{
	size_t i;

	for (i = 0; i < t->nbins; i++)
		if (t->bins[i].dev == dev && t->bins[i].ino == ino)
			return &t->bins[i];
	return NULL;
}

static struct bin_entry *bin_add(struct tracer *t, uint64_t dev, uint64_t ino)
{
	struct bin_entry *b;

	if (!GROW(t->bins, t->nbins, t->bins_cap, 8))
		return NULL;
	b = &t->bins[t->nbins++];
	memset(b, 0, sizeof(*b));
	b->dev = dev;
	b->ino = ino;
	return b;
}

/*
 * Plans and attaches the probes of executable `bin` (reached through
 * `path`) for process `pid`, or for every process running it (-1).
 */
static int attach_binary(struct tracer *t, struct bin_entry *be,
			 const struct go_binary *bin, const char *path,
			 pid_t pid, char *err, size_t errlen)
{
	const struct go_build_info *bi = go_binary_build_info(bin);
	struct probe_plan plan;
	int rc;

	if (bi->minor > GO_MAX_KNOWN_MINOR)
		say("warning: %s is newer than the newest Go this version knows (1.%d); trying anyway",
		    bi->version, GO_MAX_KNOWN_MINOR);
	rc = probe_plan_build(bin, &plan, err, errlen);
	if (rc)
		return rc;
	rc = probes_add_layout(&t->probes, &plan);
	if (rc < 0) {
		snprintf(err, errlen, "cannot configure the BPF programs: %s",
			 strerror(-rc));
		probe_plan_free(&plan);
		return rc;
	}
	rc = probes_attach(&t->probes, &plan, path, pid, err, errlen);
	if (rc == 0) {
		be->attached = true;
		be->probes = plan.n;
		if (t->opt->verbose)
			say("%s: %zu probes on %u functions%s", path, plan.n,
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

static int seed_stack(void *ctx, uint64_t lo, uint64_t hi)
{
	return session_seed_stack(ctx, lo, hi);
}

/*
 * With every probe live, stop the target, read what is already there into
 * the session's shadow heap, resume, and start the first generation at the
 * moment the last thread stopped: records stamped before it describe
 * changes the snapshot already contains.
 */
static void take_snapshot(struct session *s, int verbose)
{
	struct heap_snapshot_cb cb = { seed_span, seed_object, seed_stack, s };
	struct heap_snapshot_stats st;
	struct frozen fz;
	uint64_t t0, t1;
	char err[256];
	int rc;

	rc = freeze_process(s->target.pid, &fz);
	t0 = now_ns();
	if (rc) {
		say("warning: cannot stop PID %d to read its heap (%s): its first file starts without exists events",
		    (int)s->target.pid, strerror(-rc));
		session_begin(s, t0);
		return;
	}
	rc = heap_snapshot_read(&s->target, s->bin, s->load_bias, &cb, &st,
				err, sizeof(err));
	thaw_process(&fz);
	t1 = now_ns();
	if (rc)
		say("warning: PID %d: %s: its first file starts without a full snapshot",
		    (int)s->target.pid, err);
	if (verbose)
		say("PID %d snapshot: %llu spans, %llu objects (%llu typed), %llu stacks; stopped %.1f ms",
		    (int)s->target.pid, (unsigned long long)st.spans,
		    (unsigned long long)st.objects,
		    (unsigned long long)st.typed_objects,
		    (unsigned long long)st.stacks, (t1 - t0) / 1e6);
	session_begin(s, t0);
}

/*
 * Called for every record: records come in runs from one process, so the
 * last hit is checked before the scan.
 */
static struct session *find_session(struct tracer *t, pid_t pid)
{
	size_t i;

	if (t->last_sess && t->last_sess->target.pid == pid)
		return t->last_sess;
	for (i = 0; i < t->nsess; i++)
		if (t->sess[i]->target.pid == pid)
			return t->last_sess = t->sess[i];
	return NULL;
}

static int add_session(struct tracer *t, struct session *s)
{
	if (!GROW(t->sess, t->nsess, t->sess_cap, 8))
		return -ENOMEM;
	t->sess[t->nsess++] = s;
	return 0;
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
static int open_session(struct tracer *t, pid_t pid, pid_t attach_pid,
			bool snapshot, const struct exec_info *ei, char *err,
			size_t errlen)
{
	struct session_opts so = {
		.dir = t->opt->output_dir,
		.rotate_size = t->opt->rotate_size,
		.keep_files = t->opt->rotate_files,
		.sample = t->opt->sample,
		.stacks = t->opt->stacks,
		.stack_map_fd = probes_stack_map_fd(&t->probes),
	};
	struct go_binary *bin = NULL;
	struct target tg;
	struct bin_entry *be;
	struct session *s;
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
		be = ei ? bin_find(t, ei->dev, ei->ino) : NULL;
		if (!be || !be->go || !be->attached)
			return rc;
		target_init_gone(&tg, pid, ei->comm, ei->dev, ei->ino);
		snapshot = false;
	}
	be = bin_find(t, tg.exe_dev, tg.exe_ino);
	if (be && !be->go) {
		snprintf(err, errlen, "PID %d (%s) is not a Go program", (int)pid,
			 tg.comm);
		target_close(&tg);
		return -ENOEXEC;
	}
	if (!be) {
		rc = go_binary_open(tg.exe_path, &bin, berr, sizeof(berr));
		if (rc == 0)
			rc = go_binary_check_version(bin, berr, sizeof(berr));
		be = bin_add(t, tg.exe_dev, tg.exe_ino);
		if (rc) {
			snprintf(err, errlen, "PID %d (%s) is not a Go program we can trace: %s",
				 (int)pid, tg.comm, berr);
			go_binary_close(bin);
			target_close(&tg);
			return rc;
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
		rc = attach_binary(t, be, bin, tg.exe_path, attach_pid, berr,
				   sizeof(berr));
		if (rc) {
			snprintf(err, errlen, "PID %d (%s): %s", (int)pid,
				 tg.comm, berr);
			be->go = false;
			target_close(&tg);
			return rc;
		}
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		target_close(&tg);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* The session owns the target from here on, and borrows bin. */
	rc = session_start(s, &tg, bin, bias, &so, err, errlen);
	if (rc == 0)
		rc = add_session(t, s);
	if (rc) {
		session_finish(s);
		free(s);
		return rc;
	}
	t->processes_seen++;
	if (snapshot)
		take_snapshot(s, t->opt->verbose);
	else
		session_begin(s, 0);
	return 0;
}

static void add_counts(struct session_counts *a, const struct session_counts *b)
{
	int k;

	for (k = 0; k < TAF_REC_KIND_MAX; k++)
		a->records[k] += b->records[k];
	a->events += b->events;
	a->exists_events += b->exists_events;
	a->generations += b->generations;
	a->type_errors += b->type_errors;
	a->tiny_merged += b->tiny_merged;
	a->lost_on_write += b->lost_on_write;
	a->sampled_out += b->sampled_out;
	a->stacks_with += b->stacks_with;
	a->stacks_without += b->stacks_without;
	a->stacks_lost += b->stacks_lost;
	a->stacks_inline += b->stacks_inline;
}

static void report_session(const struct session *s)
{
	struct trace_sink_stats ss;

	trace_sink_get_stats(s->sink, &ss);
	if (s->sample > 1)
		say("PID %d: --sample %u: %llu of %llu allocations kept, %llu allocation events written",
		    (int)s->target.pid, s->sample,
		    (unsigned long long)(s->counts.records[TAF_REC_HEAP_ALLOC] -
					 s->counts.sampled_out),
		    (unsigned long long)s->counts.records[TAF_REC_HEAP_ALLOC],
		    (unsigned long long)s->counts.written[TW_EV_HEAP_OBJECT_ALLOC -
							  TW_EV_FIRST]);
	if (s->stacks)
		say("PID %d: --stacks: %llu allocations with a stack (%llu sent whole: no room in the stack map), %llu allocations without stacks",
		    (int)s->target.pid,
		    (unsigned long long)s->counts.stacks_with,
		    (unsigned long long)s->counts.stacks_inline,
		    (unsigned long long)s->counts.stacks_without);
	if (s->counts.stacks_lost)
		say("PID %d: --stacks: %llu stacks not written (sidecar failed, or its trace file was rotated away)",
		    (int)s->target.pid,
		    (unsigned long long)s->counts.stacks_lost);
	if (s->counts.tiny_merged)
		say("PID %d: %llu tiny allocations shared a live 8-byte ID with an earlier one in their block and are not separate events",
		    (int)s->target.pid, (unsigned long long)s->counts.tiny_merged);
	if (session_inconsistent(s))
		say("PID %d: %llu of %llu heap operations did not fit the shadow heap (missed or out-of-order events)",
		    (int)s->target.pid,
		    (unsigned long long)session_inconsistent(s),
		    (unsigned long long)session_heap_ops(s));
	if (s->counts.type_errors)
		say("PID %d: %llu type descriptors could not be read (events kept without type)",
		    (int)s->target.pid, (unsigned long long)s->counts.type_errors);
	if (s->counts.lost_on_write)
		say("PID %d: %llu events not written: %s", (int)s->target.pid,
		    (unsigned long long)s->counts.lost_on_write,
		    strerror(-s->sink_error));
	if (ss.files_written) {
		say("PID %d: %llu events in %llu files",
		    (int)s->target.pid, (unsigned long long)s->counts.events,
		    (unsigned long long)ss.files_written);
		say("last file %s", ss.current_path);
	}
}

/*
 * Cuts the last generation, reports (stderr and the JSON sidecar), and
 * frees the session at index i.
 */
static void close_session(struct tracer *t, size_t i, const char *reason)
{
	struct session *s = t->sess[i];
	struct trace_sink_stats ss;
	uint64_t st[TAF_STAT_MAX];
	int rc;

	session_cut(s);
	session_stacks_close(s);
	if (s->sink_failed)
		t->write_failed = true;
	report_session(s);
	probes_read_stats(&t->probes, st);
	rc = summary_json_write(s, st, reason);
	if (rc)
		say("PID %d: cannot write the summary file: %s",
		    (int)s->target.pid, strerror(-rc));
	trace_sink_get_stats(s->sink, &ss);
	add_counts(&t->done, &s->counts);
	t->done_bytes += ss.bytes_written;
	t->done_files += ss.files_written;
	if (t->last_sess == s)
		t->last_sess = NULL;
	session_finish(s);
	free(s);
	t->sess[i] = t->sess[--t->nsess];
}

/* ---- records ---------------------------------------------------------- */

static void ignore_pid(struct tracer *t, pid_t pid)
{
	u64_map_put(&t->ignored, (uint64_t)pid, 1);
}

static bool selected(struct tracer *t, pid_t pid, const struct exec_info *ei)
{
	char comm_path[64], comm[32] = "", exe[4096] = "";
	struct bin_entry *be;
	ssize_t n;
	FILE *f;

	snprintf(comm_path, sizeof(comm_path), "/proc/%d/comm", (int)pid);
	f = fopen(comm_path, "re");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	snprintf(comm_path, sizeof(comm_path), "/proc/%d/exe", (int)pid);
	n = readlink(comm_path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	/* Gone already: what the exec record said. */
	if (ei && !comm[0])
		snprintf(comm, sizeof(comm), "%.15s", ei->comm);
	if (ei && !exe[0] && (be = bin_find(t, ei->dev, ei->ino)) != NULL)
		snprintf(exe, sizeof(exe), "%s", be->path);
	return cli_process_selected(t->opt, pid, comm, exe);
}

/*
 * --all: a process we have not seen is found at start, exec'd (EI), or
 * sends its first record (FROM_RECORD: it runs an executable we probe).
 */
static void discover(struct tracer *t, pid_t pid, const struct exec_info *ei,
		     bool from_record)
{
	char err[512];

	if (pid == getpid() || u64_map_get(&t->ignored, (uint64_t)pid, NULL))
		return;
	if (!selected(t, pid, ei)) {
		ignore_pid(t, pid);
		return;
	}
	if (t->nsess >= t->opt->max_processes) {
		say("not tracing PID %d: --max-processes %u reached", (int)pid,
		    t->opt->max_processes);
		ignore_pid(t, pid);
		return;
	}
	if (open_session(t, pid, -1, ei == NULL, ei, err, sizeof(err)) != 0) {
		/*
		 * A process that sent a record runs a probed Go executable:
		 * not tracing it must be said.  Most other processes are
		 * simply not Go: that is only worth saying with -v -v.
		 */
		if (from_record || t->opt->verbose >= 2)
			say("not tracing PID %d: %s", (int)pid, err);
		ignore_pid(t, pid);
		return;
	}
	say("tracing PID %d (%s, %s)", (int)pid, t->sess[t->nsess - 1]->target.comm,
	    go_binary_build_info(t->sess[t->nsess - 1]->bin)->version);
}

static int on_record(void *ctx, void *data, size_t len);

/* Processes every record queued now. */
static void drain(struct tracer *t)
{
	t->draining = true;
	t->yield_poll = false;
	ring_buffer__consume(t->rb);
	t->draining = false;
}

static int on_record(void *ctx, void *data, size_t len)
{
	struct tracer *t = ctx;
	const struct taf_rec_hdr *h = data;
	struct session *s;
	char err[512];

	if (len < sizeof(*h))
		return 0;
	/*
	 * ring_buffer__poll drains for as long as producers keep up: hand
	 * control back every 50 ms so generations are cut, exits noticed
	 * and signals obeyed (the record itself is consumed already).
	 */
	if (!t->draining && ++t->since_clock_check >= 256) {
		t->since_clock_check = 0;
		if (now_ns() - t->poll_started > 50000000ull)
			t->yield_poll = true;
	}
	s = find_session(t, (pid_t)h->pid);
	if (h->kind == TAF_REC_EXEC) {
		/* A new image: whatever we traced under this PID is over. */
		if (s) {
			size_t i;

			for (i = 0; i < t->nsess; i++)
				if (t->sess[i] == s)
					close_session(t, i, "exec");
			if (!t->opt->all) {
				say("PID %d exec'd another program: tracing stops",
				    (int)h->pid);
				t->stop = true;
			}
		}
		u64_map_del(&t->ignored, h->pid);
		if (len >= sizeof(struct taf_rec_exec)) {
			const struct taf_rec_exec *r = data;
			struct exec_info ei;

			/* Kernel dev_t (major << 20 | minor) to st_dev. */
			ei.dev = makedev((unsigned)(r->dev >> 20),
					 (unsigned)(r->dev & 0xfffff));
			ei.ino = r->ino;
			memcpy(ei.comm, r->comm, sizeof(ei.comm));
			ei.comm[sizeof(ei.comm) - 1] = '\0';
			if (t->opt->all)
				discover(t, (pid_t)h->pid, &ei, false);
			else if (t->child && (pid_t)h->pid == t->child)
				t->child_exec = ei;
		}
		return 0;
	}
	if (!s) {
		if (t->opt->all) {
			discover(t, (pid_t)h->pid, NULL, true);
		} else if (t->child && (pid_t)h->pid == t->child &&
			   !u64_map_get(&t->ignored, h->pid, NULL)) {
			/* -- CMD: the program's first record; its heap was empty. */
			if (open_session(t, t->child, t->child, false,
					 t->child_exec.ino ? &t->child_exec : NULL,
					 err, sizeof(err)) != 0) {
				say("%s", err);
				ignore_pid(t, t->child);
			}
		}
		s = find_session(t, (pid_t)h->pid);
		if (!s) {
			t->orphan_records++;
			return 0;
		}
	}
	session_record(s, data, len);
	return t->yield_poll ? -ECANCELED : 0;
}

/* ---- modes ------------------------------------------------------------ */

static int start_pid(struct tracer *t)
{
	char err[512];
	int rc;

	rc = open_session(t, t->opt->pid, t->opt->pid, true, NULL, err,
			  sizeof(err));
	if (rc) {
		say("%s", err);
		return rc;
	}
	{
		struct session *s = t->sess[0];
		const struct go_build_info *bi = go_binary_build_info(s->bin);

		say("attached to PID %d (%s, %s%s%s): %zu probes, writing to %s",
		    (int)s->target.pid, s->target.comm, bi->version,
		    go_binary_is_pie(s->bin) ? ", PIE" : "",
		    go_binary_has_symtab(s->bin) ? "" : ", stripped",
		    t->bins[0].probes, t->opt->output_dir);
	}
	return 0;
}

static int start_all(struct tracer *t)
{
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d) {
		say("cannot read /proc: %s", strerror(errno));
		return -errno;
	}
	while ((de = readdir(d)) != NULL) {
		pid_t pid = (pid_t)atoi(de->d_name);

		if (pid > 0)
			discover(t, pid, NULL, false);
	}
	closedir(d);
	{
		size_t i, attached = 0;

		for (i = 0; i < t->nbins; i++)
			attached += t->bins[i].attached;
		say("attached to %zu Go processes (%zu executables), watching for new ones, writing to %s",
		    t->nsess, attached, t->opt->output_dir);
	}
	return 0;
}

/* PATH lookup as execvp would do it, for attaching before the exec. */
static int resolve_cmd(const char *cmd, char *out, size_t outlen)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (strchr(cmd, '/')) {
		if (!realpath(cmd, out))
			return -errno;
		return 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? path : ".", cmd);
		if (access(buf, X_OK) == 0 && realpath(buf, out))
			return 0;
		path += n;
		if (*path == ':')
			path++;
	}
	(void)outlen;
	return -ENOENT;
}

/*
 * -- CMD: fork, attach to the program's executable for the child's PID
 * while the child waits on a pipe, then let it exec: the probes are live
 * before the runtime's first allocation.
 */
static int start_cmd(struct tracer *t)
{
	char path[4096], err[512], go = 'g';
	struct go_binary *bin = NULL;
	struct bin_entry *be;
	struct stat st;
	int gate[2], rc;

	rc = resolve_cmd(t->opt->cmd[0], path, sizeof(path));
	if (rc) {
		say("cannot run %s: %s", t->opt->cmd[0], strerror(-rc));
		return rc;
	}
	rc = go_binary_open(path, &bin, err, sizeof(err));
	if (rc == 0)
		rc = go_binary_check_version(bin, err, sizeof(err));
	if (rc) {
		say("%s is not a Go program we can trace: %s", path, err);
		go_binary_close(bin);
		return rc;
	}
	if (stat(path, &st) != 0 || pipe2(gate, O_CLOEXEC) != 0) {
		say("cannot start %s: %s", path, strerror(errno));
		go_binary_close(bin);
		return -errno;
	}
	t->child = fork();
	if (t->child < 0) {
		say("cannot start %s: %s", path, strerror(errno));
		go_binary_close(bin);
		return -errno;
	}
	if (t->child == 0) {
		char c = 0;

		close(gate[1]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		if (read(gate[0], &c, 1) != 1 || c != 'g')
			_exit(127);
		execv(path, t->opt->cmd);
		fprintf(stderr, "traceaf-bpf: cannot exec %s: %s\n", path,
			strerror(errno));
		_exit(127);
	}
	close(gate[0]);
	be = bin_add(t, st.st_dev, st.st_ino);
	if (!be) {
		rc = -ENOMEM;
		snprintf(err, sizeof(err), "out of memory");
	} else {
		be->go = true;
		be->bin = bin;
		snprintf(be->path, sizeof(be->path), "%s", path);
		rc = attach_binary(t, be, bin, path, t->child, err, sizeof(err));
	}
	if (!be)
		go_binary_close(bin);
	if (rc) {
		say("%s", err);
		close(gate[1]);
		kill(t->child, SIGKILL);
		waitpid(t->child, NULL, 0);
		t->child = 0;
		return rc;
	}
	say("attached to %s (PID %d), starting it, writing to %s", path,
	    (int)t->child, t->opt->output_dir);
	if (write(gate[1], &go, 1) != 1)
		say("warning: cannot start %s", path);
	close(gate[1]);
	return 0;
}

/* ---- the loop --------------------------------------------------------- */

static void totals(struct tracer *t, struct session_counts *c,
		   uint64_t *bytes, uint64_t *files)
{
	size_t i;

	*c = t->done;
	*bytes = t->done_bytes;
	*files = t->done_files;
	for (i = 0; i < t->nsess; i++) {
		struct trace_sink_stats ss;

		add_counts(c, &t->sess[i]->counts);
		trace_sink_get_stats(t->sess[i]->sink, &ss);
		*bytes += ss.bytes_written;
		*files += ss.files_written;
	}
}

static uint64_t dropped_total(struct tracer *t, uint64_t st[TAF_STAT_MAX])
{
	uint64_t dropped = 0;
	int k;

	probes_read_stats(&t->probes, st);
	for (k = 1; k < TAF_REC_KIND_MAX; k++)
		dropped += st[TAF_STAT_DROPPED_BASE + k];
	return dropped;
}

static void print_progress(struct tracer *t, const char *prefix)
{
	uint64_t st[TAF_STAT_MAX], bytes, files, dropped;
	struct session_counts c;

	totals(t, &c, &bytes, &files);
	dropped = dropped_total(t, st);
	say("%s%llu allocations, %llu events in %llu generations, %llu bytes in %llu files, %llu dropped",
	    prefix, (unsigned long long)c.records[TAF_REC_HEAP_ALLOC],
	    (unsigned long long)c.events, (unsigned long long)c.generations,
	    (unsigned long long)bytes, (unsigned long long)files,
	    (unsigned long long)dropped);
}

static void print_drops(struct tracer *t)
{
	uint64_t st[TAF_STAT_MAX];
	int k;

	dropped_total(t, st);
	if (st[TAF_STAT_ALLOC_NO_OBJ])
		say("lost %llu allocations: the probe could not read the object's address from the target's stack",
		    (unsigned long long)st[TAF_STAT_ALLOC_NO_OBJ]);
	if (st[TAF_STAT_ALLOC_NO_TYPE])
		say("%llu allocations recorded without size or type (not readable at the probe)",
		    (unsigned long long)st[TAF_STAT_ALLOC_NO_TYPE]);
	for (k = 1; k < TAF_REC_KIND_MAX; k++)
		if (st[TAF_STAT_DROPPED_BASE + k])
			say("dropped %llu %s records: ring buffer full (try --ringbuf-size)",
			    (unsigned long long)st[TAF_STAT_DROPPED_BASE + k],
			    taf_rec_names[k].name);
	if (t->orphan_records)
		say("discarded %llu records of processes not traced (not selected, over --max-processes, or gone before they could be opened; -v -v says which)",
		    (unsigned long long)t->orphan_records);
}

static uint64_t records_of(const struct session *s)
{
	uint64_t n = 0;
	int k;

	for (k = 0; k < TAF_REC_KIND_MAX; k++)
		n += s->counts.records[k];
	return n;
}

static bool session_over(const struct tracer *t, const struct session *s)
{
	return !target_alive(&s->target) ||
	       (t->child_done && s->target.pid == t->child);
}

/* Finishes sessions whose process is gone; reaps the -- CMD child. */
static void check_exits(struct tracer *t)
{
	bool any = false, waiting = false;
	size_t i;

	if (t->child && !t->child_done) {
		int status;

		if (waitpid(t->child, &status, WNOHANG) == t->child) {
			t->child_done = true;
			t->child_status = WIFEXITED(status) ? WEXITSTATUS(status) :
					  WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
		}
	}
	for (i = 0; i < t->nsess; i++) {
		struct session *s = t->sess[i];

		if (!s->exited && session_over(t, s)) {
			/* Every record it made was reserved below this. */
			s->exited = true;
			s->exit_ring_pos = ring_pos_producer(&t->rpos);
		}
		any |= s->exited;
	}
	if (any || t->child_done) {
		/* What the processes sent before they went belongs to them. */
		drain(t);
	}
	i = 0;
	while (i < t->nsess) {
		struct session *s = t->sess[i];

		if (!s->exited) {
			i++;
			continue;
		}
		/*
		 * The drain stops at the first record still being written, by
		 * a probe of another process whose CPU was taken away between
		 * reserve and submit (an interrupt; under load, the host
		 * descheduling the vCPU): closing now would drop whatever this
		 * process queued behind that record (ring_pos.h).
		 */
		if (!ring_pos_passed(&t->rpos, s->exit_ring_pos)) {
			waiting = true;
			if (!s->close_deferred) {
				s->close_deferred = true;
				s->records_when_deferred = records_of(s);
			}
			i++;
			continue;
		}
		say("PID %d exited", (int)s->target.pid);
		if (s->close_deferred && t->opt->verbose)
			say("PID %d: %llu records came after its exit was seen, queued behind another probe's unfinished record",
			    (int)s->target.pid,
			    (unsigned long long)(records_of(s) -
						 s->records_when_deferred));
		close_session(t, i, "exit");
		if (!t->opt->all)
			t->stop = true;
	}
	if (t->child_done && !waiting)
		t->stop = true;
}

static void run_loop(struct tracer *t)
{
	uint64_t start = now_ns(), next_cut, next_progress;
	int forwarded = 0;
	size_t i;

	next_cut = start + t->opt->gen_period_ns;
	next_progress = start + 1000000000ull;
	while (!t->stop) {
		uint64_t now;
		int rc;

		t->poll_started = now_ns();
		t->yield_poll = false;
		rc = ring_buffer__poll(t->rb, 100);
		if (rc < 0 && rc != -EINTR && rc != -ECANCELED) {
			say("reading the ring buffer failed: %s", strerror(-rc));
			break;
		}
		if (stop_signal) {
			/* -- CMD: the program decides when it is done. */
			if (t->child && !t->child_done && forwarded < 1) {
				kill(t->child, stop_signal);
				stop_signal = 0;
				forwarded++;
			} else {
				break;
			}
		}
		now = now_ns();
		if (now >= next_cut) {
			for (i = 0; i < t->nsess; i++) {
				struct session *s = t->sess[i];
				bool was = s->sink_failed;

				session_cut(s);
				if (s->sink_failed && !was) {
					/*
					 * Nothing more can be kept: say so now, and
					 * stop making the target pay for probes.
					 */
					say("PID %d: cannot write trace files: %s; %s",
					    (int)s->target.pid,
					    strerror(-s->sink_error),
					    t->opt->all ? "its later events are counted as lost" :
					    "stopping (files written so far are valid)");
					if (!t->opt->all)
						t->stop = true;
				}
			}
			next_cut = now + t->opt->gen_period_ns;
		}
		if (t->opt->verbose && now >= next_progress) {
			print_progress(t, "");
			next_progress = now + 1000000000ull;
		}
		if (t->opt->duration_ns && now - start >= t->opt->duration_ns)
			break;
		check_exits(t);
	}
}

int tracer_run(const struct taf_options *opt)
{
	struct tracer t = { 0 };
	char err[512];
	bool failed = false;
	int rc, code = 0;

	t.opt = opt;
	u64_map_init(&t.ignored);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	if (opt->pid && kill(opt->pid, 0) != 0 && errno == ESRCH) {
		say("no such process: PID %d", (int)opt->pid);
		return 1;
	}
	if (geteuid() != 0) {
		say("must run as root (needs CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE to attach uprobes and read the target)");
		return 1;
	}
	/* -- CMD reads only its own child: no CAP_SYS_PTRACE needed. */
	if (kf_check(opt->pid || opt->all, err, sizeof(err))) {
		say("%s", err);
		return 1;
	}
	/* Exec is watched in every mode: -p stops when its target exec's. */
	rc = probes_load(&t.probes, (uint64_t)opt->ringbuf_mb << 20, true,
			 opt->all, opt->stacks ? TAF_STACK_MAP_ENTRIES : 0,
			 err, sizeof(err));
	if (rc) {
		say("%s", err);
		return 1;
	}
	probes_enable(&t.probes, true);
	t.rb = ring_buffer__new(probes_ringbuf_fd(&t.probes), on_record, &t, NULL);
	if (!t.rb) {
		say("cannot open the BPF ring buffer: %s", strerror(errno));
		probes_destroy(&t.probes);
		return 1;
	}
	rc = ring_pos_open(&t.rpos, probes_ringbuf_fd(&t.probes));
	if (rc)
		say("warning: cannot map the ring buffer's positions (%s): a process's last records may be lost when it exits under load",
		    strerror(-rc));

	if (opt->pid)
		rc = start_pid(&t);
	else if (opt->all)
		rc = start_all(&t);
	else
		rc = start_cmd(&t);
	if (rc) {
		failed = true;
		goto out;
	}
	run_loop(&t);

out:
	/*
	 * Stop recording, then detach (slow: one RCU grace period per uprobe
	 * link), then drain what was queued before the stop.  Records stamped
	 * after the stop would come from a half-detached set of probes.
	 */
	probes_enable(&t.probes, false);
	{
		uint64_t stop = now_ns();
		size_t i;

		for (i = 0; i < t.nsess; i++)
			session_stop(t.sess[i], stop);
	}
	drain(&t);
	probes_detach(&t.probes);
	drain(&t);
	while (t.nsess) {
		if (t.sess[t.nsess - 1]->sink_failed)
			failed = true;
		close_session(&t, t.nsess - 1,
			      stop_signal ? "signal" : "stopped");
	}
	if (!failed || t.processes_seen) {
		print_progress(&t, "done: ");
		if (t.done.tiny_merged && t.processes_seen > 1)
			say("%llu tiny allocations shared a live 8-byte ID with an earlier one in their block and are not separate events",
			    (unsigned long long)t.done.tiny_merged);
		print_drops(&t);
	}
	ring_buffer__free(t.rb);
	ring_pos_close(&t.rpos);
	probes_destroy(&t.probes);
	free(t.sess);
	{
		size_t i;

		for (i = 0; i < t.nbins; i++)
			go_binary_close(t.bins[i].bin);
	}
	free(t.bins);
	u64_map_free(&t.ignored);

	if (t.child) {
		if (!t.child_done) {
			int status;

			/* Stopped before the program ended: let it run on. */
			if (waitpid(t.child, &status, WNOHANG) == t.child)
				t.child_status = WIFEXITED(status) ?
					WEXITSTATUS(status) : 128 + WTERMSIG(status);
			else
				return failed ? 1 : 0;
		}
		return t.child_status;
	}
	if (failed || t.write_failed)
		code = 1;
	return code;
}
