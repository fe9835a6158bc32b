// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_type_catalog - the one catalogue of types (format/type_catalog.h):
 * entries kept across generations, IDs given per generation in order of
 * first use, and the writer emitting exactly the current generation's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "format/trace_writer.h"
#include "format/type_catalog.h"
#include "trace_decode.h"

static const struct tw_heap_info info = {
	.min_page_heap_addr = 0xc000000000ull,
	.page_size = 8192,
	.min_heap_align = 8,
	.fixed_stack = 2048,
};

static void test_ids_restart_per_generation_entries_stay(void **state)
{
	struct type_catalog c;
	uint32_t a, b;

	type_catalog_init(&c);
	a = type_catalog_add(&c, 0xa0, 0xa0, 8, 8, "*int", 4);
	b = type_catalog_add(&c, 0xb0, 0xb0, 56, 8, "main.Node", 9);
	assert_int_equal(a, 1);
	assert_int_equal(b, 2);
	type_catalog_begin_gen(&c);
	/* First use in a generation numbers the entries from 1. */
	assert_int_equal(type_catalog_gen_id(&c, b), 1);
	assert_int_equal(type_catalog_gen_id(&c, a), 2);
	assert_int_equal(type_catalog_gen_id(&c, b), 1);
	assert_int_equal(c.ngen, 2);
	assert_ptr_equal(type_catalog_gen_entry(&c, 1), type_catalog_get(&c, b));
	type_catalog_begin_gen(&c);
	/* The next one has defined nothing, and the entries are still there. */
	assert_int_equal(type_catalog_gen_id_of(&c, a), 0);
	assert_int_equal(type_catalog_gen_id_of(&c, b), 0);
	assert_int_equal(type_catalog_gen_id(&c, a), 1);
	assert_int_equal(c.ngen, 1);
	assert_int_equal(type_catalog_get(&c, b)->size, 56);
	assert_memory_equal(type_catalog_name(&c, type_catalog_get(&c, b)),
			    "main.Node", 9);
	assert_int_equal(type_catalog_gen_id(&c, 0), 0);
	assert_int_equal(type_catalog_gen_id(&c, 3), 0);
	type_catalog_free(&c);
}

static void test_intern_finds_by_key(void **state)
{
	struct type_catalog c;

	type_catalog_init(&c);
	assert_int_equal(type_catalog_find(&c, 0xa0), 0);
	assert_int_equal(type_catalog_intern(&c, 0xa0, 8, 8, "*int", 4), 1);
	assert_int_equal(type_catalog_intern(&c, 0xa0, 8, 8, "*int", 4), 1);
	/* Added entries are the caller's to index. */
	assert_int_equal(type_catalog_add(&c, 0xb0, 0xb0, 1, 0, "x", 1), 2);
	assert_int_equal(type_catalog_find(&c, 0xb0), 0);
	assert_int_equal(type_catalog_find(&c, 0xa0), 1);
	type_catalog_free(&c);
}

/* A name taken from the catalogue itself survives its arena growing (the
 * session names a sampled size after its type's entry). */
static void test_name_from_inside_the_arena(void **state)
{
	struct type_catalog c;
	char big[3000];
	uint32_t r, i;

	memset(big, 'x', sizeof(big));
	type_catalog_init(&c);
	r = type_catalog_add(&c, 1, 1, 8, 0, "main.Payload", 12);
	for (i = 0; i < 40; i++) {
		const struct type_entry *e = type_catalog_get(&c, r);
		uint32_t n = type_catalog_add(&c, 100 + i, 0, 8, 0,
					      type_catalog_name(&c, e),
					      e->name_len);

		assert_int_not_equal(n, 0);
		assert_memory_equal(type_catalog_name(&c, type_catalog_get(&c, n)),
				    "main.Payload", 12);
		/* Grow the arena past its capacity now and then. */
		assert_int_not_equal(type_catalog_add(&c, 1000 + i, 0, 1, 0, big,
						      sizeof(big)), 0);
	}
	type_catalog_free(&c);
}

struct types_seen {
	uint64_t id[16], addr[16];
	size_t n;
};

