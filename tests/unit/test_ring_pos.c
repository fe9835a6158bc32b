// SPDX-License-Identifier: BSD-3-Clause
/*
 * ring_pos: the positions the tracer waits on before closing an exited
 * process's files.  A real BPF ring buffer (needs root), fed one record at
 * a time by a tiny socket filter run with BPF_PROG_TEST_RUN, read by
 * libbpf's consumer as the tracer does.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "attach/ring_pos.h"

#define RING_BYTES (16 * 4096)
#define REC_BYTES 8
/* A record in the ring: 8-byte header, data rounded up to 8. */
#define REC_SPACE (8 + REC_BYTES)

struct fixture {
	int map_fd;
	int prog_fd;
	struct ring_buffer *rb;
	int seen;
};

static struct bpf_insn insn(__u8 code, __u8 dst, __u8 src, __s16 off,
			    __s32 imm)
{
	struct bpf_insn i = {
		.code = code, .dst_reg = dst, .src_reg = src, .off = off,
		.imm = imm,
	};

	return i;
}

/* bpf_ringbuf_output(&ring, &(u64){42}, 8, 0); return 0; */
static int load_producer(int map_fd)
{
	const struct bpf_insn prog[] = {
		insn(BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, -8, 42),
		insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD,
		     0, map_fd),
		insn(0, 0, 0, 0, 0),
		insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
		insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -8),
		insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, REC_BYTES),
		insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, 0),
		insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ringbuf_output),
		insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
		insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};

	return bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "ring_pos_test",
			     "GPL", prog, sizeof(prog) / sizeof(prog[0]),
			     NULL);
}

static void produce_one(struct fixture *fx)
{
	char pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt,
		    .data_size_in = sizeof(pkt), .repeat = 1);

	assert_int_equal(bpf_prog_test_run_opts(fx->prog_fd, &opts), 0);
}

static int on_sample(void *ctx, void *data, size_t len)
{
	struct fixture *fx = ctx;

	assert_int_equal(len, REC_BYTES);
	assert_int_equal(*(uint64_t *)data, 42);
	fx->seen++;
	return 0;
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	fx->map_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0,
				    RING_BYTES, NULL);
	if (fx->map_fd < 0)
		fail_msg("cannot create a BPF ring buffer (root?): %s",
			 strerror(errno));
	fx->prog_fd = load_producer(fx->map_fd);
	if (fx->prog_fd < 0)
		fail_msg("cannot load the producer program: %s",
			 strerror(errno));
	fx->rb = ring_buffer__new(fx->map_fd, on_sample, fx, NULL);
	assert_non_null(fx->rb);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	ring_buffer__free(fx->rb);
	close(fx->prog_fd);
	close(fx->map_fd);
	free(fx);
	return 0;
}

static void test_positions_follow_producer_and_consumer(void **state)
{
	struct fixture *fx = *state;
	struct ring_pos rp;
	uint64_t exit_pos;

	assert_int_equal(ring_pos_open(&rp, fx->map_fd), 0);
	assert_int_equal(ring_pos_producer(&rp), 0);
	assert_int_equal(ring_pos_consumer(&rp), 0);
	assert_true(ring_pos_passed(&rp, 0));

	produce_one(fx);
	produce_one(fx);
	/* What the tracer notes when a process has exited. */
	exit_pos = ring_pos_producer(&rp);
	assert_int_equal(exit_pos, 2 * REC_SPACE);
	assert_false(ring_pos_passed(&rp, exit_pos));

	/* A later record does not move the point already noted. */
	produce_one(fx);
	assert_int_equal(ring_pos_producer(&rp), 3 * REC_SPACE);

	assert_int_equal(ring_buffer__consume(fx->rb), 3);
	assert_int_equal(fx->seen, 3);
	assert_int_equal(ring_pos_consumer(&rp), 3 * REC_SPACE);
	assert_true(ring_pos_passed(&rp, exit_pos));
	ring_pos_close(&rp);
	assert_int_equal(ring_pos_producer(&rp), 0);
}

static void test_unmapped_waits_for_nothing(void **state)
{
	struct ring_pos rp;
	int fd;

	memset(&rp, 0, sizeof(rp));
	assert_true(ring_pos_passed(&rp, 1ull << 40));
	/* Not a ring buffer: no position pages to map. */
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 8, 1, NULL);
	assert_true(fd >= 0);
	assert_true(ring_pos_open(&rp, fd) < 0);
	assert_true(ring_pos_passed(&rp, 1));
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_positions_follow_producer_and_consumer, setup,
			teardown),
		cmocka_unit_test(test_unmapped_waits_for_nothing),
	};
	return cmocka_run_group_tests_name("ring_pos", tests, NULL, NULL);
}
