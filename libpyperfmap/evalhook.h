/*
 * evalhook.h - what module.c needs from CPython's internals.  evalhook.c
 * reads them through cpython/cpython.h, the one place that knows each
 * version's frame layout and internal names.
 */
#ifndef PYPERFMAP_EVALHOOK_H
#define PYPERFMAP_EVALHOOK_H

#include <Python.h>

enum evalhook_owner { EVALHOOK_DEFAULT, EVALHOOK_OURS, EVALHOOK_NOOP, EVALHOOK_OTHER };

/* Reserves the co_extra slot that caches each code object's trampoline.
 * Call once, with the GIL, from the module's init.  Returns 0, or -ENOSPC
 * when CPython has no slot left: then the hook must never be installed. */
int evalhook__init(void);

/* Who owns the main interpreter's eval-frame function right now. */
enum evalhook_owner evalhook__owner(void);

/* Installs our hook (EVALHOOK_OURS; with paths, the one that also keeps
 * each thread's call path, trampoline.h), the do-nothing hook used as the
 * benchmark floor (EVALHOOK_NOOP) or CPython's default evaluator. */
void evalhook__set(enum evalhook_owner owner, int paths);

/* Task frames for asyncio (tasks.h) on (the default) or off. */
void evalhook__task_frames(int on);

/* Whether our hook is installed with paths. */
int evalhook__paths(void);

/*
 * Called by the hook the first time a code object runs while enabled:
 * returns its new trampoline, or NULL to run it unprofiled.  Defined in
 * module.c.  The name is "py::<qualname>:<filename>" in UTF-8.
 */
void *pyperfmap__new_trampoline(const char *name, size_t len);

/* Appends a line, len bytes with its newline, to the line file of the perf
 * map (mapfile.h); after a failure, appends nothing more.  Defined in
 * module.c. */
void pyperfmap__add_lines(const char *line, size_t len);

/* Reports a failure (one warning per process) and makes
 * pyperfmap__new_trampoline return NULL from now on.  Defined in module.c. */
void pyperfmap__fail(const char *why);

/* How many times the hook took its slow path (a code object's first call
 * while enabled), for tests.  Read with the GIL. */
unsigned long evalhook__first_calls(void);

#endif
