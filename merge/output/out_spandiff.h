/*
 * out_spandiff.h - the report of `pymerge diff --runs` (spandiff.h): an
 * aligned text table (diff's --format table) and a summary fit for a
 * pull request comment (--format markdown, writer.c's row).
 */
#ifndef PYMERGE_OUT_SPANDIFF_H
#define PYMERGE_OUT_SPANDIFF_H

#include "profile.h"
#include "spandiff.h"

#include <stdio.h>

/* Every span: its means, change, Holm p and verdict; under each changed
 * one its top `top` grown functions.  0 or -EIO. */
int out_spandiff__table(FILE *f, const struct spandiff *d, size_t top);

/* The changed spans, each with its top `top` grown functions and a link to
 * its flame graph (sd_span.graph, a file beside the summary), then the
 * unchanged and untested ones folded.  0 or -EIO. */
int out_spandiff__markdown(FILE *f, const struct spandiff *d, size_t top);

/* One recording's span rows (spanrows.h) as a markdown table: count, mean
 * and p50/p90/p99 wall time, CPU time.  0, -ENODATA (no spans) or -EIO. */
int out_spandiff__rows(FILE *f, const struct profile *p);

#endif
