// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_trace_writer - the encoder (trace_writer.c) against the tests'
 * decoder (tests/unit/trace_decode.h): a generation built from the fuzz
 * input is encoded, decoded, and must give back what was put in.
 *
 * Input: a program. Byte 0: generation - 1; bytes 1-4: ts floor; then
 * operations: a type definition (address from a small space, so repeats
 * happen; size, ptrBytes; a name of up to 5000 bytes, longer than the
 * 4096 kept) or one or a burst of events (thread, kind including invalid
 * ones, timestamp steps that go back, arguments).
 *
 * Checked: what the header promises (refusals, type IDs, clamped
 * timestamps), and the encoding: every batch <= 64 KiB with the
 * generation, one frequency and one info batch with their values, the
 * type table in ID order with names cut at 4096, each thread's events in
 * order with their arguments, and the length > the event bytes.
 */
#include "fuzz_common.h"
#include "trace_decode.h"
#include "format/trace_writer.h"

#define MAX_EVENTS 100000
#define MAX_TYPES 1024
#define MAX_THREADS 257
#define NAME_MAX_IN 5000
#define NAME_KEPT 4096

struct in {
	const uint8_t *p, *end;
};

static uint64_t take(struct in *in, unsigned nbytes)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < nbytes && in->p < in->end; i++)
		v |= (uint64_t)*in->p++ << (8 * i);
	return v;
}

struct ev {
	uint8_t type;
	uint64_t ts, args[3];
};

struct model {
	uint64_t gen, floor;
	struct ev *ev;              /* accepted events, in order */
	uint32_t *ev_thread;        /* index into threads */
	size_t nev;
	uint64_t threads[MAX_THREADS];
	uint64_t last_ts[MAX_THREADS];
	size_t nthreads;
	uint64_t type_addr[MAX_TYPES], type_size[MAX_TYPES],
		type_ptr[MAX_TYPES];
	size_t type_name_len[MAX_TYPES];
	const uint8_t *type_name[MAX_TYPES];
	size_t ntypes;
	uint64_t min_ts;
};

static const unsigned nargs_of[TW_EV_COUNT] = { 3, 3, 1, 2, 2, 1, 2, 2, 1 };

static uint8_t names[NAME_MAX_IN];

static void add_event(struct tw_gen *g, struct model *m, uint64_t thread,
		      int type, uint64_t ts, const uint64_t a[3])
{
	bool valid = type >= TW_EV_FIRST && type < TW_EV_FIRST + TW_EV_COUNT &&
		     thread != UINT64_MAX;
	size_t t;
	int rc;

	if (valid && (type == TW_EV_HEAP_OBJECT ||
		      type == TW_EV_HEAP_OBJECT_ALLOC) && a[1] > m->ntypes)
		valid = false;
	rc = tw_gen_event(g, thread, (enum tw_event)type, ts, a[0], a[1],
			  a[2]);
	FUZZ_CHECK(valid ? rc == 0 : rc == -EINVAL);
	if (!valid)
		return;
	for (t = 0; t < m->nthreads && m->threads[t] != thread; t++)
		;
	if (t == m->nthreads) {
		FUZZ_CHECK(t < MAX_THREADS);
		m->threads[t] = thread;
		m->last_ts[t] = m->floor;
		m->nthreads++;
	}
	if (ts < m->last_ts[t])
		ts = m->last_ts[t];
	m->last_ts[t] = ts;
	if (!m->nev || ts < m->min_ts)
		m->min_ts = ts;
	m->ev[m->nev].type = (uint8_t)type;
	m->ev[m->nev].ts = ts;
	memcpy(m->ev[m->nev].args, a, sizeof(m->ev[m->nev].args));
	m->ev_thread[m->nev] = (uint32_t)t;
	m->nev++;
}

