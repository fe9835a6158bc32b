/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cli.h - command line of traceaf-bpf.
 *
 * Owns: option parsing into one struct, unit parsing (durations, sizes) and
 * the --help text.  No side effects beyond printing usage.
 */
#ifndef CLI_H
#define CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct taf_options {
	pid_t pid;                  /* -p */
	bool all;                   /* --all */
	char **cmd;                 /* argv after "--", NULL-terminated */
	const char *output_dir;     /* -o, default "./traceaf-out" */
	uint64_t duration_ns;       /* --duration, 0 = until stopped */
	uint64_t gen_period_ns;     /* --generation-period, default 1 s */
	uint64_t rotate_size;       /* --rotate-size, bytes; 0 = never */
	uint64_t gen_size;          /* --generation-size, bytes; 0 = never */
	unsigned rotate_files;      /* --rotate-files, 0 = keep all */
	unsigned ringbuf_mb;        /* --ringbuf-size in MiB */
	unsigned sample;            /* --sample N: 1 allocation in N, >= 1 */
	bool stacks;                /* --stacks: allocation call stacks */
	bool tiny_as_runtime;       /* --tiny-as-runtime: tiny objects as the runtime emits them */
	uint64_t memprofilerate;    /* --memprofilerate BYTES, 0: full mode */
	bool memprofile_exact;      /* --memprofilerate-exact: probe every
				       sample and free (else: read the
				       profile specials once per GC) */
	bool check_reads;           /* --check-reads: with -exact, read the
				       specials too and count disagreements */
	unsigned pause_budget_us;   /* --pause-budget: longest a read of the
				       samples in a GC pause may take */
	bool no_cache;              /* --no-cache: plan every executable afresh */
	const char *cache_dir;      /* --cache-dir, NULL: /var/cache/traceaf-bpf */
	int verbose;                /* -v, repeatable */
	unsigned max_processes;     /* --max-processes, with --all */
	const char **include;       /* --include PATTERN, repeatable */
	size_t ninclude;
	const char **exclude;       /* --exclude PATTERN, repeatable */
	size_t nexclude;
};

/* Frees what cli_parse allocated (the pattern lists). */
void cli_free(struct taf_options *o);

/*
 * Whether a process passes --include/--exclude: a pattern matches the
 * command name (comm), the executable's path (shell glob, "*" crosses "/")
 * or, when it is a number, the PID.  No --include means everything.
 */
bool cli_process_selected(const struct taf_options *o, pid_t pid,
			  const char *comm, const char *exe);

enum cli_result {
	CLI_RUN = 0,      /* options parsed: run */
	CLI_EXIT_OK = 1,  /* --help / --version printed */
	CLI_ERROR = 2,    /* bad usage, message printed */
};

enum cli_result cli_parse(int argc, char **argv, struct taf_options *o);

/* "1.5s", "250ms", "2m", "1h", "90" (seconds). Returns 0 or -EINVAL. */
int parse_duration_ns(const char *s, uint64_t *ns);

/* "4096", "64K", "256M", "1G" (powers of 1024, optional "B"/"iB"). */
int parse_size(const char *s, uint64_t *bytes);

void cli_print_help(void);

#endif /* CLI_H */
