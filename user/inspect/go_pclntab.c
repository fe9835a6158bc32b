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
		t->cutab_off = hdr_word(t, 3);
		t->filetab_off = hdr_word(t, 4);
		t->pctab_off = hdr_word(t, 5);
		t->pcln_off = hdr_word(t, 6);
	} else {
		t->funcname_off = hdr_word(t, 3);
		t->cutab_off = hdr_word(t, 4);
		t->filetab_off = hdr_word(t, 5);
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
		out->pcfile = le32(t->data + fo + 24);
		out->pcln = le32(t->data + fo + 28);
		out->cu_offset = le32(t->data + fo + 36);
		out->npcdata = le32(t->data + fo + 32);
		out->nfuncdata = t->data[fo + 43];
		funcid = t->data[fo + 40];
	} else {
		nameoff = (int32_t)le32(t->data + fo + 4);
		pcsp = le32(t->data + fo + 16);
		out->pcfile = le32(t->data + fo + 20);
		out->pcln = le32(t->data + fo + 24);
		out->cu_offset = le32(t->data + fo + 32);
		out->npcdata = le32(t->data + fo + 28);
		out->nfuncdata = t->data[fo + (t->magic == GO_PCLNTAB_MAGIC_118 ?
					       39 : 43)];
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
	out->func_off = fo;
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

/*
 * The value a pc-value table gives PC (runtime/symtab.go pcvalue, step):
 * pairs of (zigzag value delta, pc delta / quantum) uvarints from the
 * function's entry, value -1 before the first; a zero value delta after
 * the first pair ends the table.  PC is in [entry, limit).
 */
static int pcvalue(const struct go_pclntab *t, uint32_t off, uint64_t entry,
		   uint64_t limit, uint64_t pc, int32_t *out)
{
	const uint8_t *p, *stop = t->data + t->len;
	uint64_t cur = entry;
	int32_t val = -1;

	if (off == 0 || !in_range(t, t->pctab_off + off, 1))
		return -ENOENT;
	p = t->data + t->pctab_off + off;
	for (;;) {
		uint32_t uvdelta, pcdelta;
		int n;

		n = read_uvarint(p, stop, &uvdelta);
		if (n < 0)
			return -EINVAL;
		if (uvdelta == 0 && cur != entry)
			return -ENOENT;	/* past the end of the table */
		p += n;
		n = read_uvarint(p, stop, &pcdelta);
		if (n < 0)
			return -EINVAL;
		p += n;
		/* Unsigned arithmetic: Go's int32 wraps the same way. */
		val = (int32_t)((uint32_t)val +
				(-(uvdelta & 1) ^ (uvdelta >> 1)));
		if ((uint64_t)pcdelta * t->quantum > limit - cur)
			return -EINVAL;
		cur += (uint64_t)pcdelta * t->quantum;
		if (pc < cur) {
			*out = val;
			return 0;
		}
	}
}

int go_pclntab_line(const struct go_pclntab *t, const struct go_func *f,
		    uint64_t pc, const char **file, uint32_t *line)
{
	int32_t fileno, ln;
	uint64_t cu, fileoff;
	const char *name;
	int rc;

	if (pc < f->entry || pc >= f->next_entry)
		return -ENOENT;
	rc = pcvalue(t, f->pcfile, f->entry, f->next_entry, pc, &fileno);
	if (!rc)
		rc = pcvalue(t, f->pcln, f->entry, f->next_entry, pc, &ln);
	if (rc)
		return rc;
	if (fileno < 0 || ln < 0)
		return -ENOENT;
	/* funcfile: cutab[cuOffset + fileno] is the offset in filetab. */
	cu = t->cutab_off + 4 * ((uint64_t)f->cu_offset + (uint64_t)fileno);
	if (!in_range(t, cu, 4))
		return -EINVAL;
	fileoff = le32(t->data + cu);
	if (fileoff == UINT32_MAX)
		return -ENOENT;
	if (!in_range(t, t->filetab_off + fileoff, 1))
		return -EINVAL;
	name = (const char *)t->data + t->filetab_off + fileoff;
	if (!memchr(name, 0, t->len - (t->filetab_off + fileoff)))
		return -EINVAL;
	*file = name;
	*line = (uint32_t)ln;
	return 0;
}

/* Go 1.20+ (runtime/symtabinl.go, internal/abi/symtab.go). */
#define FUNC_FIXED_LEN_120 44
#define PCDATA_INL_TREE_INDEX 2
#define FUNCDATA_INL_TREE 3
#define INLINED_CALL_LEN 16
/* Inline depth followed: the compiler's own limit is far below. */
#define MAX_INLINE_DEPTH 64

/* Entry I of F's pcdata (a pctab offset) or funcdata array; 0 = none. */
static uint32_t func_u32(const struct go_pclntab *t, const struct go_func *f,
			 uint64_t i)
{
	uint64_t off = f->func_off + FUNC_FIXED_LEN_120 + 4 * i;

	return in_range(t, off, 4) ? le32(t->data + off) : 0;
}

/* The inline tree index at PC (pcdatavalue1), -1 for none. */
static int32_t inline_index(const struct go_pclntab *t,
			    const struct go_func *f, uint64_t pc)
{
	int32_t v;

	if (f->npcdata <= PCDATA_INL_TREE_INDEX ||
	    pcvalue(t, func_u32(t, f, PCDATA_INL_TREE_INDEX), f->entry,
		    f->next_entry, pc, &v))
		return -1;
	return v;
}

static void src_frame(const struct go_pclntab *t, const struct go_func *f,
		      uint64_t pc, const char *func, struct go_src_frame *out)
{
	out->func = func;
	if (go_pclntab_line(t, f, pc, &out->file, &out->line)) {
		out->file = "?";
		out->line = 0;
	}
}

int go_pclntab_src_frames(const struct go_pclntab *t,
			  const struct go_func *f, uint64_t pc,
			  go_gofunc_read_fn read, void *ctx,
			  struct go_src_frame *out, size_t max)
{
	uint32_t tree = UINT32_MAX;
	size_t n = 0;
	int32_t idx;

	if (pc < f->entry || pc >= f->next_entry || max == 0)
		return -ENOENT;
	if (read && t->magic == GO_PCLNTAB_MAGIC_120 &&
	    f->nfuncdata > FUNCDATA_INL_TREE)
		tree = func_u32(t, f, (uint64_t)f->npcdata + FUNCDATA_INL_TREE);
	idx = tree == UINT32_MAX ? -1 : inline_index(t, f, pc);
	while (idx >= 0 && n + 1 < max && n < MAX_INLINE_DEPTH) {
		uint8_t call[INLINED_CALL_LEN];
		int32_t nameoff, parent_pc;
		const char *name;

		if (read(ctx, (uint64_t)tree + (uint64_t)idx * INLINED_CALL_LEN,
			 call, sizeof(call)))
			break;
		nameoff = (int32_t)le32(call + 4);
		parent_pc = (int32_t)le32(call + 8);
		if (nameoff < 0 || !in_range(t, t->funcname_off + nameoff, 1))
			break;
		name = (const char *)t->data + t->funcname_off + nameoff;
		if (!memchr(name, 0, t->len - (t->funcname_off + nameoff)))
			break;
		src_frame(t, f, pc, name, &out[n++]);
		/* The call site in the caller: an instruction at parentPc. */
		if (parent_pc < 0 || (uint64_t)parent_pc >= f->next_entry - f->entry)
			break;
		pc = f->entry + (uint64_t)parent_pc;
		idx = inline_index(t, f, pc);
	}
	src_frame(t, f, pc, f->name, &out[n++]);
	return (int)n;
}
