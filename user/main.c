// SPDX-License-Identifier: BSD-3-Clause
/*
 * main.c - traceaf-bpf: attach to a running Go process and write its heap
 * allocations as Go execution traces (AllocFree experiment).
 *
 * Flow, top to bottom: parse options, inspect the target, plan probes, load
 * BPF, start the session, attach, poll the ring buffer and cut generations
 * until stopped, detach, drain, finalize files, report.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "freeze.h"
#include "heap_snapshot.h"
#include "go_binary.h"
#include "probe_plan.h"
#include "probes.h"
#include "session.h"
#include "target.h"
#include "trace_sink.h"

/* Oldest Go whose runtime we know; newer ones are tried with a warning. */
#define GO_MIN_MINOR 21
#define GO_MAX_KNOWN_MINOR 27

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

static int die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int die(const char *fmt, ...)
{
	va_list ap;

	fputs("traceaf-bpf: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

/* runtime address = link address + bias; 0 for position-dependent code. */
static int find_load_bias(const struct go_binary *bin, const struct target *t,
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
	return target_load_bias(t, vaddr, off, bias);
}

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
 * changes the snapshot already contains (DESIGN: exists events).
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
		fprintf(stderr, "traceaf-bpf: warning: cannot stop PID %d to read its heap (%s): the first file starts without exists events\n",
			(int)s->target.pid, strerror(-rc));
		session_begin(s, t0);
		return;
	}
	rc = heap_snapshot_read(&s->target, s->bin, s->load_bias, &cb, &st,
				err, sizeof(err));
	thaw_process(&fz);
	t1 = now_ns();
	if (rc)
		fprintf(stderr, "traceaf-bpf: warning: %s: the first file starts without a full snapshot\n",
			err);
	if (verbose)
		fprintf(stderr, "traceaf-bpf: snapshot: %llu spans, %llu objects (%llu typed), %llu stacks; target stopped %.1f ms\n",
			(unsigned long long)st.spans,
			(unsigned long long)st.objects,
			(unsigned long long)st.typed_objects,
			(unsigned long long)st.stacks, (t1 - t0) / 1e6);
	session_begin(s, t0);
}

static int on_record(void *ctx, void *data, size_t len)
{
	struct session *s = ctx;

	session_record(s, data, len);
	return 0;
}

