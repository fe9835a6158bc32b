// SPDX-License-Identifier: BSD-3-Clause
/*
 * pprof_write.c - an alloc_profile as a gzip-compressed profile.proto.
 *
 * The message is built with the C that protoc-c generates from
 * proto/profile.proto and streamed through zlib into an atomic_file.
 * What this file adds is the pprof conventions the schema cannot state:
 * one string table with "" at index 0, functions and locations stored once
 * and referred to by non-zero IDs, one location per PC whose lines are the
 * calls inlined there (innermost first, as runtime/pprof/proto.go writes
 * them), mappings that say the frames are symbolized, and the first four
 * sample types and the default that Go's own heap profiles have
 * (runtime/pprof/protomem.go), so `go tool pprof` treats the file like a
 * heap profile of a Go program; the types after those are ours.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "analysis/alloc_profile.h"
#include "util/atomic_file.h"
#include "util/fnv.h"
#include "gen/profile.pb-c.h"
#include "util/grow.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;
typedef Perftools__Profiles__Mapping pb_mapping;

#define NVALUES AP_NVALUES

/* Names and units of Sample.value (alloc_profile.h, README.md). */
static const char *const value_names[NVALUES][2] = {
	[AP_ALLOC_OBJECTS] = { "alloc_objects", "count" },
	[AP_ALLOC_SPACE] = { "alloc_space", "bytes" },
	[AP_INUSE_OBJECTS] = { "inuse_objects", "count" },
	[AP_INUSE_SPACE] = { "inuse_space", "bytes" },
	[AP_FREED_OBJECTS] = { "freed_objects", "count" },
	[AP_FREED_SPACE] = { "freed_space", "bytes" },
	[AP_SHORTLIVED_OBJECTS] = { "shortlived_objects", "count" },
	[AP_SHORTLIVED_SPACE] = { "shortlived_space", "bytes" },
	[AP_SURVIVED_OBJECTS] = { "survived_objects", "count" },
	[AP_SURVIVED_SPACE] = { "survived_space", "bytes" },
	/* pprof scales only known units; this one it prints as is. */
	[AP_LIFETIME_SPACE] = { "lifetime_space", "byte-seconds" },
};

/*
 * Index of deduplicated entries (strings, functions, locations): open
 * addressing over the entries' hashes; an entry's equality is checked by
 * the caller, so one index serves all three kinds.
 */
struct dedup_slot {
	uint64_t hash;
	uint32_t idx1;      /* entry index + 1; 0 = empty slot */
};

struct dedup {
	struct dedup_slot *slots;
	size_t cap;         /* power of two */
	size_t len;
};

