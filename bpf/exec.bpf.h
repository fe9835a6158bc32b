/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * exec.bpf.h - --all: every exec, in the main ring and as a hint in a
 * ring of its own (part of traceaf.bpf.c).
 */
#ifndef TRACEAF_EXEC_BPF_H
#define TRACEAF_EXEC_BPF_H

#include "records.bpf.h"

/*
 * A copy of every exec record, in a ring of its own that the daemon reads
 * before the main one: the main ring can hold a second of other
 * processes' records ahead of an exec, and a process whose executable is
 * new runs unprobed until the daemon gets to it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 << 10);
} exec_hints SEC(".maps");

/*
 * A process exec'd (used with --all, loaded only then): the daemon checks
 * whether it runs Go and attaches to its executable if it is new.
 * tp_btf needs no tracefs, which this kind of machine does not mount.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	struct taf_rec_exec *rec;
	struct inode *inode;

	rec = reserve_rec(TAF_REC_EXEC, sizeof(*rec));
	if (!rec)
		return 0;
	inode = BPF_CORE_READ(bprm, file, f_inode);
	rec->ino = BPF_CORE_READ(inode, i_ino);
	rec->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	bpf_get_current_comm(rec->comm, sizeof(rec->comm));
	/*
	 * Best effort: without the hint the main ring's record still counts.
	 * The hint alone wakes the reader at once: under --all a process of
	 * a new executable runs unprobed until the daemon reads it, and an
	 * exec is rare next to allocations (one wakeup per exec costs
	 * nothing).  The record in the main ring is only read in order.
	 */
	bpf_ringbuf_output(&exec_hints, rec, sizeof(*rec), BPF_RB_FORCE_WAKEUP);
	bpf_ringbuf_submit(rec, submit_flags());
	return 0;
}

#endif /* TRACEAF_EXEC_BPF_H */
