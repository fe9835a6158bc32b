// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_probe_sites.c - the allocation-site analysis (alloc_sites.h) and the
 * plan built from it (probe_plan.h), on the real Go 1.21..1.27 workloads,
 * plain, stripped, PIE and stripped PIE.
 *
 * For every version:
 *  - every producer is found: the runtime.mallocgc* functions expected of
 *    the version, and every caller of publicationBarrier in the binary is
 *    a producer or (*mheap).initSpan;
 *  - every producer is covered: at least one anchor, every site on an
 *    instruction the kernel emulates, the object located at every site,
 *    and the size and type located there or at every call site;
 *  - the stripped build gets the same sites as the plain one;
 *  - wherever DWARF has a stack location for x at an instruction near a
 *    site (up to it), or for the size and typ arguments anywhere, the
 *    analysis holds that location too; a register DWARF names is held
 *    too or counted as a copy the analysis does not follow (the loclists
 *    have gaps at the barrier calls themselves; stripped binaries have no
 *    DWARF at all, which is why the analysis exists);
 *  - the plan puts no single-stepped probe on an allocation, falls back to
 *    entry + RET probes for a refused producer and the producers it calls,
 *    and TRACEAF_ALLOC_PROBES=entry-ret gives the old plan.
 * Binaries: $TRACEAF_GOBIN_DIR (default build/go-bin), `make workloads`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gobin.h"
#include "inspect/alloc_sites.h"
#include "inspect/disasm.h"
#include "inspect/go_binary.h"
#include "attach/probe_plan.h"

#define FIRST_MINOR 21
#define LAST_MINOR 27

static const char *const flavours[] = { "", "-stripped", "-pie",
					"-stripped-pie" };
static const char *const workloads[] = { "allocloop", "fullwork" };

/* Producers of one binary and their analyses. */
struct analysed {
	struct go_binary *bin;
	struct as_env env;
	char **names;
	uint64_t *entries;
	size_t n;
	struct as_func *f;
};

static void analyse(struct analysed *a, const char *name, int minor,
		    const char *flavour)
{
	size_t i;

	memset(a, 0, sizeof(*a));
	a->bin = gobin_open(name, minor, flavour);
	assert_int_equal(as_env_init(&a->env, a->bin), 0);
	assert_int_equal(as_find_producers(a->bin, &a->names, &a->entries, &a->n), 0);
	a->env.producers = a->entries;
	a->env.nproducers = a->n;
	a->f = calloc(a->n + 1, sizeof(*a->f));
	assert_non_null(a->f);
	for (i = 0; i < a->n; i++) {
		uint64_t e, s;

		assert_int_equal(go_binary_find_func(a->bin, a->names[i], &e, &s), 0);
		assert_int_equal(e, a->entries[i]);
		assert_int_equal(as_analyze(&a->env, a->names[i], e, s, &a->f[i]), 0);
	}
}

static void release(struct analysed *a)
{
	as_names_free(a->names, a->n);
	free(a->entries);
	free(a->f);
	go_binary_close(a->bin);
}

