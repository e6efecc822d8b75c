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
#include <stdint.h>
#include <stdio.h>

/* At most top stacks (and no more than the palette's 8), titled title.
 * Returns 0, -ENODATA (no stack holds bytes at the end; the empty plot is
 * still written), -EINVAL (p is not a leaks profile: nothing written) or
 * -EIO. */
int out_growthplot__write(FILE *f, const struct profile *p, size_t top, const char *title);

/* The byte axis for values up to max: one binary unit for every label,
 * the largest that keeps the top at least 1, and round steps. */
struct byte_axis {
    double unit;                /* bytes per unit: 1, 1024, 1024^2... */
    const char *name;           /* "B", "KiB", "MiB", "GiB", "TiB" */
    double step;                /* units between labels: 1, 2, 2.5 or 5 times a power of ten */
    int steps;                  /* the top, step * steps units, is at least max */
    int decimals;               /* the labels' */
};
void out_growthplot__axis(uint64_t max, struct byte_axis *a);
/* The label of the axis' i-th step ("0 MiB", "0.2 MiB"...) into buf. */
void out_growthplot__label(const struct byte_axis *a, int i, char *buf, size_t size);

#endif
