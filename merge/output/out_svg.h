/*
 * out_svg.h - a profile -> one self-contained, interactive flame graph.
 *
 * Frames are coloured by kind (Python green, native red, kernel orange,
 * bracketed markers grey), or, for a differential graph, by how their share
 * of the total changed from a base profile.
 */
#ifndef PYMERGE_OUT_SVG_H
#define PYMERGE_OUT_SVG_H

#include "profile.h"

#include <stdio.h>

struct svg_opts {
    const char *title;       /* default "Flame Graph" (or "Icicle Graph") */
    const char *subtitle;    /* optional second line, e.g. the command */
    const char *countname;   /* unit in tooltips, default the weight type's name */
    int width;               /* pixels, default 1200 */
    int inverted;            /* icicle: root at the top */
    double minwidth;         /* frames narrower than this many pixels are omitted */
    /* A differential graph: frames are coloured by how their share of the
     * total changed from base (red grew, blue shrank).  NULL: by kind. */
    const struct profile *base;
};

/* Writes the SVG of p's weight.  Returns 0; -ENODATA when there is nothing
 * to draw (an error SVG is still written, as flamegraph.pl does); -EIO when
 * the write fails. */
int out_svg__write(FILE *f, const struct profile *p, const struct svg_opts *o);

#endif
