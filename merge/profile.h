/*
 * profile.h - where folded stacks come from: a recording run through the
 * whole pipeline, or a folded file written by pymerge or any other tool.
 */
#ifndef PYMERGE_PROFILE_H
#define PYMERGE_PROFILE_H

#include "folded.h"
#include "pipeline.h"

enum input_kind { INPUT_AUTO, INPUT_PERF, INPUT_FOLDED };

/* Loads path into fd.  INPUT_AUTO reads a file that starts with perf's
 * magic as a recording and anything else as folded text.  Returns the exit
 * status: 0, or 2 after printing what is wrong. */
int profile__load(struct folded *fd, const char *path, enum input_kind kind,
                  const struct pipeline_opts *o);

#endif