static void define_type(struct tw_gen *g, struct model *m, struct in *in)
{
	uint64_t addr = take(in, 1), size = take(in, 4), ptr = take(in, 4);
	size_t len = (size_t)take(in, 2) % NAME_MAX_IN, i, avail;
	uint64_t id, want;

	avail = (size_t)(in->end - in->p);
	for (i = 0; i < len; i++)
		names[i] = avail ? in->p[i % avail] : (uint8_t)i;
	in->p += len < avail ? len : avail;
	for (want = 0, i = 0; addr && i < m->ntypes; i++)
		if (m->type_addr[i] == addr)
			want = i + 1;
	if (addr && !want && m->ntypes == MAX_TYPES)
		return;
	id = tw_gen_define_type(g, addr, size, ptr, len ? (char *)names : NULL,
				len);
	FUZZ_CHECK(tw_gen_type_id(g, addr) == id);
	if (!addr) {
		FUZZ_CHECK(id == 0);
		return;
	}
	if (want) {
		FUZZ_CHECK(id == want);
		return;
	}
	FUZZ_CHECK(id == m->ntypes + 1);
	i = m->ntypes++;
	m->type_addr[i] = addr;
	m->type_size[i] = size;
	m->type_ptr[i] = ptr;
	m->type_name_len[i] = len > NAME_KEPT ? NAME_KEPT : len;
	m->type_name[i] = malloc(len ? len : 1);
	FUZZ_CHECK(m->type_name[i]);
	memcpy((void *)m->type_name[i], names, len);
}

static size_t thread_of(const struct model *m, uint64_t id)
{
	size_t t;

	for (t = 0; t < m->nthreads && m->threads[t] != id; t++)
		;
	FUZZ_CHECK(t < m->nthreads);
	return t;
}

