/*
 * out_speedscope.h - folded stacks -> speedscope's file format
 * (https://www.speedscope.app/file-format-schema.json).
 *
 * One "sampled" profile per thread: the first frame of each line names the
 * thread (pymerge --tid roots are "comm-PID/TID"), the rest is its stack.
 * Frames are shared between profiles; annotations (_[k], _[j], _[i]) are
 * dropped from names.
 */
#ifndef PYMERGE_OUT_SPEEDSCOPE_H
#define PYMERGE_OUT_SPEEDSCOPE_H

#include "out_svg.h"

/* Lines sorted and distinct, as for out_svg__write.  unit: "none" for
 * sample counts, "nanoseconds" for cpu-clock periods.  Returns 0 or -1. */
int out_speedscope__write(FILE *f, const struct folded_line *lines, size_t n,
                          const char *name, const char *unit);

#endif
