/*
 * spanobj.c - _pyperfmap.Span, the base of pyperfmap.span: entering and
 * leaving in C, so that a span costs little more than the context
 * variable's set and reset (spans.h), and, while traced, its probes
 * (a trap each is their cost; Python's hooks would double it).
 * Everything rare goes back to Python's hooks (pyperfmap/_spans.py): a
 * new name, OpenTelemetry's labels, labels that do not format, an exit
 * that is not the latest entry's, an ancestor closed elsewhere or before
 * a fork.
 *
 * An entry, what the context variable holds, is a list:
 * [id, name, parent, thread, generation, closed, token, late labels].
 */
#include "spans.h"

#include <pythread.h>
#include <structmember.h>
#include <stdint.h>

enum { E_ID, E_NAME, E_PARENT, E_THREAD, E_GENERATION, E_CLOSED, E_TOKEN, E_LATE, E_N };

typedef struct {
    PyObject_HEAD
    PyObject *name, *labels;    /* str, dict */
    PyObject *open;             /* this span's entries still open, a list */
} SpanObject;

static PyObject *var;           /* the context variable */
static PyObject *names;         /* what a program passed -> the name used */
static PyObject *hooks;         /* _spans._Hooks: name, enter, exit, pop, live, crossed */
static uint64_t next_id = 1;
static long generation;         /* forks */
static int stale;               /* an entry closed elsewhere, or a fork: ancestors need _live */
static int plain;               /* no OpenTelemetry: an entry's probe needs no Python */

static PyObject *hook(const char *name, PyObject *a, PyObject *b)
{
    return PyObject_CallMethod(hooks, name, b ? "OO" : "O", a, b);
}

static int span_init(SpanObject *self, PyObject *args, PyObject *kwargs)
{
    PyObject *raw, *name;
    if (!hooks) {
        PyErr_SetString(PyExc_RuntimeError, "pyperfmap.span is not set up");
        return -1;
    }
    if (!PyArg_UnpackTuple(args, "span", 1, 1, &raw))
        return -1;
    name = PyUnicode_CheckExact(raw) ? PyDict_GetItemWithError(names, raw) : NULL;
    if (name)
        Py_INCREF(name);
    else if (PyErr_Occurred() || !(name = hook("name", raw, NULL)))
        return -1;
    Py_XSETREF(self->name, name);
    Py_XSETREF(self->labels, kwargs ? PyDict_Copy(kwargs) : PyDict_New());
    if (!self->open)
        self->open = PyList_New(0);
    return self->labels && self->open ? 0 : -1;
}

/* The parent of a new entry: the current one, or its nearest live ancestor. */
static PyObject *parent_of(PyObject *cur)
{
    if (!stale || cur == Py_None) {
        Py_INCREF(cur);
        return cur;
    }
    return hook("live", cur, NULL);
}

static PyObject *new_entry(SpanObject *self, PyObject *parent)
{
    PyObject *e = PyList_New(E_N);
    if (!e)
        return NULL;
    PyList_SET_ITEM(e, E_ID, PyLong_FromUnsignedLongLong(next_id++));
    Py_INCREF(self->name);
    PyList_SET_ITEM(e, E_NAME, self->name);
    PyList_SET_ITEM(e, E_PARENT, parent);
    PyList_SET_ITEM(e, E_THREAD, PyLong_FromUnsignedLong(PyThread_get_thread_ident()));
    PyList_SET_ITEM(e, E_GENERATION, PyLong_FromLong(generation));
    Py_INCREF(Py_False);
    PyList_SET_ITEM(e, E_CLOSED, Py_False);
    Py_INCREF(Py_None);
    PyList_SET_ITEM(e, E_TOKEN, Py_None);
    Py_INCREF(Py_None);
    PyList_SET_ITEM(e, E_LATE, Py_None);
    for (int i = 0; i < E_N; i++)
        if (!PyList_GET_ITEM(e, i)) {
            Py_DECREF(e);
            return NULL;
        }
    return e;
}

/* labels (a dict) as "key=value" lines, a value's line breaks as spaces,
 * as _spans._label_text writes them; NULL, with no exception, when they do
 * not format (Python's hook says why). */
