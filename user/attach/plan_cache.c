// SPDX-License-Identifier: BSD-3-Clause
/*
 * plan_cache.c - probe plans on disk (plan_cache.h has the rules).
 *
 * A file: "TAFPLAN1", the key as a NUL-terminated string (checked whole,
 * the file name is only its hash), the plan's fixed part with its pointers
 * cleared, its sites, alloc sites and callers as the structs are in
 * memory (the key names the tracer binary, so the layout is the one that
 * wrote them), and an FNV-1a checksum of all that.
 */
#include "attach/plan_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inspect/binary_ident.h"
#include "inspect/go_binary.h"
#include "util/fnv.h"
#include "util/grow.h"

#define MAGIC "TAFPLAN1"
#define FORMAT 2
#define MAX_FILE (512u << 20)
/*
 * Plans kept at most: every rebuild of the tracer (a developer's test
 * runs) and every upgrade of a target makes new ones that nothing reads
 * again, so the oldest go (a few MB each at most).
 */
#define MAX_PLANS 64

struct blob {
	uint8_t *p;
	size_t n, cap;
};

static int put(struct blob *b, const void *p, size_t n)
{
	if (grow_to(&b->p, &b->cap, b->n + n, 1, 4096))
		return -ENOMEM;
	memcpy(b->p + b->n, p, n);
	b->n += n;
	return 0;
}

/* The key: everything the plan depends on (plan_cache.h). */
static int make_key(const struct go_binary *bin, bool sampled, char *key,
		    size_t len)
{
	struct binary_ident id;
	struct stat self, st;
	int n;

	if (go_binary_fd(bin) < 0 || fstat(go_binary_fd(bin), &st) ||
	    stat("/proc/self/exe", &self) || binary_ident_read(bin, &id))
		return -ENOENT;
	if (!id.go_build_id[0] && !id.gnu_build_id[0])
		return -ENOENT;   /* nothing that names the build */
	n = snprintf(key, len,
		     "fmt=%d tracer=%s self=%lx:%lx:%lld:%lld.%09ld mode=%s "
		     "go=%s gnu=%s file=%lx:%lx:%lld:%lld.%09ld",
		     FORMAT, TRACEAF_VERSION, (unsigned long)self.st_dev,
		     (unsigned long)self.st_ino, (long long)self.st_size,
		     (long long)self.st_mtim.tv_sec, self.st_mtim.tv_nsec,
		     sampled ? "sampled" : "full", id.go_build_id,
		     id.gnu_build_id, (unsigned long)st.st_dev,
		     (unsigned long)st.st_ino, (long long)st.st_size,
		     (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

/* Ours alone: owned by the effective user, writable by no one else. */
static bool safe_stat(const struct stat *st, bool dir)
{
	if (st->st_uid != geteuid())
		return false;
	if (dir)
		return S_ISDIR(st->st_mode) && !(st->st_mode & 077);
	return S_ISREG(st->st_mode) && !(st->st_mode & 022);
}

/* The cache directory, created 0700, never through a symlink; or -1. */
static int open_dir(const struct plan_cache_opts *o)
{
	const char *dir = o->dir ? o->dir : PLAN_CACHE_DEFAULT_DIR;
	struct stat st;
	int fd;

	if (mkdir(dir, 0700) && errno != EEXIST)
		goto bad;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		goto bad;
	if (fstat(fd, &st) || !safe_stat(&st, true)) {
		close(fd);
		errno = EPERM;
		goto bad;
	}
	return fd;
bad:
	if (o->verbose)
		fprintf(stderr, "traceaf-bpf: plan cache %s not used: %s\n", dir,
			errno == EPERM ? "not a directory of ours alone (owner or mode)" :
			strerror(errno));
	return -1;
}

static void file_name(const char *key, char *name, size_t len)
{
	snprintf(name, len, "%016llx.plan",
		 (unsigned long long)fnv1a64(key, strlen(key), FNV1A64_SEED));
}

static int serialize(const struct probe_plan *p, const char *key,
		     struct blob *b)
{
	struct probe_plan fixed = *p;
	uint64_t sum;
	int rc;

	fixed.sites = NULL;
	fixed.asites = NULL;
	fixed.callers = NULL;
	fixed.cap = p->n;
	rc = put(b, MAGIC, 8);
	if (!rc)
		rc = put(b, key, strlen(key) + 1);
	if (!rc)
		rc = put(b, &fixed, sizeof(fixed));
	if (!rc)
		rc = put(b, p->sites, p->n * sizeof(*p->sites));
	if (!rc)
		rc = put(b, p->asites, p->nasites * sizeof(*p->asites));
	if (!rc)
		rc = put(b, p->callers, p->ncallers * sizeof(*p->callers));
	sum = fnv1a64(b->p, b->n, FNV1A64_SEED);
	if (!rc)
		rc = put(b, &sum, sizeof(sum));
	return rc;
}

/* One array of the file into memory of its own. 0 or -EINVAL/-ENOMEM. */
static int take(const uint8_t **at, const uint8_t *end, size_t n,
		size_t size, void **out)
{
	*out = NULL;
	if (n > (size_t)(end - *at) / (size ? size : 1))
		return -EINVAL;
	if (!n)
		return 0;
	*out = malloc(n * size);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, *at, n * size);
	*at += n * size;
	return 0;
}

static int deserialize(const uint8_t *p, size_t n, const char *key,
		       struct probe_plan *plan)
{
	size_t klen = strlen(key) + 1;
	const uint8_t *at, *end = p + n - sizeof(uint64_t);
	uint64_t sum;
	int rc;

	if (n < 8 + klen + sizeof(*plan) + sizeof(sum) || memcmp(p, MAGIC, 8) ||
	    memcmp(p + 8, key, klen))
		return -EINVAL;
	memcpy(&sum, end, sizeof(sum));
	if (sum != fnv1a64(p, n - sizeof(sum), FNV1A64_SEED))
		return -EINVAL;
	at = p + 8 + klen;
	memcpy(plan, at, sizeof(*plan));
	at += sizeof(*plan);
	plan->sites = NULL;
	plan->asites = NULL;
	plan->callers = NULL;
	rc = take(&at, end, plan->n, sizeof(*plan->sites), (void **)&plan->sites);
	if (!rc)
		rc = take(&at, end, plan->nasites, sizeof(*plan->asites),
			  (void **)&plan->asites);
	if (!rc)
		rc = take(&at, end, plan->ncallers, sizeof(*plan->callers),
			  (void **)&plan->callers);
	if (!rc && at != end)
		rc = -EINVAL;
	if (rc) {
		probe_plan_free(plan);
		return rc;
	}
	plan->cap = plan->n;
	return 0;
}

static int load(int dfd, const char *name, const char *key,
		struct probe_plan *plan)
{
	struct stat st;
	uint8_t *buf;
	ssize_t got = 0;
	int fd, rc;

	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !safe_stat(&st, false) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > MAX_FILE) {
		close(fd);
		return -EPERM;
	}
	buf = malloc((size_t)st.st_size);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)(st.st_size - got));

		if (r <= 0)
			break;
		got += r;
	}
	close(fd);
	rc = got == st.st_size ? deserialize(buf, (size_t)got, key, plan) : -EIO;
	free(buf);
	return rc;
}