static void check_encoding(const struct model *m, const uint8_t *buf,
			   size_t len, const struct tw_heap_info *info)
{
	const uint8_t *p = buf, *end = buf + len;
	size_t nfreq = 0, ninfo = 0, ntypes = 0, *pos, i, t;
	struct td_batch b;
	int r;

	pos = calloc(m->nthreads + 1, sizeof(*pos));
	FUZZ_CHECK(pos);
	while ((r = td_next_batch(&p, end, &b)) == 1) {
		const uint8_t *q = b.data, *qend = b.data + b.len;
		uint64_t v, ts = b.ts;
		struct td_event e;
		struct td_type ty;

		FUZZ_CHECK(b.total <= 64 * 1024 && b.len > 0);
		FUZZ_CHECK(b.gen == m->gen);
		if (b.exp == 1 && b.data[0] == 1) {
			uint64_t want[4] = { info->min_page_heap_addr,
					     info->page_size,
					     info->min_heap_align,
					     info->fixed_stack };

			ninfo++;
			q++;
			for (i = 0; i < 4; i++) {
				FUZZ_CHECK(td_uvarint(&q, qend, &v) == 0);
				FUZZ_CHECK(v == want[i]);
			}
			FUZZ_CHECK(q == qend && b.m == UINT64_MAX);
			FUZZ_CHECK(b.ts == m->min_ts);
		} else if (b.exp == 1 && b.data[0] == 0) {
			q++;
			while ((r = td_next_type(&q, qend, &ty)) == 1) {
				FUZZ_CHECK(ntypes < m->ntypes);
				FUZZ_CHECK(ty.id == ntypes + 1);
				FUZZ_CHECK(ty.addr == m->type_addr[ntypes]);
				FUZZ_CHECK(ty.size == m->type_size[ntypes]);
				FUZZ_CHECK(ty.ptr_bytes == m->type_ptr[ntypes]);
				FUZZ_CHECK(ty.name_len ==
					   m->type_name_len[ntypes]);
				FUZZ_CHECK(!memcmp(ty.name, m->type_name[ntypes],
						   ty.name_len));
				ntypes++;
			}
			FUZZ_CHECK(r == 0);
		} else if (b.exp == 0 && b.data[0] == TD_EV_FREQUENCY) {
			nfreq++;
			q++;
			FUZZ_CHECK(td_uvarint(&q, qend, &v) == 0);
			FUZZ_CHECK(v == 1000000000 && q == qend);
		} else {
			FUZZ_CHECK(b.exp == 0);
			t = thread_of(m, b.m);
			/*
			 * Threads' batches interleave (each leaves when full,
			 * as the runtime's do); a thread's own come in order,
			 * which its events below, in the model's order, check.
			 */
			while ((r = td_next_event(&q, qend, &ts, &e)) == 1) {
				const struct ev *x;

				/* The model's next event of thread t. */
				while (pos[t] < m->nev &&
				       m->ev_thread[pos[t]] != t)
					pos[t]++;
				FUZZ_CHECK(pos[t] < m->nev);
				x = &m->ev[pos[t]++];
				FUZZ_CHECK(e.type == x->type);
				FUZZ_CHECK(e.ts == x->ts);
				FUZZ_CHECK(e.nargs ==
					   nargs_of[x->type - TW_EV_FIRST]);
				for (i = 0; i < e.nargs; i++)
					FUZZ_CHECK(e.args[i] == x->args[i]);
			}
			FUZZ_CHECK(r == 0);
		}
	}
	FUZZ_CHECK(r == 0 && p == end);
	FUZZ_CHECK(nfreq == 1 && ninfo == 1 && ntypes == m->ntypes);
	/* Every event was found. */
	for (t = 0; t < m->nthreads; t++) {
		while (pos[t] < m->nev && m->ev_thread[pos[t]] != t)
			pos[t]++;
		FUZZ_CHECK(pos[t] == m->nev);
	}
	free(pos);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct model m;
	struct in in = { data, data + size };
	struct tw_heap_info info;
	struct tw_gen *g;
	uint64_t ts = 0, a[3];
	uint8_t *buf;
	size_t len, i;

	if (size < 5)
		return 0;
	memset(&m, 0, sizeof(m));
	m.gen = 1 + take(&in, 1);
	m.floor = take(&in, 4);
	info.min_page_heap_addr = 0xc000000000ull + take(&in, 2) * 8192;
	info.page_size = 8192;
	info.min_heap_align = 8;
	info.fixed_stack = 2048;
	m.ev = malloc(MAX_EVENTS * sizeof(*m.ev));
	m.ev_thread = malloc(MAX_EVENTS * sizeof(*m.ev_thread));
	g = tw_gen_new(m.gen, 1000000000, &info, m.floor);
	FUZZ_CHECK(m.ev && m.ev_thread && g);
	FUZZ_CHECK(tw_gen_new(0, 1, &info, 0) == NULL);

	while (in.p < in.end && m.nev < MAX_EVENTS) {
		uint8_t op = (uint8_t)take(&in, 1);
		uint64_t thread, step, n;
		int type;

		if (op < 0x20) {
			define_type(g, &m, &in);
			continue;
		}
		thread = take(&in, 1);
		if (thread == 0xff)
			thread = UINT64_MAX;
		else if (thread >= 0xf0)
			thread = UINT64_MAX - 1 - (thread & 0xf);
		type = 127 + (int)(take(&in, 1) % 11);
		step = take(&in, 2);
		/* Steps above 0xf000 go back in time. */
		ts = step >= 0xf000 ? ts - (step - 0xf000) : ts + step;
		a[0] = take(&in, op & 0x40 ? 8 : 2);
		a[1] = take(&in, 1);
		if (op & 0x80)
			a[1] |= take(&in, 8) << 8;
		a[2] = take(&in, 4);
		n = op >= 0xf0 ? 1 + take(&in, 2) * 4 : 1;
		for (; n > 0 && m.nev < MAX_EVENTS; n--)
			add_event(g, &m, thread, type, ts + n % 3, a);
	}
	FUZZ_CHECK(tw_gen_events(g) == m.nev);
	FUZZ_CHECK(tw_gen_encode(g, &buf, &len) == 0);
	if (m.nev == 0) {
		FUZZ_CHECK(len == 0 && buf == NULL);
	} else {
		FUZZ_CHECK(buf && len > tw_gen_event_bytes(g));
		check_encoding(&m, buf, len, &info);
	}
	free(buf);
	tw_gen_free(g);
	for (i = 0; i < m.ntypes; i++)
		free((void *)m.type_name[i]);
	free(m.ev);
	free(m.ev_thread);
	return 0;
}
