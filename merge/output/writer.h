/*
 * writer.h - the output formats: each reads a profile and writes a file.
 * A new format is a new out_*.c and one entry in writer.c's table.
 */
#ifndef PYMERGE_WRITER_H
#define PYMERGE_WRITER_H

#include "live.h"
#include "out_svg.h"
#include "profile.h"
#include "spandiff.h"

#include <stdio.h>

struct write_opts {
    const char *name;           /* the input, for formats that show it */
    int annotate;               /* folded: flamegraph.pl's _[k] and _[j] */
    size_t top;                 /* table: rows */
    struct svg_opts svg;
    struct live *live;          /* live: the state its snapshots kept */
    const struct spandiff *spandiff;    /* markdown: diff --runs's comparison (then
                                         * the profile, NULL, is not read) */
};

struct writer {
    const char *name;           /* --format NAME */
    int keep_time;              /* needs the samples in time order */
    /* 0, -ENODATA (nothing to show; the file is still written), -EIO */
    int (*write)(FILE *f, const struct profile *p, const struct write_opts *o);
};

/* The writer called name, or NULL. */
const struct writer *writer__find(const char *name);
/* The i-th writer of the table, or NULL past its end: to list them. */
const struct writer *writer__at(size_t i);

/* Whether any stack of p weighs something.  The rule of every format:
 * a profile without one is no output at all (an error, with nothing
 * written), not an empty file that looks like a result. */
int writer__has_stacks(const struct profile *p);

#endif