static void store(int dfd, const char *name, const char *key,
		  const struct probe_plan *plan)
{
	struct blob b = { 0 };
	char tmp[96];
	size_t off = 0;
	int fd;

	if (serialize(plan, key, &b))
		goto out;
	snprintf(tmp, sizeof(tmp), ".%s.%d.tmp", name, (int)getpid());
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0)
		goto out;
	while (off < b.n) {
		ssize_t w = write(fd, b.p + off, b.n - off);

		if (w <= 0)
			break;
		off += (size_t)w;
	}
	/* A crash before the data is on disk leaves a file whose checksum
	 * fails: a miss. No fsync on the attach path. */
	if (close(fd) || off != b.n || renameat(dfd, tmp, dfd, name))
		unlinkat(dfd, tmp, 0);
out:
	free(b.p);
}

/* Removes the least recently written plans beyond MAX_PLANS. */
static void prune(int dfd)
{
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	for (;;) {
		char oldest[256] = "";
		struct timespec ot = { 0 };
		unsigned n = 0;

		rewinddir(d);
		while ((e = readdir(d))) {
			size_t len = strlen(e->d_name);
			struct stat st;

			if (len < 6 || strcmp(e->d_name + len - 5, ".plan") ||
			    e->d_name[0] == '.' ||
			    fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW))
				continue;
			n++;
			if (!oldest[0] || st.st_mtim.tv_sec < ot.tv_sec ||
			    (st.st_mtim.tv_sec == ot.tv_sec &&
			     st.st_mtim.tv_nsec < ot.tv_nsec)) {
				snprintf(oldest, sizeof(oldest), "%s", e->d_name);
				ot = st.st_mtim;
			}
		}
		if (n <= MAX_PLANS || !oldest[0] || unlinkat(dfd, oldest, 0))
			break;
	}
	closedir(d);
}

static int build(const struct go_binary *bin, bool sampled,
		 struct probe_plan *plan, char *err, size_t errlen)
{
	return sampled ? probe_plan_build_sampled(bin, plan, err, errlen) :
			 probe_plan_build(bin, plan, err, errlen);
}

int plan_cache_build(const struct go_binary *bin,
		     const struct plan_cache_opts *o, struct probe_plan *plan,
		     enum plan_cache_result *how, char *err, size_t errlen)
{
	char key[1024], name[32];
	int dfd, rc;

	*how = PLAN_CACHE_OFF;
	if (o->disabled || getenv(PROBE_PLAN_MODE_ENV) ||
	    getenv(PROBE_PLAN_REFUSE_ENV) ||
	    make_key(bin, o->sampled, key, sizeof(key)))
		return build(bin, o->sampled, plan, err, errlen);
	dfd = open_dir(o);
	if (dfd < 0)
		return build(bin, o->sampled, plan, err, errlen);
	file_name(key, name, sizeof(name));
	if (load(dfd, name, key, plan) == 0) {
		*how = PLAN_CACHE_HIT;
		close(dfd);
		err[0] = '\0';
		return 0;
	}
	*how = PLAN_CACHE_MISS;
	rc = build(bin, o->sampled, plan, err, errlen);
	if (rc == 0) {
		store(dfd, name, key, plan);
		prune(dfd);
	}
	close(dfd);
	return rc;
}
