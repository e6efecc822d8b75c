/*
 * spans.c - the span probes (spans.h), fired for pyperfmap.span.
 */
#include "spans.h"

#include <stdint.h>

#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

/* sys/sdt.h names each semaphore PROVIDER_NAME_semaphore; they live in
 * .probes, where tracers look for them. */
__attribute__((section(".probes"), aligned(8))) volatile unsigned short
    pyperfmap_span__enter_semaphore;
__attribute__((section(".probes"), aligned(8))) volatile unsigned short
    pyperfmap_span__exit_semaphore;
__attribute__((section(".probes"), aligned(8))) volatile unsigned short
    pyperfmap_span__switch_semaphore;

static PyObject *span_var;          /* pyperfmap._spans._current */

/* s as UTF-8; a str that cannot be encoded (lone surrogates) gives "?"
 * rather than an exception in the program's with statement. */
static const char *utf8(PyObject *s)
{
    const char *u = PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : NULL;
    if (u == NULL)
        PyErr_Clear();
    return u ? u : "?";
}

/* The want arguments of _span_enter or _span_exit (usage: their names),
 * the first two the span's id and its parent's: 0, or -1 with an
 * exception. */
static int ids(PyObject *const *args, Py_ssize_t n, Py_ssize_t want, const char *usage,
               uint64_t *id, uint64_t *parent)
{
    if (n != want) {
        PyErr_SetString(PyExc_TypeError, usage);
        return -1;
    }
    *id = PyLong_AsUnsignedLongLongMask(args[0]);
    *parent = PyLong_AsUnsignedLongLongMask(args[1]);
    return PyErr_Occurred() ? -1 : 0;
}

PyObject *spans__traced(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return PyBool_FromLong(pyperfmap_span__enter_semaphore | pyperfmap_span__exit_semaphore);
}

PyObject *spans__enter(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    (void)self;
    uint64_t id, parent;
    if (ids(args, n, 4, "_span_enter(id, parent, name, labels)", &id, &parent) < 0)
        return NULL;
    spans__fire_enter(id, parent, utf8(args[2]), utf8(args[3]));
    Py_RETURN_NONE;
}

/* Not inlined: each probe has one site, the one its note names. */
__attribute__((noinline)) void spans__fire_enter(uint64_t id, uint64_t parent, const char *name,
                                                 const char *labels)
{
    if (pyperfmap_span__enter_semaphore)
        STAP_PROBE4(pyperfmap, span__enter, id, parent, name, labels);
}

__attribute__((noinline)) void spans__fire_exit(uint64_t id, uint64_t parent, const char *labels)
{
    if (pyperfmap_span__exit_semaphore)
        STAP_PROBE3(pyperfmap, span__exit, id, parent, labels);
}

PyObject *spans__exit(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    (void)self;
    uint64_t id, parent;
    if (ids(args, n, 3, "_span_exit(id, parent, labels)", &id, &parent) < 0)
        return NULL;
    spans__fire_exit(id, parent, utf8(args[2]));
    Py_RETURN_NONE;
}

PyObject *spans__set_var(PyObject *self, PyObject *var)
{
    (void)self;
    Py_INCREF(var);
    Py_XSETREF(span_var, var);
    Py_RETURN_NONE;
}

void spans__switch_fire(void)
{
    PyObject *v = NULL;
    if (!span_var || PyErr_Occurred() || PyContextVar_Get(span_var, NULL, &v) < 0) {
        PyErr_Clear();
        return;
    }
    uint64_t id = 0;
    if (v && PyList_Check(v) && PyList_GET_SIZE(v) > 0)
        id = PyLong_AsUnsignedLongLongMask(PyList_GET_ITEM(v, 0));
    Py_XDECREF(v);
    PyErr_Clear();
    STAP_PROBE1(pyperfmap, span__switch, id);
}