static bool has(char **names, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/* --- every producer found ------------------------------------------------ */

static void expect_producers(int minor, char **names, size_t n, const char *what)
{
	static const char *const helpers[] = {
		"runtime.mallocgcSmallNoscan", "runtime.mallocgcSmallScanNoHeader",
		"runtime.mallocgcSmallScanHeader", "runtime.mallocgcLarge",
	};
	char buf[64];
	size_t i;
	int k;

	if (minor <= 23) {
		if (n != 1 || strcmp(names[0], "runtime.mallocgc"))
			fail_msg("%s: producers are not just runtime.mallocgc", what);
		return;
	}
	assert_false(has(names, n, "runtime.mallocgc"));
	for (i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++)
		if (!has(names, n, helpers[i]))
			fail_msg("%s: %s not found", what, helpers[i]);
	/* 1.27 always takes the size-specialised tiny path. */
	if (minor <= 26 && !has(names, n, "runtime.mallocgcTiny"))
		fail_msg("%s: runtime.mallocgcTiny not found", what);
	if (minor < 27)
		return;
	for (k = 1; k <= 7; k++) {
		snprintf(buf, sizeof(buf), "runtime.mallocgcSmallScanNoHeaderSC%d", k);
		if (!has(names, n, buf))
			fail_msg("%s: %s not found", what, buf);
		if (k >= 2) {
			snprintf(buf, sizeof(buf), "runtime.mallocgcSmallNoScanSC%d", k);
			if (!has(names, n, buf))
				fail_msg("%s: %s not found", what, buf);
		}
	}
	if (!has(names, n, "runtime.mallocgcTinySC2") ||
	    !has(names, n, "runtime.mallocgcTinySlowPath") ||
	    !has(names, n, "runtime.mallocgcSmallScanSlowPath") ||
	    !has(names, n, "runtime.mallocgcSmallNoScanSlowPath"))
		fail_msg("%s: a 1.27 SC function or slow path is missing", what);
}

static void test_every_producer_is_found(void **state)
{
	size_t w, fl, i;
	int minor;

	for (w = 0; w < sizeof(workloads) / sizeof(workloads[0]); w++)
		for (minor = FIRST_MINOR; minor <= LAST_MINOR; minor++)
			for (fl = 0; fl < 4; fl++) {
				struct go_binary *bin = gobin_open(workloads[w], minor, flavours[fl]);
				char **p, **c, what[96];
				uint64_t *e;
				size_t np, nc;

				snprintf(what, sizeof(what), "%s 1.%d%s", workloads[w],
					 minor, flavours[fl]);
				assert_int_equal(as_find_producers(bin, &p, &e, &np), 0);
				expect_producers(minor, p, np, what);
				/* Whatever else publishes an object must be known. */
				assert_int_equal(as_barrier_callers(bin, &c, &nc), 0);
				for (i = 0; i < nc; i++)
					if (!has(p, np, c[i]) &&
					    strcmp(c[i], "runtime.(*mheap).initSpan"))
						fail_msg("%s: %s calls publicationBarrier and is no producer",
							 what, c[i]);
				as_names_free(p, np);
				as_names_free(c, nc);
				free(e);
				go_binary_close(bin);
			}
}

/* --- every producer covered ---------------------------------------------- */

static void check_covered(const struct analysed *a, const char *what)
{
	uint64_t need[64];
	size_t nneed = 0, i, k;
	struct as_caller *cv;
	size_t ncv;
	static const char *const disp[] = { "runtime.mallocgc" };

	for (i = 0; i < a->n; i++) {
		const struct as_func *f = &a->f[i];
		unsigned anchors = 0;

		if (f->status)
			fail_msg("%s: %s refused: %s", what, f->name, f->why);
		assert_true(f->nsites > 0);
		for (k = 0; k < f->nsites; k++) {
			const struct as_site *s = &f->sites[k];

			anchors += s->kind == AS_SITE_ANCHOR;
			if (!s->emulated)
				fail_msg("%s: %s site %#lx (%s) is single-stepped", what,
					 f->name, (unsigned long)s->addr, s->text);
			if (s->obj.kind == TAF_LOC_NONE)
				fail_msg("%s: %s site %#lx: object not located", what,
					 f->name, (unsigned long)s->addr);
			if ((s->size.kind == TAF_LOC_NONE || s->type.kind == TAF_LOC_NONE) &&
			    (nneed == 0 || need[nneed - 1] != f->entry))
				need[nneed++] = f->entry;
		}
		if (anchors == 0)
			fail_msg("%s: %s has no publicationBarrier anchor", what, f->name);
		/* Returns without a site give back no object of the function's
		 * own: the ones it delegates, &zerobase, persistentalloc. */
		assert_int_equal(f->n_rets, f->n_ret_class[AS_RET_OWN] +
				 f->n_ret_class[AS_RET_CONST] +
				 f->n_ret_class[AS_RET_DELEGATED] +
				 f->n_ret_class[AS_RET_PERSISTENT]);
	}
	if (!nneed)
		return;
	assert_int_equal(as_find_callers(&a->env, need, nneed, disp, 1, &cv, &ncv), 0);
	/* Every direct call of those producers, anywhere, is described. */
	for (i = 0; i < ncv; i++) {
		if (cv[i].size.kind == TAF_CVAL_NONE || cv[i].type.kind == TAF_CVAL_NONE)
			fail_msg("%s: the call at %#lx in %s leaves size or type unknown",
				 what, (unsigned long)cv[i].call, cv[i].func);
		if (cv[i].size.kind == TAF_CVAL_PENDING && !cv[i].pre_emulated)
			fail_msg("%s: the ALLOC_ARGS probe for %#lx is single-stepped",
				 what, (unsigned long)cv[i].call);
	}
	for (k = 0; k < nneed; k++) {
		bool called = false;

		for (i = 0; i < ncv && !called; i++)
			called = cv[i].callee == need[k];
		/* Reached only through mallocgc's tables (no direct call) is
		 * fine if mallocgc has indirect calls described. */
		if (!called) {
			for (i = 0; i < ncv && !called; i++)
				called = cv[i].callee == 0;
		}
		if (!called)
			fail_msg("%s: producer at %#lx lacks size or type and has no described caller",
				 what, (unsigned long)need[k]);
	}
	free(cv);
}

static void test_every_producer_is_covered_by_emulated_sites(void **state)
{
	size_t w, fl;
	int minor;

	for (w = 0; w < sizeof(workloads) / sizeof(workloads[0]); w++)
		for (minor = FIRST_MINOR; minor <= LAST_MINOR; minor++)
			for (fl = 0; fl < 4; fl++) {
				struct analysed a;
				char what[96];

				snprintf(what, sizeof(what), "%s 1.%d%s", workloads[w],
					 minor, flavours[fl]);
				analyse(&a, workloads[w], minor, flavours[fl]);
				check_covered(&a, what);
				release(&a);
			}
}

static bool loc_eq(const struct taf_loc *x, const struct taf_loc *y)
{
	return x->kind == y->kind && x->reg == y->reg && x->off == y->off &&
	       x->add == y->add;
}

static void test_stripped_builds_get_the_same_sites(void **state)
{
	size_t fl, i, k;
	int minor;

	for (minor = FIRST_MINOR; minor <= LAST_MINOR; minor++)
		for (fl = 0; fl < 4; fl += 2) {
			struct analysed p, s;
			char stripped[32];

			snprintf(stripped, sizeof(stripped), "-stripped%s", flavours[fl]);
			analyse(&p, "fullwork", minor, flavours[fl]);
			analyse(&s, "fullwork", minor, stripped);
			assert_int_equal(p.n, s.n);
			for (i = 0; i < p.n; i++) {
				assert_string_equal(p.names[i], s.names[i]);
				assert_int_equal(p.f[i].nsites, s.f[i].nsites);
				for (k = 0; k < p.f[i].nsites; k++) {
					const struct as_site *x = &p.f[i].sites[k], *y = &s.f[i].sites[k];

					assert_int_equal(x->addr, y->addr);
					assert_true(loc_eq(&x->obj, &y->obj));
					assert_true(loc_eq(&x->size, &y->size));
					assert_true(loc_eq(&x->type, &y->type));
				}
			}
			release(&p);
			release(&s);
		}
}

/* --- DWARF agrees ---------------------------------------------------------- */

/* Go's DWARF register numbers on amd64 (cmd/internal/obj/x86). */
static int taf_reg_of_dwarf(unsigned r)
{
	static const int map[16] = {
		TAF_REG_AX, TAF_REG_DX, TAF_REG_CX, TAF_REG_BX, TAF_REG_SI,
		TAF_REG_DI, TAF_REG_BP, -1, TAF_REG_R8, TAF_REG_R9, TAF_REG_R10,
		TAF_REG_R11, TAF_REG_R12, TAF_REG_R13, TAF_REG_R14, TAF_REG_R15,
	};

	return r < 16 ? map[r] : -1;
}

struct dvar {
	char name[16];
	Dwarf_Attribute loc;
};

struct dfunc {
	struct dvar v[64];
	size_t n;
};

static void collect_vars(Dwarf_Die *die, struct dfunc *df)
{
	Dwarf_Die c;

	if (dwarf_child(die, &c) != 0)
		return;
	do {
		int tag = dwarf_tag(&c);
		const char *nm = dwarf_diename(&c);

		if (tag == DW_TAG_lexical_block) {
			collect_vars(&c, df);
			continue;
		}
		if ((tag != DW_TAG_formal_parameter && tag != DW_TAG_variable) || !nm)
			continue;
		if (strcmp(nm, "x") && strcmp(nm, "size") && strcmp(nm, "typ") &&
		    strcmp(nm, "dataSize") && strcmp(nm, "userSize"))
			continue;
		if (df->n < 64 && dwarf_attr(&c, DW_AT_location, &df->v[df->n].loc)) {
			snprintf(df->v[df->n].name, sizeof(df->v[df->n].name), "%s", nm);
			df->n++;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
}

static bool find_dwarf_func(Dwarf *dw, const char *name, struct dfunc *df)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, c;

		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &c) == 0) {
			do {
				const char *nm;

				if (dwarf_tag(&c) != DW_TAG_subprogram)
					continue;
				nm = dwarf_diename(&c);
				if (nm && !strcmp(nm, name)) {
					collect_vars(&c, df);
					return true;
				}
			} while (dwarf_siblingof(&c, &c) == 0);
		}
		off = next;
	}
	return false;
}

