/*
 * merge.h - `pymerge merge A B C ...`: many profiles (recordings, folded
 * files, pprof files; one per host, per CI run...) summed into one.
 */
#ifndef PYMERGE_MERGE_H
#define PYMERGE_MERGE_H

#include "input.h"
#include "profile.h"

struct merge_input {
    const char *path;
    const char *label;          /* "key=value", or NULL: input=PATH */
};

struct merge_opts {
    enum input_kind kind;       /* INPUT_AUTO: each input's own */
    const struct pipeline_opts *o;
    int label_frames;           /* also put "[key=value,...]" under each root */
};

/*
 * Loads the inputs one at a time and adds each into *out before the next
 * is read, so memory grows with the distinct stacks, not with the number
 * of inputs.  Every thread of an input is tagged with its label, before
 * the tags it already had (a merged pprof merged again).  The value types
 * are the first input's (only the --weight one when given) and every
 * input must have them.  Returns 0, or a negative errno after printing
 * "pymerge: FILE: what is wrong".
 */
int merge__run(struct profile **out, const struct merge_input *in, size_t n,
               const struct merge_opts *mo);

#endif
