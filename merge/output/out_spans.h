/*
 * out_spans.h - pyperfmap.span's spans, one row per name (spanrows.h):
 * count; total, mean, p50, p90, p99 and max wall time; the CPU and
 * off-CPU time of the samples inside ("-" where the recording did not
 * measure it).  Times in milliseconds.  Longest total first.
 */
#ifndef PYMERGE_OUT_SPANS_H
#define PYMERGE_OUT_SPANS_H

#include "profile.h"

#include <stdio.h>

/* Returns 0, -ENODATA (no spans in the recording; nothing is written) or
 * -EIO. */
int out_spans__write(FILE *f, const struct profile *p);

#endif
