/*
 * diff.h - `pymerge diff BASE NEW`: what changed between two profiles.
 */
#ifndef PYMERGE_DIFF_H
#define PYMERGE_DIFF_H

#include "profile.h"

#include <stdio.h>

/* One function's share of the total, in percent, in each profile. */
struct diff_row {
    const char *name;
    double self[2], total[2];   /* [0] base, [1] new */
};

/*
 * Every function of either profile with its self share (stacks it ends)
 * and total share (stacks it is in), sorted by the larger of its two
 * changes, biggest first.  Shares are of each profile's own total, so
 * profiles of different lengths compare.  *n gets the count; the names
 * live until diff__free_rows.
 */
struct diff_row *diff__rows(const struct profile *base, const struct profile *cur, size_t *n);
void diff__free_rows(struct diff_row *rows, size_t n);

/* The top `top` rows as an aligned text table.  Returns 0 or -EIO. */
int diff__write_table(FILE *f, const struct diff_row *rows, size_t n, size_t top);

#endif
