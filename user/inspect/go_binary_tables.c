// SPDX-License-Identifier: BSD-3-Clause
/*
 * go_binary_tables.c - where a Go executable keeps its build info, its
 * function table and its module data, however much of the ELF is left.
 *
 * (cmd/link/internal/ld, checked on Go 1.21..1.27):
 * - .go.buildinfo: own section; without section headers, the first
 *   writable, non-executable PT_LOAD (debug/buildinfo elfExe.DataStart).
 * - pclntab: .gopclntab, or .data.rel.ro.gopclntab in PIEs up to Go 1.25,
 *   or the runtime.pclntab symbol; failing all, scanned for its header.
 * - runtime.firstmoduledata: .noptrdata up to Go 1.25, .go.module since
 *   1.26; its first word points at the pclntab.
 */
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>

#include "go_binary_impl.h"

static int read_cb(void *ctx, uint64_t vaddr, void *buf, size_t len)
{
	return go_binary_read(ctx, vaddr, buf, len);
}

/* Searches [addr, addr+size) for the magic at 16-byte alignment. */
static int find_buildinfo_in(const struct go_binary *bin, uint64_t addr,
			     uint64_t size, uint64_t *found)
{
	uint64_t a = (addr + GO_BUILDINFO_ALIGN - 1) &
		     ~(uint64_t)(GO_BUILDINFO_ALIGN - 1);

	for (; a + GO_BUILDINFO_HDR_LEN <= addr + size; a += GO_BUILDINFO_ALIGN) {
		const uint8_t *p = go_binary_bytes(bin, a, GO_BUILDINFO_HDR_LEN);

		if (!p)
			return -ENOENT;
		if (!memcmp(p, GO_BUILDINFO_MAGIC, GO_BUILDINFO_MAGIC_LEN)) {
			*found = a;
			return 0;
		}
	}
	return -ENOENT;
}

int go_binary_load_buildinfo(struct go_binary *bin)
{
	const struct section *s = go_binary_find_section(bin, ".go.buildinfo");
	uint64_t at = 0;
	int err = -ENOENT;
	size_t i;

	if (s) {
		err = find_buildinfo_in(bin, s->addr, s->size, &at);
	} else {
		/*
		 * debug/buildinfo looks in the first writable, non-exec
		 * PT_LOAD only; in a PIE that one holds .data.rel.ro (RELRO)
		 * and the blob is in the next: search them all.
		 */
		for (i = 0; i < bin->nsegs && err; i++) {
			const struct segment *g = &bin->segs[i];

			if ((g->flags & (PF_X | PF_W)) != PF_W)
				continue;
			err = find_buildinfo_in(bin, g->vaddr, g->filesz, &at);
		}
	}
	if (err)
		return err;
	return go_build_info_decode(read_cb, bin, at, &bin->bi);
}

/* Where the pcHeader is, and how many bytes may belong to the table. */
static int locate_pclntab(const struct go_binary *bin, uint64_t *addr,
			  uint64_t *len)
{
	static const char *const names[] = { ".gopclntab",
					     ".data.rel.ro.gopclntab" };
	const struct symbol *sym, *esym;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct section *s = go_binary_find_section(bin, names[i]);

		if (s && s->size) {
			*addr = s->addr;
			*len = s->size;
			return 0;
		}
	}
	sym = go_binary_find_sym(bin, "runtime.pclntab");
	esym = go_binary_find_sym(bin, "runtime.epclntab");
	if (sym && esym && esym->addr > sym->addr) {
		*addr = sym->addr;
		*len = esym->addr - sym->addr;
		return 0;
	}
	/*
	 * No section headers and no symbols: scan the read-only and relro
	 * data for a header that parses. Functions are checked by the caller.
	 */
	for (i = 0; i < bin->nsegs; i++) {
		const struct segment *g = &bin->segs[i];
		uint64_t off;

		if (g->flags & PF_X)
			continue;
		for (off = 0; off + 8 * 9 <= g->filesz; off += 8) {
			const uint8_t *p = bin->image + g->offset + off;
			struct go_pclntab t;

			if (!go_pclntab_check_header(p, g->filesz - off))
				continue;
			if (go_pclntab_init(&t, p, g->filesz - off,
					    g->vaddr + off, 0))
				continue;
			*addr = g->vaddr + off;
			*len = g->filesz - off;
			return 0;
		}
	}
	return -ENOENT;
}

/* Word 3 (Go 1.18+) or 2 (1.16/1.17) of pcHeader: funcnametab offset. */
static uint64_t funcname_off(const uint8_t *hdr)
{
	unsigned w = (hdr[0] == 0xfa) ? 2 : 3;
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | hdr[8 + 8 * w + i];
	return v;
}

static bool moduledata_at(const struct go_binary *bin, uint64_t at,
			  uint64_t pcln, uint64_t fn_off)
{
	uint64_t w0, w1;

	return !go_binary_read_u64(bin, at, &w0) && w0 == pcln &&
	       !go_binary_read_u64(bin, at + 8, &w1) && w1 == pcln + fn_off;
}

