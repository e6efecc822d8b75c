/*
 * waits.h - what an off-CPU thread waits on, told by the native functions
 * it waits in: the python view names the wait in its leaf
 * ("[off-cpu: lock]"), where the mixed view shows those functions.
 */
#ifndef PYMERGE_WAITS_H
#define PYMERGE_WAITS_H

#include <stddef.h>
#include <stdint.h>

enum wait_kind {
    WAIT_NONE,
    WAIT_SLEEPING,      /* the "[off-cpu: S]" leaf, a wait not named yet */
    WAIT_LOCK, WAIT_SLEEP, WAIT_SELECT, WAIT_POLL, WAIT_EPOLL,
    WAIT_READ, WAIT_WRITE, WAIT_ACCEPT, WAIT_CONNECT, WAIT_CHILD,
    WAIT_KINDS
};

/* The wait a frame named name stands for (user and kernel frames, and
 * the leaf marker), or WAIT_NONE. */
enum wait_kind waits__kind(const char *name, int native);

/* The leaf that names a wait: "[off-cpu: lock]". */
const char *waits__leaf(enum wait_kind k);

struct symbols;

/* fr[0..n) (leaf first): an "[off-cpu: S]" leaf replaced by the wait
 * that the native frames between it and the innermost Python frame name,
 * the rootmost of them first (lock_PyThread_acquire_lock before the futex
 * it waits in). */
void waits__name_leaf(const struct symbols *sy, uint32_t *fr, size_t n);

#endif
