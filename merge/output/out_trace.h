/*
 * out_trace.h - a profile's spans -> Chrome trace-event JSON, which
 * Perfetto (ui.perfetto.dev) and chrome://tracing open.
 *
 * Every span the profile kept in time order (a Python call of a calls
 * recording, a system call, an off-CPU wait) is one complete event ("ph":
 * "X", ts and dur in microseconds from the first span) on its thread's
 * track (pid, tid), named after its stack's leaf frame.  Spans of one
 * thread nest as the calls did, callers first.  Processes and threads are
 * named by metadata events.  Samples at one instant (CPU samples) are not
 * spans and are left out.  pyperfmap.span's spans (spanrows.h) are complete
 * events too, on tracks of their own (a tid above any real one), with their
 * labels as args.
 */
#ifndef PYMERGE_OUT_TRACE_H
#define PYMERGE_OUT_TRACE_H

#include "profile.h"

#include <stdio.h>

/* name: the input, recorded in otherData.  Returns 0, -ENODATA (no spans
 * of either kind; an empty trace is written) or -EIO. */
int out_trace__write(FILE *f, const struct profile *p, const char *name);

#endif
