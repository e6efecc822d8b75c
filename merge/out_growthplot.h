/*
 * out_growthplot.h - the leaks mode's plot: one self-contained SVG with a
 * line per stack of the bytes still live over the recording, for the
 * stacks holding the most at its end (growth.h), and a legend naming them.
 * What the growth table says, drawn: a leak is the line that keeps rising.
 */
#ifndef PYMERGE_OUT_GROWTHPLOT_H
#define PYMERGE_OUT_GROWTHPLOT_H

#include "profile.h"

#include <stddef.h>
#include <stdio.h>

/* At most top stacks (and no more than the palette's 8), titled title.
 * Returns 0, -ENODATA (no stack holds bytes at the end; the empty plot is
 * still written), -EINVAL (p is not a leaks profile: nothing written) or
 * -EIO. */
int out_growthplot__write(FILE *f, const struct profile *p, size_t top, const char *title);

#endif
