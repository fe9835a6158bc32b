// SPDX-License-Identifier: BSD-3-Clause
/*
 * go_buildinfo.c - decode .go.buildinfo and the modinfo text.
 *
 * Formats: debug/buildinfo/buildinfo.go (the blob) and runtime/debug/mod.go
 * (ParseBuildInfo, the text). Both readers are written from those sources.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "go_buildinfo.h"

/* Header fields (buildinfo.go: ptrSizeOffset, flagsOffset, versPtrOffset). */
#define HDR_PTRSIZE 14
#define HDR_FLAGS 15
#define HDR_VERSPTR 16
#define FLAG_BIG_ENDIAN 0x1
#define FLAG_INLINE 0x2  /* Go 1.18+: strings follow the header */

/* Longest string we accept: modinfo of a big program is tens of KiB. */
#define MAX_STRING (1u << 22)

static int read_uvarint(go_vaddr_read_fn read, void *ctx, uint64_t addr,
			uint64_t *val, unsigned *n)
{
	uint8_t b[10];
	uint64_t v = 0;
	unsigned i;

	/* A short read near the end of a section is fine: read byte by byte. */
	for (i = 0; i < sizeof(b); i++) {
		int err = read(ctx, addr + i, &b[i], 1);
		if (err)
			return err;
		v |= (uint64_t)(b[i] & 0x7f) << (7 * i);
		if (!(b[i] & 0x80)) {
			*val = v;
			*n = i + 1;
			return 0;
		}
	}
	return -EINVAL;
}

static int read_alloc(go_vaddr_read_fn read, void *ctx, uint64_t addr,
		      uint64_t len, char **out, size_t *outlen)
{
	char *s;
	int err;

	if (len > MAX_STRING)
		return -EINVAL;
	s = malloc(len + 1);
	if (!s)
		return -ENOMEM;
	err = len ? read(ctx, addr, s, len) : 0;
	if (err) {
		free(s);
		return err;
	}
	s[len] = '\0';
	*out = s;
	if (outlen)
		*outlen = len;
	return 0;
}

/* Go 1.18+: uvarint length, then the bytes (buildinfo.go decodeString). */
static int decode_inline(go_vaddr_read_fn read, void *ctx, uint64_t *addr,
			 char **out, size_t *outlen)
{
	uint64_t len;
	unsigned n;
	int err;

	err = read_uvarint(read, ctx, *addr, &len, &n);
	if (err)
		return err;
	err = read_alloc(read, ctx, *addr + n, len, out, outlen);
	if (err)
		return err;
	*addr += n + len;
	return 0;
}

static uint64_t load_ptr(const uint8_t *p, int size, bool big)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < size; i++) {
		int k = big ? i : size - 1 - i;
		v = (v << 8) | p[k];
	}
	return v;
}

/* Before 1.18: a pointer to a Go string header {data, len}. */
static int decode_ptr(go_vaddr_read_fn read, void *ctx, uint64_t str_addr,
		      int psize, bool big, char **out, size_t *outlen)
{
	uint8_t hdr[16];
	int err;

	err = read(ctx, str_addr, hdr, 2 * psize);
	if (err)
		return err;
	return read_alloc(read, ctx, load_ptr(hdr, psize, big),
			  load_ptr(hdr + psize, psize, big), out, outlen);
}

int go_build_info_decode(go_vaddr_read_fn read, void *ctx, uint64_t addr,
			 struct go_build_info *out)
{
	uint8_t hdr[GO_BUILDINFO_HDR_LEN];
	char *vers = NULL, *mod = NULL;
	size_t modlen = 0;
	int err;

	memset(out, 0, sizeof(*out));
	out->cgo = -1;
	err = read(ctx, addr, hdr, sizeof(hdr));
	if (err)
		return err;
	if (memcmp(hdr, GO_BUILDINFO_MAGIC, GO_BUILDINFO_MAGIC_LEN))
		return -EINVAL;

	if (hdr[HDR_FLAGS] & FLAG_INLINE) {
		uint64_t p = addr + GO_BUILDINFO_HDR_LEN;

		err = decode_inline(read, ctx, &p, &vers, NULL);
		if (!err)
			err = decode_inline(read, ctx, &p, &mod, &modlen);
	} else {
		int psize = hdr[HDR_PTRSIZE];
		bool big = hdr[HDR_FLAGS] & FLAG_BIG_ENDIAN;

		if (psize != 4 && psize != 8)
			return -EINVAL;
		err = decode_ptr(read, ctx,
				 load_ptr(hdr + HDR_VERSPTR, psize, big),
				 psize, big, &vers, NULL);
		if (!err)
			err = decode_ptr(read, ctx,
					 load_ptr(hdr + HDR_VERSPTR + psize,
						  psize, big),
					 psize, big, &mod, &modlen);
	}
	if (err)
		goto fail;
	if (!vers[0] || strlen(vers) >= sizeof(out->version)) {
		err = -EINVAL;
		goto fail;
	}
	strcpy(out->version, vers);
	if (go_version_parse(vers, &out->major, &out->minor, &out->patch,
			     &out->devel)) {
		err = -EINVAL;
		goto fail;
	}

