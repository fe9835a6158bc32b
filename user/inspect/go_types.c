// SPDX-License-Identifier: BSD-3-Clause
/*
 * go_types.c - Go type descriptor -> name, size, pointer bytes.
 *
 * The runtime's view (runtime/type.go, internal/abi/type.go, Go 1.21+):
 *   t.Str is a nameOff; the name is at moduledata.types + off for the
 *   module whose [types, etypes) holds t; a name is
 *   [flags byte][uvarint len][len bytes]...; rtype.string() drops the first
 *   byte when t.TFlag has TFlagExtraStar (the linker stores "*T" and lets
 *   T share it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "inspect/go_binary.h"
#include "inspect/go_reflect_names.h"
#include "go_types.h"

static uint64_t load_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = v << 8 | p[n];
	return v;
}

/*
 * Reads type data from the process, else from the file: the types section
 * is read-only and file-backed, the same bytes in both, and a process that
 * exited while its last records were being read no longer has it.
 */
static int read_mem(const struct go_type_reader *r, uint64_t addr, void *buf,
		    size_t len)
{
	int rc = r->read(r->ctx, addr, buf, len);

	if (rc && r->bin && addr >= r->types && len <= r->etypes - addr &&
	    go_binary_read(r->bin, addr - r->bias, buf, len) == 0)
		return 0;
	return rc;
}

/* Reads a field of `f.size` (1..8) bytes at base + f.off. */
static int read_field(const struct go_type_reader *r, uint64_t base,
		      struct go_field f, uint64_t *val)
{
	uint8_t b[8];
	int rc;

	if (f.off < 0 || f.size < 1 || f.size > 8)
		return -EINVAL;
	rc = read_mem(r, base + f.off, b, f.size);
	if (rc)
		return rc;
	*val = load_le(b, f.size);
	return 0;
}

int go_types_init(struct go_type_reader *r, const struct go_binary *bin,
		  uint64_t load_bias, go_mem_read_fn read, void *ctx)
{
	struct go_layout l;
	uint64_t md, types, etypes;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = go_binary_moduledata(bin, &md);
	if (rc)
		return rc;
	rc = go_layout_resolve(bin, &l, NULL, NULL);
	if (rc < 0)
		return rc;
	if (l.moduledata_types.off < 0 || l.moduledata_etypes.off < 0)
		return -ENOENT;
	/* Link-time values from the file: the same in every process. */
	rc = go_binary_read_u64(bin, md + l.moduledata_types.off, &types);
	if (!rc)
		rc = go_binary_read_u64(bin, md + l.moduledata_etypes.off,
					&etypes);
	if (rc)
		return rc;
	if (!types || etypes <= types)
		return -ENOENT;
	r->read = read;
	r->ctx = ctx;
	r->bin = bin;
	r->bias = load_bias;
	r->types = types + load_bias;
	r->etypes = etypes + load_bias;
	r->size = l.abi_type_size;
	r->ptr_bytes = l.abi_type_ptrbytes;
	r->tflag = l.abi_type_tflag;
	r->str = l.abi_type_str;
	return 0;
}

int go_types_open(struct go_type_reader **out, const struct go_binary *bin,
		  uint64_t load_bias, go_mem_read_fn read, void *ctx)
{
	struct go_type_reader *r = malloc(sizeof(*r));
	struct go_reflect_names *rn;
	int rc;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	rc = go_types_init(r, bin, load_bias, read, ctx);
	if (rc) {
		free(r);
		return rc;
	}
	/* Without reflectOffs, run-time types stay unnamed (-ERANGE). */
	rn = malloc(sizeof(*rn));
	if (rn && go_reflect_names_init(rn, bin, load_bias, read, ctx) == 0)
		r->reflect = rn;
	else
		free(rn);
	*out = r;
	return 0;
}

