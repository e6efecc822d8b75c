/*
 * pentry.h - what a mode hands the profile: one sample, span or block.
 * Every value pymerge reads from perf.data enters the profile through one
 * function taking a struct pentry (modes__put), whether the sample was
 * plain, waited for stitching, closed a span or paired into a block.
 */
#ifndef PYMERGE_PENTRY_H
#define PYMERGE_PENTRY_H

#include <stdint.h>

struct pentry {
    uint32_t thread, stack;     /* profile ids */
    const uint64_t *v;          /* values added to (thread, stack), one per value type */
    /* Its place in time order, when the profile keeps one: [begin, end)
     * (begin == end: an instant), weighing v's weight value, or `weight`
     * with own_weight (a block's bytes whichever value is shown). */
    int timed;
    int own_weight;
    uint64_t begin, end, weight;
};

/* The door, for a stage that does not know the modes (calls.c). */
typedef void (*pentry_fn)(void *ctx, const struct pentry *e);

#endif