	/*
	 * cmd/go frames modinfo with two 16-byte sentinels
	 * (modload.infoStart/infoEnd, which contain NUL bytes: keep the
	 * length); a blob without them carries no module information.
	 */
	if (modlen >= 33 && mod[modlen - 17] == '\n') {
		memmove(mod, mod + 16, modlen - 32);
		mod[modlen - 32] = '\0';
	} else {
		mod[0] = '\0';
	}
	out->modinfo = mod;
	mod = NULL;
	err = go_build_info_parse_modinfo(out->modinfo, strlen(out->modinfo),
					  out);
	if (err)
		goto fail;
	free(vers);
	return 0;
fail:
	free(vers);
	free(mod);
	go_build_info_free(out);
	return err;
}

int go_version_parse(const char *v, int *major, int *minor, int *patch,
		     bool *devel)
{
	const char *p = strstr(v, "go1.");
	char *end;
	long n;

	*major = *minor = *patch = 0;
	if (devel)
		*devel = strncmp(v, "devel", 5) == 0;
	if (!p)
		return -EINVAL;
	*major = 1;
	n = strtol(p + 4, &end, 10);
	if (end == p + 4 || n < 0 || n > 1000)
		return -EINVAL;
	*minor = (int)n;
	/* "go1.23.5": patch; "go1.21rc2", "go1.22", "go1.25-abc": patch 0. */
	if (*end == '.' && isdigit((unsigned char)end[1]))
		*patch = (int)strtol(end + 1, NULL, 10);
	return 0;
}

/*
 * strconv.Unquote for the two forms cmd/go writes (mod.go quoteValue):
 * `raw` and "interpreted" with Go escapes. Writes at most cap-1 bytes.
 */
static int go_unquote(const char *s, size_t len, char *dst, size_t cap)
{
	size_t i, o = 0;

	if (len < 2 || s[len - 1] != s[0])
		return -EINVAL;
	if (cap == 0)
		return -ENOSPC;
	if (s[0] == '`') {
		for (i = 1; i < len - 1 && o + 1 < cap; i++)
			dst[o++] = s[i];
		dst[o] = '\0';
		return 0;
	}
	if (s[0] != '"')
		return -EINVAL;
	for (i = 1; i < len - 1 && o + 1 < cap; i++) {
		char c = s[i];

		if (c != '\\') {
			dst[o++] = c;
			continue;
		}
		if (++i >= len - 1)
			return -EINVAL;
		switch (s[i]) {
		case 'n': c = '\n'; break;
		case 't': c = '\t'; break;
		case 'r': c = '\r'; break;
		case 'a': c = '\a'; break;
		case 'b': c = '\b'; break;
		case 'f': c = '\f'; break;
		case 'v': c = '\v'; break;
		case '\\': c = '\\'; break;
		case '"': c = '"'; break;
		case '\'': c = '\''; break;
		case 'x': {
			char hex[3] = { 0 };

			if (i + 2 >= len - 1)
				return -EINVAL;
			hex[0] = s[i + 1];
			hex[1] = s[i + 2];
			c = (char)strtol(hex, NULL, 16);
			i += 2;
			break;
		}
		default:
			/*
			 * \u, \U and octal escapes do not occur in the settings
			 * the tracer reads: keep them as written.
			 */
			dst[o++] = '\\';
			c = s[i];
			if (o + 1 >= cap)
				goto out;
		}
		dst[o++] = c;
	}
out:
	dst[o] = '\0';
	return 0;
}

static void copy_field(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src);
}

