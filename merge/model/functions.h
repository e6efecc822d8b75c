/*
 * functions.h - a profile's values per function, by name: self (what the
 * stacks that end in it weigh) and total (what the stacks it is in weigh,
 * counted once per stack even when it recurses), for every value type.
 * What `diff` compares and `--format table` lists.
 */
#ifndef PYMERGE_FUNCTIONS_H
#define PYMERGE_FUNCTIONS_H

#include "intern.h"
#include "profile.h"

#include <stddef.h>
#include <stdint.h>

struct fsum {
    uint64_t self[PROFILE_MAX_VALUES], total[PROFILE_MAX_VALUES];
    double var_self, var_total;     /* of sampled estimates: their stacks' variances */
};

/*
 * Interns the name of every function of p in names (a thread's root label
 * is not a function) and returns its sums, indexed by name id, with *n
 * entries (intern__count(names) afterwards; names interned before and not
 * in p get zeros).  The caller frees the array.
 */
struct fsum *functions__sum(struct intern *names, const struct profile *p, size_t *n);

#endif
