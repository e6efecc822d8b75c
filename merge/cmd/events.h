/* events.h - `pymerge --events FILE`: what a recording holds. */
#ifndef PYMERGE_EVENTS_H
#define PYMERGE_EVENTS_H

#include <stdio.h>

/*
 * Lists each event of the recording at path: its name, how many samples
 * and lost records it has, and for tracepoints (uprobes too) the name and
 * type of each field, numeric ones marked for --weight.  Returns 0, or a
 * negative errno after printing what is wrong.
 */
int events__list(const char *path, FILE *out);

#endif
