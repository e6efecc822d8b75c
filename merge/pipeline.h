/*
 * pipeline.h - one pass over a perf.data file:
 *   read (perfdata) -> state (session) -> unwind -> symbolize (symbols)
 *   -> view (views) -> aggregate (stacks) -> write (out_folded).
 */
#ifndef PYMERGE_PIPELINE_H
#define PYMERGE_PIPELINE_H

#include "views.h"

#include <stdio.h>

enum root_kind { ROOT_COMM, ROOT_PID, ROOT_TID };

struct pipeline_opts {
    struct view_opts view;
    enum root_kind root;        /* comm, comm-PID or comm-PID/TID */
    int no_kernel;              /* leave kernel frames out (before symbolizing them) */
    int weight_samples;         /* 1: count samples; 0: sum periods */
    int annotate;
    int verbose;
    const char *event;          /* NULL: the event of the first sample */
    const char *kallsyms;
    const char *map_dir;
};

/* Fold path into out.  Returns the exit status: 0, or 2 on bad input
 * (after printing "pymerge: FILE: offset N: what is wrong"). */
int pipeline__run(const char *path, const struct pipeline_opts *o, FILE *out);

#endif
