// SPDX-License-Identifier: BSD-3-Clause
/*
 * alloc_stacks: stacks as the probes send them (load addresses,
 * innermost first, the first time; a hash later) become sidecar stacks
 * that start at the allocating user function, with the caller a
 * frame-pointer walk skips put back; a hash never sent whole is deleted
 * from the probes' map of known stacks (a BPF hash map here, same key);
 * PCs are knownalloc's (Go 1.27, stripped), moved by a made-up load bias
 * as in a PIE process.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <cmocka.h>

#include "trace/alloc_stacks.h"
#include "gobin.h"
#include "inspect/go_pclntab.h"
#include "format/stack_sidecar.h"
#include "traceaf_events.h"

#define BIAS 0x7f0000000000ull
#define PID 4242

struct fixture {
	struct go_binary *bin;
	const struct go_pclntab *t;
	int map_fd, dirfd;
	char dir[64];
	uint32_t marked;          /* the stacks-e2e line of knownalloc */
	uint64_t newnode_ret;     /* a return address at that line */
	uint64_t mallocgc, newobject, main_main, runtime_main;
};

static uint64_t mid(const struct go_pclntab *t, const char *name)
{
	struct go_func f;

	assert_int_equal(go_pclntab_find(t, name, &f), 0);
	return f.entry + f.size / 2;
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char buf[256];
	struct go_func f;
	uint32_t n = 0, line;
	const char *file;
	uint64_t pc;
	FILE *src;

	fx->bin = gobin_open("knownalloc", 27, "-stripped");
	fx->t = go_binary_pclntab(fx->bin);
	src = fopen("tests/go/knownalloc/main.go", "r");
	assert_non_null(src);
	while (fgets(buf, sizeof(buf), src))
		if (n++, strstr(buf, "stacks-e2e: newNode"))
			fx->marked = n;
	fclose(src);
	assert_int_not_equal(fx->marked, 0);
	assert_int_equal(go_pclntab_find(fx->t, "main.newNode", &f), 0);
	for (pc = f.entry + 1; pc < f.entry + f.size; pc++)
		if (go_pclntab_line(fx->t, &f, pc - 1, &file, &line) == 0 &&
		    line == fx->marked)
			break;
	assert_true(pc < f.entry + f.size);
	fx->newnode_ret = pc;
	fx->mallocgc = mid(fx->t, "runtime.mallocgc");
	fx->newobject = mid(fx->t, "runtime.newobject");
	fx->main_main = mid(fx->t, "main.main");
	fx->runtime_main = mid(fx->t, "runtime.main");

	fx->map_fd = bpf_map_create(BPF_MAP_TYPE_HASH, NULL,
				    sizeof(struct taf_stack_key), 1, 16, NULL);
	if (fx->map_fd < 0)
		fail_msg("cannot create a BPF map (root?): %s",
			 strerror(errno));
	strcpy(fx->dir, "/tmp/test_alloc_stacks.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	fx->dirfd = open(fx->dir, O_RDONLY | O_DIRECTORY);
	assert_true(fx->dirfd >= 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[128];

	close(fx->map_fd);
	close(fx->dirfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	if (system(cmd))
		return -1;
	go_binary_close(fx->bin);
	free(fx);
	return 0;
}

/* The first record of stack HASH: link addresses PCS, loaded at BIAS. */
static void send_whole(struct alloc_stacks *a, uint64_t hash,
		       const uint64_t *pcs, size_t n, uint64_t ret)
{
	uint64_t v[TAF_STACK_DEPTH] = { 0 };
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = pcs[i] + BIAS;
	alloc_stacks_record(a, hash, v, (uint32_t)n, ret);
}

/* Whether the probes' map still has (PID, HASH). */
/* The fixture's map, as the probes hand theirs to the trace stage. */
static struct known_stacks known_map(struct fixture *fx)
{
	return (struct known_stacks){ .fd = fx->map_fd };
}

static bool known(struct fixture *fx, uint64_t hash)
{
	struct taf_stack_key key = { .pid = PID, .hash = hash };
	uint8_t v;

	return bpf_map_lookup_elem(fx->map_fd, &key, &v) == 0;
}

static struct stack_sidecar *open_sidecar(struct fixture *fx,
					  const char *name)
{
	struct stack_sidecar *s;
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", fx->dir, name);
	assert_int_equal(stack_sidecar_open(path, &s), 0);
	return s;
}

static void frames_of(struct stack_sidecar *s, uint64_t gen, uint64_t id,
		      uint64_t ts, const struct stack_frame **f, size_t *n)
{
	uint32_t sid;

	assert_int_equal(stack_sidecar_lookup(s, gen, id, ts, &sid), 0);
	assert_int_equal(stack_sidecar_frames(s, sid, f, n), 0);
}

static void test_stacks_start_at_the_allocating_function(void **state)
{
	struct fixture *fx = *state;
	struct alloc_stacks *a;
	struct alloc_stacks_counts c;
	struct stack_sidecar *s;
	const struct stack_frame *f;
	size_t n;
	/* A whole walk: mallocgc <- newobject <- newNode <- main.main. */
	uint64_t whole[] = { fx->mallocgc, fx->newobject + 1, fx->newnode_ret,
			     fx->main_main, fx->runtime_main };
	/* At a RET: the walk skipped newNode, the record has its address. */
	uint64_t skipped[] = { fx->mallocgc, fx->main_main, fx->runtime_main };
	/* The runtime's own allocation: no frame outside the runtime. */
	uint64_t runtime_only[] = { fx->mallocgc, fx->runtime_main };

	struct taf_stack_key k5 = { .pid = PID, .hash = 5 };
	uint8_t one = 1;

	assert_int_equal(alloc_stacks_new(known_map(fx), PID, fx->bin, BIAS, &a),
			 0);
	send_whole(a, 1, whole, 5, fx->newobject + 1 + BIAS);
	alloc_stacks_note(a, 100, 1000, 1);
	send_whole(a, 2, skipped, 3, fx->newnode_ret + BIAS);
	alloc_stacks_note(a, 101, 1001, 2);
	send_whole(a, 3, runtime_only, 2, 0);
	alloc_stacks_note(a, 102, 1002, 3);
	alloc_stacks_record(a, 0, NULL, 0, 0);          /* the walk failed */
	alloc_stacks_note(a, 103, 1003, 0);
	/* Its first record lost: the probes must forget they sent it. */
	assert_int_equal(bpf_map_update_elem(fx->map_fd, &k5, &one, BPF_ANY),
			 0);
	alloc_stacks_record(a, 5, NULL, 0, 0);
	alloc_stacks_note(a, 104, 1004, 5);
	assert_false(known(fx, 5));
	/* Later records: the hash alone, or whole again once evicted. */
	alloc_stacks_record(a, 1, NULL, 0, fx->newobject + 1 + BIAS);
	alloc_stacks_note(a, 105, 1005, 1);
	send_whole(a, 1, whole, 5, fx->newobject + 1 + BIAS);
	alloc_stacks_note(a, 106, 1006, 1);
	assert_int_equal(alloc_stacks_gen_written(a, fx->dirfd, "t.trace", 1),
			 0);
	assert_int_equal(alloc_stacks_close_file(a), 0);
	alloc_stacks_get_counts(a, &c);
	assert_int_equal(c.seen, 7);
	assert_int_equal(c.with_stack, 5);
	assert_int_equal(c.inline_pcs, 4);
	assert_int_equal(c.without_stack, 2);
	assert_int_equal(c.unknown, 1);
	assert_int_equal(c.lost, 0);
	assert_int_equal(c.sidecars, 1);
	alloc_stacks_free(a);

	s = open_sidecar(fx, "t.trace");
	/* main.main's PC may be inside calls inlined into it: frames
	 * between newNode and runtime.main are only checked by name. */
	frames_of(s, 1, 100, 1000, &f, &n);
	assert_true(n >= 3);
	assert_string_equal(f[0].func, "main.newNode");
	assert_non_null(strstr(f[0].file, "main.go"));
	assert_int_equal(f[0].line, fx->marked);
	/* Return addresses are named by their call instruction. */
	assert_int_equal(f[0].pc, fx->newnode_ret - 1);
	assert_string_equal(f[n - 2].func, "main.main");
	assert_string_equal(f[n - 1].func, "runtime.main");

	frames_of(s, 1, 101, 1001, &f, &n);
	assert_true(n >= 3);
	assert_string_equal(f[0].func, "main.newNode");
	assert_int_equal(f[0].line, fx->marked);
	assert_string_equal(f[n - 2].func, "main.main");

	frames_of(s, 1, 105, 1005, &f, &n);
	assert_string_equal(f[0].func, "main.newNode");
	assert_int_equal(f[0].line, fx->marked);
	{
		const struct stack_frame *g;
		size_t m;

		/* Hash 1 again, by hash or whole: one sidecar stack. */
		frames_of(s, 1, 106, 1006, &g, &m);
		assert_ptr_equal(g, f);
		frames_of(s, 1, 100, 1000, &g, &m);
		assert_ptr_equal(g, f);
	}

	/* The runtime's own allocation: the allocator's frames (and what
	 * mallocgc inlines at that PC) go, its caller is the site. */
	frames_of(s, 1, 102, 1002, &f, &n);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].func, "runtime.main");

	{
		uint32_t sid;

		assert_int_equal(stack_sidecar_lookup(s, 1, 103, 1003, &sid),
				 -ENOENT);
		assert_int_equal(stack_sidecar_lookup(s, 1, 104, 1004, &sid),
				 -ENOENT);
	}
	stack_sidecar_close(s);
}

/* Each trace file gets its own complete sidecar; unwritten generations
 * leave no trace in any. */
static void test_each_file_gets_its_sidecar(void **state)
{
	struct fixture *fx = *state;
	uint64_t whole[] = { fx->mallocgc, fx->newobject + 1, fx->newnode_ret,
			     fx->main_main };
	struct alloc_stacks *a;
	struct alloc_stacks_counts c;
	struct stack_sidecar *s;
	const struct stack_frame *f;
	char path[160];
	uint32_t sid;
	size_t n;

	assert_int_equal(alloc_stacks_new(known_map(fx), PID, fx->bin, BIAS, &a),
			 0);
	send_whole(a, 1, whole, 4, fx->newobject + 1 + BIAS);
	/* As the trace sink tells it (trace_sink_on_new_file). */
	alloc_stacks_new_file(a, "a.trace");
	alloc_stacks_note(a, 1, 10, 1);
	assert_int_equal(alloc_stacks_gen_written(a, fx->dirfd, "a.trace", 1),
			 0);
	alloc_stacks_note(a, 2, 20, 1);
	alloc_stacks_gen_dropped(a);
	/* Still being written: only the temporary exists. */
	snprintf(path, sizeof(path), "%s/a.trace.stacks", fx->dir);
	assert_int_equal(access(path, F_OK), -1);
	alloc_stacks_new_file(a, "b.trace");
	alloc_stacks_note(a, 3, 30, 1);
	assert_int_equal(alloc_stacks_gen_written(a, fx->dirfd, "b.trace", 1),
			 0);
	/* A new file completes the previous one's sidecar. */
	assert_int_equal(access(path, F_OK), 0);
	alloc_stacks_get_counts(a, &c);
	assert_int_equal(c.lost, 1);
	alloc_stacks_free(a);

	s = open_sidecar(fx, "a.trace");
	frames_of(s, 1, 1, 10, &f, &n);
	assert_string_equal(f[0].func, "main.newNode");
	assert_int_equal(stack_sidecar_lookup(s, 1, 2, 20, &sid), -ENOENT);
	assert_int_equal(stack_sidecar_lookup(s, 1, 3, 30, &sid), -ENOENT);
	stack_sidecar_close(s);
	s = open_sidecar(fx, "b.trace");
	frames_of(s, 1, 3, 30, &f, &n);
	assert_string_equal(f[0].func, "main.newNode");
	assert_int_equal(stack_sidecar_lookup(s, 1, 1, 10, &sid), -ENOENT);
	stack_sidecar_close(s);
}

/*
 * A stack read from the process (a heap-profile bucket: return PCs only,
 * the allocator's frames already skipped by the runtime) is symbolized
 * as the probes' stacks are, and an exists event noted with it gets a
 * sidecar entry without counting as an allocation; a probe's hash gives
 * the same kind of reference.
 */
static void test_exists_events_get_learnt_stacks(void **state)
{
	struct fixture *fx = *state;
	uint64_t bucket[] = { fx->newnode_ret + BIAS, fx->main_main + BIAS,
			      fx->runtime_main + BIAS };
	uint64_t whole[] = { fx->mallocgc, fx->newobject + 1, fx->newnode_ret,
			     fx->main_main };
	struct alloc_stacks *a;
	struct alloc_stacks_counts c;
	struct stack_sidecar *s;
	const struct stack_frame *f, *g;
	uint32_t ref, ref1, sid;
	size_t n, m;

	assert_int_equal(alloc_stacks_new(known_map(fx), PID, fx->bin, BIAS, &a),
			 0);
	ref = alloc_stacks_learn(a, bucket, 3);
	assert_int_not_equal(ref, 0);
	assert_int_equal(alloc_stacks_learn(a, bucket, 0), 0);
	assert_int_equal(alloc_stacks_ref(a, 1), 0);
	send_whole(a, 1, whole, 4, fx->newobject + 1 + BIAS);
	ref1 = alloc_stacks_ref(a, 1);
	assert_int_not_equal(ref1, 0);
	assert_int_not_equal(ref1, ref);
	alloc_stacks_note_exists(a, 7, 70, ref);
	alloc_stacks_note_exists(a, 8, 70, ref1);
	alloc_stacks_note_exists(a, 9, 70, 0);          /* nothing known */
	alloc_stacks_note_exists(a, 10, 70, 1000);      /* no such stack */
	assert_int_equal(alloc_stacks_gen_written(a, fx->dirfd, "e.trace", 3),
			 0);
	assert_int_equal(alloc_stacks_close_file(a), 0);
	alloc_stacks_get_counts(a, &c);
	assert_int_equal(c.with_stack, 0);
	assert_int_equal(c.without_stack, 0);
	alloc_stacks_free(a);

	s = open_sidecar(fx, "e.trace");
	frames_of(s, 3, 7, 70, &f, &n);
	assert_true(n >= 2);
	assert_string_equal(f[0].func, "main.newNode");
	assert_int_equal(f[0].line, fx->marked);
	assert_int_equal(f[0].pc, fx->newnode_ret - 1);
	assert_string_equal(f[n - 1].func, "runtime.main");
	frames_of(s, 3, 8, 70, &g, &m);
	assert_string_equal(g[0].func, "main.newNode");
	assert_int_equal(stack_sidecar_lookup(s, 3, 9, 70, &sid), -ENOENT);
	assert_int_equal(stack_sidecar_lookup(s, 3, 10, 70, &sid), -ENOENT);
	stack_sidecar_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_stacks_start_at_the_allocating_function, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_each_file_gets_its_sidecar,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_exists_events_get_learnt_stacks, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