static PyObject *label_text(PyObject *labels)
{
    static PyObject *nl, *space;
    Py_ssize_t pos = 0, i = 0, n = PyDict_GET_SIZE(labels);
    PyObject *k, *v, *text = NULL, *lines = PyList_New(n);
    if (!nl && (!(nl = PyUnicode_InternFromString("\n")) || !(space = PyUnicode_InternFromString(" "))))
        Py_CLEAR(nl);
    while (nl && lines && i < n && PyDict_Next(labels, &pos, &k, &v)) {
        Py_INCREF(k), Py_INCREF(v);     /* a __str__ may change the dict */
        PyObject *line = PyUnicode_FromFormat("%S=%S", k, v);
        Py_DECREF(k), Py_DECREF(v);
        if (line && PyUnicode_FindChar(line, '\n', 0, PyUnicode_GET_LENGTH(line), 1) >= 0)
            Py_SETREF(line, PyUnicode_Replace(line, nl, space, -1));
        if (!line)
            break;
        PyList_SET_ITEM(lines, i++, line);
    }
    if (nl && lines && i == n && !PyErr_Occurred())
        text = PyUnicode_Join(nl, lines);
    Py_XDECREF(lines);
    if (!text)
        PyErr_Clear();
    return text;
}

static uint64_t id_of(PyObject *entry)
{
    return entry == Py_None ? 0 : PyLong_AsUnsignedLongLongMask(PyList_GET_ITEM(entry, E_ID));
}

/* Fires entry e's probe: here when there is no OpenTelemetry span to ask
 * for and the strings encode, else through Python's hook. */
static PyObject *fire_enter(SpanObject *self, PyObject *e)
{
    PyObject *text = plain ? label_text(self->labels) : NULL;
    const char *name = text ? PyUnicode_AsUTF8(self->name) : NULL;
    const char *labels = name ? PyUnicode_AsUTF8(text) : NULL;
    if (labels)
        spans__fire_enter(id_of(e), id_of(PyList_GET_ITEM(e, E_PARENT)), name, labels);
    Py_XDECREF(text);
    if (labels)
        Py_RETURN_NONE;
    PyErr_Clear();
    return hook("enter", (PyObject *)self, e);
}

/* Fires e's exit probe, with the labels set while it ran, as fire_enter. */
static PyObject *fire_exit(PyObject *e, PyObject *parent)
{
    PyObject *late = PyList_GET_ITEM(e, E_LATE);
    PyObject *text = late == Py_None ? NULL : PyDict_Check(late) ? label_text(late) : NULL;
    const char *labels = late == Py_None ? "" : text ? PyUnicode_AsUTF8(text) : NULL;
    if (labels)
        spans__fire_exit(id_of(e), id_of(parent), labels);
    Py_XDECREF(text);
    if (labels)
        Py_RETURN_NONE;
    PyErr_Clear();
    return hook("exit", e, parent);
}

static PyObject *span_enter(SpanObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *cur, *parent, *e, *token;
    if (!self->open)
        return PyErr_Format(PyExc_RuntimeError, "span.__init__ was not called");
    if (PyContextVar_Get(var, Py_None, &cur) < 0)
        return NULL;
    parent = parent_of(cur);
    Py_DECREF(cur);
    if (!parent || !(e = new_entry(self, parent)))
        return NULL;
    if (!(token = PyContextVar_Set(var, e)) || PyList_SetItem(e, E_TOKEN, token) < 0 ||
        PyList_Append(self->open, e) < 0) {
        Py_DECREF(e);
        return NULL;
    }
    int traced = spans__traced_now();   /* once: a tracer may come meanwhile */
    PyObject *r = traced ? fire_enter(self, e) : NULL;
    int failed = traced && !r;
    Py_DECREF(e);
    Py_XDECREF(r);
    if (failed)
        return NULL;
    Py_INCREF(self);
    return (PyObject *)self;
}

/* The entry an exit closes: the latest, when it is the context's current
 * one; else Python's search. */
