/*
 * out_growth.h - the leaks mode's table: how the bytes still live grew
 * over the recording, for the stacks holding the most at its end.
 *
 * Each block of a leaks recording is a timed record (allocated at time,
 * freed at end, its bytes as weight; a block never freed ends after the
 * recording).  The live bytes of a stack at t are those of its blocks with
 * time <= t < end, shown at GROWTH_COLUMNS evenly spaced times, the last
 * being the end: a steady leak grows from column to column, a cache fills
 * and stays flat, what is freed drops back.
 */
#ifndef PYMERGE_OUT_GROWTH_H
#define PYMERGE_OUT_GROWTH_H

#include "profile.h"

#include <stddef.h>
#include <stdio.h>

#define GROWTH_COLUMNS 6

/* Whether p is a leaks profile weighted by live bytes, with time kept. */
int out_growth__applies(const struct profile *p);

/* At most top stacks, those with live bytes at the end, most first.
 * Returns 0, -ENODATA (none; the header is still written) or -EIO. */
int out_growth__write(FILE *f, const struct profile *p, size_t top);

#endif
