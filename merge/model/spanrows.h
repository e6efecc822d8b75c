/*
 * spanrows.h - pyperfmap.span's spans summarised per name, as the profile
 * carries them for --format spans: how many, how long (wall time from
 * enter to exit), and the CPU and off-CPU time of the samples inside.
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

struct span_rows {
    struct span_row *rows;      /* by total wall time, longest first */
    size_t n;
    int has_cpu, has_off;       /* the recording measured them */
};

void span_rows__delete(struct span_rows *r);    /* accepts NULL */

#endif