/* Room for one more entry at load <= 1/2.  Returns 0 or -ENOMEM. */
static int dedup_reserve(struct dedup *d)
{
	struct dedup_slot *old = d->slots, *n;
	size_t i, j, ncap;

	if ((d->len + 1) * 2 <= d->cap)
		return 0;
	ncap = d->cap ? d->cap * 2 : 64;
	n = calloc(ncap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (i = 0; i < d->cap; i++) {
		if (!old[i].idx1)
			continue;
		for (j = old[i].hash & (ncap - 1); n[j].idx1;
		     j = (j + 1) & (ncap - 1))
			;
		n[j] = old[i];
	}
	free(old);
	d->slots = n;
	d->cap = ncap;
	return 0;
}

struct builder {
	/* Borrowed from the caller's profile; protobuf-c only reads them. */
	const char **strings;
	size_t nstrings, strings_cap;
	struct dedup string_ix;

	pb_function *funcs;
	size_t nfuncs, funcs_cap;
	struct dedup func_ix;

	pb_location *locs;
	size_t *loc_line;   /* locs[i]'s lines: lines[loc_line[i]..] */
	size_t nlocs, locs_cap, loc_line_cap;
	pb_line *lines;     /* of every location, in order */
	size_t nlines, lines_cap;
	struct dedup loc_ix;
};

static void builder_free(struct builder *b)
{
	free(b->strings);
	free(b->string_ix.slots);
	free(b->funcs);
	free(b->func_ix.slots);
	free(b->locs);
	free(b->loc_line);
	free(b->lines);
	free(b->loc_ix.slots);
}

/*
 * The slot of the entry with hash H for which EQ(b, index, key) holds, or
 * the empty slot where it belongs.  Call dedup_reserve first.
 */
static struct dedup_slot *
dedup_find(struct dedup *d, uint64_t h,
	   bool (*eq)(const struct builder *, size_t, const void *),
	   const struct builder *b, const void *key)
{
	size_t i;

	for (i = h & (d->cap - 1); d->slots[i].idx1; i = (i + 1) & (d->cap - 1))
		if (d->slots[i].hash == h && eq(b, d->slots[i].idx1 - 1, key))
			return &d->slots[i];
	return &d->slots[i];
}

/* Entries are referred to by 32-bit slots and int64/uint64 IDs. */
#define MAX_ENTRIES ((size_t)UINT32_MAX - 1)

static bool string_eq(const struct builder *b, size_t i, const void *key)
{
	return strcmp(b->strings[i], key) == 0;
}

/* The string table index of S (added if new), or a negative errno. */
static int64_t string_index(struct builder *b, const char *s)
{
	struct dedup_slot *slot;
	uint64_t h = fnv1a64(s, strlen(s), FNV1A64_SEED);

	if (dedup_reserve(&b->string_ix))
		return -ENOMEM;
	slot = dedup_find(&b->string_ix, h, string_eq, b, s);
	if (slot->idx1)
		return slot->idx1 - 1;
	if (b->nstrings >= MAX_ENTRIES)
		return -E2BIG;
	if (!GROW(b->strings, b->nstrings, b->strings_cap, 256))
		return -ENOMEM;
	b->strings[b->nstrings] = s;
	slot->hash = h;
	slot->idx1 = (uint32_t)++b->nstrings;
	b->string_ix.len++;
	return slot->idx1 - 1;
}

struct func_key {
	int64_t name, file;
};

static bool func_eq(const struct builder *b, size_t i, const void *key)
{
	const struct func_key *k = key;

	return b->funcs[i].name == k->name && b->funcs[i].filename == k->file;
}

/* The ID of function NAME in FILE (added if new), or a negative errno. */
static int64_t function_id(struct builder *b, const char *name,
			   const char *file)
{
	pb_function init = PERFTOOLS__PROFILES__FUNCTION__INIT;
	struct func_key k;
	struct dedup_slot *slot;
	uint64_t h;

	k.name = string_index(b, name);
	if (k.name < 0)
		return k.name;
	k.file = string_index(b, file);
	if (k.file < 0)
		return k.file;
	h = fnv1a64(&k, sizeof(k), FNV1A64_SEED);
	if (dedup_reserve(&b->func_ix))
		return -ENOMEM;
	slot = dedup_find(&b->func_ix, h, func_eq, b, &k);
	if (slot->idx1)
		return slot->idx1;
	if (b->nfuncs >= MAX_ENTRIES)
		return -E2BIG;
	if (!GROW(b->funcs, b->nfuncs, b->funcs_cap, 64))
		return -ENOMEM;
	init.id = b->nfuncs + 1;
	init.name = k.name;
	/* Go symbol names are already what pprof's system_name means. */
	init.system_name = k.name;
	init.filename = k.file;
	b->funcs[b->nfuncs] = init;
	slot->hash = h;
	slot->idx1 = (uint32_t)++b->nfuncs;
	b->func_ix.len++;
	return slot->idx1;
}

/* A location: a PC of a binary and the calls inlined there. */
struct loc_key {
	uint64_t pc, mapping;
	const pb_line *lines;     /* innermost first */
	size_t n;
};

static bool loc_eq(const struct builder *b, size_t i, const void *key)
{
	const struct loc_key *k = key;
	const pb_line *l = &b->lines[b->loc_line[i]];
	size_t j;

	if (b->locs[i].address != k->pc || b->locs[i].mapping_id != k->mapping ||
	    b->locs[i].n_line != k->n)
		return false;
	for (j = 0; j < k->n; j++)
		if (l[j].function_id != k->lines[j].function_id ||
		    l[j].line != k->lines[j].line)
			return false;
	return true;
}

/*
 * How many frames from F on make one location: the stack sidecar gives
 * each call inlined at a PC a frame of its own, all with that PC.  The
 * run ends at a frame already in it: a function is never inlined into
 * itself, so that is recursion through one call site (two real frames).
 */
static size_t inline_run(const struct stack_frame *f, size_t n)
{
	size_t i, j;

	for (i = 1; i < n && f[i].pc == f[0].pc; i++)
		for (j = 0; j < i; j++)
			if (f[j].line == f[i].line &&
			    !strcmp(f[j].func ? f[j].func : "?",
				    f[i].func ? f[i].func : "?"))
				return i;
	return i;
}

/*
 * The location ID of frames F[0..N) (one PC; added if new) in MAPPING
 * (ID, 0 = none), or a negative errno.  A location is its PC together
 * with what the PC was symbolized to: the same PC in two binaries of one
 * DIR of traces is different code.
 */
static int64_t location_id(struct builder *b, const struct stack_frame *f,
			   size_t n, uint64_t mapping)
{
	pb_location loc = PERFTOOLS__PROFILES__LOCATION__INIT;
	pb_line line_init = PERFTOOLS__PROFILES__LINE__INIT;
	struct dedup_slot *slot;
	struct loc_key k;
	size_t i;
	uint64_t h;

	/* The lines go at the end of the pool, kept only if new. */
	if (grow_to(&b->lines, &b->lines_cap, b->nlines + n,
		    sizeof(*b->lines), 64))
		return -ENOMEM;
	memset(&k, 0, sizeof(k));
	k.pc = f[0].pc;
	k.mapping = mapping;
	k.lines = &b->lines[b->nlines];
	k.n = n;
	h = fnv1a64(&k.pc, sizeof(k.pc) * 2, FNV1A64_SEED);
	for (i = 0; i < n; i++) {
		int64_t fid = function_id(b, f[i].func ? f[i].func : "?",
					  f[i].file ? f[i].file : "?");
		pb_line *l = &b->lines[b->nlines + i];

		if (fid < 0)
			return fid;
		*l = line_init;
		l->function_id = (uint64_t)fid;
		l->line = f[i].line;
		h = fnv1a64(&l->function_id, sizeof(l->function_id), h);
		h = fnv1a64(&l->line, sizeof(l->line), h);
	}
	if (dedup_reserve(&b->loc_ix))
		return -ENOMEM;
	slot = dedup_find(&b->loc_ix, h, loc_eq, b, &k);
	if (slot->idx1)
		return slot->idx1;
	if (b->nlocs >= MAX_ENTRIES)
		return -E2BIG;
	if (!GROW(b->loc_line, b->nlocs, b->loc_line_cap, 64) ||
	    !GROW(b->locs, b->nlocs, b->locs_cap, 64))
		return -ENOMEM;
	loc.id = b->nlocs + 1;
	loc.address = k.pc;
	loc.mapping_id = mapping;
	loc.n_line = n;
	b->locs[b->nlocs] = loc;
	b->loc_line[b->nlocs] = b->nlines;
	b->nlines += n;
	slot->hash = h;
	slot->idx1 = (uint32_t)++b->nlocs;
	b->loc_ix.len++;
	return slot->idx1;
}

/* The arrays of pointers protobuf-c's repeated message fields are. */
struct pointers {
	pb_value_type vt[NVALUES], *vt_p[NVALUES];
	pb_value_type period_type;
	pb_sample *samples, **samples_p;
	pb_label *labels, **labels_p;
	int64_t *values;
	uint64_t *loc_ids;
	pb_location **locs_p;
	pb_line **lines_p;
	pb_function **funcs_p;
	pb_mapping *maps, **maps_p;
	int64_t *comments;
};

static void pointers_free(struct pointers *ptr)
{
	free(ptr->samples);
	free(ptr->samples_p);
	free(ptr->labels);
	free(ptr->labels_p);
	free(ptr->values);
	free(ptr->loc_ids);
	free(ptr->locs_p);
	free(ptr->lines_p);
	free(ptr->funcs_p);
	free(ptr->maps);
	free(ptr->maps_p);
	free(ptr->comments);
}

static int add_samples(struct builder *b, struct pointers *ptr,
		       const struct alloc_profile *p)
{
	pb_label label_init = PERFTOOLS__PROFILES__LABEL__INIT;
	pb_sample sample_init = PERFTOOLS__PROFILES__SAMPLE__INIT;
	size_t i, j, run, nframes = 0, at = 0;
	int64_t type_key = 0, id;

	for (i = 0; i < p->nsamples; i++)
		nframes += p->samples[i].nframes;
	/* calloc(0) may return NULL; one spare element avoids the case. */
	ptr->samples = calloc(p->nsamples + 1, sizeof(*ptr->samples));
	ptr->samples_p = calloc(p->nsamples + 1, sizeof(*ptr->samples_p));
	ptr->labels = calloc(p->nsamples + 1, sizeof(*ptr->labels));
	ptr->labels_p = calloc(p->nsamples + 1, sizeof(*ptr->labels_p));
	ptr->values = calloc(p->nsamples * NVALUES + 1, sizeof(*ptr->values));
	ptr->loc_ids = calloc(nframes + 1, sizeof(*ptr->loc_ids));
	if (!ptr->samples || !ptr->samples_p || !ptr->labels ||
	    !ptr->labels_p || !ptr->values || !ptr->loc_ids)
		return -ENOMEM;

	for (i = 0; i < p->nsamples; i++) {
		const struct alloc_profile_sample *s = &p->samples[i];
		pb_sample *ps = &ptr->samples[i];
		int64_t *v = &ptr->values[i * NVALUES];

		*ps = sample_init;
		ps->location_id = &ptr->loc_ids[at];
		for (j = 0; j < s->nframes; j += run) {
			run = inline_run(&s->frames[j], s->nframes - j);
			id = location_id(b, &s->frames[j], run, s->mapping);
			if (id < 0)
				return (int)id;
			ptr->loc_ids[at++] = (uint64_t)id;
		}
		ps->n_location_id = (size_t)(&ptr->loc_ids[at] -
					     ps->location_id);
		memcpy(v, s->v, sizeof(s->v));
		ps->value = v;
		ps->n_value = NVALUES;
		if (s->type_name) {
			pb_label *l = &ptr->labels[i];

			if (!type_key) {
				type_key = string_index(b, "type");
				if (type_key < 0)
					return (int)type_key;
			}
			*l = label_init;
			l->key = type_key;
			l->str = string_index(b, s->type_name);
			if (l->str < 0)
				return (int)l->str;
			ptr->labels_p[i] = l;
			ps->label = &ptr->labels_p[i];
			ps->n_label = 1;
		}
		ptr->samples_p[i] = ps;
	}
	return 0;
}

/*
 * P's mappings and comments.  The frames come symbolized (names, files,
 * lines, inlined calls), so each mapping says so: pprof then leaves them
 * as they are instead of looking for the binary to symbolize them, and
 * uses the binary, when it finds it, for the source and disassembly.
 */
static int add_mappings(struct builder *b, struct pointers *ptr,
			pb_profile *msg, const struct alloc_profile *p)
{
	pb_mapping init = PERFTOOLS__PROFILES__MAPPING__INIT;
	int64_t s;
	size_t i;

	ptr->maps = calloc(p->nmappings + 1, sizeof(*ptr->maps));
	ptr->maps_p = calloc(p->nmappings + 1, sizeof(*ptr->maps_p));
	ptr->comments = calloc(p->ncomments + 1, sizeof(*ptr->comments));
	if (!ptr->maps || !ptr->maps_p || !ptr->comments)
		return -ENOMEM;
	for (i = 0; i < p->nmappings; i++) {
		const struct alloc_profile_mapping *m = &p->mappings[i];
		pb_mapping *pm = &ptr->maps[i];

		*pm = init;
		pm->id = i + 1;
		pm->memory_start = m->start;
		pm->memory_limit = m->limit;
		pm->file_offset = m->offset;
		s = string_index(b, m->file ? m->file : "");
		if (s < 0)
			return (int)s;
		pm->filename = s;
		s = string_index(b, m->build_id ? m->build_id : "");
		if (s < 0)
			return (int)s;
		pm->build_id = s;
		pm->has_functions = true;
		pm->has_filenames = true;
		pm->has_line_numbers = true;
		pm->has_inline_frames = true;
		ptr->maps_p[i] = pm;
	}
	for (i = 0; i < p->ncomments; i++) {
		s = string_index(b, p->comments[i]);
		if (s < 0)
			return (int)s;
		ptr->comments[i] = s;
	}
	msg->mapping = ptr->maps_p;
	msg->n_mapping = p->nmappings;
	msg->comment = ptr->comments;
	msg->n_comment = p->ncomments;
	return 0;
}

/* Fills MSG from P; MSG points into B and PTR afterwards. */
static int build(pb_profile *msg, struct builder *b, struct pointers *ptr,
		 const struct alloc_profile *p)
{
	pb_value_type vt_init = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	size_t i;
	int64_t s;
	int err;

	/* Entry 0 of the string table must be "" (profile.proto). */
	if (string_index(b, "") != 0)
		return -ENOMEM;
	for (i = 0; i < NVALUES; i++) {
		ptr->vt[i] = vt_init;
		s = string_index(b, value_names[i][0]);
		if (s < 0)
			return (int)s;
		ptr->vt[i].type = s;
		s = string_index(b, value_names[i][1]);
		if (s < 0)
			return (int)s;
		ptr->vt[i].unit = s;
		ptr->vt_p[i] = &ptr->vt[i];
	}
	err = add_samples(b, ptr, p);
	if (!err)
		err = add_mappings(b, ptr, msg, p);
	if (err)
		return err;

	/* B's arrays are final now, so pointers into them stay valid. */
	ptr->locs_p = calloc(b->nlocs + 1, sizeof(*ptr->locs_p));
	ptr->lines_p = calloc(b->nlines + 1, sizeof(*ptr->lines_p));
	ptr->funcs_p = calloc(b->nfuncs + 1, sizeof(*ptr->funcs_p));
	if (!ptr->locs_p || !ptr->lines_p || !ptr->funcs_p)
		return -ENOMEM;
	for (i = 0; i < b->nlines; i++)
		ptr->lines_p[i] = &b->lines[i];
	for (i = 0; i < b->nlocs; i++) {
		b->locs[i].line = &ptr->lines_p[b->loc_line[i]];
		ptr->locs_p[i] = &b->locs[i];
	}
	for (i = 0; i < b->nfuncs; i++)
		ptr->funcs_p[i] = &b->funcs[i];

	msg->sample_type = ptr->vt_p;
	msg->n_sample_type = NVALUES;
	msg->default_sample_type = ptr->vt[AP_INUSE_SPACE].type;
	/*
	 * Go's heap profiles sample one allocation per period bytes
	 * (MemProfileRate) and carry values already scaled to estimates; a
	 * full trace has every allocation, so its period is 1, and a
	 * --memprofilerate trace's is its rate, its values scaled the same
	 * way (heap_scale.h).  pprof scales nothing either way.
	 */
	ptr->period_type = vt_init;
	s = string_index(b, "space");
	if (s < 0)
		return (int)s;
	ptr->period_type.type = s;
	ptr->period_type.unit = ptr->vt[AP_ALLOC_SPACE].unit;
	msg->period_type = &ptr->period_type;
	msg->period = p->period > 1 ? p->period : 1;
	msg->sample = ptr->samples_p;
	msg->n_sample = p->nsamples;
	msg->location = ptr->locs_p;
	msg->n_location = b->nlocs;
	msg->function = ptr->funcs_p;
	msg->n_function = b->nfuncs;
	/* protobuf-c's field is char **, but packing only reads it. */
	msg->string_table = (char **)b->strings;
	msg->n_string_table = b->nstrings;
	msg->time_nanos = p->time_nanos;
	msg->duration_nanos = p->duration_nanos;
	return 0;
}

/*
 * A ProtobufCBuffer that gzips what protobuf-c packs into it and writes
 * the result to an atomic_file, so the packed message is never held
 * whole in memory.
 */
struct gzip_sink {
	ProtobufCBuffer base;
	z_stream zs;
	struct atomic_file *out;
	int err;
	unsigned char chunk[64 * 1024];
};

/* Runs deflate with FLUSH until it wants more input (or is finished). */
static void gzip_drain(struct gzip_sink *g, int flush)
{
	int zerr;

	do {
		g->zs.next_out = g->chunk;
		g->zs.avail_out = sizeof(g->chunk);
		zerr = deflate(&g->zs, flush);
		if (zerr == Z_STREAM_ERROR) {
			g->err = -EIO;
			return;
		}
		g->err = atomic_file_write(g->out, g->chunk,
					   sizeof(g->chunk) - g->zs.avail_out);
		if (g->err)
			return;
	} while (g->zs.avail_out == 0 ||
		 (flush == Z_FINISH && zerr != Z_STREAM_END));
}

static void gzip_append(ProtobufCBuffer *buf, size_t len,
			const uint8_t *data)
{
	struct gzip_sink *g = (struct gzip_sink *)buf;

	/* protobuf-c has no way to stop packing: ignore the rest. */
	if (g->err)
		return;
	/* avail_in is 32 bits; protobuf-c appends at most one string. */
	if (len > UINT32_MAX) {
		g->err = -E2BIG;
		return;
	}
	g->zs.next_in = (unsigned char *)data;
	g->zs.avail_in = (uInt)len;
	gzip_drain(g, Z_NO_FLUSH);
}

static int write_gzipped(const pb_profile *msg, struct atomic_file *out)
{
	struct gzip_sink *g;
	int err;

	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->base.append = gzip_append;
	g->out = out;
	/* windowBits 15 + 16: a gzip wrapper, which pprof expects. */
	if (deflateInit2(&g->zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16,
			 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		return -ENOMEM;
	}
	perftools__profiles__profile__pack_to_buffer(msg, &g->base);
	if (!g->err) {
		g->zs.next_in = NULL;
		g->zs.avail_in = 0;
		gzip_drain(g, Z_FINISH);
	}
	err = g->err;
	deflateEnd(&g->zs);
	free(g);
	return err;
}

static bool profile_is_valid(const struct alloc_profile *p)
{
	size_t i;

	if (p->nsamples && !p->samples)
		return false;
	/* The sample arrays below are nsamples * NVALUES long. */
	if (p->nsamples > SIZE_MAX / sizeof(int64_t) / NVALUES - 1)
		return false;
	if ((p->nmappings && !p->mappings) || (p->ncomments && !p->comments))
		return false;
	for (i = 0; i < p->ncomments; i++)
		if (!p->comments[i])
			return false;
	for (i = 0; i < p->nsamples; i++)
		if ((p->samples[i].nframes && !p->samples[i].frames) ||
		    p->samples[i].mapping > p->nmappings)
			return false;
	return true;
}

int pprof_write(const struct alloc_profile *p, const char *path)
{
	pb_profile msg = PERFTOOLS__PROFILES__PROFILE__INIT;
	struct builder b;
	struct pointers ptr;
	struct atomic_file out;
	int err;

	if (!p || !path || !profile_is_valid(p))
		return -EINVAL;
	memset(&b, 0, sizeof(b));
	memset(&ptr, 0, sizeof(ptr));
	err = build(&msg, &b, &ptr, p);
	if (err)
		goto out;
	err = atomic_file_open(&out, path, 0644);
	if (err)
		goto out;
	err = write_gzipped(&msg, &out);
	if (err)
		atomic_file_abort(&out);
	else
		err = atomic_file_commit(&out);
out:
	pointers_free(&ptr);
	builder_free(&b);
	return err;
}
