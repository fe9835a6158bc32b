// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_dwarf - the DWARF lookups (go_dwarf.c, go_layout.c) on a mutated
 * Go binary: every runtime field the tracer reads by member path, type
 * sizes, variable addresses, DW_AT_go_runtime_type, and the layout choice
 * between DWARF and the table.
 *
 * Input: an ELF file with .debug_info. Seeds (gen_seeds.py): small
 * synthetic Go binaries whose DWARF describes the runtime structs with
 * the offsets of Go 1.21-1.27 (go_layout_table.c), as DWARF 4 and 5.
 */
#include "fuzz_file.h"
#include "inspect/go_binary.h"
#include "inspect/go_dwarf.h"
#include "inspect/go_layout.h"

static const char *const vars[] = {
	"runtime.mheap_", "runtime.allgs", "runtime.firstmoduledata",
	"runtime.nosuchvar",
};

static const char *const types[] = {
	"main.Node", "runtime.mspan", "runtime.g", "internal/abi.Type",
	"runtime.stack", "[]runtime.addrRange", "uintptr",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct go_binary *bin;
	struct go_layout l;
	char path[64], err[256];
	uint64_t off, sz;
	size_t i;
	int rc;

	fuzz_file(data, size, path, sizeof(path));
	if (go_binary_open(path, &bin, err, sizeof(err)))
		return 0;

	for (i = 0; i < go_layout_nfields; i++) {
		const struct go_layout_field_desc *f = &go_layout_fields[i];

		(void)go_dwarf_member(go_binary_dwarf(bin), f->type, f->path, &off, &sz);
		(void)go_dwarf_member_offset(go_binary_dwarf(bin), f->type, f->path, &off);
	}
	(void)go_dwarf_member(go_binary_dwarf(bin), "runtime.mheap", "", &off, &sz);
	(void)go_dwarf_member(go_binary_dwarf(bin), "runtime.mheap", "pages..x", &off, &sz);
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		(void)go_dwarf_type_size(go_binary_dwarf(bin), types[i], &sz);
		(void)go_dwarf_runtime_type_off(go_binary_dwarf(bin), types[i], &off);
	}
	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		(void)go_dwarf_var_addr(go_binary_dwarf(bin), vars[i], &off);

	/* On success no field is left unknown (go_layout.h). */
	rc = go_layout_resolve(bin, &l, NULL, NULL);
	if (rc >= 0) {
		for (i = 0; i < go_layout_nfields; i++) {
			const struct go_field *f = go_layout_field(&l, i);

			FUZZ_CHECK(f->off >= 0 || f->off == GO_FIELD_ABSENT);
			FUZZ_CHECK(f->off < 0 || f->size >= 0);
		}
	}
	go_binary_close(bin);
	return 0;
}
