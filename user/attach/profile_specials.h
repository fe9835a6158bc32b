/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * profile_specials.h - the heap-profile samples a Go process holds right
 * now, read from its memory: --memprofilerate's picture at attach.
 *
 * Owns: walking mheap_.allspans and each in-use span's specials list for
 * profile specials (runtime/mheap.go: setprofilebucket, specialprofile)
 * and reading each one's bucket (runtime/mprof.go: size, then the stack
 * of return PCs after the struct).  The process keeps running: lists are
 * read as they are, walks are bounded, and a node that does not look
 * like a special ends its list.  Nothing here knows about traces.
 */
#ifndef PROFILE_SPECIALS_H
#define PROFILE_SPECIALS_H

#include <stddef.h>
#include <stdint.h>

struct go_binary;
struct target;

#define PS_MAX_PCS 32

/* One live sample: the address mProf_Malloc was given, the bucket's
 * size (the slot size) and its stack, innermost first (return PCs). */
struct ps_sample {
	uint64_t addr;
	uint64_t size;
	uint64_t pcs[PS_MAX_PCS];
	size_t npcs;
};

struct ps_stats {
	uint64_t spans;             /* in-use spans read */
	uint64_t samples;
	uint64_t read_errors;
};

/*
 * Calls cb for every profile special of the process (binary `bin`
 * loaded at `bias`; profile special kind `kind`, probe_plan.c knows it
 * per version).  0; -ENOENT with `err` when the binary does not say
 * where mheap_ or the fields are; cb's non-zero return stops the walk.
 */
int profile_specials_read(const struct target *t, const struct go_binary *bin,
			  uint64_t bias, uint8_t kind,
			  int (*cb)(void *ctx, const struct ps_sample *s),
			  void *ctx, struct ps_stats *st, char *err,
			  size_t errlen);

#endif /* PROFILE_SPECIALS_H */
