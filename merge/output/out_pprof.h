/* out_pprof.h - a profile -> pprof (gzip'd profile.proto). */
#ifndef PYMERGE_OUT_PPROF_H
#define PYMERGE_OUT_PPROF_H

#include "profile.h"

#include <stdio.h>

/*
 * Writes every (thread, stack) as one pprof sample, leaf first, with one
 * value per value type (integers as the model holds them; a "-ns" type in
 * nanoseconds is named without the suffix, pprof's convention: cpu-ns ->
 * cpu) and labels pid, tid (when known), thread_name (the comm) and the
 * thread's tags (key=value each, from pymerge merge).  Each frame is one
 * function (the Python file as its filename) and one location; a native or
 * kernel frame's location names the mapping of its DSO, one per DSO, with
 * the build id the profile knows.  time_nanos and duration_nanos come from
 * the recording; the
 * weight type is the default sample type.  Returns 0, or -EIO when the
 * write fails.
 */
int out_pprof__write(FILE *f, const struct profile *p);

/* The pprof sample type name of a model value type, into buf (at least
 * as large as the name plus one). */
const char *out_pprof__type_name(const struct value_type *t, char *buf, size_t size);

#endif
