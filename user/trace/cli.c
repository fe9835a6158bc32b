// SPDX-License-Identifier: BSD-3-Clause
/* cli.c - command line of traceaf-bpf. */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/session.h"

#define DEFAULT_OUTPUT_DIR "./traceaf-out"
#define DEFAULT_GEN_PERIOD_NS 1000000000ull
#define DEFAULT_ROTATE_SIZE (256ull << 20)
/* 32 MiB: the ring is mapped twice (so a record can wrap) and both
 * mappings count in the daemon's RSS, so it is the largest item of a
 * 1 GiB-heap attach; at 32 MiB sustained 2 M events/s still drop nothing
 * on these machines (BENCHMARKS.md), the trap rate being the limit. */
#define DEFAULT_RINGBUF_MB 32
/*
 * --memprofilerate: the BPF read of the samples in a GC pause (snap.bpf.h)
 * costs about 4 us plus 0.3 us a live sample on these VMs (BENCHMARKS.md):
 * a heap of up to about 300 samples (150 MiB live at the default rate) is
 * read within this, a larger one by the daemon during the marks.  Go's
 * own pauses are tens of microseconds: this at most doubles them.
 */
#define DEFAULT_PAUSE_BUDGET_US 100
#define DEFAULT_MAX_PROCESSES 64

int parse_duration_ns(const char *s, uint64_t *ns)
{
	static const struct { const char *suffix; double mult; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "m", 60e9 }, { "h", 3600e9 }, { "", 1e9 },
	};
	char *end;
	double v;
	size_t i;

	if (!s || !*s || isspace((unsigned char)*s) || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix) == 0) {
			double r = v * units[i].mult;

			if (r >= 1.8e19)
				return -EINVAL;
			*ns = (uint64_t)r;
			return 0;
		}
	}
	return -EINVAL;
}

int parse_size(const char *s, uint64_t *bytes)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (!s || !*s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (toupper((unsigned char)*end)) {
	case '\0': break;
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	case 'T': shift = 40; end++; break;
	case 'B': break;
	default: return -EINVAL;
	}
	if (shift && (*end == 'i'))
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -EINVAL;
	*bytes = (uint64_t)v << shift;
	return 0;
}

