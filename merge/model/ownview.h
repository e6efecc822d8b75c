/*
 * ownview.h - pyperfmap's own frames in the user's views (mixed, python).
 *
 * The frames the user's code only passes through (the eval hook, the
 * allocation samplers, the malloc interposer) go: their time is the
 * caller's, and an allocation's stack ends at the function that
 * allocated.  pyperfmap's own work (a function's first call: its
 * trampoline, its perf-map line) becomes one "[pyperfmap]" frame, with
 * everything it called, under the Python frame that was calling.
 */
#ifndef PYMERGE_OWNVIEW_H
#define PYMERGE_OWNVIEW_H

#include "symbols.h"

#include <stddef.h>
#include <stdint.h>

/* fr[0..n) (leaf first), in place; returns the new count. */
size_t ownview__apply(const struct symbols *sy, uint32_t *fr, size_t n);

#endif
