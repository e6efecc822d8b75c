/*
 * tasks_cpython.h - the private layouts of CPython's asyncio accelerator
 * (Modules/_asynciomodule.c) that tasks.c reads, for 3.8 to 3.13: the one
 * place that knows them.
 *
 * Reading them is what keeps a task step cheap: the accelerator's Python
 * accessors (Future._callbacks) build a new list on every call.
 */
#ifndef PYPERFMAP_TASKS_CPYTHON_H
#define PYPERFMAP_TASKS_CPYTHON_H

#include <Python.h>

/* Every FutureObj (3.7 to 3.14) starts with these four fields after the
 * object header; a Task, and a Python subclass of the C Future
 * (_GatheringFuture), start the same way. */
struct c_future_head {
    PyObject_HEAD
    PyObject *loop;
    PyObject *callback0;     /* the first done-callback, or NULL */
    PyObject *context0;
    PyObject *callbacks;     /* list of (callback, context) tuples, or NULL */
};

/* 3.8 to 3.11: the C Task's wake-up callback is an object of this type
 * ("TaskWakeupMethWrapper") holding its task; 3.12 made it a PyCFunction
 * bound to the task, which the generic rule (tasks.c) follows. */
#if PY_VERSION_HEX < 0x030C0000
#  define TASK_WAKEUP_WRAPPER_NAME "TaskWakeupMethWrapper"
struct task_wakeup_wrapper {
    PyObject_HEAD
    PyObject *task;
};
#endif

/* Whether the weak reference wr still refers to obj (not only to some
 * object at the same address).  Read as PyWeakref_GET_OBJECT reads it
 * (the refcount check covers a referent whose weak references the
 * trashcan has not cleared yet); 3.13 deprecates that macro, and its
 * PyWeakref_GetRef is a call that takes and drops a reference, a third of
 * the task frames' cost there.  The free-threaded build must lock: it asks. */
static inline int weak_is(PyObject *wr, PyObject *obj)
{
#ifdef Py_GIL_DISABLED
    PyObject *o;
    if (PyWeakref_GetRef(wr, &o) <= 0)
        return 0;
    Py_DECREF(o);
    return o == obj;
#else
    PyObject *o = ((PyWeakReference *)wr)->wr_object;
    return o == obj && Py_REFCNT(o) > 0;
#endif
}

/* getattr(obj, name) or NULL, never leaving an exception set. */
static inline PyObject *optional_attr(PyObject *obj, PyObject *name)
{
    PyObject *v = NULL;
#if PY_VERSION_HEX >= 0x030D0000
    int r = PyObject_GetOptionalAttr(obj, name, &v);
#else
    int r = _PyObject_LookupAttr(obj, name, &v);
#endif
    if (r < 0)
        PyErr_Clear();
    return v;
}

#endif
