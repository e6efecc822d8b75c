/*
 * tasks.h - asyncio task frames: while a task runs, its coroutine runs
 * under one extra trampoline per task, named "py::[task NAME]" in the perf
 * map: the task's own, and above it those of the tasks awaiting it (await
 * task, gather, TaskGroup), outermost first.  pymerge shows them as
 * "[task NAME]" frames in the python and mixed views.
 *
 * The eval hook looks for tasks only once asyncio has been imported, and
 * only when a coroutine frame starts or resumes.
 */
#ifndef PYPERFMAP_TASKS_H
#define PYPERFMAP_TASKS_H

#include <Python.h>

/* The most task frames put above one coroutine; outer awaiters are left
 * out. */
#define TASKS_MAX_DEPTH 8

/* Whether code is the body of the module asyncio.tasks: asyncio is being
 * imported, and the hook should look for tasks from now on. */
int tasks__seen_asyncio(PyObject *code);

/* Whether asyncio.tasks is imported already (in sys.modules). */
int tasks__imported(void);

/* For the frame of coroutine gen, about to start or resume (not thrown
 * into: no exception may be set): when gen is the coroutine of the task
 * that runs now, points *frames at the trampolines of that task and of the
 * tasks awaiting it, outermost first, and returns how many; otherwise
 * returns 0.  The array is valid until Python code runs next.  Needs the
 * GIL; leaves no exception set. */
int tasks__frames(PyObject *gen, void *const **frames);

#endif
