/*
 * out_speedscope.h - a profile -> speedscope's file format
 * (https://www.speedscope.app/file-format-schema.json).
 *
 * One "sampled" profile per thread.  When the profile kept time order its
 * samples are listed as they happened (speedscope's Time Order view), with
 * runs of one stack merged; otherwise one entry per distinct stack.
 * Weights are in the unit of the profile's weight type.  pyperfmap.span's
 * spans (spanrows.h) follow as "evented" profiles, one per span track, in
 * nanoseconds from the first span.
 */
#ifndef PYMERGE_OUT_SPEEDSCOPE_H
#define PYMERGE_OUT_SPEEDSCOPE_H

#include "profile.h"

#include <stdio.h>

/* name: what the file is called in the app.  Returns 0 or -EIO. */
int out_speedscope__write(FILE *f, const struct profile *p, const char *name);

#endif
