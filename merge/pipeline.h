/*
 * pipeline.h - one pass over a perf.data file:
 *   read (perfdata) -> state (session) -> unwind -> symbolize (symbols)
 *   -> stitch or wait (stitch) -> view (views) -> the mode (modes.h, set
 *   up at the first sample) -> the profile model (profile), which the
 *   writers read.
 */
#ifndef PYMERGE_PIPELINE_H
#define PYMERGE_PIPELINE_H

#include "calls.h"
#include "live.h"
#include "profile.h"
#include "pyspans.h"
#include "views.h"

#include <stdio.h>

enum root_kind { ROOT_COMM, ROOT_PID, ROOT_TID };

struct pipeline_opts {
    struct view_opts view;
    enum root_kind root;        /* comm, comm-PID or comm-PID/TID */
    int no_kernel;              /* leave kernel frames out (before symbolizing them) */
    int no_stitch;              /* leave truncated DWARF stacks as they are (stitch.h) */
    uint64_t dwarf_copy;        /* unwind only this many bytes of each stack copy; 0: all */
    int mode;                   /* enum mode (modes.h); MODE_AUTO: from the events */
    const char *weight;         /* a value type's name; NULL: the mode's own */
    int at;                     /* enum at_kind (modes.h): leaks mode's moment */
    uint64_t at_ns;
    int keep_time;              /* keep samples in time order (speedscope) */
    int lines;                  /* name Python frames with their line (symbols__with_line) */
    int verbose;
    const char *event;          /* NULL: the event of the first sample */
    const char *kallsyms;
    const char *map_dir;
    struct calls_filter filter; /* calls recordings only */
    struct span_opts spans;     /* pyperfmap.span's spans (pyspans.h) */
    struct live *live;          /* --format live: snapshots while reading (live.h) */
};

/* Reads path into a new profile, *out.  Returns 0, or a negative errno
 * after printing "pymerge: FILE: offset N: what is wrong". */
int pipeline__run(const char *path, const struct pipeline_opts *o, struct profile **out);

#endif
