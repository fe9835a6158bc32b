// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_disasm - disasm_function and the planner's questions about it
 * (entry probe site, RETs, tail jumps) on arbitrary code bytes.
 *
 * Input: the bytes of one function, at link address VADDR. Seeds: runtime
 * functions the tracer probes, cut out of the Go 1.21-1.27 workloads.
 */
#include "fuzz_common.h"
#include "inspect/disasm.h"

#define VADDR 0x40bf00
#define MAX_RETS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct disasm d;
	struct go_entry_site site;
	struct insn in;
	uint64_t rets[MAX_RETS], at;
	size_t i, n, nind;
	char err[128];
	int rc;

	/* One instruction at the start and near the end (short buffers). */
	rc = disasm_one(data, size, VADDR, &in);
	FUZZ_CHECK(rc == -EILSEQ || (rc > 0 && (size_t)rc <= size && rc <= 15));
	if (size > 3) {
		rc = disasm_one(data + size - 3, 3, VADDR, &in);
		FUZZ_CHECK(rc == -EILSEQ || (rc > 0 && rc <= 3));
	}

	err[0] = '\0';
	rc = disasm_function(data, size, VADDR, &d, err, sizeof(err));
	if (rc) {
		FUZZ_CHECK(rc == -EILSEQ || rc == -ENOMEM);
		FUZZ_CHECK(d.insns == NULL && d.n == 0);
		FUZZ_CHECK(memchr(err, 0, sizeof(err)));
		return 0;
	}
	/* The decode tiles [VADDR, VADDR + size) exactly. */
	at = VADDR;
	for (i = 0; i < d.n; i++) {
		const struct insn *x = &d.insns[i];

		FUZZ_CHECK(x->addr == at && x->len >= 1 && x->len <= 15);
		FUZZ_CHECK(!memcmp(x->bytes, data + (at - VADDR), x->len));
		FUZZ_CHECK(memchr(x->text, 0, sizeof(x->text)));
		FUZZ_CHECK(disasm_index_of(&d, x->addr) == (long)i);
		(void)insn_kind_name(x->kind);
		(void)uprobe_cost_name(x->cost);
		at += x->len;
	}
	FUZZ_CHECK(at == VADDR + size);
	FUZZ_CHECK(d.n_code <= d.n && d.code_end <= d.end);

	if (go_entry_probe_site(&d, &site) == 0)
		FUZZ_CHECK(site.index < d.n_code &&
			   d.insns[site.index].addr == site.addr);
	rc = go_ret_sites(&d, rets, MAX_RETS, &n);
	FUZZ_CHECK(rc == 0 ? n <= MAX_RETS : rc == -ENOSPC && n > MAX_RETS);
	for (i = 0; i < n && i < MAX_RETS; i++)
		FUZZ_CHECK(disasm_index_of(&d, rets[i]) >= 0);
	(void)go_tail_jumps(&d, &nind);
	(void)go_tail_jumps(&d, NULL);
	disasm_free(&d);
	return 0;
}
