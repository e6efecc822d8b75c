/*
 * spans.h - the static probes of pyperfmap.span (pyperfmap/_spans.py):
 *
 *   pyperfmap:span__enter(id, parent, name, labels)
 *   pyperfmap:span__exit(id, parent, labels)
 *
 * id and parent are the process's span numbers (0: none); name and labels
 * are UTF-8 C strings, labels "key=value" lines joined by '\n' (at the exit, those set while the span
 * ran: a request's status).
 *
 * They have semaphores of their own, apart from the standard markers', so
 * that recording spans does not send every Python call through the hook's
 * traced path.  While no one traces, pyperfmap.span asks spans__traced()
 * (one load) and fires nothing.
 */
#ifndef PYPERFMAP_SPANS_H
#define PYPERFMAP_SPANS_H

#include <Python.h>

/* _pyperfmap._span_traced() -> bool: whether a tracer has span__enter. */
PyObject *spans__traced(PyObject *self, PyObject *unused);

/* _pyperfmap._span_enter(id, parent, name, labels): fires span__enter
 * (name and labels: str, encoded without failing). */
PyObject *spans__enter(PyObject *self, PyObject *const *args, Py_ssize_t n);

/* _pyperfmap._span_exit(id, parent, labels): fires span__exit. */
PyObject *spans__exit(PyObject *self, PyObject *const *args, Py_ssize_t n);

#define SPANS_METHODS                                                                        \
    {"_span_traced", spans__traced, METH_NOARGS,                                             \
     "_span_traced() -> bool\n\nWhether a tracer records the span probes."},                 \
    {"_span_enter", (PyCFunction)(void (*)(void))spans__enter, METH_FASTCALL,                 \
     "_span_enter(id, parent, name, labels)\n\nFire pyperfmap:span__enter."},                \
    {"_span_exit", (PyCFunction)(void (*)(void))spans__exit, METH_FASTCALL,                   \
     "_span_exit(id, parent, labels)\n\nFire pyperfmap:span__exit."},

#endif
