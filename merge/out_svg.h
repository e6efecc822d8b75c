/*
 * out_svg.h - folded stacks -> one self-contained, interactive flame graph.
 *
 * The input is what folded text holds: one line per distinct stack, frames
 * root first separated by ';', sorted bytewise, each with its weight.  Frame
 * names may carry flamegraph.pl's annotations, which choose the palette and
 * are not shown: `_[k]` kernel, `_[j]` Python (and JIT), `_[i]` inlined;
 * anything else is native code.
 */
#ifndef PYMERGE_OUT_SVG_H
#define PYMERGE_OUT_SVG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct folded_line {
    const char *text;   /* "root;...;leaf", no weight */
    uint64_t weight;
};

struct folded;

struct svg_opts {
    const char *title;       /* default "Flame Graph" (or "Icicle Graph") */
    const char *subtitle;    /* optional second line, e.g. the command */
    const char *countname;   /* unit in tooltips, default "samples" */
    int width;               /* pixels, default 1200 */
    int inverted;            /* icicle: root at the top */
    double minwidth;         /* frames narrower than this many pixels are omitted */
    /* A differential graph: frames are coloured by how their share of the
     * total changed from base (red grew, blue shrank).  NULL: by kind. */
    const struct folded *base;
};

/* Writes the SVG.  Lines must be sorted and distinct (as pymerge's folded
 * output is).  Returns 0, or -1 when there is nothing to draw (an error SVG is
 * still written, as flamegraph.pl does) or the write fails. */
int out_svg__write(FILE *f, const struct folded_line *lines, size_t n, const struct svg_opts *o);

#endif
