// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * floor.bpf.c - the cheapest useful uprobe program: one atomic add.
 *
 * scripts/bench_probes.sh attaches it (tools/floor_probe.c) to the
 * allocation function's PUSHQ BP, an instruction the kernel emulates, to
 * measure the floor: what one probe hit per allocation costs before the
 * tracer does any work of its own.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

__u64 hits = 0;

SEC("uprobe")
int floor_hit(struct pt_regs *ctx)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}