static int add_setting(struct go_build_info *bi, const char *k, size_t klen,
		       const char *v, size_t vlen)
{
	struct go_build_setting *s;
	char *key, *val;

	s = realloc(bi->settings, (bi->nsettings + 1) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	bi->settings = s;
	key = strndup(k, klen);
	val = malloc(vlen + 1);
	if (!key || !val) {
		free(key);
		free(val);
		return -ENOMEM;
	}
	if (vlen && (v[0] == '"' || v[0] == '`')) {
		if (go_unquote(v, vlen, val, vlen + 1)) {
			free(key);
			free(val);
			return -EINVAL;
		}
	} else {
		memcpy(val, v, vlen);
		val[vlen] = '\0';
	}
	s[bi->nsettings].key = key;
	s[bi->nsettings].value = val;
	bi->nsettings++;

	if (!strcmp(key, "GOEXPERIMENT"))
		copy_field(bi->goexperiment, sizeof(bi->goexperiment), val);
	else if (!strcmp(key, "CGO_ENABLED"))
		bi->cgo = !strcmp(val, "1");
	else if (!strcmp(key, "GOARCH"))
		copy_field(bi->goarch, sizeof(bi->goarch), val);
	else if (!strcmp(key, "GOAMD64"))
		copy_field(bi->goamd64, sizeof(bi->goamd64), val);
	else if (!strcmp(key, "-buildmode"))
		copy_field(bi->buildmode, sizeof(bi->buildmode), val);
	else if (!strcmp(key, "-compiler"))
		copy_field(bi->compiler, sizeof(bi->compiler), val);
	else if (!strcmp(key, "-ldflags"))
		copy_field(bi->ldflags, sizeof(bi->ldflags), val);
	return 0;
}

/* One "build\t" line body: key=value, either side possibly quoted. */
static int parse_build_line(struct go_build_info *bi, const char *kv,
			    size_t len)
{
	const char *eq;
	char key[256];

	if (len == 0 || kv[0] == '=')
		return -EINVAL;
	if (kv[0] == '"' || kv[0] == '`') {
		/* Quoted key: find its closing quote, honouring escapes. */
		size_t i;

		for (i = 1; i < len; i++) {
			if (kv[0] == '"' && kv[i] == '\\') {
				i++;
				continue;
			}
			if (kv[i] == kv[0])
				break;
		}
		if (i >= len || i + 1 >= len || kv[i + 1] != '=')
			return -EINVAL;
		if (go_unquote(kv, i + 1, key, sizeof(key)))
			return -EINVAL;
		return add_setting(bi, key, strlen(key), kv + i + 2,
				   len - i - 2);
	}
	eq = memchr(kv, '=', len);
	if (!eq)
		return -EINVAL;
	return add_setting(bi, kv, eq - kv, eq + 1, len - (eq - kv) - 1);
}

int go_build_info_parse_modinfo(const char *text, size_t len,
				struct go_build_info *bi)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		size_t n;

		if (!nl)
			break;  /* ParseBuildInfo ignores an unterminated line */
		n = nl - p;
		if (n > 5 && !strncmp(p, "path\t", 5)) {
			snprintf(bi->path, sizeof(bi->path), "%.*s",
				 (int)(n - 5), p + 5);
		} else if (n > 4 && !strncmp(p, "mod\t", 4)) {
			const char *tab = memchr(p + 4, '\t', n - 4);
			size_t m = tab ? (size_t)(tab - p - 4) : n - 4;

			snprintf(bi->main_mod, sizeof(bi->main_mod), "%.*s",
				 (int)m, p + 4);
		} else if (n > 6 && !strncmp(p, "build\t", 6)) {
			int err = parse_build_line(bi, p + 6, n - 6);
			if (err)
				return err;
		}
		/* dep and => lines: module list, not needed by the tracer. */
		p = nl + 1;
	}
	return 0;
}

const char *go_build_info_setting(const struct go_build_info *bi,
				  const char *key)
{
	size_t i;

	for (i = 0; i < bi->nsettings; i++)
		if (!strcmp(bi->settings[i].key, key))
			return bi->settings[i].value;
	return NULL;
}

bool go_build_info_has_experiment(const struct go_build_info *bi,
				  const char *name)
{
	const char *p = bi->goexperiment;
	size_t n = strlen(name);

	/* Comma-separated list, e.g. "nogreenteagc,arenas". */
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		if (len == n && !strncmp(p, name, n))
			return true;
		if (!comma)
			break;
		p = comma + 1;
	}
	return false;
}

bool go_build_info_at_least(const struct go_build_info *bi, int major,
			    int minor)
{
	return bi->major > major || (bi->major == major && bi->minor >= minor);
}

void go_build_info_free(struct go_build_info *bi)
{
	size_t i;

	for (i = 0; i < bi->nsettings; i++) {
		free(bi->settings[i].key);
		free(bi->settings[i].value);
	}
	free(bi->settings);
	free(bi->modinfo);
	bi->settings = NULL;
	bi->nsettings = 0;
	bi->modinfo = NULL;
}
