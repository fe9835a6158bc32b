// SPDX-License-Identifier: BSD-3-Clause
/*
 * main.c - traceaf-bpf: trace every heap allocation and free of running Go
 * programs with eBPF and write them as Go execution traces (the runtime's
 * AllocFree experiment).  Parses the command line and hands over to the
 * tracer (tracer.h).
 */
#include <string.h>

#include "trace/cli.h"
#include "analysis/report.h"
#include "trace/tracer.h"

int main(int argc, char **argv)
{
	struct taf_options opt;
	int rc;

	/* The analysis subcommands read trace files; no BPF, no root. */
	if (argc > 1 && !strcmp(argv[1], "report"))
		return report_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "pprof"))
		return pprof_main(argc - 1, argv + 1);

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
