// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_disasm.c - instruction classes, uprobe costs, and the probe sites of
 * the runtime functions the tracer hooks, on real Go 1.21..1.27 binaries.
 *
 * The uprobe cost expectations restate arch/x86/kernel/uprobes.c
 * (branch_setup_xol_ops, push_setup_xol_ops, uprobe_init_insn).
 * Binaries: $TRACEAF_GOBIN_DIR (default build/go-bin), built by
 * tests/go/build-workloads.sh; objdump (binutils) is the independent
 * decoder the tiling is compared with.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gobin.h"
#include "inspect/disasm.h"
#include "inspect/go_binary.h"

#define FIRST_MINOR 21
#define LAST_MINOR 27

/* --- one instruction at a time --------------------------------------- */

static struct insn one(const uint8_t *b, size_t n)
{
	struct insn in;
	int len = disasm_one(b, n, 0x1000, &in);

	if (len != (int)n)
		fail_msg("decoded %d bytes of %zu", len, n);
	return in;
}

#define ONE(...) one((const uint8_t[]){ __VA_ARGS__ }, \
		     sizeof((const uint8_t[]){ __VA_ARGS__ }))

static void test_push_rbp_is_emulated(void **state)
{
	struct insn in = ONE(0x55);

	assert_int_equal(in.kind, INSN_PUSH);
	assert_int_equal(in.cost, UPROBE_EMULATED);
}

static void test_push_r12_with_rex_b_is_emulated(void **state)
{
	struct insn in = ONE(0x41, 0x54);

	assert_int_equal(in.kind, INSN_PUSH);
	assert_int_equal(in.cost, UPROBE_EMULATED);
}

static void test_push_with_rex_w_or_opsize_is_single_stepped(void **state)
{
	/* push_setup_xol_ops takes a 2-byte push only with REX exactly 41. */
	assert_int_equal(ONE(0x48, 0x55).cost, UPROBE_SSTEP);
	assert_int_equal(ONE(0x66, 0x55).cost, UPROBE_SSTEP);
}

static void test_call_rel32_is_emulated_with_its_target(void **state)
{
	struct insn in = ONE(0xe8, 0xfb, 0xff, 0xff, 0xff); /* call self-0 */

	assert_int_equal(in.kind, INSN_CALL);
	assert_int_equal(in.cost, UPROBE_EMULATED);
	assert_int_equal(in.target, 0x1000);
}

static void test_jmp_rel8_and_rel32_are_emulated(void **state)
{
	struct insn a = ONE(0xeb, 0x10), b = ONE(0xe9, 0x00, 0x01, 0x00, 0x00);

	assert_int_equal(a.kind, INSN_JMP);
	assert_int_equal(a.cost, UPROBE_EMULATED);
	assert_int_equal(a.target, 0x1012);
	assert_int_equal(b.kind, INSN_JMP);
	assert_int_equal(b.cost, UPROBE_EMULATED);
	assert_int_equal(b.target, 0x1105);
}

static void test_jcc_rel8_and_rel32_are_emulated(void **state)
{
	struct insn a = ONE(0x76, 0xfe), b = ONE(0x0f, 0x86, 0x10, 0, 0, 0);

	assert_int_equal(a.kind, INSN_JCC);
	assert_int_equal(a.cost, UPROBE_EMULATED);
	assert_int_equal(a.target, 0x1000);
	assert_int_equal(b.kind, INSN_JCC);
	assert_int_equal(b.cost, UPROBE_EMULATED);
	assert_int_equal(b.target, 0x1016);
}

static void test_branch_with_opsize_prefix_is_refused(void **state)
{
	/* "reject any branch insns with such prefix": -ENOTSUPP at attach. */
	assert_int_equal(ONE(0x66, 0xe9, 0x10, 0x00).cost, UPROBE_REFUSED);
	assert_int_equal(ONE(0x66, 0x0f, 0x84, 0x10, 0x00).cost,
			 UPROBE_REFUSED);
}

