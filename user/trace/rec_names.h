/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rec_names.h - the names of the ring-buffer record kinds, in one place
 * for every report: CamelCase in messages ("dropped N SpanSweep
 * records"), snake_case as keys of the JSON sidecar.
 */
#ifndef REC_NAMES_H
#define REC_NAMES_H

#include "traceaf_events.h"

struct taf_rec_name {
	const char *name;   /* messages */
	const char *key;    /* JSON */
};

/* Indexed by enum taf_rec_kind; entry 0 is empty. */
extern const struct taf_rec_name taf_rec_names[TAF_REC_KIND_MAX];

#endif /* REC_NAMES_H */