/* DWARF's location of v at pc as a taf_loc (add 0), or kind NONE. */
static struct taf_loc dwarf_loc_at(struct dvar *v, uint64_t pc, int64_t sp)
{
	struct taf_loc l = { 0 };
	Dwarf_Op *ops;
	size_t nops;

	if (dwarf_getlocation_addr(&v->loc, pc, &ops, &nops, 1) != 1 || nops == 0)
		return l;
	/* One piece holding the whole pointer-sized value. */
	if (nops == 2 && ops[1].atom == DW_OP_piece && ops[1].number == 8)
		nops = 1;
	if (nops != 1)
		return l;
	if (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg15) {
		int r = taf_reg_of_dwarf(ops[0].atom - DW_OP_reg0);

		if (r >= 0) {
			l.kind = TAF_LOC_REG;
			l.reg = (uint8_t)r;
		}
	} else if (ops[0].atom == DW_OP_regx) {
		int r = taf_reg_of_dwarf((unsigned)ops[0].number);

		if (r >= 0) {
			l.kind = TAF_LOC_REG;
			l.reg = (uint8_t)r;
		}
	} else if (ops[0].atom == DW_OP_fbreg) {
		/* Frame base: DW_OP_call_frame_cfa, SP at entry + 8. */
		l.kind = TAF_LOC_STACK;
		l.off = (int32_t)(8 + (int64_t)ops[0].number - sp);
	}
	return l;
}

