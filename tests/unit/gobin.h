/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gobin.h - the Go workloads the unit tests read: built by
 * `make workloads` (tests/go/build-workloads.sh) into $TRACEAF_GOBIN_DIR
 * (default build/go-bin) as NAME-go1.MINOR[-stripped][-pie].  A missing
 * binary fails the test that needs it.
 */
#ifndef TESTS_GOBIN_H
#define TESTS_GOBIN_H

#include <stdio.h>
#include <stdlib.h>

#include "inspect/go_binary.h"

static inline void gobin_path(char *buf, size_t len, const char *name,
			      int minor, const char *flavour)
{
	const char *dir = getenv("TRACEAF_GOBIN_DIR");

	snprintf(buf, len, "%s/%s-go1.%d%s", dir ? dir : "build/go-bin", name,
		 minor, flavour);
}

static inline struct go_binary *gobin_open(const char *name, int minor,
					   const char *flavour)
{
	struct go_binary *bin = NULL;
	char path[512], err[512];

	gobin_path(path, sizeof(path), name, minor, flavour);
	if (go_binary_open(path, &bin, err, sizeof(err)))
		fail_msg("%s (run make workloads)", err);
	return bin;
}

/* allocloop, the workload most tests read. */
static inline void bin_path(char *buf, size_t len, int minor,
			    const char *flavour)
{
	gobin_path(buf, len, "allocloop", minor, flavour);
}

static inline struct go_binary *open_bin(int minor, const char *flavour)
{
	return gobin_open("allocloop", minor, flavour);
}

#endif /* TESTS_GOBIN_H */
