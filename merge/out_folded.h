/* out_folded.h - stacks -> folded text ("root;...;leaf WEIGHT" per line). */
#ifndef PYMERGE_OUT_FOLDED_H
#define PYMERGE_OUT_FOLDED_H

#include "stacks.h"
#include "symbols.h"

#include <stdio.h>

struct folded_opts {
    int display_names;      /* mixed/python views: readable Python names */
    int annotate;           /* _[k] on kernel frames, _[j] on Python and JIT */
};

/* Write every stack, sorted bytewise as stackcollapse-perf.pl sorts them;
 * stacks that print the same are merged.  Returns 0, or -1 on a write error. */
int out_folded__write(FILE *f, const struct stacks *st, const struct symbols *sy,
                      const struct folded_opts *o);

#endif
