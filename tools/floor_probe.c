// SPDX-License-Identifier: BSD-3-Clause
/*
 * floor_probe - attach bpf/floor.bpf.c (one atomic add) to the entry probe
 * site of a Go function in a running process, for scripts/bench_probes.sh.
 *
 *   floor_probe PID FUNCTION [--insn ADDR]
 *
 * The site is the one traceaf-bpf's entry probes use (disasm.h
 * go_entry_probe_site: the PUSHQ BP after the stack check, emulated), or
 * the instruction at link address ADDR. Prints "attached <func>+<off>
 * (<insn>, <emulated|single-step>)", waits for SIGINT or SIGTERM, prints
 * "hits <n>" and exits.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "inspect/disasm.h"
#include "inspect/go_binary.h"
#include "floor.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct go_binary *bin = NULL;
	struct floor_bpf *skel;
	struct bpf_link *link;
	struct go_entry_site es;
	struct disasm d;
	char exe[64], err[256];
	uint64_t entry, size, at, off;
	const uint8_t *code;
	long idx;
	pid_t pid;

	if (argc != 3 && argc != 5) {
		fprintf(stderr, "usage: floor_probe PID FUNCTION [--insn ADDR]\n");
		return 2;
	}
	pid = (pid_t)atoi(argv[1]);
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if (go_binary_open(exe, &bin, err, sizeof(err))) {
		fprintf(stderr, "floor_probe: %s\n", err);
		return 1;
	}
	if (go_binary_find_func(bin, argv[2], &entry, &size) ||
	    !(code = go_binary_bytes(bin, entry, size)) ||
	    disasm_function(code, size, entry, &d, err, sizeof(err))) {
		fprintf(stderr, "floor_probe: cannot decode %s\n", argv[2]);
		return 1;
	}
	if (argc == 5) {
		at = strtoull(argv[4], NULL, 0);
	} else {
		if (go_entry_probe_site(&d, &es)) {
			fprintf(stderr, "floor_probe: no entry site in %s\n", argv[2]);
			return 1;
		}
		at = es.addr;
	}
	idx = disasm_index_of(&d, at);
	if (idx < 0 || go_binary_vaddr_to_offset(bin, at, &off)) {
		fprintf(stderr, "floor_probe: %#lx is no instruction of %s\n",
			(unsigned long)at, argv[2]);
		return 1;
	}
	skel = floor_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "floor_probe: cannot load the BPF program: %s\n",
			strerror(errno));
		return 1;
	}
	link = bpf_program__attach_uprobe(skel->progs.floor_hit, false, pid, exe, off);
	if (!link) {
		fprintf(stderr, "floor_probe: cannot attach: %s\n", strerror(errno));
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("attached %s+%#lx (%s, %s)\n", argv[2], (unsigned long)(at - entry),
	       d.insns[idx].text, uprobe_cost_name(d.insns[idx].cost));
	fflush(stdout);
	while (!stop)
		pause();
	printf("hits %llu\n", (unsigned long long)skel->bss->hits);
	bpf_link__destroy(link);
	floor_bpf__destroy(skel);
	disasm_free(&d);
	go_binary_close(bin);
	return 0;
}
