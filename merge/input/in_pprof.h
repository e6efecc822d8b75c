/*
 * in_pprof.h - pprof (profile.proto, gzip'd or not) -> a profile: what go
 * tool pprof, Go's runtime/pprof, Pyroscope's exports, austin's converters
 * and pymerge --format pprof write.
 *
 * Each location's lines become frames (inlined ones included, caller
 * last); a frame whose function's file ends in ".py" is a Python frame,
 * any other a native one.  Labels pid, tid and thread_name name the thread;
 * without them every sample belongs to one thread named after the main
 * mapping's file (or "pprof").  Sample types keep their names, except that
 * a nanoseconds type gets pymerge's "-ns" back (cpu -> cpu-ns); the first
 * PROFILE_MAX_VALUES are kept, and the default sample type is the weight.
 */
#ifndef PYMERGE_IN_PPROF_H
#define PYMERGE_IN_PPROF_H

#include "profile.h"

#include <stddef.h>
#include <stdint.h>

/* Adds data[0..len) to p (an empty profile).  Returns 0, or -EINVAL after
 * printing "pymerge: NAME: what is wrong" (one line). */
int pprof_in__parse(struct profile *p, const uint8_t *data, size_t len, const char *name);

/* Does data start like gzip (what pprof files are)? */
int pprof_in__is_gzip(const uint8_t *data, size_t len);

#endif
