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
 */
#ifndef PYPERFMAP_ARENA_H
#define PYPERFMAP_ARENA_H

/*
 * Returns a fresh trampoline, or NULL with errno set when no arena could be
 * mapped.  When the trampoline opens a new arena, *new_arena is set to that
 * arena's base (its first slot is reserved for the perf-map marker, see
 * trampoline.h), otherwise to NULL.  Not thread-safe: the caller serialises.
 */
void *arena_take(void **new_arena);

#endif