struct dcmp {
	struct dfunc *df;
	const char *what, *func;
	uint64_t site;
	bool only_x, skip_x;
	unsigned compared[3], agreed[3], reg_untracked[3];
	char first_miss[256];
};

static bool in_set(const struct taf_loc *set, unsigned n, const struct taf_loc *l)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (set[i].kind == l->kind && set[i].reg == l->reg && set[i].off == l->off)
			return true;
	return false;
}

static int compare_cb(const struct as_values *v, void *arg)
{
	struct dcmp *c = arg;
	size_t i;

	for (i = 0; i < c->df->n; i++) {
		struct dvar *dv = &c->df->v[i];
		struct taf_loc l = dwarf_loc_at(dv, v->pc, v->sp);
		const struct taf_loc *set;
		unsigned n, k;
		char buf[32];

		if (l.kind == TAF_LOC_NONE)
			continue;
		if (!strcmp(dv->name, "x") ? c->skip_x : c->only_x)
			continue;
		if (!strcmp(dv->name, "x")) {
			k = 0, set = v->obj, n = v->n_obj;
		} else if (!strcmp(dv->name, "typ")) {
			k = 2, set = v->type, n = v->n_type;
		} else if (!strcmp(dv->name, "size") && !strstr(c->func, "SC") &&
			   !strstr(c->func, "SlowPath")) {
			/* mallocgc and the 1.24+ helpers reassign size (to the
			 * slot size, plus the header); the requested size is
			 * userSize/dataSize there. Generated code never does. */
			continue;
		} else {
			k = 1, set = v->size, n = v->n_size;
		}
		/* The analysis knows nothing at all here: not near a value it
		 * tracks (x before it exists, size after it was reassigned). */
		if (n == 0)
			continue;
		c->compared[k]++;
		if (in_set(set, n, &l)) {
			c->agreed[k]++;
		} else if (l.kind == TAF_LOC_REG) {
			/* A register copy DWARF knows of, from which the value
			 * does not reach what the analysis follows (it is
			 * clobbered before the return, or only holds the value
			 * on some of the paths that meet here): not a
			 * contradiction, counted apart. */
			c->reg_untracked[k]++;
		} else if (!c->first_miss[0])
			snprintf(c->first_miss, sizeof(c->first_miss),
				 "%s %s: DWARF has %s in %s at %#lx, the analysis %u other place(s)",
				 c->what, c->func, dv->name, as_loc_str(&l, buf, sizeof(buf)),
				 (unsigned long)v->pc, n);
	}
	return 0;
}

