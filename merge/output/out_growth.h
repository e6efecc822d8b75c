/*
 * out_growth.h - the leaks mode's table: the bytes still live at
 * GROWTH_COLUMNS evenly spaced times, the last being the end, for the
 * stacks holding the most at the end (growth.h).
 */
#ifndef PYMERGE_OUT_GROWTH_H
#define PYMERGE_OUT_GROWTH_H

#include "profile.h"

#include <stddef.h>
#include <stdio.h>

#define GROWTH_COLUMNS 6

/* At most top stacks, most first.  Returns 0, -ENODATA (none; the header
 * is still written) or -EIO. */
int out_growth__write(FILE *f, const struct profile *p, size_t top);

#endif
