/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report_text.h - how the report writes a number, shared by report.c and
 * its sections (report_sections.h).  A file of its own, that calls none
 * of them: report.c calls the sections and they call these.
 */
#ifndef REPORT_TEXT_H
#define REPORT_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* "1.5 MiB" (binary units; whole bytes below 1 KiB) into BUF; BUF. */
const char *report_human_bytes(uint64_t b, char *buf, size_t len);

/* "3.1 ms" (ns below 1 us, "2.05 s" from 1 s) into BUF; BUF. */
const char *report_human_ns(uint64_t ns, char *buf, size_t len);

#endif /* REPORT_TEXT_H */
