/*
 * arena.h - executable memory for trampolines.
 *
 * Trampolines are handed out from arenas of PYPERFMAP_ARENA_SIZE bytes,
 * aligned to their size.  An arena is filled with copies of the template
 * while it is writable, then made read+execute before the first slot is
 * handed out, so no page is ever writable and executable at once.  Arenas
 * are never unmapped: a trampoline may be on some thread's stack at any
 * moment (that is how CPython 3.12 got its use-after-free), and each one
 * costs only PYPERFMAP_TRAMPOLINE_SIZE bytes.
 *
 * Each arena is followed by a writable table of its trampolines' path keys
 * (trampoline.h), one 64-bit word per slot: the path hook reads a key with
 * a few instructions from the trampoline's address alone, and keys are
 * written when a trampoline is named, long after the arena went R+X.
 */
#ifndef PYPERFMAP_ARENA_H
#define PYPERFMAP_ARENA_H

#include <stdint.h>

#include "trampoline.h"

#define ARENA_KEYS_SIZE (PYPERFMAP_ARENA_SIZE / PYPERFMAP_TRAMPOLINE_SIZE * 8)

/* The key slot of trampoline t (which arena__take returned). */
static inline uint64_t *arena__key(const void *t)
{
    uintptr_t a = (uintptr_t)t, off = a & (PYPERFMAP_ARENA_SIZE - 1);
    return (uint64_t *)(a - off + PYPERFMAP_ARENA_SIZE + off / PYPERFMAP_TRAMPOLINE_SIZE * 8);
}

/*
 * Returns a fresh trampoline, or NULL with errno set when no arena could be
 * mapped.  When the trampoline opens a new arena, *new_arena is set to that
 * arena's base (its first slot is reserved for the perf-map marker, see
 * trampoline.h), otherwise to NULL.  Not thread-safe: the caller serialises.
 */
void *arena__take(void **new_arena);

#endif
