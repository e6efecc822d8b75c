/*
 * in_folded.h - folded text -> a profile: pymerge's own output, or any
 * folded file (flamegraph.pl's stackcollapse-*, inferno, py-spy -f raw...).
 *
 * Each non-empty line is "frame;frame;... COUNT", root first.  The first
 * frame names the thread; flamegraph.pl's annotations give the kinds
 * (`_[k]` kernel, `_[j]` Python or JIT, `_[i]` inlined native code) and are
 * taken off the names.  Folded text does not say what its numbers measure:
 * the profile's one value type is what the caller set (pymerge --weight
 * wall-ns), "samples" by default.
 */
#ifndef PYMERGE_IN_FOLDED_H
#define PYMERGE_IN_FOLDED_H

#include "profile.h"

#include <stddef.h>

/* Adds text[0..len) to p (an empty profile).  Returns 0, or -EINVAL after
 * printing "pymerge: NAME: line N: what is wrong". */
int folded__parse(struct profile *p, const char *text, size_t len, const char *name);

#endif
