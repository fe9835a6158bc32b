/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report_sections.h - report sections kept out of report.c: the ones in
 * GC cycles (report_cycles.c), lifetimes (report_lifetime.c), size
 * classes (report_sizes.c) and the comparison of two runs
 * (report_diff.c).
 */
#ifndef REPORT_SECTIONS_H
#define REPORT_SECTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct heap_replay;
struct report_proc;
struct html_table;

/* Site indexes by bytes allocated (malloc'd, NULL on failure). */
uint32_t *report_sorted_sites(const struct heap_replay *h);

/* LIFETIMES by site and by type (report_lifetime.c); one hr_life as the
 * JSON member "lifetime":{...}; the most cycles a freed object survived
 * (the low end of its bucket). */
struct hr_life;
void report_print_lifetimes(const struct heap_replay *h, unsigned top);
void report_json_life(const struct hr_life *l);
uint64_t report_life_max_cycles(const struct hr_life *l);

/*
 * The page's tables (report_page.c), each filled from the section's own
 * rows: the top sites (types, without stacks) with their lifetimes;
 * garbage producers (WHICH 0) or retention (1); size classes.  0 or
 * -ENOMEM; the caller frees T with html_table_free.
 */
int report_html_lifetimes(const struct heap_replay *h, unsigned top,
			  struct html_table *t);
int report_html_cycles(const struct heap_replay *h, int which, unsigned top,
		       struct html_table *t);
int report_html_sizes(const struct heap_replay *h, unsigned top,
		      struct html_table *t);

/* The --html page of one process (report_page.c).  0 or 1 after a line
 * on stderr. */
int report_page_write(const struct report_proc *p, const char *out,
		      unsigned top);

/* SIZE CLASSES (report_sizes.c): text; the JSON member
 * ,"size_classes":{...} (null for a --memprofilerate trace). */
void report_print_sizes(const struct heap_replay *h, unsigned top);
void report_json_sizes(const struct heap_replay *h);

/* GARBAGE PRODUCERS and RETENTION, text; and as JSON members (each
 * starting with a comma) of a process object. */
void report_print_cycles(const struct heap_replay *h, unsigned top);
void report_json_cycles(const struct heap_replay *h, unsigned top);

/*
 * report --base OLD NEW: what grew and what shrank from OLD's processes
 * to NEW's (all of each side summed), by type and, when both have
 * stacks, by allocation site; text or JSON.  0, or 1 on failure.
 */
int report_diff(const struct report_proc *old, size_t nold,
		const struct report_proc *new, size_t nnew, unsigned top,
		bool json);

#endif /* REPORT_SECTIONS_H */
