/*
 * tasks_cpython.h - the private layouts of CPython's asyncio accelerator
 * (Modules/_asynciomodule.c) that tasks.c reads, for 3.8 to 3.14: the
 * ones every version shares.  What differs by version (the wake-up
 * wrapper, the name of getattr-or-nothing) is in cpython/cpython.h.
 *
 * Reading them is what keeps a task step cheap: the accelerator's Python
 * accessors (Future._callbacks) build a new list on every call.
 */
#ifndef PYPERFMAP_TASKS_CPYTHON_H
#define PYPERFMAP_TASKS_CPYTHON_H

#include <Python.h>

#include "cpython/cpython.h"

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
    int r = GetOptionalAttr(obj, name, &v);
    if (r < 0)
        PyErr_Clear();
    return v;
}

#endif
