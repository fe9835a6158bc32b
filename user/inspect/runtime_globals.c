// SPDX-License-Identifier: BSD-3-Clause
/*
 * runtime_globals.c - where the runtime's package-level variables are
 * (runtime.mheap_, runtime.allgs, ...), in one place: the DWARF location
 * first, the .symtab second, and for a stripped binary (no DWARF, no
 * symbols: -ldflags='-s -w') the code that uses them, decoded with
 * disasm.h.  Before this module the code scan sat in disasm.c and its
 * fallback in go_dwarf.c, which made the two include each other.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_globals.h"
#include "util/grow.h"
#include "inspect/disasm.h"
#include "inspect/go_binary.h"
#include "inspect/go_dwarf.h"

/* --- globals seen through their callers --------------------------------- */

struct receiver_scan {
	const struct go_binary *bin;
	uint64_t callee;
	uint64_t found;
	int agree, disagree;
};

/* LEAQ disp32(IP), AX: 48 8d 05 disp32. */
static bool lea_rax_rip(const struct insn *in, uint64_t *addr)
{
	static const uint8_t b[] = { 0x48, 0x8d, 0x05 };
	const uint8_t *d = in->bytes + 3;

	if (in->len != 7 || memcmp(in->bytes, b, 3))
		return false;
	*addr = in->addr + in->len +
		(int32_t)(d[0] | d[1] << 8 | d[2] << 16 | (uint32_t)d[3] << 24);
	return true;
}

static int scan_receiver(const char *name, uint64_t entry, uint64_t size,
			 void *arg)
{
	struct receiver_scan *rs = arg;
	const uint8_t *code = go_binary_bytes(rs->bin, entry, size);
	struct disasm d;
	size_t i;

	if (!code || disasm_function(code, size, entry, &d, NULL, 0))
		return 0; /* capstone 4 lacks some AVX-512: not our callers */
	for (i = 0; i < d.n_code; i++) {
		size_t k;

		if (d.insns[i].kind != INSN_CALL || d.insns[i].target != rs->callee)
			continue;
		/* Arguments are set up just before the call: look 8 back. */
		for (k = i; k-- > 0 && i - k <= 8;) {
			uint64_t a;

			if (d.insns[k].kind == INSN_CALL)
				break;
			if (!lea_rax_rip(&d.insns[k], &a))
				continue;
			if (!rs->agree || a == rs->found) {
				rs->found = a;
				rs->agree++;
			} else {
				rs->disagree++;
			}
			break;
		}
	}
	disasm_free(&d);
	return 0;
}

int go_find_receiver_global(const struct go_binary *bin, const char *callee,
			    uint64_t *addr)
{
	struct receiver_scan rs = { .bin = bin };
	uint64_t size;

	if (go_binary_find_func(bin, callee, &rs.callee, &size))
		return -ENOENT;
	go_binary_foreach_func(bin, "runtime.", scan_receiver, &rs);
	if (!rs.agree || rs.disagree)
		return -ENOENT;
	*addr = rs.found;
	return 0;
}

/* --- globals seen through RIP-relative operands -------------------------- */

struct rip_refs {
	struct go_rip_ref *out;
	size_t n, cap;
};

/* disasm's hook: the RIP-relative memory operands of one instruction. */
static int collect_rip_refs(void *arg, size_t idx, const void *insn)
{
	const cs_insn *ci = insn;
	const cs_x86 *x = &ci->detail->x86;
	struct rip_refs *rr = arg;
	uint8_t i;

	(void)idx;
	for (i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type != X86_OP_MEM || op->mem.base != X86_REG_RIP ||
		    op->mem.index != X86_REG_INVALID)
			continue;
		if (!GROW(rr->out, rr->n, rr->cap, 16))
			return -ENOMEM;
		rr->out[rr->n].insn = ci->address;
		rr->out[rr->n].target = ci->address + ci->size + op->mem.disp;
		rr->out[rr->n].lea = ci->id == X86_INS_LEA;
		rr->n++;
	}
	return 0;
}

int go_func_rip_refs(const struct go_binary *bin, const char *func,
		     struct go_rip_ref **refs, size_t *n)
{
	struct rip_refs rr = { 0 };
	struct disasm_hook hook = { .cb = collect_rip_refs, .arg = &rr };
	struct disasm d;
	uint64_t entry, size;
	const uint8_t *code;
	csh cs;
	int rc;

