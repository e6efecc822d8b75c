/*
 * calls.h - entry and return events -> per-thread call stacks -> spans in
 * the profile (pyperf-record --mode calls).
 *
 * Each thread has a stack of open calls.  An entry pushes a call (a Python
 * function, named by its trampoline's address, or a system call); a return
 * pops the innermost open call with the same key.  Calls above it whose
 * returns were lost close at the same time, so spans always nest.  A
 * closed call becomes one span of the profile at the stack of its callers:
 *
 *   count       1 for a call, 0 for a resumption
 *   wall-ns     its exclusive time: the span minus its callees' spans (so
 *               each stack's wall-ns is the time its thread spent there,
 *               and a flame graph's widths are inclusive times)
 *   latency-ns  its inclusive time, from its entry to its return
 *   resumes     1 for a resumption of a generator or coroutine, else 0
 *
 * A generator called once and resumed N times is one call and N
 * resumptions, N + 1 spans.  An entry that is neither (CPython 3.11+
 * creating a generator, libpyperfmap/markers.h) makes no span: its time is
 * its caller's.
 *
 * Filters (pymerge-side, on the event stream): with `only`, a Python call
 * whose name or file does not match is left out and its time is its
 * caller's; with `inside`, only calls made while a call that matches it is
 * open (that call included) are kept.  A system call is kept when its
 * caller is (or, unfiltered, always).
 */
#ifndef PYMERGE_CALLS_H
#define PYMERGE_CALLS_H

#include "pentry.h"
#include "profile.h"

#include <regex.h>
#include <stdint.h>

/* Which value is which in a calls profile. */
enum { CALLS_COUNT, CALLS_WALL, CALLS_LATENCY, CALLS_RESUMES };

/* What an entry is: pyperfmap's call__entry kinds (libpyperfmap/markers.h,
 * in its order), or a system call. */
enum calls_kind { CALLS_CALL, CALLS_RESUME, CALLS_NO_CALL, CALLS_SYSCALL };

struct calls_filter {
    const regex_t *only, *inside;   /* NULL: no such filter */
};

struct calls_stats {
    uint64_t unmatched;         /* returns without an open entry (began before the recording) */
    uint64_t lost;              /* entries whose return never came (closed with an outer one) */
    uint64_t unfinished;        /* calls still open when their thread or the recording ended */
};

struct calls;

/* Stacks are interned in p; each closed call is handed to put(ctx). */
struct calls *calls__new(struct profile *p, pentry_fn put, void *ctx);
void calls__delete(struct calls *c);   /* accepts NULL */
/* Sets the filters (none by default), before the first event. */
void calls__set_filter(struct calls *c, const struct calls_filter *f);

/* An entry of kind at time on tid: key says what is called (entries and
 * returns of one thing share it), frame names it, thread is the profile's
 * thread. */
void calls__enter(struct calls *c, uint32_t tid, uint32_t thread, uint64_t time, uint64_t key,
                  uint32_t frame, enum calls_kind kind);
void calls__return(struct calls *c, uint32_t tid, uint64_t time, uint64_t key);

/* Closes the calls tid still has open when it exits, at time. */
void calls__exit(struct calls *c, uint32_t tid, uint64_t time);

/* Closes the calls still open at end (the end of the recording). */
void calls__finish(struct calls *c, uint64_t end);

const struct calls_stats *calls__stats(const struct calls *c);

#endif
