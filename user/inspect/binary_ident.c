// SPDX-License-Identifier: BSD-3-Clause
/*
 * binary_ident.c - build IDs and the executable segment of a Go binary,
 * from its ELF notes and program headers (libelf).
 */
#include "inspect/binary_ident.h"

#include <gelf.h>
#include <stdio.h>
#include <string.h>

#include "inspect/go_binary.h"

#define PAGE 4096ull
#define NT_GO_BUILD_ID 4	/* cmd/link/internal/ld/elf.go: ELF_NOTE_GOBUILDID_TAG */

static void hex(char *dst, size_t cap, const uint8_t *p, size_t n)
{
	size_t i;

	dst[0] = '\0';
	for (i = 0; i < n && 2 * i + 2 < cap; i++)
		snprintf(dst + 2 * i, 3, "%02x", p[i]);
}

/* Every note of section SCN; keeps the two build IDs. */
static void scan_notes(Elf_Scn *scn, struct binary_ident *id)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t off = 0, noff, doff;
	GElf_Nhdr nh;

	if (!d || !d->d_buf)
		return;
	while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
		const char *name = (const char *)d->d_buf + noff;
		const uint8_t *desc = (const uint8_t *)d->d_buf + doff;

		if (nh.n_namesz == 4 && !memcmp(name, "GNU", 4) &&
		    nh.n_type == NT_GNU_BUILD_ID)
			hex(id->gnu_build_id, sizeof(id->gnu_build_id), desc,
			    nh.n_descsz);
		/* The Go linker's name is "Go\0\0" (namesz 4). */
		else if ((nh.n_namesz == 3 || nh.n_namesz == 4) &&
			 !memcmp(name, "Go", 3) &&
			 nh.n_type == NT_GO_BUILD_ID &&
			 nh.n_descsz < sizeof(id->go_build_id) &&
			 !memchr(desc, 0, nh.n_descsz)) {
			memcpy(id->go_build_id, desc, nh.n_descsz);
			id->go_build_id[nh.n_descsz] = '\0';
		}
	}
}

/* The executable PT_LOAD that holds address TEXT (or the first one). */
static void text_segment(Elf *e, uint64_t text, struct binary_ident *id)
{
	GElf_Phdr ph, best = { 0 };
	size_t n, i;
	int found = 0;

	if (elf_getphdrnum(e, &n))
		return;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X))
			continue;
		if (!found || (text >= ph.p_vaddr &&
			       text < ph.p_vaddr + ph.p_memsz)) {
			best = ph;
			found = 1;
		}
	}
	if (!found)
		return;
	id->text_start = best.p_vaddr & ~(PAGE - 1);
	id->text_limit = (best.p_vaddr + best.p_memsz + PAGE - 1) & ~(PAGE - 1);
	id->text_offset = best.p_offset & ~(PAGE - 1);
}

int binary_ident_read(const struct go_binary *bin, struct binary_ident *id)
{
	Elf *e = (Elf *)go_binary_elf(bin);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	memset(id, 0, sizeof(*id));
	if (!e)
		return 0;
	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE)
			scan_notes(scn, id);
	text_segment(e, go_binary_text_start(bin), id);
	return 0;
}