	*refs = NULL;
	*n = 0;
	if (go_binary_find_func(bin, func, &entry, &size))
		return -ENOENT;
	code = go_binary_bytes(bin, entry, size);
	if (!code)
		return -ENOENT;
	/* The one decode (disasm's), with operand details: only this
	 * caller needs them. */
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return -ENOMEM;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	hook.cs = (size_t)cs;
	rc = disasm_function_hook(code, size, entry, &d, NULL, 0, &hook);
	disasm_free(&d);
	cs_close(&cs);
	if (rc) {
		free(rr.out);
		return rc;
	}
	*refs = rr.out;
	*n = rr.n;
	return 0;
}

static bool accessed(const struct go_rip_ref *r, size_t n, uint64_t addr)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!r[i].lea && r[i].target == addr)
			return true;
	return false;
}

int go_find_appended_slice_global(const struct go_binary *bin,
				  const char *func, uint64_t *addr)
{
	struct go_rip_ref *r;
	size_t n, i;
	uint64_t found = 0;
	int candidates = 0;

	if (go_func_rip_refs(bin, func, &r, &n))
		return -ENOENT;
	for (i = 0; i < n; i++) {
		uint64_t a = r[i].target;

		if (r[i].lea || !accessed(r, n, a + 8) || !accessed(r, n, a + 16))
			continue;
		if (!candidates)
			found = a;
		if (!candidates || a != found)
			candidates++;
	}
	free(r);
	if (candidates != 1)
		return -ENOENT;
	*addr = found;
	return 0;
}

bool go_func_accesses(const struct go_binary *bin, const char *func,
		      uint64_t addr)
{
	struct go_rip_ref *r;
	size_t n;
	bool yes;

	if (go_func_rip_refs(bin, func, &r, &n))
		return false;
	yes = accessed(r, n, addr);
	free(r);
	return yes;
}

/*
 * runtime.allgs in a stripped binary (runtime/proc.go, Go 1.21..1.27):
 * allgadd does `allgs = append(allgs, gp)`, touching all three words of
 * the slice header, and forEachG ranges over it, reading array and len.
 * The first names one candidate; the second must agree.
 */
static int find_allgs(const struct go_binary *bin, uint64_t *addr)
{
	uint64_t a;

	if (go_find_appended_slice_global(bin, "runtime.allgadd", &a) ||
	    !go_func_accesses(bin, "runtime.forEachG", a) ||
	    !go_func_accesses(bin, "runtime.forEachG", a + 8))
		return -ENOENT;
	*addr = a;
	return 0;
}

/*
 * runtime.disableMemoryProfiling and runtime.MemProfileRate in a stripped
 * binary: schedinit does `if disableMemoryProfiling { MemProfileRate = 0 }`
 * (runtime/proc.go, Go 1.21..1.27), which the compiler emits as
 *   CMPB $0, disable(IP); JE +11; MOVQ $0, rate(IP)
 * (80 3d rel32 00 / 74 0b / 48 c7 05 rel32 00000000).  The one place
 * with that shape names both.
 */
static int find_profiling_vars(const struct go_binary *bin, uint64_t *rate,
			       uint64_t *disable)
{
	static const uint8_t mov0[] = { 0x48, 0xc7, 0x05 };
	uint64_t entry, size, k;
	const uint8_t *c;
	int found = 0;

	if (go_binary_find_func(bin, "runtime.schedinit", &entry, &size))
		return -ENOENT;
	c = go_binary_bytes(bin, entry, size);
	if (!c)
		return -ENOENT;
	for (k = 0; k + 20 <= size; k++) {
		int32_t d1, d2;

		if (c[k] != 0x80 || c[k + 1] != 0x3d || c[k + 6] != 0 ||
		    c[k + 7] != 0x74 || c[k + 8] != 0x0b ||
		    memcmp(c + k + 9, mov0, 3) ||
		    c[k + 16] | c[k + 17] | c[k + 18] | c[k + 19])
			continue;
		memcpy(&d1, c + k + 2, 4);
		memcpy(&d2, c + k + 12, 4);
		/* RIP-relative: from the end of each instruction. */
		*disable = entry + k + 7 + (int64_t)d1;
		*rate = entry + k + 20 + (int64_t)d2;
		found++;
	}
	return found == 1 ? 0 : -ENOENT;
}

/*
 * The one RIP-relative target of FUNC that KEEP accepts (KEEP sees the
 * reference and all of FUNC's): how the scans below name a global by
 * what the function does with it.  0, or -ENOENT (none, or several).
 */