static void test_branch_with_bnd_prefix_is_still_emulated(void **state)
{
	/* Only 0x66 is checked; f2 ("bnd jmp") passes. */
	struct insn in = ONE(0xf2, 0xe9, 0x10, 0, 0, 0);

	assert_int_equal(in.kind, INSN_JMP);
	assert_int_equal(in.cost, UPROBE_EMULATED);
}

static void test_kernel_nops_are_emulated(void **state)
{
	assert_int_equal(ONE(0x90).cost, UPROBE_EMULATED);
	assert_int_equal(ONE(0x66, 0x90).cost, UPROBE_EMULATED);
	assert_int_equal(ONE(0x0f, 0x1f, 0x00).cost, UPROBE_EMULATED);
	assert_int_equal(ONE(0x0f, 0x1f, 0x40, 0x00).cost, UPROBE_EMULATED);
	assert_int_equal(ONE(0x0f, 0x1f, 0x44, 0x00, 0x00).cost,
			 UPROBE_EMULATED);
	/* Go's alignment NOP: nopw 0x0(%rax,%rax,1). */
	assert_int_equal(ONE(0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00).cost,
			 UPROBE_EMULATED);
	assert_int_equal(ONE(0x0f, 0x1f, 0x80, 0, 0, 0, 0).cost,
			 UPROBE_EMULATED);
	assert_int_equal(ONE(0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0).cost,
			 UPROBE_EMULATED);
}

static void test_long_nop_unlike_the_kernels_is_single_stepped(void **state)
{
	struct insn in = ONE(0x66, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0);

	assert_int_equal(in.kind, INSN_NOP);
	assert_int_equal(in.cost, UPROBE_SSTEP);
	/* With a CS prefix (is_prefix_bad) it cannot be probed at all. */
	assert_int_equal(ONE(0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0).cost,
			 UPROBE_REFUSED);
}

static void test_ret_and_pop_are_single_stepped(void **state)
{
	struct insn ret = ONE(0xc3), pop = ONE(0x5d);

	assert_int_equal(ret.kind, INSN_RET);
	assert_int_equal(ret.cost, UPROBE_SSTEP);
	assert_int_equal(pop.kind, INSN_OTHER);
	assert_int_equal(pop.cost, UPROBE_SSTEP);
}

static void test_int3_and_lock_prefix_are_refused(void **state)
{
	struct insn int3 = ONE(0xcc);

	assert_int_equal(int3.kind, INSN_INT3);
	assert_int_equal(int3.cost, UPROBE_REFUSED);
	assert_int_equal(ONE(0xf0, 0x48, 0x0f, 0xb1, 0x0a).cost, UPROBE_REFUSED);
}

static void test_indirect_call_and_jmp_are_classified(void **state)
{
	assert_int_equal(ONE(0xff, 0xd0).kind, INSN_CALL_IND);
	assert_int_equal(ONE(0xff, 0xe0).kind, INSN_JMP_IND);
	assert_int_equal(ONE(0xff, 0xd0).cost, UPROBE_SSTEP);
}

/* --- whole functions, synthetic ------------------------------------ */

static void test_invalid_byte_fails_the_decode(void **state)
{
	const uint8_t code[] = { 0x55, 0x06, 0xc3 }; /* 06: invalid in 64-bit */
	struct disasm d;
	char err[128];

	assert_int_equal(disasm_function(code, sizeof(code), 0x1000, &d, err,
					 sizeof(err)), -EILSEQ);
	assert_non_null(strstr(err, "0x1001"));
}

static void test_branch_into_an_instruction_fails_the_decode(void **state)
{
	/* jmp +1 lands inside the mov: the decode is out of step. */
	const uint8_t code[] = { 0xeb, 0x01, 0xb8, 0x90, 0x90, 0x90, 0x90, 0xc3 };
	struct disasm d;
	char err[128];

	assert_int_equal(disasm_function(code, sizeof(code), 0x1000, &d, err,
					 sizeof(err)), -EILSEQ);
	assert_non_null(strstr(err, "inside an instruction"));
}

