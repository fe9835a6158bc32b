// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_types - go_type_describe (go_types.c) reading type descriptors and
 * their names from a target's memory made of the fuzz input.
 *
 * Input: a 48-byte header, then the memory that starts at BASE:
 *   8 x int8   offset and size of abi.Type.Size_, PtrBytes, TFlag, Str
 *   u32        types  - BASE  (moduledata.types)
 *   u32        etypes - BASE  (moduledata.etypes)
 *   8 x u32    descriptors to describe, - BASE
 * Seeds: the first KiB of the types section of Go 1.21-1.27 workloads with
 * descriptors listed in their .typelink (gen_seeds.py).
 */
#include "fuzz_common.h"
#include "inspect/go_types.h"

#define BASE 0x48a000ull
#define HDR 48

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_mem m;
	struct go_type_reader r;
	struct go_type_desc d;
	int i, rc;

	if (size < HDR)
		return 0;
	m.data = data + HDR;
	m.len = size - HDR;
	m.base = BASE;
	memset(&r, 0, sizeof(r));
	r.read = fuzz_mem_read;
	r.ctx = &m;
	r.bin = NULL;
	r.bias = 0;
	r.size.off = (int8_t)data[0];
	r.size.size = (int8_t)data[1];
	r.ptr_bytes.off = (int8_t)data[2];
	r.ptr_bytes.size = (int8_t)data[3];
	r.tflag.off = (int8_t)data[4];
	r.tflag.size = (int8_t)data[5];
	r.str.off = (int8_t)data[6];
	r.str.size = (int8_t)data[7];
	r.types = BASE + fuzz_le32(data + 8);
	r.etypes = BASE + fuzz_le32(data + 12);

	for (i = 0; i < 8; i++) {
		uint64_t addr = BASE + fuzz_le32(data + 16 + 4 * i);

		rc = go_type_describe(&r, addr, &d);
		if (rc) {
			FUZZ_CHECK(rc == -ERANGE || rc == -EINVAL ||
				   rc == -EFAULT);
			continue;
		}
		FUZZ_CHECK(d.name_len < sizeof(d.name));
		FUZZ_CHECK(d.name[d.name_len] == '\0');
		FUZZ_CHECK(!d.truncated || d.name_len >= sizeof(d.name) - 2);
	}
	/* Outside the types section: refused before any read. */
	FUZZ_CHECK(go_type_describe(&r, r.etypes, &d) == -ERANGE ||
		   r.etypes < r.types);
	return 0;
}