void cli_print_help(void)
{
	fputs(
"NAME\n"
"    traceaf-bpf - trace every heap allocation of a running Go program\n"
"\n"
"SYNOPSIS\n"
"    traceaf-bpf -p PID [OPTIONS]\n"
"    traceaf-bpf --all [--include PAT]... [--exclude PAT]... [OPTIONS]\n"
"    traceaf-bpf [OPTIONS] -- CMD [ARGS...]\n"
"    traceaf-bpf report FILE|DIR [--json] [--html OUT] [--top N]\n"
"    traceaf-bpf pprof FILE|DIR -o OUT.pb.gz\n"
"    traceaf-bpf --help | --version\n"
"\n"
"DESCRIPTION\n"
"    Attaches uprobes to the Go runtime inside a live process, without\n"
"    restarting, relinking or reconfiguring it, and writes what the\n"
"    allocator does as Go execution traces in the format of the runtime's\n"
"    own AllocFree experiment (GODEBUG=traceallocfree=1, Go 1.23+).  Every\n"
"    file stands alone: Go's own parser (internal/trace, go tool trace)\n"
"    reads it.  Runs as root.\n"
"\n"
"    When every probe is live, one line containing \"attached\" is printed\n"
"    on stderr.  The tracer stops when the target exits, --duration\n"
"    elapses, or on a signal (see SIGNALS); it then detaches, writes the\n"
"    last generation, closes every file and exits 0.\n"
"\n"
"    With --all, every Go process on the host is traced, including those\n"
"    started later (seen at exec); probes are attached once per distinct\n"
"    executable.  Each process gets its own files, finalized when it\n"
"    exits.\n"
"\n"
"    With -- CMD, the program is started with the probes already in place,\n"
"    so its first allocation is recorded; traceaf-bpf exits with the\n"
"    program's exit status.  SIGINT, SIGTERM and SIGHUP are passed on to\n"
"    it.\n"
"\n"
"    The report and pprof subcommands read trace files (no root needed):\n"
"    per type and allocation site counts, leak suspects and a pprof\n"
"    profile; see traceaf-bpf report --help and traceaf-bpf pprof --help.\n"
"\n"
"OPTIONS\n"
"    -p, --pid PID\n"
"        Process to trace.\n"
"    -a, --all\n"
"        Every Go process, now and later.\n"
"    --include PAT, --exclude PAT\n"
"        With --all: trace only processes matching an --include (if any)\n"
"        and no --exclude.  PAT is a command name, a glob on the\n"
"        executable's path, or a PID.  Repeatable.\n"
"    --max-processes N\n"
"        With --all: trace at most N processes at once (default 64);\n"
"        more are reported and skipped.\n"
"    -o, --output DIR\n"
"        Directory for trace files (created if missing).  Default\n"
"        ./traceaf-out.  Files are named COMM-PID-TIME-SEQ.trace and sort\n"
"        chronologically.\n"
"    -d, --duration DUR\n"
"        Stop after DUR (e.g. 30s, 500ms, 5m).  Default: until stopped.\n"
"    -g, --generation-period DUR\n"
"        Length of a trace generation (the runtime uses about 1s).\n"
"        Default 1s.\n"
"    -r, --rotate-size SIZE\n"
"        Start a new file at the first generation boundary after a file\n"
"        reaches SIZE (e.g. 64M, 1G).  Default 256M; 0 disables.\n"
"    --generation-size SIZE\n"
"        Also end a generation once its events take SIZE bytes encoded,\n"
"        and a quarter of --rotate-size (at least 64K), so that a file\n"
"        ends within about one generation of --rotate-size and a full\n"
"        disk loses one such generation at most; and a quarter of the\n"
"        room left on the output's file system, so that a disk nearly\n"
"        full still takes generations that fit.  Default 8M; 0: by\n"
"        period (and that room) only.\n"
"    -n, --rotate-files N\n"
"        Keep only the newest N files per process.  Default: keep all.\n"
"    --sample N\n"
"        Record one heap allocation in N (and the frees of those objects\n"
"        only); spans and stacks are all recorded.  Saves disk and daemon\n"
"        time, not the probes' cost in the target.  Default 1 (all).\n"
"    --memprofilerate BYTES\n"
"        Production mode: record only the allocations the Go runtime's own\n"
"        heap profiler samples, one per BYTES allocated on average (the\n"
"        name of go test's -memprofilerate; 524288 is the runtime's\n"
"        default, 1 samples every allocation).  No probe on the allocation\n"
"        or free paths: once per GC cycle, as marking ends (one probe, on\n"
"        runtime.gcSweep), the runtime's live samples (its profile\n"
"        specials) are read from the process's memory; a sample new since\n"
"        the last read is an allocation, one gone is a free, and one at a\n"
"        known address whose slot the last sweep freed (allocBits) is a\n"
"        free and an allocation.  Every sample is live through at least\n"
"        one mark, so none is missed while the reads keep up; a read the\n"
"        sweep overtook counts for the spans it had not reached\n"
"        (\"partial\"), one it beat is \"missed\", both counted on stderr\n"
"        and in summary.json, and samples born and freed around them are\n"
"        not in the trace; nor is anything of a program that exits before\n"
"        its first GC (use --memprofilerate-exact for such programs).\n"
"        Allocations are placed just before the end of the first mark\n"
"        that saw them, frees just after the end of the mark whose sweep\n"
"        freed them.  While attached, the program's\n"
"        runtime.MemProfileRate is set to BYTES; the old value\n"
"        is written back at detach, also when the tracer is killed (a\n"
"        watchdog process does it).  No span or goroutine-stack events in\n"
"        this mode.  report and pprof scale the samples to estimates as\n"
"        the runtime does.\n"
"    --memprofilerate-exact BYTES\n"
"        --memprofilerate with a probe where the runtime samples\n"
"        (mProf_Malloc) and where it frees a sample (freeSpecial): each\n"
"        sample at its own time, two traps per sample (8-14 % on a\n"
"        2 GB/s allocation loop at 524288, about 1 % on servers).\n"
"    --pause-budget US\n"
"        With --memprofilerate: the longest the tracer may lengthen a GC\n"
"        pause (microseconds, default 100).  Where the heap's samples can\n"
"        be read within it, the BPF programs read them in the pause at\n"
"        each mark's end, with the world stopped: nothing is missed and\n"
"        the daemon is not woken.  A larger heap is read by the daemon\n"
"        during the marks instead (a second probe, on\n"
"        runtime.gcMarkTinyAllocs, tells it when they begin; attached only\n"
"        then and while a snapshot comes near the budget; counted on\n"
"        stderr and in summary.json \"reads\": in_pause, in_pause_cut).\n"
"        0 always leaves it to the daemon.\n"
"    --check-reads\n"
"        With --memprofilerate-exact: also read the samples at each mark,\n"
"        as --memprofilerate does, and count where the reads disagree with\n"
"        the probes (summary.json \"reads\"); for testing the reads.\n"
"    --tiny-as-runtime\n"
"        Emit tiny allocations (under 16 bytes, no pointers; the runtime\n"
"        packs them into shared 16-byte blocks) exactly as the runtime's\n"
"        own trace does, so that HeapObjectAlloc events match\n"
"        GODEBUG=traceallocfree=1 one for one: from Go 1.24 one event per\n"
"        tiny object at its own address, so objects in the same 8-byte\n"
"        half allocate a live ID again; up to Go 1.23 only the first\n"
"        object of each block; a block is freed once, at its base.  Such\n"
"        files replay with alloc-of-live and never-freed IDs, as the\n"
"        runtime's own do.  Default: a block is up to two IDs (its 8-byte\n"
"        halves), each allocated once and freed (README.md, \"Where the\n"
"        output differs from the runtime's\").\n"
"    --stacks\n"
"        Also record the call stack of every heap allocation, symbolized\n"
"        (function, file, line; stripped binaries too) into F.stacks\n"
"        beside each trace file F (README.md, \"Stack sidecar\").  Costs\n"
"        the target about 1 us more per allocation.\n"
"    --no-cache\n"
"        Plan the probes of every executable afresh instead of reading the\n"
"        plan kept from an earlier attach to the same build (keyed by its\n"
"        build IDs, size and mtime, and this tracer's own binary).\n"
"    --cache-dir DIR\n"
"        Where those plans are kept.  Default /var/cache/traceaf-bpf; it is\n"
"        created 0700, and not used if it or a file in it is a symbolic\n"
"        link, belongs to another user or is writable by anyone else.\n"
"    --ringbuf-size MIB\n"
"        BPF ring buffer size in MiB (power of two).  Default 32.  It is\n"
"        mapped twice, so it counts double in RSS; raise it if -v reports\n"
"        drops.\n"
"    -v, --verbose\n"
"        Progress and per-kind drop counts every second on stderr.\n"
"    -h, --help\n"
"        This text.\n"
"    -V, --version\n"
"        Version.\n"
"\n"
"OUTPUT\n"
"    Go execution traces (header \"go 1.23 trace\") holding the\n"
"    experiment's HeapObjectAlloc events in per-thread batches, a\n"
"    frequency batch (64 ns ticks), the AllocFree info batch and a\n"
"    per-generation type table.  Check one with\n"
"    go run internal/trace/testdata/cmd/gotracevalidate (Go 1.23 sources).\n"
"\n"
"SIGNALS\n"
"    None of these ends the tracer with a file unfinished.\n"
"    SIGINT, SIGTERM, SIGHUP\n"
"        Stop cleanly, as above (SIGHUP too: a closed terminal or ssh\n"
"        session leaves whole files).  With -- CMD the first one is passed\n"
"        on to the program and the tracer stops when it exits; a second\n"
"        one stops the tracer and leaves the program running.\n"
"    SIGUSR1\n"
"        End every process's current file now: its last generation is\n"
"        written and the file closed, complete; the process's next event\n"
"        starts a new file (with the exists events of everything live).\n"
"    SIGUSR2\n"
"        Print the counts so far on stderr: totals, one line per traced\n"
"        process with its last file, and drops.\n"
"    SIGPIPE\n"
"        Ignored.\n"
"    With -- CMD, SIGUSR1 and SIGUSR2 are the tracer's own: signal the\n"
"    program by its PID.\n"
"\n"
"EXIT STATUS\n"
"    0 after a clean stop; 1 on error (no such process, not a Go program,\n"
"    unsupported Go version, not root, a missing capability, no kernel\n"
"    BTF, no uprobes: checked before anything is attached); 2 on bad\n"
"    usage.  With -- CMD: the program's own exit status (128+N if killed\n"
"    by signal N).\n"
"\n"
"OVERHEAD\n"
"    Each allocation in the target hits uprobes: a few hundred ns when\n"
"    the probed instruction is emulated by the kernel, 10-15 us when it\n"
"    is single-stepped.  See README.md and BENCHMARKS.md for figures.\n"
"    The target's code is not modified beyond the kernel's breakpoints,\n"
"    which are removed on exit, also when the tracer is killed.\n",
	      stdout);
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

enum { OPT_RINGBUF = 0x100, OPT_INCLUDE, OPT_EXCLUDE, OPT_MAX_PROCS };
enum { OPT_SAMPLE = 0x180 };
enum { OPT_STACKS = 0x190, OPT_MEMPROFILERATE, OPT_MEMPROFILE_EXACT,
       OPT_CHECK_READS, OPT_PAUSE_BUDGET };
enum { OPT_GEN_SIZE = 0x1a0 };
enum { OPT_NO_CACHE = 0x1b0, OPT_CACHE_DIR };
enum { OPT_TINY_AS_RUNTIME = 0x1c0 };

static int push_pattern(const char ***list, size_t *n, const char *p)
{
	const char **nl = realloc(*list, (*n + 1) * sizeof(*nl));

	if (!nl)
		return -ENOMEM;
	nl[(*n)++] = p;
	*list = nl;
	return 0;
}

void cli_free(struct taf_options *o)
{
	free(o->include);
	free(o->exclude);
	o->include = o->exclude = NULL;
	o->ninclude = o->nexclude = 0;
}

static bool pattern_matches(const char *pat, pid_t pid, const char *comm,
			    const char *exe)
{
	char *end;
	long v = strtol(pat, &end, 10);

	if (*pat && !*end)
		return v == (long)pid;
	if (comm && strcmp(pat, comm) == 0)
		return true;
	return exe && fnmatch(pat, exe, 0) == 0;
}

bool cli_process_selected(const struct taf_options *o, pid_t pid,
			  const char *comm, const char *exe)
{
	size_t i;
	bool in = o->ninclude == 0;

	for (i = 0; !in && i < o->ninclude; i++)
		in = pattern_matches(o->include[i], pid, comm, exe);
	for (i = 0; in && i < o->nexclude; i++)
		if (pattern_matches(o->exclude[i], pid, comm, exe))
			in = false;
	return in;
}

enum cli_result cli_parse(int argc, char **argv, struct taf_options *o)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "include", required_argument, NULL, OPT_INCLUDE },
		{ "exclude", required_argument, NULL, OPT_EXCLUDE },
		{ "max-processes", required_argument, NULL, OPT_MAX_PROCS },
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "generation-period", required_argument, NULL, 'g' },
		{ "rotate-size", required_argument, NULL, 'r' },
		{ "rotate-files", required_argument, NULL, 'n' },
		{ "generation-size", required_argument, NULL, OPT_GEN_SIZE },
		{ "ringbuf-size", required_argument, NULL, OPT_RINGBUF },
		{ "sample", required_argument, NULL, OPT_SAMPLE },
		{ "stacks", no_argument, NULL, OPT_STACKS },
		{ "memprofilerate", required_argument, NULL, OPT_MEMPROFILERATE },
		{ "memprofilerate-exact", required_argument, NULL, OPT_MEMPROFILE_EXACT },
		{ "check-reads", no_argument, NULL, OPT_CHECK_READS },
		{ "pause-budget", required_argument, NULL, OPT_PAUSE_BUDGET },
		{ "tiny-as-runtime", no_argument, NULL, OPT_TINY_AS_RUNTIME },
		{ "no-cache", no_argument, NULL, OPT_NO_CACHE },
		{ "cache-dir", required_argument, NULL, OPT_CACHE_DIR },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	unsigned long ul;
	int c;

	memset(o, 0, sizeof(*o));
	o->output_dir = DEFAULT_OUTPUT_DIR;
	o->gen_period_ns = DEFAULT_GEN_PERIOD_NS;
	o->rotate_size = DEFAULT_ROTATE_SIZE;
	o->gen_size = SESSION_GEN_SIZE_DEFAULT;
	o->ringbuf_mb = DEFAULT_RINGBUF_MB;
	o->max_processes = DEFAULT_MAX_PROCESSES;
	o->sample = 1;
	o->pause_budget_us = DEFAULT_PAUSE_BUDGET_US;

	optind = 1;
	opterr = 0;
	/* "+" stops at the first non-option so "-- CMD" keeps its own flags. */
	while ((c = getopt_long(argc, argv, "+p:ao:d:g:r:n:vhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_uint(optarg, INT32_MAX, &ul) || ul == 0) {
				fprintf(stderr, "traceaf-bpf: invalid PID '%s'\n", optarg);
				return CLI_ERROR;
			}
			o->pid = (pid_t)ul;
			break;
		case 'a':
			o->all = true;
			break;
		case OPT_INCLUDE:
		case OPT_EXCLUDE:
			if (push_pattern(c == OPT_INCLUDE ? &o->include : &o->exclude,
					 c == OPT_INCLUDE ? &o->ninclude : &o->nexclude,
					 optarg)) {
				fprintf(stderr, "traceaf-bpf: out of memory\n");
				return CLI_ERROR;
			}
			break;
		case OPT_MAX_PROCS:
			if (parse_uint(optarg, 100000, &ul) || ul == 0) {
				fprintf(stderr, "traceaf-bpf: invalid process count '%s'\n", optarg);
				return CLI_ERROR;
			}
			o->max_processes = (unsigned)ul;
			break;
		case 'o':
			if (!*optarg) {
				fprintf(stderr, "traceaf-bpf: empty output directory\n");
				return CLI_ERROR;
			}
			o->output_dir = optarg;
			break;
		case 'd':
			if (parse_duration_ns(optarg, &o->duration_ns)) {
				fprintf(stderr, "traceaf-bpf: invalid duration '%s' (e.g. 10s, 500ms, 2m)\n", optarg);
				return CLI_ERROR;
			}
			break;
		case 'g':
			if (parse_duration_ns(optarg, &o->gen_period_ns) ||
			    o->gen_period_ns < 10000000ull) {
				fprintf(stderr, "traceaf-bpf: invalid generation period '%s' (at least 10ms)\n", optarg);
				return CLI_ERROR;
			}
			break;
		case 'r':
			if (parse_size(optarg, &o->rotate_size)) {
				fprintf(stderr, "traceaf-bpf: invalid size '%s' (e.g. 64M, 1G)\n", optarg);
				return CLI_ERROR;
			}
			break;
		case OPT_GEN_SIZE:
			if (parse_size(optarg, &o->gen_size)) {
				fprintf(stderr, "traceaf-bpf: invalid size '%s' (e.g. 8M)\n", optarg);
				return CLI_ERROR;
			}
			break;
		case 'n':
			if (parse_uint(optarg, 1000000, &ul)) {
				fprintf(stderr, "traceaf-bpf: invalid file count '%s'\n", optarg);
				return CLI_ERROR;
			}
			o->rotate_files = (unsigned)ul;
			break;
		case OPT_RINGBUF:
			if (parse_uint(optarg, 4096, &ul) || ul == 0 || (ul & (ul - 1))) {
				fprintf(stderr, "traceaf-bpf: ring buffer size must be a power of two in MiB, 1..4096\n");
				return CLI_ERROR;
			}
			o->ringbuf_mb = (unsigned)ul;
			break;
		case OPT_SAMPLE:
			if (parse_uint(optarg, 1000000, &ul) || ul == 0) {
				fprintf(stderr, "traceaf-bpf: invalid sampling rate '%s' (1..1000000)\n", optarg);
				return CLI_ERROR;
			}
			o->sample = (unsigned)ul;
			break;
		case OPT_STACKS:
			o->stacks = true;
			break;
		case OPT_TINY_AS_RUNTIME:
			o->tiny_as_runtime = true;
			break;
		case OPT_NO_CACHE:
			o->no_cache = true;
			break;
		case OPT_CACHE_DIR:
			o->cache_dir = optarg;
			break;
		case OPT_MEMPROFILERATE:
		case OPT_MEMPROFILE_EXACT: {
			uint64_t v;

			/* Go's MemProfileRate is an int; 0 would turn it off. */
			if (parse_size(optarg, &v) || v == 0 || v > INT32_MAX) {
				fprintf(stderr, "traceaf-bpf: invalid --%s '%s' (bytes, 1..2G)\n",
					c == OPT_MEMPROFILE_EXACT ?
					"memprofilerate-exact" : "memprofilerate",
					optarg);
				return CLI_ERROR;
			}
			o->memprofilerate = v;
			o->memprofile_exact = c == OPT_MEMPROFILE_EXACT;
			break;
		}
		case OPT_CHECK_READS:
			o->check_reads = true;
			break;
		case OPT_PAUSE_BUDGET:
			if (parse_uint(optarg, 100000, &ul)) {
				fprintf(stderr, "traceaf-bpf: invalid --pause-budget '%s' (microseconds, 0..100000)\n", optarg);
				return CLI_ERROR;
			}
			o->pause_budget_us = (unsigned)ul;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			cli_print_help();
			return CLI_EXIT_OK;
		case 'V':
			printf("traceaf-bpf %s\n", TRACEAF_VERSION);
			return CLI_EXIT_OK;
		case '?':
		default:
			if (optopt && optopt < 0x100)
				fprintf(stderr, "traceaf-bpf: unknown or incomplete option '-%c'; see --help\n", optopt);
			else
				fprintf(stderr, "traceaf-bpf: unknown or incomplete option '%s'; see --help\n", argv[optind - 1]);
			return CLI_ERROR;
		}
	}
	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--") == 0) {
			o->cmd = &argv[optind];
		} else {
			fprintf(stderr, "traceaf-bpf: unexpected argument '%s'; see --help\n", argv[optind]);
			return CLI_ERROR;
		}
	}
	if (!o->pid && !o->all && !o->cmd) {
		fprintf(stderr, "traceaf-bpf: no target: give -p PID, --all or -- CMD; see --help\n");
		return CLI_ERROR;
	}
	if ((o->pid != 0) + o->all + (o->cmd != NULL) > 1) {
		fprintf(stderr, "traceaf-bpf: give only one of -p PID, --all and -- CMD\n");
		return CLI_ERROR;
	}
	if (o->memprofilerate && o->sample > 1) {
		fprintf(stderr, "traceaf-bpf: --sample and --memprofilerate do not go together: the runtime already samples\n");
		return CLI_ERROR;
	}
	if (o->memprofilerate && o->tiny_as_runtime) {
		fprintf(stderr, "traceaf-bpf: --tiny-as-runtime shapes every tiny allocation's events; --memprofilerate records samples only\n");
		return CLI_ERROR;
	}
	if (o->check_reads && !o->memprofile_exact) {
		fprintf(stderr, "traceaf-bpf: --check-reads goes with --memprofilerate-exact: it holds the reads against the probes\n");
		return CLI_ERROR;
	}
	if ((o->ninclude || o->nexclude) && !o->all) {
		fprintf(stderr, "traceaf-bpf: --include and --exclude go with --all\n");
		return CLI_ERROR;
	}
	return CLI_RUN;
}
