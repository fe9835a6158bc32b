// SPDX-License-Identifier: BSD-3-Clause
/*
 * go_pclntab.c - Go function table (runtime/symtab.go, debug/gosym).
 *
 * Layout since Go 1.18 (pcHeader, runtime/symtab.go):
 *   magic u32, pad u8 u8, minLC u8, ptrSize u8, then 8 words:
 *   nfunc, nfiles, textStart (unused since 1.26), funcnameOffset, cuOffset,
 *   filetabOffset, pctabOffset, pclnOffset.
 *   At pclnOffset: functab[nfunc+1] {entryoff u32, funcoff u32}, entryoff
 *   relative to runtime.text, funcoff relative to pclnOffset; the last
 *   entry is the end of text. At pclnOffset+funcoff: _func {entryOff u32,
 *   nameOff i32, args i32, deferreturn u32, pcsp u32, ...}.
 * Go 1.16/1.17 have no textStart word and use absolute uintptr entries:
 *   functab {entry uintptr, funcoff uintptr}, _func {entry uintptr,
 *   nameoff i32, args i32, deferreturn u32, pcsp u32, ...}.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "go_pclntab.h"

/* The header is 8 bytes followed by 8 pointer-sized words. */
#define HDR_LEN (8 + 8 * 8)

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

static uint64_t hdr_word(const struct go_pclntab *t, unsigned i)
{
	return le64(t->data + 8 + 8 * i);
}

int go_pclntab_check_header(const uint8_t *p, size_t len)
{
	uint32_t magic;

	if (len < HDR_LEN)
		return 0;
	magic = le32(p);
	if (magic != GO_PCLNTAB_MAGIC_116 && magic != GO_PCLNTAB_MAGIC_118 &&
	    magic != GO_PCLNTAB_MAGIC_120)
		return 0;
	/* pad1, pad2 = 0; minLC = 1 on x86; ptrSize = 8 on amd64. */
	return p[4] == 0 && p[5] == 0 && p[6] == 1 && p[7] == 8;
}

static bool in_range(const struct go_pclntab *t, uint64_t off, uint64_t n)
{
	return off <= t->len && n <= t->len - off;
}

static bool is_116(const struct go_pclntab *t)
{
	return t->magic == GO_PCLNTAB_MAGIC_116;
}

/* Size of one functab entry: two u32 since 1.18, two uintptr before. */
static unsigned ftab_entry_len(const struct go_pclntab *t)
{
	return is_116(t) ? 16 : 8;
}

/* functab[i] = {entry address, offset of _func from the pcln table}. */
static int ftab_entry(const struct go_pclntab *t, uint64_t i,
		      uint64_t *entry, uint64_t *funcoff)
{
	uint64_t off = t->pcln_off + i * ftab_entry_len(t);

	if (!in_range(t, off, ftab_entry_len(t)))
		return -EINVAL;
	if (is_116(t)) {
		*entry = le64(t->data + off);
		*funcoff = le64(t->data + off + 8);
	} else {
		*entry = t->text_start + le32(t->data + off);
		*funcoff = le32(t->data + off + 4);
	}
	return 0;
}

int go_pclntab_init(struct go_pclntab *t, const uint8_t *data, size_t len,
		    uint64_t addr, uint64_t text_start)
{
	uint64_t first, last, dummy;

	memset(t, 0, sizeof(*t));
	if (!go_pclntab_check_header(data, len))
		return len >= 4 && (le32(data) & 0xfffffff0u) == 0xfffffff0u ?
			-ENOTSUP : -EINVAL;
	t->data = data;
	t->len = len;
	t->addr = addr;
	t->magic = le32(data);
	t->quantum = data[6];
	t->text_start = text_start;
	t->nfunc = hdr_word(t, 0);
	t->nfiles = hdr_word(t, 1);
	if (is_116(t)) {
		t->funcname_off = hdr_word(t, 2);
		t->pctab_off = hdr_word(t, 5);
		t->pcln_off = hdr_word(t, 6);
	} else {
		t->funcname_off = hdr_word(t, 3);
		t->pctab_off = hdr_word(t, 6);
		t->pcln_off = hdr_word(t, 7);
	}
	if (t->nfunc == 0 || t->nfunc > len / 8 ||
	    !in_range(t, t->funcname_off, 1) || !in_range(t, t->pctab_off, 1) ||
	    !in_range(t, t->pcln_off, (t->nfunc + 1) * ftab_entry_len(t)))
		return -EINVAL;
	/* Entries must ascend: checking the ends catches a wrong layout. */
	if (ftab_entry(t, 0, &first, &dummy) ||
	    ftab_entry(t, t->nfunc, &last, &dummy) || last < first)
		return -EINVAL;
	return 0;
}