static void test_dwarf_locations_agree_near_every_site(void **state)
{
	unsigned tot_cmp[3] = { 0 }, tot_ok[3] = { 0 }, tot_reg[3] = { 0 };
	size_t fl, i, k;
	int minor;

	for (minor = FIRST_MINOR; minor <= LAST_MINOR; minor++)
		for (fl = 0; fl < 4; fl += 2) {
			struct analysed a;
			unsigned cmp[3] = { 0 };
			char what[64];
			Dwarf *dw;

			snprintf(what, sizeof(what), "fullwork 1.%d%s", minor, flavours[fl]);
			analyse(&a, "fullwork", minor, flavours[fl]);
			dw = dwarf_begin_elf(go_binary_elf(a.bin), DWARF_C_READ, NULL);
			assert_non_null(dw);
			for (i = 0; i < a.n; i++) {
				struct dfunc df = { .n = 0 };
				struct dcmp c = { .df = &df, .what = what, .func = a.names[i] };
				uint64_t e, s;

				if (!find_dwarf_func(dw, a.names[i], &df))
					fail_msg("%s: no DWARF for %s", what, a.names[i]);
				go_binary_find_func(a.bin, a.names[i], &e, &s);
				for (k = 0; k < a.f[i].nsites; k++) {
					uint64_t at = a.f[i].sites[k].addr;

					c.site = at;
					c.only_x = true;
					assert_int_equal(as_values_in(&a.env, e, s, at - 0x40,
								      at + 0x40, compare_cb, &c), 0);
				}
				/* The arguments, never reassigned, across the function. */
				c.only_x = false;
				c.skip_x = true;
				assert_int_equal(as_values_in(&a.env, e, s, e, e + s,
							      compare_cb, &c), 0);
				if (c.first_miss[0])
					fail_msg("%s", c.first_miss);
				for (k = 0; k < 3; k++) {
					cmp[k] += c.compared[k];
					tot_cmp[k] += c.compared[k];
					tot_ok[k] += c.agreed[k];
					tot_reg[k] += c.reg_untracked[k];
				}
			}
			/* DWARF must have said something about the object. */
			if (cmp[0] == 0)
				fail_msg("%s: DWARF located x nowhere near a site", what);
			dwarf_end(dw);
			release(&a);
		}
	print_message("DWARF locations near sites the analysis also holds: x %u/%u, "
		      "size %u/%u, typ %u/%u; DWARF-only register copies: x %u, size %u, typ %u; "
		      "stack contradictions: 0\n",
		      tot_ok[0], tot_cmp[0], tot_ok[1], tot_cmp[1], tot_ok[2], tot_cmp[2],
		      tot_reg[0], tot_reg[1], tot_reg[2]);
}

/* --- refusals ---------------------------------------------------------------- */

struct first_with {
	const struct go_binary *bin;
	enum insn_kind kind;
	bool nosplit;
	uint64_t entry, size;
	char name[96];
};

