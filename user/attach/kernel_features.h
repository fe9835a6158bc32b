/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kernel_features.h - what the tracer needs from the kernel and from its
 * own privileges, checked before anything is loaded or attached, so that
 * a missing piece is one line that names it instead of a failed bpf() or
 * perf_event_open() later.
 *
 * Owns nothing: reads the process's capability sets, the kernel's BTF
 * (through libbpf, where libbpf looks for it) and the uprobe event source
 * in sysfs.
 */
#ifndef KERNEL_FEATURES_H
#define KERNEL_FEATURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The kernel's own BTF (CONFIG_DEBUG_INFO_BTF). */
#define KF_SYSFS_BTF "/sys/kernel/btf/vmlinux"
/* Where the kernel publishes the uprobe PMU's type (CONFIG_UPROBE_EVENTS). */
#define KF_UPROBE_TYPE_PATH "/sys/bus/event_source/devices/uprobe/type"

/*
 * Names the capabilities missing from `effective` (a mask of 1 << CAP_*)
 * into `buf`, e.g. "CAP_BPF or CAP_SYS_ADMIN (load BPF programs)";
 * `need_ptrace` when the tracer reads processes it did not start.
 * Returns how many are missing (0: `buf` is "").
 */
int kf_missing_caps(uint64_t effective, bool need_ptrace, char *buf,
		    size_t len);

/*
 * Checks, in this order: capabilities, kernel BTF, uprobes.  Returns 0,
 * or -1 with one line (no "traceaf-bpf: " prefix, no newline) in `err`
 * naming the first missing piece.
 */
int kf_check(bool need_ptrace, char *err, size_t errlen);

#endif /* KERNEL_FEATURES_H */