/*
 * Looks for moduledata in [addr, addr+size) at 8-byte alignment. Only a
 * range the file holds is scanned: the size comes from a header, and a
 * section claiming 2^63 bytes would otherwise be walked word by word.
 */
static uint64_t scan_range(const struct go_binary *bin, uint64_t addr,
			   uint64_t size, uint64_t pcln, uint64_t fn_off)
{
	uint64_t o;

	if (size < 16 || !go_binary_bytes(bin, addr, size))
		return 0;
	for (o = -addr & 7; o <= size - 16; o += 8)
		if (moduledata_at(bin, addr + o, pcln, fn_off))
			return addr + o;
	return 0;
}

static uint64_t scan_moduledata(const struct go_binary *bin, uint64_t pcln,
				uint64_t fn_off)
{
	size_t i;
	uint64_t a;

	/*
	 * moduledata.pcHeader == pclntab and moduledata.funcnametab's data
	 * pointer == pclntab + funcnameOffset (runtime/symtab.go): two
	 * consecutive words that nothing else holds.
	 */
	if (bin->nsecs) {
		for (i = 0; i < bin->nsecs; i++) {
			const struct section *s = &bin->secs[i];

			if (s->type != SHT_PROGBITS || !(s->flags & SHF_WRITE))
				continue;
			a = scan_range(bin, s->addr, s->size, pcln, fn_off);
			if (a)
				return a;
		}
		return 0;
	}
	for (i = 0; i < bin->nsegs; i++) {
		const struct segment *g = &bin->segs[i];

		if (!(g->flags & PF_W))
			continue;
		a = scan_range(bin, g->vaddr, g->filesz, pcln, fn_off);
		if (a)
			return a;
	}
	return 0;
}

/* moduledata.text: after pcHeader, 6 slices, findfunctab, minpc, maxpc. */
#define MODULEDATA_TEXT_OFF (8 * (1 + 6 * 3 + 3))

int go_binary_load_pclntab(struct go_binary *bin, char *err, size_t errlen)
{
	const struct symbol *sym;
	const struct section *text;
	const uint8_t *p;
	uint64_t addr, len, md_text;
	struct go_func f;
	int rc;

	if (locate_pclntab(bin, &addr, &len))
		return -ENOENT;
	p = go_binary_bytes(bin, addr, len);
	if (!p)
		return go_binary_fail(err, errlen, -EINVAL,
			    "%s: pclntab at %#lx is not in the file",
			    bin->path, (unsigned long)addr);
	if (!go_pclntab_check_header(p, len)) {
		/* A table shorter than its magic has none. */
		uint32_t magic = len < 4 ? 0 :
				 p[0] | p[1] << 8 | p[2] << 16 |
				 (uint32_t)p[3] << 24;

		/* A version that writes a table we read: the table is bad. */
		if (go_build_info_at_least(&bin->bi, 1, 16))
			return go_binary_fail(err, errlen, -ENOEXEC,
				    "%s: the function table (pclntab) of this "
				    "%s binary is damaged (magic %#x): its "
				    "runtime functions cannot be found",
				    bin->path, bin->bi.version, magic);
		return go_binary_fail(err, errlen, -ENOTSUP,
			    "%s: pclntab magic %#x: Go 1.15 or older; not "
			    "supported", bin->path, magic);
	}

	sym = go_binary_find_sym(bin, "runtime.firstmoduledata");
	if (sym)
		bin->moduledata = sym->addr;
	else
		bin->moduledata = scan_moduledata(bin, addr, funcname_off(p));

	/*
	 * runtime.text, the base of every entry offset. The .text section
	 * starts there when Go links internally; an external (cgo) link may
	 * put C start-up code first, so moduledata.text is preferred.
	 */
	sym = go_binary_find_sym(bin, "runtime.text");
	text = go_binary_find_section(bin, ".text");
	if (sym)
		bin->text_start = sym->addr;
	else if (bin->moduledata &&
		 !go_binary_read_u64(bin, bin->moduledata + MODULEDATA_TEXT_OFF,
				     &md_text) && md_text)
		bin->text_start = md_text;
	else if (text)
		bin->text_start = text->addr;

	rc = go_pclntab_init(&bin->pcln, p, len, addr, bin->text_start);
	if (rc)
		return go_binary_fail(err, errlen, rc, "%s: pclntab at %#lx is corrupt",
			    bin->path, (unsigned long)addr);
	/*
	 * Every gc-built program has the allocator, whatever else the
	 * linker dropped: a table that does not name it has had its names
	 * rewritten (obfuscated) or damaged, and nothing can be probed.
	 */
	if (go_pclntab_find(&bin->pcln, "runtime.mallocgc", &f))
		return go_binary_fail(err, errlen, -ENOEXEC,
			    "%s: the function table (pclntab) of this %s "
			    "binary names no runtime.mallocgc: its runtime "
			    "functions cannot be found", bin->path,
			    bin->bi.version[0] ? bin->bi.version : "Go");
	return 0;
}