static PyObject *pop_entry(SpanObject *self)
{
    Py_ssize_t n = PyList_GET_SIZE(self->open);
    PyObject *cur;
    if (n == 0)
        return hook("extra", (PyObject *)self, NULL);   /* a warning, and None */
    if (PyContextVar_Get(var, Py_None, &cur) < 0)
        return NULL;
    PyObject *last = PyList_GET_ITEM(self->open, n - 1);
    int latest = last == cur;
    Py_DECREF(cur);
    if (!latest)
        return hook("pop", (PyObject *)self, NULL);
    Py_INCREF(last);
    if (PyList_SetSlice(self->open, n - 1, n, NULL) < 0) {
        Py_DECREF(last);
        return NULL;
    }
    return last;
}

/* Closes e: its exit probe, and the context variable back to before it. */
static PyObject *close_entry(PyObject *e)
{
    Py_INCREF(Py_True);
    PyList_SetItem(e, E_CLOSED, Py_True);
    if (PyLong_AsLong(PyList_GET_ITEM(e, E_GENERATION)) != generation)
        Py_RETURN_FALSE;        /* opened before a fork: the parent's to close */
    if (spans__traced_now()) {
        PyObject *parent = parent_of(PyList_GET_ITEM(e, E_PARENT));
        PyObject *r = parent ? fire_exit(e, parent) : NULL;
        Py_XDECREF(parent);
        if (!r)
            return NULL;
        Py_DECREF(r);
    }
    if (PyContextVar_Reset(var, PyList_GET_ITEM(e, E_TOKEN)) < 0) {
        if (!PyErr_ExceptionMatches(PyExc_ValueError))
            return NULL;
        PyErr_Clear();          /* closed in another thread or task than it opened in */
        stale = 1;
        PyObject *r = hook("crossed", e, NULL);
        if (!r)
            return NULL;
        Py_DECREF(r);
    }
    Py_RETURN_FALSE;
}

static PyObject *span_exit(SpanObject *self, PyObject *args)
{
    (void)args;
    PyObject *e = pop_entry(self);
    if (!e || e == Py_None) {
        Py_XDECREF(e);
        if (!e)
            return NULL;
        Py_RETURN_FALSE;
    }
    PyObject *r = close_entry(e);
    Py_DECREF(e);
    return r;
}

static int span_traverse(SpanObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->name);
    Py_VISIT(self->labels);
    Py_VISIT(self->open);
    return 0;
}

static int span_clear(SpanObject *self)
{
    Py_CLEAR(self->name);
    Py_CLEAR(self->labels);
    Py_CLEAR(self->open);
    return 0;
}

static void span_dealloc(SpanObject *self)
{
    PyObject_GC_UnTrack(self);
    span_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef span_methods[] = {
    {"__enter__", (PyCFunction)span_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)span_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef span_members[] = {
    {"name", T_OBJECT, offsetof(SpanObject, name), READONLY, "the name it is recorded under"},
    {"labels", T_OBJECT, offsetof(SpanObject, labels), READONLY, "its labels"},
    {"_open", T_OBJECT, offsetof(SpanObject, open), READONLY, "its open entries"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject SpanType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pyperfmap._pyperfmap.Span",
    .tp_basicsize = sizeof(SpanObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The C half of pyperfmap.span.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)span_init,
    .tp_dealloc = (destructor)span_dealloc,
    .tp_traverse = (traverseproc)span_traverse,
    .tp_clear = (inquiry)span_clear,
    .tp_methods = span_methods,
    .tp_members = span_members,
};

PyObject *spans__setup(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *v, *n, *h;
    if (!PyArg_ParseTuple(args, "OO!O", &v, &PyDict_Type, &n, &h))
        return NULL;
    Py_INCREF(v), Py_INCREF(n), Py_INCREF(h);
    Py_XSETREF(var, v);
    Py_XSETREF(names, n);
    Py_XSETREF(hooks, h);
    Py_RETURN_NONE;
}

PyObject *spans__plain(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    plain = 1;
    Py_RETURN_NONE;
}

PyObject *spans__state(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return Py_BuildValue("(li)", generation, stale);
}

PyObject *spans__forked(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    generation++;
    stale = 1;
    Py_RETURN_NONE;
}

int spans__add_type(PyObject *module)
{
    if (PyType_Ready(&SpanType) < 0)
        return -1;
    Py_INCREF(&SpanType);
    if (PyModule_AddObject(module, "Span", (PyObject *)&SpanType) < 0) {
        Py_DECREF(&SpanType);
        return -1;
    }
    return 0;
}
