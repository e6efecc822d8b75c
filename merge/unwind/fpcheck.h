/*
 * fpcheck.h - does a frame-pointer recording stop inside code built without
 * frame pointers?
 *
 * `perf record -g` walks %rbp from frame record to frame record.  Code
 * built without frame pointers uses %rbp for anything, so a walk that
 * meets such code stops there or goes on through garbage: an interpreter
 * built that way (most CPythons before 3.15) gives no Python frames at
 * all, and the profile says only that many frames are unknown.  This
 * check names the file to blame.
 *
 * A chain stops at its outermost user frame that is code (unwind_dwarf__
 * keeps_fp says KEPT or NONE); what lies beyond is unmapped or data.  It
 * stops INSIDE code without frame pointers when that frame's function
 * keeps none (NONE) and the walk did not reach it through a frame record:
 * it is the sample's first user frame, or the frame before it keeps none
 * either (or is garbage).  A chain that reaches a thread's start the right
 * way also ends in code without frame pointers (glibc's
 * __libc_start_call_main, start_thread), but from a frame that keeps one:
 * those chains are complete.
 */
#ifndef PYMERGE_FPCHECK_H
#define PYMERGE_FPCHECK_H

#include "session.h"
#include "unwind.h"
#include "unwind_dwarf.h"

#include <stddef.h>
#include <stdint.h>

struct fpcheck_stops {
    const struct dso *dso;
    uint64_t chains;
};

struct fpcheck {
    uint64_t chains;                /* samples with user frames */
    struct fpcheck_stops *stops;    /* by dso id: the chains that stop inside it */
    size_t cap_stops;
};

void fpcheck__init(struct fpcheck *c);
void fpcheck__exit(struct fpcheck *c);

/* One frame-pointer sample's frames, leaf first, as unwind_fp gives them;
 * lookup and ctx as for unwind_dwarf__keeps_fp, whose CFI cache u holds. */
void fpcheck__sample(struct fpcheck *c, struct unwind_dwarf *u, unwind_lookup_fn lookup,
                     void *ctx, const struct uframe *f, size_t n);

/* The file in which more than half of the chains stop, with that share in
 * *share; NULL when there is none. */
const struct dso *fpcheck__culprit(const struct fpcheck *c, double *share);

#endif