void go_types_close(struct go_type_reader *r)
{
	if (!r)
		return;
	if (r->reflect) {
		go_reflect_names_free(r->reflect);
		free(r->reflect);
	}
	free(r);
}

/*
 * Reads the abi.Name at NAME_AT (flag byte, uvarint length, bytes) into
 * OUT, reading no further than LIMIT (exclusive).
 */
static int read_name(const struct go_type_reader *r, uint64_t name_at,
		     uint64_t limit, struct go_type_desc *out)
{
	uint8_t hdr[1 + 10];
	uint64_t len = 0, room;
	unsigned i, n = 0;
	int rc;

	if (name_at >= limit)
		return -EINVAL;
	/* Flag byte and the uvarint length; never read past limit. */
	room = limit - name_at;
	rc = read_mem(r, name_at, hdr, room < sizeof(hdr) ? room : sizeof(hdr));
	if (rc)
		return rc;
	for (i = 1; i < sizeof(hdr) && i < room; i++) {
		len |= (uint64_t)(hdr[i] & 0x7f) << (7 * (i - 1));
		if (!(hdr[i] & 0x80)) {
			n = i + 1;
			break;
		}
	}
	if (!n || len > room - n)
		return -EINVAL;
	if (len >= sizeof(out->name)) {
		out->truncated = true;
		len = sizeof(out->name) - 1;
	}
	rc = read_mem(r, name_at + n, out->name, len);
	if (rc)
		return rc;
	out->name[len] = '\0';
	out->name_len = len;
	return 0;
}

/* The descriptor's Size_, PtrBytes, TFlag and Str. */
static int read_header(const struct go_type_reader *r, uint64_t type_addr,
		       struct go_type_desc *out, uint64_t *str)
{
	uint64_t tflag;
	int rc;

	rc = read_field(r, type_addr, r->size, &out->size);
	if (!rc)
		rc = read_field(r, type_addr, r->ptr_bytes, &out->ptr_bytes);
	if (!rc)
		rc = read_field(r, type_addr, r->tflag, &tflag);
	if (!rc)
		rc = read_field(r, type_addr, r->str, str);
	if (rc)
		return rc;
	out->tflag = (uint8_t)tflag;
	*str = (uint32_t)*str; /* nameOff is an int32; 0 means no name */
	return 0;
}

/*
 * A type made at run time (reflect): on the heap, its Str a reflectOffs
 * ID (runtime/type.go resolveNameOff: an offset outside every module is
 * looked up there).  Its name is on the heap too; names are short.
 */
static int describe_reflect(const struct go_type_reader *r,
			    uint64_t type_addr, struct go_type_desc *out)
{
	uint64_t str, name_at;
	int rc;

	if (!r->reflect)
		return -ERANGE;
	rc = read_header(r, type_addr, out, &str);
	if (rc)
		return rc == -EFAULT || rc == -EIO ? -ERANGE : rc;
	if (str == 0)
		return 0;
	if (go_reflect_name_addr(r->reflect, (int32_t)str, &name_at))
		return -ERANGE;
	/* No section end to stop at: a name is at most 1 MiB. */
	return read_name(r, name_at, name_at + (1u << 20), out);
}

int go_type_describe(const struct go_type_reader *r, uint64_t type_addr,
		     struct go_type_desc *out)
{
	uint64_t str;
	int rc;

	memset(out, 0, sizeof(*out));
	if (type_addr < r->types || type_addr >= r->etypes)
		return describe_reflect(r, type_addr, out);
	rc = read_header(r, type_addr, out, &str);
	if (rc)
		return rc;
	if (str == 0)
		return 0;
	rc = read_name(r, r->types + str, r->etypes, out);
	if (rc)
		return rc;
	if ((out->tflag & GO_TFLAG_EXTRA_STAR) && out->name_len > 0 &&
	    out->name[0] == '*') {
		memmove(out->name, out->name + 1, out->name_len);
		out->name_len--;
	}
	return 0;
}
