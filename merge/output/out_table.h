/*
 * out_table.h - a profile's functions as an aligned text table, biggest
 * first: how many events ended in each (the profile's first value type:
 * samples, or calls in a calls recording) and the weight type's self and
 * total (functions.h).  In a calls recording the weight is wall-ns: self is
 * a function's exclusive time, total its inclusive time; and a column of
 * resumptions of generators and coroutines follows the calls.
 */
#ifndef PYMERGE_OUT_TABLE_H
#define PYMERGE_OUT_TABLE_H

#include "profile.h"

#include <stddef.h>
#include <stdio.h>

/* At most top rows.  Returns 0, -ENODATA (no functions; the header is
 * still written) or -EIO. */
int out_table__write(FILE *f, const struct profile *p, size_t top);

#endif
