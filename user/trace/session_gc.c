// SPDX-License-Identifier: BSD-3-Clause
/*
 * session_gc.c - a session's GC cycle marks: each TAF_REC_GC_CYCLE record
 * (runtime.gcSweep's entry) is kept with the generation being built and,
 * once that generation is in a file, written to the file's F.gc
 * (format/gc_sidecar.h), whole, so every file tells its own cycles.
 */
#include "trace/session.h"
#include "trace/session_impl.h"

#include <errno.h>
#include <stdlib.h>

#include "format/trace_sink.h"
#include "util/grow.h"

int session_gc_mark(struct session *s, const struct taf_rec_addr *r)
{
	if (!GROW(s->gc_pending, s->ngc_pending, s->gc_pending_cap, 16))
		return -ENOMEM;
	s->gc_pending[s->ngc_pending].ns = r->hdr.ts;
	s->gc_pending[s->ngc_pending].mode = (uint32_t)r->addr;
	s->ngc_pending++;
	return 0;
}

/* A new file: its cycles start here. */
void session_gc_new_file(void *ctx, const char *name)
{
	struct session *s = ctx;

	s->ngc_file = 0;
}

void session_gc_gen_written(struct session *s)
{
	const char *name = trace_sink_file_name(s->sink);
	size_t i;

	if (!name)
		return;
	if (!s->ngc_pending)
		return;
	for (i = 0; i < s->ngc_pending; i++) {
		if (!GROW(s->gc_file, s->ngc_file, s->gc_file_cap, 16))
			break;	/* no memory: the marks after are lost */
		s->gc_file[s->ngc_file++] = s->gc_pending[i];
	}
	s->ngc_pending = 0;
	/* A failed write leaves the previous F.gc: the trace is unaffected. */
	gc_sidecar_write(trace_sink_dirfd(s->sink), name, s->gc_file,
			 s->ngc_file);
}

void session_gc_gen_dropped(struct session *s)
{
	s->ngc_pending = 0;
}

void session_gc_free(struct session *s)
{
	free(s->gc_pending);
	free(s->gc_file);
	s->gc_pending = s->gc_file = NULL;
	s->ngc_pending = s->ngc_file = 0;
}