static int one_rip_target(const struct go_binary *bin, const char *func,
			  bool (*keep)(const struct go_rip_ref *r,
				       const struct go_rip_ref *all, size_t n),
			  uint64_t *addr)
{
	struct go_rip_ref *refs;
	size_t n, i;
	int found = 0, rc;

	rc = go_func_rip_refs(bin, func, &refs, &n);
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		if ((found && *addr == refs[i].target) || !keep(&refs[i], refs, n))
			continue;
		*addr = refs[i].target;
		found++;
	}
	free(refs);
	return found == 1 ? 0 : -ENOENT;
}

/*
 * runtime.reflectOffs in a stripped binary: reflect.addReflectOff (the
 * runtime's reflect_addReflectOff, runtime/runtime1.go) locks
 * reflectOffs.lock (LEAQ runtime.reflectOffs(SB), AX; CALL lock2) and
 * then reads and writes its maps m and minv, the words at +16 and +24.
 * The one LEAQ whose target has both is the struct.
 */
static bool reflect_offs_like(const struct go_rip_ref *r,
			      const struct go_rip_ref *all, size_t n)
{
	return r->lea && accessed(all, n, r->target + 16) &&
	       accessed(all, n, r->target + 24);
}

/*
 * runtime.mbuckets in a stripped binary: mProf_FlushLocked walks the
 * memory-profile buckets from `head := (*bucket)(mbuckets.Load())`
 * (runtime/mprof.go, Go 1.21..1.27), the one global it reads; the locks
 * it asserts are held cost no code without static lock ranking.
 */
static bool read_not_leaq(const struct go_rip_ref *r,
			  const struct go_rip_ref *all, size_t n)
{
	(void)all;
	(void)n;
	return !r->lea;
}

/*
 * runtime.mProfCycle in a stripped binary: mProf_Flush calls
 * mProfCycle.setFlushed(), inlined as a load of the word and a
 * compare-and-swap on its address (LEAQ); the profile locks it takes
 * next are only LEAQ'd.  The one address both read and LEAQ'd.
 */
static bool read_and_leaq(const struct go_rip_ref *r,
			  const struct go_rip_ref *all, size_t n)
{
	return r->lea && accessed(all, n, r->target);
}

/* The globals a stripped binary shows through its code, remembered with
 * the binary (go_binary_memo_get): the scan is dear. */
static int var_from_code(const struct go_binary *bin, const char *var,
			 uint64_t *addr)
{
	uint64_t a = 0;
	int rc;

	if (go_binary_memo_get(bin, var, &a, &rc)) {
		if (rc == 0)
			*addr = a;
		return rc;
	}
	/*
	 * runtime.mheap_ is the receiver every caller of (*mheap).alloc
	 * loads (runtime/malloc.go, mcache.go).
	 */
	if (!strcmp(var, "runtime.mheap_"))
		rc = go_find_receiver_global(bin, "runtime.(*mheap).alloc", &a);
	else if (!strcmp(var, "runtime.allgs"))
		rc = find_allgs(bin, &a);
	else if (!strcmp(var, "runtime.reflectOffs"))
		rc = one_rip_target(bin, "reflect.addReflectOff",
				    reflect_offs_like, &a);
	else if (!strcmp(var, "runtime.mbuckets"))
		rc = one_rip_target(bin, "runtime.mProf_FlushLocked",
				    read_not_leaq, &a);
	else if (!strcmp(var, "runtime.mProfCycle"))
		rc = one_rip_target(bin, "runtime.mProf_Flush", read_and_leaq,
				    &a);
	else if (!strcmp(var, "runtime.MemProfileRate") ||
		 !strcmp(var, "runtime.disableMemoryProfiling")) {
		uint64_t r = 0, d = 0;

		rc = find_profiling_vars(bin, &r, &d);
		a = var[8] == 'M' ? r : d;
	} else
		return -ENOENT;
	go_binary_memo_put(bin, var, a, rc);
	if (rc == 0)
		*addr = a;
	return rc;
}

int go_runtime_global_addr(const struct go_binary *bin, const char *var,
			   uint64_t *addr)
{
	if (go_dwarf_var_addr(go_binary_dwarf(bin), var, addr) == 0)
		return 0;
	if (go_binary_find_symbol(bin, var, addr, NULL) == 0)
		return 0;
	return var_from_code(bin, var, addr);
}
