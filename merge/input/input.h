/*
 * input.h - where a profile comes from: a recording run through the whole
 * pipeline, a folded file or a pprof profile written by pymerge or any
 * other tool.
 */
#ifndef PYMERGE_INPUT_H
#define PYMERGE_INPUT_H

#include "pipeline.h"
#include "profile.h"

enum input_kind { INPUT_AUTO, INPUT_PERF, INPUT_FOLDED, INPUT_PPROF };

/* Loads path into a new profile, *out.  INPUT_AUTO reads a file that starts
 * with perf's magic as a recording, one that starts like gzip or a
 * profile.proto message as pprof, text whose first line is "STACK COUNT"
 * as folded, and refuses anything else; standard input and a folder
 * (pyperf-record -o DIR: its perf.data) are read as recordings.
 * Returns 0, or a negative errno after printing what is wrong. */
int input__load(struct profile **out, const char *path, enum input_kind kind,
                const struct pipeline_opts *o);

/* What a file is from its first bytes head[0..len) (INPUT_HEAD of them, or
 * the whole file if shorter), as INPUT_AUTO tells it; INPUT_AUTO: none. */
#define INPUT_HEAD 4096
enum input_kind input__kind_of(const uint8_t *head, size_t len);

#endif