static int ensure_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0750) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (stat(dir, &st) != 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static void print_progress(const struct session *s, const struct probes *p,
			   const char *prefix)
{
	uint64_t st[TAF_STAT_MAX], dropped = 0;
	struct trace_sink_stats ss;
	int k;

	probes_read_stats(p, st);
	for (k = 1; k < TAF_REC_KIND_MAX; k++)
		dropped += st[TAF_STAT_DROPPED_BASE + k];
	trace_sink_get_stats(s->sink, &ss);
	fprintf(stderr,
		"traceaf-bpf: %s%llu allocations, %llu events in %llu generations, "
		"%llu bytes in %llu files, %llu dropped\n",
		prefix,
		(unsigned long long)s->counts.records[TAF_REC_HEAP_ALLOC],
		(unsigned long long)s->counts.events,
		(unsigned long long)s->counts.generations,
		(unsigned long long)ss.bytes_written,
		(unsigned long long)ss.files_written,
		(unsigned long long)dropped);
}

static void print_summary(const struct session *s, const struct probes *p)
{
	static const char *const kind_names[TAF_REC_KIND_MAX] = {
		[TAF_REC_HEAP_ALLOC] = "HeapObjectAlloc",
		[TAF_REC_SPAN_SWEEP] = "HeapObjectFree",
		[TAF_REC_SPAN_ALLOC] = "SpanAlloc",
		[TAF_REC_SPAN_FREE] = "SpanFree",
		[TAF_REC_STACK_ALLOC] = "GoroutineStackAlloc",
		[TAF_REC_STACK_FREE] = "GoroutineStackFree",
	};
	uint64_t st[TAF_STAT_MAX];
	struct trace_sink_stats ss;
	int k;

	print_progress(s, p, "done: ");
	probes_read_stats(p, st);
	for (k = 1; k < TAF_REC_KIND_MAX; k++) {
		if (st[TAF_STAT_DROPPED_BASE + k])
			fprintf(stderr, "traceaf-bpf: dropped %llu %s records: ring buffer full (try --ringbuf-size)\n",
				(unsigned long long)st[TAF_STAT_DROPPED_BASE + k],
				kind_names[k] ? kind_names[k] : "?");
	}
	if (s->counts.lost_on_write)
		fprintf(stderr, "traceaf-bpf: %llu events not written: %s\n",
			(unsigned long long)s->counts.lost_on_write,
			strerror(-s->sink_error));
	if (s->counts.tiny_merged)
		fprintf(stderr, "traceaf-bpf: %llu tiny allocations shared a live 8-byte ID with an earlier one in their block and are not separate events\n",
			(unsigned long long)s->counts.tiny_merged);
	if (session_inconsistent(s))
		fprintf(stderr, "traceaf-bpf: %llu of %llu heap operations did not fit the shadow heap (missed or out-of-order events)\n",
			(unsigned long long)session_inconsistent(s),
			(unsigned long long)session_heap_ops(s));
	if (s->counts.type_errors)
		fprintf(stderr, "traceaf-bpf: %llu type descriptors could not be read (events kept without type)\n",
			(unsigned long long)s->counts.type_errors);
	trace_sink_get_stats(s->sink, &ss);
	if (ss.files_written)
		fprintf(stderr, "traceaf-bpf: last file %s\n", ss.current_path);
}

int main(int argc, char **argv)
{
	struct taf_options opt;
	struct session_opts sopt;
	struct target target;
	struct go_binary *bin = NULL;
	const struct go_build_info *bi;
	struct probe_plan plan = { 0 };
	struct probes probes = { 0 };
	struct session session;
	struct ring_buffer *rb = NULL;
	bool session_up = false;
	uint64_t bias = 0, start, next_cut, next_progress;
	char err[512];
	int rc, exit_code = 1;

	switch (cli_parse(argc, argv, &opt)) {
	case CLI_RUN: break;
	case CLI_EXIT_OK: return 0;
	default: return 2;
	}

	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	if (kill(opt.pid, 0) != 0 && errno == ESRCH)
		return die("no such process: PID %d", (int)opt.pid);
	if (geteuid() != 0)
		return die("must run as root (needs CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE to attach uprobes and read PID %d)",
			   (int)opt.pid);

	rc = target_open(opt.pid, &target, err, sizeof(err));
	if (rc)
		return die("%s", err);

	rc = go_binary_open(target.exe_path, &bin, err, sizeof(err));
	if (rc) {
		die("PID %d (%s) is not a Go program we can trace: %s",
		    (int)opt.pid, target.comm, err);
		target_close(&target);
		return 1;
	}
	bi = go_binary_build_info(bin);
	if (bi->major != 1 || bi->minor < GO_MIN_MINOR) {
		die("PID %d (%s) was built with %s; Go 1.%d or newer is required",
		    (int)opt.pid, target.comm, bi->version, GO_MIN_MINOR);
		goto cleanup_early;
	}
	if (bi->minor > GO_MAX_KNOWN_MINOR)
		fprintf(stderr, "traceaf-bpf: warning: %s is newer than the newest Go this version knows (1.%d); trying anyway\n",
			bi->version, GO_MAX_KNOWN_MINOR);

	rc = find_load_bias(bin, &target, &bias);
	if (rc) {
		die("cannot find where %s is loaded in PID %d", target.exe_path,
		    (int)opt.pid);
		goto cleanup_early;
	}

	rc = probe_plan_build(bin, &plan, err, sizeof(err));
	if (rc) {
		die("PID %d (%s): %s", (int)opt.pid, target.comm, err);
		goto cleanup_early;
	}

	rc = ensure_dir(opt.output_dir);
	if (rc) {
		die("cannot use output directory %s: %s", opt.output_dir,
		    strerror(-rc));
		goto cleanup_early;
	}

	rc = probes_load(&probes, (uint64_t)opt.ringbuf_mb << 20, err, sizeof(err));
	if (rc) {
		die("%s", err);
		goto cleanup_early;
	}

	sopt.dir = opt.output_dir;
	sopt.rotate_size = opt.rotate_size;
	sopt.keep_files = opt.rotate_files;
	rc = session_start(&session, &target, bin, bias, &sopt, err, sizeof(err));
	if (rc) {
		die("%s", err);
		/* The session owns target and binary from here on. */
		session_finish(&session);
		probes_destroy(&probes);
		probe_plan_free(&plan);
		return 1;
	}
	session_up = true;

	rb = ring_buffer__new(probes_ringbuf_fd(&probes), on_record, &session, NULL);
	if (!rb) {
		die("cannot open the BPF ring buffer: %s", strerror(errno));
		goto cleanup;
	}

	rc = probes_add_layout(&probes, &plan);
	if (rc < 0) {
		die("cannot configure the BPF programs: %s", strerror(-rc));
		goto cleanup;
	}
	rc = probes_attach(&probes, &plan, target.exe_path, opt.pid, err, sizeof(err));
	if (rc) {
		die("%s", err);
		goto cleanup;
	}
	take_snapshot(&session, opt.verbose);
	fprintf(stderr, "traceaf-bpf: attached to PID %d (%s, %s%s%s): %zu probes on %u functions, writing to %s\n",
		(int)opt.pid, target.comm, bi->version,
		go_binary_is_pie(bin) ? ", PIE" : "",
		go_binary_has_symtab(bin) ? "" : ", stripped",
		plan.n, plan.funcs, opt.output_dir);
	if (plan.single_stepped && opt.verbose)
		fprintf(stderr, "traceaf-bpf: %u probes sit on single-stepped instructions (slower)\n",
			plan.single_stepped);

	start = now_ns();
	next_cut = start + opt.gen_period_ns;
	next_progress = start + 1000000000ull;
	exit_code = 0;
	for (;;) {
		uint64_t now;

		rc = ring_buffer__poll(rb, 100);
		if (rc < 0 && rc != -EINTR) {
			die("reading the ring buffer failed: %s", strerror(-rc));
			exit_code = 1;
			break;
		}
		if (stop_signal)
			break;
		now = now_ns();
		if (now >= next_cut) {
			session_cut(&session);
			next_cut = now + opt.gen_period_ns;
		}
		if (opt.verbose && now >= next_progress) {
			print_progress(&session, &probes, "");
			next_progress = now + 1000000000ull;
		}
		if (opt.duration_ns && now - start >= opt.duration_ns)
			break;
		if (!target_alive(&session.target)) {
			fprintf(stderr, "traceaf-bpf: PID %d exited\n", (int)opt.pid);
			break;
		}
	}

cleanup:
	/* Detach first so nothing new arrives, then drain what is queued. */
	probes_detach(&probes);
	if (rb) {
		ring_buffer__consume(rb);
		ring_buffer__free(rb);
	}
	if (session_up) {
		session_cut(&session);
		print_summary(&session, &probes);
		if (session.sink_failed)
			exit_code = 1;
		session_finish(&session);
	}
	probes_destroy(&probes);
	probe_plan_free(&plan);
	return exit_code;

cleanup_early:
	probe_plan_free(&plan);
	go_binary_close(bin);
	target_close(&target);
	return 1;
}