static int read_uvarint(const uint8_t *p, const uint8_t *end, uint32_t *v)
{
	uint32_t x = 0;
	int i;

	for (i = 0; i < 5 && p + i < end; i++) {
		x |= (uint32_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*v = x;
			return i + 1;
		}
	}
	return -1;
}

/*
 * The pc-value table for SP (runtime/symtab.go step()) covers exactly the
 * function's code: walking it to its end gives the code size, without the
 * INT3 padding the linker puts before the next function's alignment.
 */
static int pcsp_end(const struct go_pclntab *t, uint32_t pcsp,
		    uint64_t entry, uint64_t limit, uint64_t *end)
{
	const uint8_t *p, *stop = t->data + t->len;
	uint64_t pc = entry;
	bool first = true;

	if (pcsp == 0 || !in_range(t, t->pctab_off + pcsp, 1))
		return -EINVAL;
	p = t->data + t->pctab_off + pcsp;
	for (;;) {
		uint32_t vdelta, pcdelta;
		int n;

		n = read_uvarint(p, stop, &vdelta);
		if (n < 0)
			return -EINVAL;
		if (vdelta == 0 && !first)
			break;
		p += n;
		n = read_uvarint(p, stop, &pcdelta);
		if (n < 0)
			return -EINVAL;
		p += n;
		/*
		 * Past the next function, or wrapping around: 1.16 entries
		 * are 64-bit addresses the table chooses.
		 */
		if ((uint64_t)pcdelta * t->quantum > limit - pc)
			return -EINVAL;
		pc += (uint64_t)pcdelta * t->quantum;
		first = false;
	}
	*end = pc;
	return 0;
}

int go_pclntab_func(const struct go_pclntab *t, uint64_t i,
		    struct go_func *out)
{
	uint64_t entry, next, funcoff, dummy, fo, end;
	uint32_t pcsp;
	uint8_t funcid;
	int32_t nameoff;
	const char *name;

	if (i >= t->nfunc || ftab_entry(t, i, &entry, &funcoff) ||
	    ftab_entry(t, i + 1, &next, &dummy) || next < entry)
		return -EINVAL;
	fo = t->pcln_off + funcoff;
	if (!in_range(t, fo, 44))
		return -EINVAL;
	/*
	 * funcID follows nine 4-byte fields (ten with startLine, Go 1.20+);
	 * in 1.16/1.17 the first field is a uintptr.
	 */
	if (is_116(t)) {
		nameoff = (int32_t)le32(t->data + fo + 8);
		pcsp = le32(t->data + fo + 20);
		funcid = t->data[fo + 40];
	} else {
		nameoff = (int32_t)le32(t->data + fo + 4);
		pcsp = le32(t->data + fo + 16);
		funcid = t->data[fo + (t->magic == GO_PCLNTAB_MAGIC_118 ? 36 : 40)];
	}
	if (nameoff < 0 || !in_range(t, t->funcname_off + nameoff, 1))
		return -EINVAL;
	name = (const char *)t->data + t->funcname_off + nameoff;
	if (!memchr(name, 0, t->len - (t->funcname_off + nameoff)))
		return -EINVAL;
	/* No usable SP table (rare, hand-written assembly): up to the next. */
	if (pcsp_end(t, pcsp, entry, next, &end))
		end = next;
	out->name = name;
	out->entry = entry;
	out->size = end - entry;
	out->next_entry = next;
	out->funcid = funcid;
	return 0;
}

int go_pclntab_find(const struct go_pclntab *t, const char *name,
		    struct go_func *out)
{
	bool found = false;
	uint64_t i;

	/*
	 * A linear scan: a few thousand names, looked up a few dozen times
	 * when probes are planned. The funcname table is not sorted.
	 */
	for (i = 0; i < t->nfunc; i++) {
		struct go_func f;

		if (go_pclntab_func(t, i, &f) || strcmp(f.name, name))
			continue;
		if (!found || (out->funcid != 0 && f.funcid == 0))
			*out = f;
		found = true;
		if (f.funcid == 0)
			break;
	}
	return found ? 0 : -ENOENT;
}

int go_pclntab_find_pc(const struct go_pclntab *t, uint64_t pc,
		       struct go_func *out)
{
	uint64_t lo = 0, hi = t->nfunc;

	/* functab is sorted by entry: binary search for the last <= pc. */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2, entry, dummy;

		if (ftab_entry(t, mid, &entry, &dummy))
			return -EINVAL;
		if (entry <= pc)
			lo = mid;
		else
			hi = mid;
	}
	if (go_pclntab_func(t, lo, out))
		return -EINVAL;
	if (pc < out->entry || pc >= out->next_entry)
		return -ENOENT;
	return 0;
}
