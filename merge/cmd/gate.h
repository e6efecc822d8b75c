/*
 * gate.h - `pymerge diff --runs N BASE... NEW...`: several recordings a
 * side compared span by span (spandiff.h), and the CI gate's verdict.
 */
#ifndef PYMERGE_GATE_H
#define PYMERGE_GATE_H

#include "input.h"
#include "spandiff.h"

struct gate_in {
    const char *const *paths;   /* runs[0] base runs, then runs[1] new ones */
    size_t runs[2];
    enum input_kind kind;
    const struct pipeline_opts *o;
};

/* Loads every run, one at a time, into the comparison *out.  0, or a
 * negative errno after saying which input is wrong. */
int gate__compare(struct spandiff **out, const struct gate_in *g, const struct spandiff_opts *so);

/* Says, one line each, every span that got significantly slower: its
 * change, the runs' means, the p-values and its most grown function.
 * Returns how many. */
size_t gate__slower(const struct spandiff *d);

#endif