static void test_instruction_cut_by_the_end_fails_the_decode(void **state)
{
	const uint8_t code[] = { 0x55, 0xe8, 0x00, 0x00 }; /* call cut short */
	struct disasm d;

	assert_int_equal(disasm_function(code, sizeof(code), 0x1000, &d, NULL, 0),
			 -EILSEQ);
}

static void test_trailing_int3_is_padding(void **state)
{
	const uint8_t code[] = { 0x55, 0x5d, 0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc };
	struct disasm d;

	assert_int_equal(disasm_function(code, sizeof(code), 0x1000, &d, NULL, 0),
			 0);
	assert_int_equal(d.n, 8);
	assert_int_equal(d.n_code, 3);
	assert_int_equal(d.code_end, 0x1003);
	assert_int_equal(d.end, 0x1008);
	disasm_free(&d);
}

static void test_site_without_stack_check_is_the_first_push(void **state)
{
	const uint8_t code[] = { 0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3 };
	struct disasm d;
	struct go_entry_site s;

	assert_int_equal(disasm_function(code, sizeof(code), 0x1000, &d, NULL, 0),
			 0);
	assert_int_equal(go_entry_probe_site(&d, &s), 0);
	assert_int_equal(s.addr, 0x1000);
	assert_true(s.emulated);
	assert_false(s.stack_check);
	disasm_free(&d);
}

static void test_site_skips_the_big_frame_prologue(void **state)
{
	/* MOVQ SP,R12; SUBQ $0x2000,R12; JCS; CMPQ R12,16(R14); JLS; PUSHQ BP */
	const uint8_t code[] = {
		0x49, 0x89, 0xe4,
		0x49, 0x81, 0xec, 0x00, 0x20, 0x00, 0x00,
		0x72, 0x08,
		0x4d, 0x3b, 0x66, 0x10,
		0x76, 0x02,
		0x55,
		0xc3,
		0xe8, 0xdb, 0xff, 0xff, 0xff, /* morestack block: call ... */
	};
	struct disasm d;
	struct go_entry_site s;

	assert_int_equal(disasm_function(code, sizeof(code), 0x1000, &d, NULL, 0),
			 0);
	assert_int_equal(go_entry_probe_site(&d, &s), 0);
	assert_int_equal(s.addr, 0x1012);
	assert_true(s.stack_check);
	assert_true(s.emulated);
	disasm_free(&d);
}

static void test_site_that_a_loop_jumps_to_is_flagged(void **state)
{
	/* No prologue; the body loops back to the first instruction. */
	const uint8_t code[] = { 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3 };
	struct disasm d;
	struct go_entry_site s;

	assert_int_equal(disasm_function(code, sizeof(code), 0x1000, &d, NULL, 0),
			 0);
	assert_int_equal(go_entry_probe_site(&d, &s), 0);
	assert_true(s.branch_target);
	assert_false(s.emulated);
	disasm_free(&d);
}

/* --- the hooked runtime functions ------------------------------------- */

static void decode(struct go_binary *b, const char *func, struct disasm *d)
{
	uint64_t entry, size;
	char err[256];
	const uint8_t *code;

	if (go_binary_find_func(b, func, &entry, &size))
		fail_msg("%s: no %s", go_binary_path(b), func);
	code = go_binary_bytes(b, entry, size);
	assert_non_null(code);
	if (disasm_function(code, size, entry, d, err, sizeof(err)))
		fail_msg("%s %s: %s", go_binary_path(b), func, err);
}

/*
 * objdump's instruction addresses for [entry, entry+size): an independent
 * decoder must find the same boundaries.
 */
