/*
 * live.h - pymerge --format live: what a recording shows while it is read,
 * for pyperf-top.  Every --interval of sample time (and once at the end of
 * the input) pymerge writes on standard output the weight each (thread,
 * stack) gained since the last snapshot, then flushes.  One line each,
 * fields split by one space:
 *
 *   h WEIGHT                 once: what the weights are (cpu-ns, wall-ns...)
 *   f ID KIND NAME           a frame first used; KIND p python, n native,
 *                            k kernel, j jit, u unknown, r marker
 *   t ID PID TID COMM        a thread first used
 *   s ID FRAMES              a stack first used: three views, root first,
 *                            frame ids split by '|': native | mixed | python
 *   w THREAD STACK WEIGHT    weight gained in the interval
 *   i TIME                   end of a snapshot (perf's clock, ns)
 *   x TIME                   end of the input: the last snapshot
 *
 * The three views of a stack are computed in one pass (live__views), so a
 * viewer switches views without reading the recording again.
 */
#ifndef PYMERGE_LIVE_H
#define PYMERGE_LIVE_H

#include "profile.h"
#include "symbols.h"
#include "views.h"

#include <stdint.h>
#include <stdio.h>

/* Room live__views needs for a stack of n frames. */
#define LIVE_ROOM(n) (3 * (n) + 2)

struct live;

struct live *live__new(FILE *out, uint64_t interval_ns);
void live__delete(struct live *l);   /* accepts NULL */

/* The three views of in[0..n) (leaf first) into out, leaf first:
 * python, a separator, mixed, a separator, native.  Frames are named by
 * their display name (the pipeline's mixed naming), except in the native
 * part, which gets frames named as perf names them.  Returns the count. */
size_t live__views(struct symbols *sy, const struct view_opts *o, const uint32_t *in, size_t n,
                   uint32_t *out);

/* At each sample's time: writes a snapshot when an interval has passed
 * since the last.  Returns 0, or -EIO when the output is gone. */
int live__tick(struct live *l, const struct profile *p, uint64_t time);

/* The writer: the last snapshot, ended by an x line. */
int live__write(FILE *f, const struct profile *p, struct live *l);

#endif
