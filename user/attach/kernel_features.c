// SPDX-License-Identifier: BSD-3-Clause
/* kernel_features.c - up-front checks of privileges, BTF and uprobes. */
#include "kernel_features.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

/* Linux 5.8 split these out of CAP_SYS_ADMIN; older headers lack them. */
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define HAS(mask, cap) (((mask) >> (cap)) & 1)

/*
 * What the kernel checks (kernel/bpf/syscall.c, bpf_prog_load() and
 * map_create()): kprobe-type programs (uprobes) need bpf_capable() and
 * perfmon_capable(), ring buffer maps bpf_capable(); CAP_SYS_ADMIN
 * satisfies both.  Opening /proc/PID/exe and /proc/PID/mem and
 * ptrace(PTRACE_SEIZE) of a process with more capabilities than ours
 * (any root process, once ours are reduced) need CAP_SYS_PTRACE.
 */
int kf_missing_caps(uint64_t eff, bool need_ptrace, char *buf, size_t len)
{
	bool admin = HAS(eff, CAP_SYS_ADMIN);
	const char *miss[3];
	int n = 0, i;
	size_t off = 0;

	if (!admin && !HAS(eff, CAP_BPF))
		miss[n++] = "CAP_BPF or CAP_SYS_ADMIN (load BPF programs)";
	if (!admin && !HAS(eff, CAP_PERFMON))
		miss[n++] = "CAP_PERFMON or CAP_SYS_ADMIN (attach uprobes)";
	if (need_ptrace && !HAS(eff, CAP_SYS_PTRACE))
		miss[n++] = "CAP_SYS_PTRACE (read the target's executable and memory)";
	if (len)
		buf[0] = '\0';
	for (i = 0; i < n && off < len; i++) {
		int w = snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
				 miss[i]);

		if (w < 0)
			break;
		off += (size_t)w;
	}
	return n;
}

static int effective_caps(uint64_t *eff)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	*eff = (uint64_t)data[1].effective << 32 | data[0].effective;
	return 0;
}

int kf_check(bool need_ptrace, char *err, size_t errlen)
{
	char missing[256];
	libbpf_print_fn_t old_print;
	struct btf *btf;
	uint64_t eff = 0;
	int n, fd;

	if (effective_caps(&eff) == 0) {
		n = kf_missing_caps(eff, need_ptrace, missing, sizeof(missing));
		if (n) {
			snprintf(err, errlen, "missing capabilit%s: %s",
				 n > 1 ? "ies" : "y", missing);
			return -1;
		}
	}

	/*
	 * The BPF programs are CO-RE and one is a BTF tracepoint: libbpf
	 * needs the kernel's BTF to load them.  Ask libbpf itself, so that
	 * every place it would find BTF (sysfs, vmlinux images under /boot
	 * and /lib/modules) counts.
	 */
	old_print = libbpf_set_print(NULL);  /* our line says it */
	btf = btf__load_vmlinux_btf();
	libbpf_set_print(old_print);
	if (!btf) {
		int e = errno;

		if (access(KF_SYSFS_BTF, R_OK))
			snprintf(err, errlen,
				 "no kernel BTF: %s: %s (the kernel needs CONFIG_DEBUG_INFO_BTF)",
				 KF_SYSFS_BTF, strerror(errno));
		else
			snprintf(err, errlen, "no kernel BTF: libbpf cannot read %s: %s",
				 KF_SYSFS_BTF, strerror(e));
		return -1;
	}
	btf__free(btf);

	/*
	 * libbpf attaches a perf-event uprobe with the PMU type read from
	 * this file (determine_uprobe_perf_type()); the kernel publishes it
	 * when built with CONFIG_UPROBE_EVENTS.  uprobe_multi links (Linux
	 * 6.6+) do not read it and need only CONFIG_UPROBES, which no
	 * file shows; distribution kernels enable both or neither, so one
	 * rule serves both paths (a kernel with UPROBES alone is refused).
	 */
	fd = open(KF_UPROBE_TYPE_PATH, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen,
			 "uprobes unavailable: %s: %s (the kernel needs CONFIG_UPROBE_EVENTS)",
			 KF_UPROBE_TYPE_PATH, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}