static int first_with_cb(const char *name, uint64_t entry, uint64_t size, void *arg)
{
	struct first_with *fw = arg;
	const uint8_t *code = go_binary_bytes(fw->bin, entry, size);
	struct go_entry_site es;
	struct disasm d;
	bool hit = false;
	size_t i;

	if (!code || disasm_function(code, size, entry, &d, NULL, 0))
		return 0;
	if (fw->nosplit) {
		hit = (go_entry_probe_site(&d, &es) || !es.stack_check) && d.n_code > 4;
	} else if (!go_entry_probe_site(&d, &es) && es.stack_check) {
		for (i = 0; i < d.n_code && !hit; i++)
			hit = d.insns[i].kind == fw->kind;
	}
	disasm_free(&d);
	if (!hit)
		return 0;
	fw->entry = entry;
	fw->size = size;
	snprintf(fw->name, sizeof(fw->name), "%s", name);
	return 1;
}

static void test_analysis_refuses_what_it_cannot_prove(void **state)
{
	struct go_binary *bin = gobin_open("fullwork", 27, "");
	struct first_with fw = { .bin = bin, .kind = INSN_JMP_IND };
	struct as_env env;
	struct as_func f;

	assert_int_equal(as_env_init(&env, bin), 0);
	/* A jump table: the CFG would be incomplete. */
	assert_int_equal(go_binary_foreach_func(bin, "", first_with_cb, &fw), 1);
	assert_int_equal(as_analyze(&env, fw.name, fw.entry, fw.size, &f), 0);
	assert_int_not_equal(f.status, 0);
	if (!strstr(f.why, "jump"))
		fail_msg("%s refused for: %s", fw.name, f.why);
	/* No stack check: not a Go producer. */
	fw.nosplit = true;
	assert_int_equal(go_binary_foreach_func(bin, "runtime.", first_with_cb, &fw), 1);
	assert_int_equal(as_analyze(&env, fw.name, fw.entry, fw.size, &f), 0);
	assert_int_not_equal(f.status, 0);
	/* A function that never calls the barrier has no site. */
	assert_int_equal(go_binary_find_func(bin, "runtime.newobject", &fw.entry, &fw.size), 0);
	assert_int_equal(as_analyze(&env, "runtime.newobject", fw.entry, fw.size, &f), 0);
	assert_int_not_equal(f.status, 0);
	/* mallocgc of 1.27 dispatches; its own returns are its callees'. */
	assert_int_equal(go_binary_find_func(bin, "runtime.mallocgc", &fw.entry, &fw.size), 0);
	assert_int_equal(as_analyze(&env, "runtime.mallocgc", fw.entry, fw.size, &f), 0);
	assert_int_not_equal(f.status, 0);
	go_binary_close(bin);
}

/* --- the plan ---------------------------------------------------------------- */

struct role_count {
	unsigned site, args, enter, exit, sstep_alloc;
};

static struct role_count count_roles(const struct probe_plan *p, const char *func)
{
	struct role_count rc = { 0 };
	size_t i;

	for (i = 0; i < p->n; i++) {
		const struct probe_site *s = &p->sites[i];

		if (func && strcmp(s->func, func))
			continue;
		rc.site += s->role == TAF_PROBE_ALLOC_SITE;
		rc.args += s->role == TAF_PROBE_ALLOC_ARGS;
		rc.enter += s->role == TAF_PROBE_ALLOC_ENTER;
		rc.exit += s->role == TAF_PROBE_ALLOC_EXIT;
		if ((s->role == TAF_PROBE_ALLOC_SITE || s->role == TAF_PROBE_ALLOC_ARGS ||
		     s->role == TAF_PROBE_ALLOC_ENTER || s->role == TAF_PROBE_ALLOC_EXIT) &&
		    !s->emulated)
			rc.sstep_alloc++;
	}
	return rc;
}

