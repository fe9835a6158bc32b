/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * probes.h - the BPF side, seen from userspace: load the programs, attach
 * a probe plan to a process, read the drop counters, detach.
 *
 * Owns: the libbpf skeleton and every bpf_link.  Nothing here knows about
 * traces.
 */
#ifndef PROBES_H
#define PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "traceaf_events.h"

struct probe_plan;
struct traceaf_bpf;
struct bpf_link;

struct probes {
	struct traceaf_bpf *skel;
	struct bpf_link **links;
	size_t nlinks, cap;
	unsigned nlayouts;
	int last_layout;
	unsigned nasites;       /* entries used in the alloc_sites map */
	struct bpf_link *exec_link;
	bool multi;          /* uprobe_multi links (Linux 6.6+) */
	int *mfds;           /* their file descriptors */
	size_t nmfds, mcap;
};

/*
 * Opens and loads the BPF object with a ring buffer of `ringbuf_bytes`;
 * `watch_exec` also loads and attaches the exec tracepoint; when the
 * kernel refuses it, that is an error only if `exec_required`.
 */
int probes_load(struct probes *p, uint64_t ringbuf_bytes, bool watch_exec,
		bool exec_required, unsigned stack_entries, char *err,
		size_t errlen);

/*
 * `stack_entries` > 0 (--stacks): allocation records carry a call stack
 * hash, and the PCs the first time; the probes keep a map of the (PID,
 * hash) pairs sent, of that many entries.  The trace stage holds this
 * handle to it (fd -1 without --stacks) and changes the map only through
 * known_stacks_forget: its key layout and map calls stay here.
 */
struct known_stacks {
	int fd;
};
struct known_stacks probes_known_stacks(const struct probes *p);

/* PID's stack HASH is no longer known: its next record carries the PCs. */
void known_stacks_forget(struct known_stacks k, uint32_t pid, uint64_t hash);

/*
 * Attaches every site of `plan` in `binary_path` (for one process `pid`, or
 * -1 for every process running that binary).  All or nothing: on failure
 * the links made so far are destroyed.
 */
int probes_attach(struct probes *p, const struct probe_plan *plan,
		  const char *binary_path, pid_t pid, char *err, size_t errlen);

/*
 * One probe attached apart from its plan's, for process PID only, with
 * the cookie of layout LAYOUT (probes_add_layout's index): a site held
 * back until a session needs it (--memprofilerate's gcMarkTinyAllocs,
 * exe_sessions.c).  Not among the links probes_detach removes: the
 * caller destroys it (probes_link_destroy).  0 or -errno.
 */
struct probe_site;
struct probe_link {
	struct bpf_link *link;  /* perf-event uprobe, or */
	int fd;                 /* uprobe_multi link; -1: none */
};
int probes_attach_one(struct probes *p, const struct probe_site *s,
		      int layout, const char *binary_path, pid_t pid,
		      struct probe_link *out, char *err, size_t errlen);
void probes_link_destroy(struct probe_link *l);

/*
 * Registers plan->layout in the BPF `layouts` map and returns its index
 * (what probes_attach puts in the cookies), or -errno.
 */
int probes_add_layout(struct probes *p, const struct probe_plan *plan);

/*
 * runtime.gcSweep entries of process PID so far (the `gc_sweeps` map; 0
 * before its first): --memprofilerate's reads are consistent while it
 * stays what their TAF_REC_GC_MARK record said.  probes_gc_forget drops
 * the process's entry when its session ends.
 */
uint64_t probes_gc_sweeps(const struct probes *p, pid_t pid);
void probes_gc_forget(const struct probes *p, pid_t pid);

/*
 * Asks the gc_mark and gc_cycle programs to read process PID's
 * heap-profile samples with the world stopped (snap.bpf.h), where T
 * says; probes_gc_forget ends it.  0 or -errno.
 */
int probes_snap_target(const struct probes *p, pid_t pid,
		       const struct taf_snap_target *t);
/* No more snapshots of PID until probes_snap_target again. */
void probes_snap_forget(const struct probes *p, pid_t pid);

/* File descriptor of the ring buffer map. */
int probes_ringbuf_fd(const struct probes *p);
/* The ring that holds a copy of each exec record (read first). */
int probes_exec_hints_fd(const struct probes *p);

/* Sums the per-CPU counters (enum taf_stat). */
int probes_read_stats(const struct probes *p, uint64_t out[TAF_STAT_MAX]);

/*
 * Turns recording on or off in every BPF program at once (a global the
 * programs check first).  Off before detaching, so a half-detached set
 * of probes records nothing.
 */
void probes_enable(struct probes *p, bool on);

/* Removes every uprobe. */
void probes_detach(struct probes *p);

/* Detaches and unloads. */
void probes_destroy(struct probes *p);

#endif /* PROBES_H */
