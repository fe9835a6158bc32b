// SPDX-License-Identifier: BSD-3-Clause
/*
 * main.c - traceaf-bpf: trace every heap allocation and free of running Go
 * programs with eBPF and write them as Go execution traces (the runtime's
 * AllocFree experiment).  Only dispatches: a subcommand from cmds[] when
 * the first argument names one, else tracing (trace/tracer.h) with the
 * options trace/cli.c parses.
 */
#include <string.h>

#include "trace/cli.h"
#include "analysis/report.h"
#include "trace/tracer.h"

/* Tracing: the default when no subcommand is named.  Needs root and BPF. */
static int do_trace(int argc, char **argv)
{
	struct taf_options opt;
	int rc;

	switch (cli_parse(argc, argv, &opt)) {
	case CLI_RUN:
		break;
	case CLI_EXIT_OK:
		cli_free(&opt);
		return 0;
	default:
		cli_free(&opt);
		return 2;
	}
	rc = tracer_run(&opt);
	cli_free(&opt);
	return rc;
}

/*
 * The subcommands, each with its help beside it (bpftool's cmds[]).  The
 * analysis ones read trace files: no BPF, no root.  Each gets argv from
 * its own name on.
 */
static const struct cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	void (*help)(void);
} cmds[] = {
	{ "report", report_main, report_print_help },
	{ "pprof", pprof_main, pprof_print_help },
};

#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

/* "help [CMD]": the help of CMD, or of tracing (the man page). */
static int do_help(int argc, char **argv)
{
	size_t i;

	for (i = 0; argc > 1 && i < NCMDS; i++) {
		if (!strcmp(argv[1], cmds[i].name)) {
			cmds[i].help();
			return 0;
		}
	}
	cli_print_help();
	return argc > 1 ? 2 : 0;
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc > 1 && !strcmp(argv[1], "help"))
		return do_help(argc - 1, argv + 1);
	for (i = 0; argc > 1 && i < NCMDS; i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].run(argc - 1, argv + 1);
	return do_trace(argc, argv);
}