static size_t objdump_addrs(const char *path, uint64_t entry, uint64_t size,
			    uint64_t *addrs, size_t max, size_t *rets)
{
	char cmd[1024], line[512];
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "objdump -d --no-show-raw-insn --start-address=%#lx "
		 "--stop-address=%#lx '%s'", (unsigned long)entry,
		 (unsigned long)(entry + size), path);
	p = popen(cmd, "r");
	assert_non_null(p);
	*rets = 0;
	while (fgets(line, sizeof(line), p)) {
		unsigned long a;
		char *tab;

		if (sscanf(line, " %lx:", &a) != 1 || !(tab = strchr(line, '\t')))
			continue;
		if (n < max)
			addrs[n] = a;
		n++;
		if (!strncmp(tab + 1, "ret", 3))
			(*rets)++;
	}
	assert_int_equal(pclose(p), 0);
	return n;
}

/* Decodes, compares with objdump, checks the entry site and the RETs. */
static void check_hooked(int minor, const char *flavour, const char *func)
{
	struct go_binary *b = open_bin(minor, flavour);
	static uint64_t theirs[8192];
	uint64_t rets[64];
	size_t n_theirs, objdump_rets, n_rets, i, n_ind;
	struct go_entry_site site;
	struct disasm d;
	char path[512];

	decode(b, func, &d);
	bin_path(path, sizeof(path), minor, flavour);

	/* Tiling: from entry to end, no gap, no overlap, no padding. */
	assert_int_equal(d.n, d.n_code);
	assert_int_equal(d.code_end, d.end);
	assert_int_equal(d.insns[0].addr, d.entry);
	for (i = 1; i < d.n; i++)
		assert_int_equal(d.insns[i].addr,
				 d.insns[i - 1].addr + d.insns[i - 1].len);
	n_theirs = objdump_addrs(path, d.entry, d.end - d.entry, theirs,
				 sizeof(theirs) / sizeof(theirs[0]),
				 &objdump_rets);
	if (n_theirs != d.n)
		fail_msg("go1.%d %s: %zu instructions, objdump %zu", minor, func,
			 d.n, n_theirs);
	for (i = 0; i < d.n; i++)
		assert_int_equal(d.insns[i].addr, theirs[i]);

	/* Entry site: the PUSHQ BP after the stack check, emulated. */
	assert_int_equal(go_entry_probe_site(&d, &site), 0);
	if (!site.stack_check || !site.emulated ||
	    d.insns[site.index].bytes[0] != 0x55 || d.insns[site.index].len != 1)
		fail_msg("go1.%d %s: entry site %#lx is [%s] %s", minor, func,
			 (unsigned long)site.addr, d.insns[site.index].text,
			 uprobe_cost_name(d.insns[site.index].cost));
	assert_false(site.branch_target);
	assert_int_equal(d.insns[site.index - 1].kind, INSN_JCC);

	/* Every RET objdump sees, and each is a one-byte c3. */
	assert_int_equal(go_ret_sites(&d, rets, 64, &n_rets), 0);
	assert_true(n_rets >= 1);
	assert_int_equal(n_rets, objdump_rets);
	for (i = 0; i < n_rets; i++) {
		uint8_t byte;

		assert_int_equal(go_binary_read(b, rets[i], &byte, 1), 0);
		assert_int_equal(byte, 0xc3);
	}
	/* The RETs are all its exits: no tail jump leaves the function. */
	assert_int_equal(go_tail_jumps(&d, &n_ind), 0);
	assert_int_equal(n_ind, 0);
	disasm_free(&d);
	go_binary_close(b);
}

static const char *const hooked[] = {
	"runtime.mallocgc", "runtime.newobject", "runtime.(*mheap).initSpan",
	"runtime.stackalloc", "runtime.stackfree",
	"runtime.(*sweepLocked).sweep", "runtime.(*mheap).freeManual",
};

static void test_mallocgc_tiles_and_has_push_site_on_123_and_127(void **state)
{
	check_hooked(23, "-stripped", "runtime.mallocgc");
	check_hooked(27, "-stripped", "runtime.mallocgc");
	check_hooked(23, "-pie", "runtime.mallocgc");
	check_hooked(27, "-pie", "runtime.mallocgc");
}