static void test_plan_puts_no_single_stepped_probe_on_allocations(void **state)
{
	size_t fl, i;
	int minor;

	unsetenv(PROBE_PLAN_MODE_ENV);
	unsetenv(PROBE_PLAN_REFUSE_ENV);
	for (minor = FIRST_MINOR; minor <= LAST_MINOR; minor++)
		for (fl = 0; fl < 4; fl++) {
			struct go_binary *bin = gobin_open("fullwork", minor, flavours[fl]);
			struct probe_plan p;
			struct role_count rc;
			char err[256];

			assert_int_equal(probe_plan_build(bin, &p, err, sizeof(err)), 0);
			rc = count_roles(&p, NULL);
			assert_int_equal(rc.sstep_alloc, 0);
			assert_int_equal(rc.enter + rc.exit, 0);
			assert_int_equal(p.alloc_fallback, 0);
			assert_int_equal(p.alloc_anchored, p.alloc_producers);
			assert_int_equal(rc.site, p.nasites);
			/* Go 1.27's mallocgc table dispatch needs ALLOC_ARGS. */
			if (minor == 27)
				assert_true(rc.args > 0);
			/*
			 * span_sweep walks mspan.specials for finalizers, stripped
			 * or not: special {next; offset uint16 (<= 1.23) or
			 * uintptr; kind}, _KindSpecialFinalizer 1, then 2 from
			 * 1.25 (runtime/mheap.go).
			 */
			assert_true(p.layout.span_specials > 0);
			assert_int_equal(p.layout.special_offset_size,
					 minor <= 23 ? 2 : 8);
			assert_int_equal(p.layout.special_kind_off,
					 minor <= 23 ? 10 : 16);
			assert_int_equal(p.layout.special_kind_finalizer,
					 minor >= 25 ? 2 : 1);
			for (i = 0; i < p.nasites; i++)
				assert_int_not_equal(p.asites[i].obj.kind, TAF_LOC_NONE);
			probe_plan_free(&p);
			go_binary_close(bin);
		}
}

static void test_plan_falls_back_for_refused_producers_and_their_callees(void **state)
{
	struct go_binary *bin = gobin_open("fullwork", 27, "-stripped");
	struct probe_plan p;
	struct role_count sc6, slow, sc5;
	char err[256];

	unsetenv(PROBE_PLAN_MODE_ENV);
	setenv(PROBE_PLAN_REFUSE_ENV, "mallocgcSmallScanNoHeaderSC6", 1);
	assert_int_equal(probe_plan_build(bin, &p, err, sizeof(err)), 0);
	unsetenv(PROBE_PLAN_REFUSE_ENV);
	sc6 = count_roles(&p, "runtime.mallocgcSmallScanNoHeaderSC6");
	slow = count_roles(&p, "runtime.mallocgcSmallScanSlowPath");
	sc5 = count_roles(&p, "runtime.mallocgcSmallScanNoHeaderSC5");
	/* SC6 and the slow path it calls: entry + RETs; SC5: its site. */
	assert_int_equal(sc6.site, 0);
	assert_int_equal(sc6.enter, 1);
	assert_true(sc6.exit >= 1);
	assert_int_equal(slow.site, 0);
	assert_int_equal(slow.enter, 1);
	assert_true(slow.exit >= 1);
	assert_int_equal(sc5.site, 1);
	assert_int_equal(sc5.enter + sc5.exit, 0);
	assert_int_equal(p.alloc_fallback, 2);
	assert_non_null(strstr(p.alloc_why, "SC6"));
	probe_plan_free(&p);
	go_binary_close(bin);

	/* 1.23: the one producer falls back, alone. */
	bin = gobin_open("fullwork", 23, "-pie");
	setenv(PROBE_PLAN_REFUSE_ENV, "runtime.mallocgc", 1);
	assert_int_equal(probe_plan_build(bin, &p, err, sizeof(err)), 0);
	unsetenv(PROBE_PLAN_REFUSE_ENV);
	sc6 = count_roles(&p, "runtime.mallocgc");
	assert_int_equal(sc6.site, 0);
	assert_int_equal(sc6.enter, 1);
	assert_true(sc6.exit >= 2);
	assert_int_equal(p.nasites, 0);
	probe_plan_free(&p);
	go_binary_close(bin);
}

static void test_plan_entry_ret_mode_is_the_old_plan(void **state)
{
	struct go_binary *bin = gobin_open("fullwork", 27, "");
	struct probe_plan p;
	struct role_count all, mg;
	char err[256];

	setenv(PROBE_PLAN_MODE_ENV, "entry-ret", 1);
	assert_int_equal(probe_plan_build(bin, &p, err, sizeof(err)), 0);
	unsetenv(PROBE_PLAN_MODE_ENV);
	all = count_roles(&p, NULL);
	mg = count_roles(&p, "runtime.mallocgc");
	assert_int_equal(all.site + all.args, 0);
	assert_int_equal(mg.enter, 1);
	assert_true(mg.exit >= 1);
	/* mallocgc and every SC function. */
	assert_true(all.enter >= 1 + 7 + 6 + 1);
	probe_plan_free(&p);
	go_binary_close(bin);
}

