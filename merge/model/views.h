/*
 * views.h - which frames of a symbolized stack each view keeps.
 *
 *   native   every frame, named as perf names it;
 *   mixed    Python frames shown readably, with the interpreter plumbing
 *            next to them removed; native and kernel frames stay;
 *   python   Python frames only, plus the innermost native frame as leaf.
 */
#ifndef PYMERGE_VIEWS_H
#define PYMERGE_VIEWS_H

#include "symbols.h"

#include <stddef.h>
#include <stdint.h>

enum view { VIEW_NATIVE, VIEW_MIXED, VIEW_PYTHON };

struct view_opts {
    enum view view;
    int native_leaf;        /* python view: keep the innermost native frame */
};

/* Filter in[0..n) (leaf first) into out (room for n); returns the count. */
size_t view__apply(const struct view_opts *o, const struct symbols *sy, const uint32_t *in,
                   size_t n, uint32_t *out);

#endif