static void test_hooked_functions_tile_and_have_push_sites_everywhere(void **state)
{
	int m;
	size_t i;

	for (m = FIRST_MINOR; m <= LAST_MINOR; m++)
		for (i = 0; i < sizeof(hooked) / sizeof(hooked[0]); i++)
			check_hooked(m, "-stripped", hooked[i]);
}

struct collect {
	char names[64][96];
	int n;
};

static int collect_cb(const char *name, uint64_t entry, uint64_t size,
		      void *arg)
{
	struct collect *c = arg;

	if (c->n < 64)
		snprintf(c->names[c->n++], sizeof(c->names[0]), "%s", name);
	return 0;
}

static void test_every_mallocgc_variant_of_127_tiles(void **state)
{
	struct go_binary *b = open_bin(27, "-stripped-pie");
	struct collect c = { .n = 0 };
	int i;

	assert_int_equal(go_binary_foreach_func(b, "runtime.mallocgc",
						collect_cb, &c), 0);
	go_binary_close(b);
	/* mallocgc, its Tiny, Small and Large paths, and the SC variants. */
	assert_true(c.n >= 20);
	for (i = 0; i < c.n; i++)
		check_hooked(27, "-stripped-pie", c.names[i]);
}

static void test_decode_with_padding_ends_code_at_the_function_size(void **state)
{
	struct go_binary *b = open_bin(27, "-stripped");
	const struct go_pclntab *t = go_binary_pclntab(b);
	struct go_func f;
	struct disasm d;

	assert_int_equal(go_pclntab_find(t, "runtime.newobject", &f), 0);
	assert_true(f.next_entry > f.entry + f.size); /* there is padding */
	assert_int_equal(disasm_function(go_binary_bytes(b, f.entry,
							 f.next_entry - f.entry),
					 f.next_entry - f.entry, f.entry, &d,
					 NULL, 0), 0);
	assert_int_equal(d.code_end, f.entry + f.size);
	assert_true(d.n > d.n_code);
	assert_int_equal(d.insns[d.n - 1].kind, INSN_INT3);
	disasm_free(&d);
	go_binary_close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push_rbp_is_emulated),
		cmocka_unit_test(test_push_r12_with_rex_b_is_emulated),
		cmocka_unit_test(test_push_with_rex_w_or_opsize_is_single_stepped),
		cmocka_unit_test(test_call_rel32_is_emulated_with_its_target),
		cmocka_unit_test(test_jmp_rel8_and_rel32_are_emulated),
		cmocka_unit_test(test_jcc_rel8_and_rel32_are_emulated),
		cmocka_unit_test(test_branch_with_opsize_prefix_is_refused),
		cmocka_unit_test(test_branch_with_bnd_prefix_is_still_emulated),
		cmocka_unit_test(test_kernel_nops_are_emulated),
		cmocka_unit_test(test_long_nop_unlike_the_kernels_is_single_stepped),
		cmocka_unit_test(test_ret_and_pop_are_single_stepped),
		cmocka_unit_test(test_int3_and_lock_prefix_are_refused),
		cmocka_unit_test(test_indirect_call_and_jmp_are_classified),
		cmocka_unit_test(test_invalid_byte_fails_the_decode),
		cmocka_unit_test(test_branch_into_an_instruction_fails_the_decode),
		cmocka_unit_test(test_instruction_cut_by_the_end_fails_the_decode),
		cmocka_unit_test(test_trailing_int3_is_padding),
		cmocka_unit_test(test_site_without_stack_check_is_the_first_push),
		cmocka_unit_test(test_site_skips_the_big_frame_prologue),
		cmocka_unit_test(test_site_that_a_loop_jumps_to_is_flagged),
		cmocka_unit_test(test_mallocgc_tiles_and_has_push_site_on_123_and_127),
		cmocka_unit_test(test_hooked_functions_tile_and_have_push_sites_everywhere),
		cmocka_unit_test(test_every_mallocgc_variant_of_127_tiles),
		cmocka_unit_test(test_decode_with_padding_ends_code_at_the_function_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