/*
 * Real production binaries: the toolchain's own compile and link, built
 * with PGO, which inlines the 1.24+ helpers (and SC functions) into
 * mallocgc. Those of 1.22 and 1.23 put a systemstack closure in mallocgc's
 * frame (its address is taken): the analysis refuses, and the plan falls
 * back to entry + RETs for mallocgc there.
 */
static void test_pgo_toolchain_binaries(void **state)
{
	static const char *const tools[] = { "compile", "link" };
	size_t t, i, k;
	int minor;

	for (minor = FIRST_MINOR; minor <= LAST_MINOR; minor++)
		for (t = 0; t < 2; t++) {
			struct go_binary *bin = NULL;
			struct analysed a = { 0 };
			struct probe_plan p;
			char path[128], err[256];
			bool escaped_frame = false;

			snprintf(path, sizeof(path), "/usr/lib/go-1.%d/pkg/tool/linux_amd64/%s",
				 minor, tools[t]);
			if (go_binary_open(path, &bin, err, sizeof(err))) {
				print_message("skipping %s: %s\n", path, err);
				continue;
			}
			a.bin = bin;
			assert_int_equal(as_env_init(&a.env, bin), 0);
			assert_int_equal(as_find_producers(bin, &a.names, &a.entries, &a.n), 0);
			a.env.producers = a.entries;
			a.env.nproducers = a.n;
			a.f = calloc(a.n + 1, sizeof(*a.f));
			assert_non_null(a.f);
			for (i = 0; i < a.n; i++) {
				uint64_t e, s;

				assert_int_equal(go_binary_find_func(bin, a.names[i], &e, &s), 0);
				assert_int_equal(as_analyze(&a.env, a.names[i], e, s, &a.f[i]), 0);
				if (a.f[i].status == 0) {
					for (k = 0; k < a.f[i].nsites; k++)
						assert_true(a.f[i].sites[k].emulated);
					continue;
				}
				/* Refused: only where the frame escapes. */
				if (!strstr(a.f[i].why, "address is taken"))
					fail_msg("%s: %s refused: %s", path, a.names[i], a.f[i].why);
				escaped_frame = true;
				print_message("%s: %s falls back: %s\n", path, a.names[i], a.f[i].why);
			}
			unsetenv(PROBE_PLAN_MODE_ENV);
			unsetenv(PROBE_PLAN_REFUSE_ENV);
			if (probe_plan_build(bin, &p, err, sizeof(err))) {
				/* Not the allocation probes' doing (PGO inlines
				 * (*mheap).initSpan into allocSpan in 1.22's). */
				if (strstr(err, "alloc"))
					fail_msg("%s: no plan: %s", path, err);
				print_message("%s: no plan, not for allocations: %s\n", path, err);
				goto next;
			}
			if (escaped_frame) {
				struct role_count rc = count_roles(&p, "runtime.mallocgc");

				assert_int_equal(p.alloc_fallback, 1);
				assert_int_equal(rc.enter, 1);
				assert_int_equal(rc.site, 0);
			} else {
				assert_int_equal(p.alloc_fallback, 0);
				assert_int_equal(p.alloc_anchored, p.alloc_producers);
			}
			probe_plan_free(&p);
next:
			free(a.f);
			as_names_free(a.names, a.n);
			free(a.entries);
			go_binary_close(bin);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_producer_is_found),
		cmocka_unit_test(test_every_producer_is_covered_by_emulated_sites),
		cmocka_unit_test(test_stripped_builds_get_the_same_sites),
		cmocka_unit_test(test_dwarf_locations_agree_near_every_site),
		cmocka_unit_test(test_analysis_refuses_what_it_cannot_prove),
		cmocka_unit_test(test_plan_puts_no_single_stepped_probe_on_allocations),
		cmocka_unit_test(test_plan_falls_back_for_refused_producers_and_their_callees),
		cmocka_unit_test(test_plan_entry_ret_mode_is_the_old_plan),
		cmocka_unit_test(test_pgo_toolchain_binaries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
