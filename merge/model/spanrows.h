/*
 * spanrows.h - pyperfmap.span's spans summarised per name, as the profile
 * carries them for --format spans: how many, how long (wall time from
 * enter to exit), and the CPU and off-CPU time of the samples inside; and
 * each span itself, for the timelines (speedscope, trace).
 */
#ifndef PYMERGE_SPANROWS_H
#define PYMERGE_SPANROWS_H

#include <stddef.h>
#include <stdint.h>

struct span_row {
    char *name;
    uint64_t count, total_ns, p50_ns, p90_ns, p99_ns, max_ns;
    uint64_t cpu_ns, off_ns;    /* of the samples inside */
};

/* One span the filters kept, on a track of its own: the spans of one
 * thread, in lanes where they overlap without nesting (asyncio tasks
 * interleaved on one event loop), so that each track nests as a call
 * stack does. */
struct span_one {
    uint64_t begin, end;        /* perf's clock, ns */
    uint32_t pid, tid;
    const char *comm;           /* the profile's name of its thread, or NULL */
    uint32_t row;               /* its name's row */
    uint32_t track;             /* 0, 1, ...: one per thread and lane */
    uint32_t lane;              /* 0, or its lane on that thread */
    char *labels;               /* "key=value" lines, as recorded */
};

struct span_rows {
    struct span_row *rows;      /* by total wall time, longest first */
    size_t n;
    int has_cpu, has_off;       /* the recording measured them */
    struct span_one *spans;     /* as many as the rows count, by track, then */
    size_t n_spans;             /* begin time (a longer one first) */
    uint32_t n_tracks;
};

void span_rows__delete(struct span_rows *r);    /* accepts NULL */

#endif
