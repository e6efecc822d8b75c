/*
 * growth.h - how the bytes still live grew over a leaks recording, for the
 * stacks holding the most at its end: the series behind the growth table
 * (out_growth.c) and plot (out_growthplot.c).
 *
 * Each block of a leaks recording is a timed record (allocated at time,
 * freed at end, its bytes as weight; a block never freed ends after the
 * recording).  The live bytes of a stack at t are those of its blocks with
 * time <= t < end: a steady leak grows, a cache fills and stays flat, what
 * is freed drops back.
 */
#ifndef PYMERGE_GROWTH_H
#define PYMERGE_GROWTH_H

#include "profile.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct growth {
    size_t n;               /* stacks shown, most live bytes at the end first */
    size_t *sample;         /* each one's profile__sample index */
    size_t points;          /* times per stack */
    uint64_t t0;            /* the first allocation */
    uint64_t *at;           /* the times, evenly spaced after t0, the last the end */
    uint64_t *live;         /* live[r * points + k]: stack r's live bytes at at[k] */
};

/* Whether p is a leaks profile weighted by live bytes, with time kept. */
int growth__applies(const struct profile *p);

/* The series of p's top stacks (at most top; those with live bytes at the
 * end) at points times.  g->n is 0 when none has any. */
void growth__init(struct growth *g, const struct profile *p, size_t top, size_t points);
void growth__exit(struct growth *g);

/* A stack as a folded line names it, thread label then root to leaf, each
 * name written through put (plain, or escaped for XML). */
void growth__put_stack(FILE *f, const struct profile *p, size_t sample,
                       void (*put)(FILE *f, const char *s, size_t len));

#endif
