/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json_str.h - a JSON string, the one way the tools write one (the
 * report's --json, the per-process summary.json).
 */
#ifndef JSON_STR_H
#define JSON_STR_H

#include <stdio.h>

/* S on F between quotes: '"', '\' and control characters escaped. */
void json_str(FILE *f, const char *s);

#endif /* JSON_STR_H */
