/* out_folded.h - a profile -> folded text ("root;...;leaf WEIGHT" per line). */
#ifndef PYMERGE_OUT_FOLDED_H
#define PYMERGE_OUT_FOLDED_H

#include "profile.h"

#include <stdio.h>

/*
 * Writes every (thread, stack) with its weight, the thread's root label
 * first, sorted bytewise as stackcollapse-perf.pl sorts them; stacks that
 * print the same are merged and stacks of weight 0 left out.  annotate:
 * flamegraph.pl's _[k] on kernel frames and _[j] on Python and JIT frames.
 * Returns 0, or -EIO when the write fails.
 */
int out_folded__write(FILE *f, const struct profile *p, int annotate);

#endif