static void decode_types(const uint8_t *p, size_t len, struct types_seen *t)
{
	const uint8_t *end = p + len;
	struct td_batch b;
	int r;

	memset(t, 0, sizeof(*t));
	while ((r = td_next_batch(&p, end, &b)) == 1) {
		const uint8_t *q = b.data + 1, *qend = b.data + b.len;
		struct td_type ty;

		if (b.exp != 1 || !b.len || b.data[0] != 0)
			continue;
		while (t->n < 16 && td_next_type(&q, qend, &ty) == 1) {
			t->id[t->n] = ty.id;
			t->addr[t->n++] = ty.addr;
		}
	}
	assert_int_equal(r, 0);
}

/* Generation n, drawing its types from c. */
static struct tw_gen *gen_on(struct type_catalog *c, uint64_t n)
{
	struct tw_gen *g = tw_gen_new(n, 1000000000, &info, 0);

	assert_non_null(g);
	tw_gen_use_types(g, c);
	return g;
}

/* Ends g and reads back the types it wrote. */
static void finish_types(struct tw_gen *g, struct types_seen *t)
{
	uint8_t *buf;
	size_t len;

	assert_int_equal(tw_gen_encode(g, &buf, &len), 0);
	decode_types(buf, len, t);
	free(buf);
	tw_gen_free(g);
}

/* Two generations drawing on one catalogue write each its own types. */
static void test_writer_emits_this_generations_types(void **state)
{
	struct type_catalog c;
	struct types_seen t;
	struct tw_gen *g;
	uint32_t a, b;

	type_catalog_init(&c);
	a = type_catalog_add(&c, 0xa0, 0xa0, 8, 8, "*int", 4);
	b = type_catalog_add(&c, 0xb0, 0xb0, 56, 8, "main.Node", 9);

	g = gen_on(&c, 1);
	assert_int_equal(tw_gen_type(g, a), 1);
	assert_int_equal(tw_gen_type(g, b), 2);
	assert_int_equal(tw_gen_event(g, 5, TW_EV_HEAP_OBJECT_ALLOC, 10, 1, 2, 0), 0);
	finish_types(g, &t);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.addr[0], 0xa0);
	assert_int_equal(t.addr[1], 0xb0);

	g = gen_on(&c, 2);
	/* A type ID this generation has not defined is refused. */
	assert_int_equal(tw_gen_event(g, 5, TW_EV_HEAP_OBJECT_ALLOC, 10, 1, 1, 0),
			 -EINVAL);
	assert_int_equal(tw_gen_type(g, b), 1);
	assert_int_equal(tw_gen_type_id(g, 0xa0), 0);
	assert_int_equal(tw_gen_event(g, 5, TW_EV_HEAP_OBJECT_ALLOC, 10, 1, 1, 0), 0);
	finish_types(g, &t);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.id[0], 1);
	assert_int_equal(t.addr[0], 0xb0);
	type_catalog_free(&c);
}

/* A generation whose catalogue has gone on to another cannot write its
 * table: it fails instead of writing the other's IDs. */
static void test_generation_overtaken_fails(void **state)
{
	struct type_catalog c;
	struct tw_gen *g1, *g2;
	uint32_t a;
	uint8_t *buf = NULL;
	size_t len;

	type_catalog_init(&c);
	a = type_catalog_add(&c, 0xa0, 0xa0, 8, 8, "*int", 4);
	g1 = gen_on(&c, 1);
	assert_int_equal(tw_gen_type(g1, a), 1);
	assert_int_equal(tw_gen_event(g1, 5, TW_EV_HEAP_OBJECT_ALLOC, 10, 1, 1, 0), 0);
	g2 = gen_on(&c, 2);
	assert_int_equal(tw_gen_type(g1, a), 0);
	assert_int_equal(tw_gen_encode(g1, &buf, &len), -EBUSY);
	free(buf);
	tw_gen_free(g1);
	tw_gen_free(g2);
	type_catalog_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids_restart_per_generation_entries_stay),
		cmocka_unit_test(test_intern_finds_by_key),
		cmocka_unit_test(test_name_from_inside_the_arena),
		cmocka_unit_test(test_writer_emits_this_generations_types),
		cmocka_unit_test(test_generation_overtaken_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
