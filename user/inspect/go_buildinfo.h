/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * go_buildinfo.h - the Go version and build settings a binary carries.
 *
 * Owns: decoding the .go.buildinfo blob (debug/buildinfo/buildinfo.go) in
 * both layouts -- the pre-1.18 one whose header holds pointers to two Go
 * strings, and the 1.18+ one with the strings inline, uvarint-prefixed --
 * and parsing the modinfo text ("path", "mod", "dep", "build k=v" lines,
 * runtime/debug/mod.go ParseBuildInfo) into the settings the tracer needs.
 * Knows nothing of ELF: the caller hands over the blob and a reader.
 */
#ifndef GO_BUILDINFO_H
#define GO_BUILDINFO_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* "\xff Go buildinf:", 16-byte aligned in the data segment (buildinfo.go). */
#define GO_BUILDINFO_MAGIC "\xff Go buildinf:"
#define GO_BUILDINFO_MAGIC_LEN 14
#define GO_BUILDINFO_ALIGN 16
#define GO_BUILDINFO_HDR_LEN 32

/* Reads len bytes at a link-time virtual address; 0 or -errno. */
typedef int (*go_vaddr_read_fn)(void *ctx, uint64_t vaddr, void *buf,
				size_t len);

struct go_build_setting {
	char *key;
	char *value;
};

struct go_build_info {
	char version[64];        /* "go1.23.5", as `go version` prints it */
	int major, minor, patch; /* 1, 23, 5; patch 0 for "go1.23rc1" */
	bool devel;              /* "devel ..." toolchain: numbers are a guess */
	char path[256];          /* main package path ("command-line-arguments") */
	char main_mod[256];      /* main module path, "" when none */

	/* The settings the tracer looks at, copied out of settings[]. */
	char goexperiment[256];  /* GOEXPERIMENT value, "" when unset */
	int cgo;                 /* CGO_ENABLED: 1, 0, or -1 when absent */
	char goarch[16];         /* "amd64" */
	char goamd64[8];         /* "v1".."v4", "" when absent */
	char buildmode[16];      /* "exe", "pie", ... */
	char compiler[16];       /* "gc"; "gccgo" is refused by go_binary */
	char ldflags[512];       /* -ldflags value, unquoted */

	/* Every "build" line, in order (vcs, vcs.revision, -tags, ...). */
	struct go_build_setting *settings;
	size_t nsettings;

	char *modinfo;           /* raw modinfo text, framing removed; may be "" */
};

/*
 * Decodes the blob that starts at link address `addr` (the 32-byte header
 * with its magic). `read` must be able to read the header, the inline
 * strings that follow it, and for the old layout the pointed-to strings.
 * Returns 0, -EINVAL (no magic / malformed), -ENOMEM, or the reader's error.
 * On success *out owns heap memory: free it with go_build_info_free().
 */
int go_build_info_decode(go_vaddr_read_fn read, void *ctx, uint64_t addr,
			 struct go_build_info *out);

/* Parses modinfo text into out->path, main_mod, settings and the fields. */
int go_build_info_parse_modinfo(const char *modinfo, size_t len,
				struct go_build_info *out);

/*
 * Splits "go1.23.5" / "go1.21rc2" / "go1.24.0 X:nodwarf5" / "devel go1.25-abc"
 * into numbers. Returns 0 or -EINVAL when no "go1.N" is found.
 */
int go_version_parse(const char *v, int *major, int *minor, int *patch,
		     bool *devel);

/* Value of build setting `key` ("vcs.revision"), NULL when absent. */
const char *go_build_info_setting(const struct go_build_info *bi,
				  const char *key);

/*
 * True when GOEXPERIMENT lists `name` (e.g. "nogreenteagc"). Only what the
 * build recorded: defaults of the toolchain are not listed there.
 */
bool go_build_info_has_experiment(const struct go_build_info *bi,
				  const char *name);

/* True when the version is >= major.minor. */
bool go_build_info_at_least(const struct go_build_info *bi, int major,
			    int minor);

void go_build_info_free(struct go_build_info *bi);

#endif /* GO_BUILDINFO_H */
