/*
 * markers.c - CPython's standard static markers, fired from pyperfmap's
 * eval hook, a gc callback and an audit hook (markers.h).
 *
 * The markers carry CPython's provider and names, so bcc's ucalls/uflow,
 * bpftrace one-liners and perf's sdt_python events find them by name in
 * this extension as they would in an interpreter built --with-dtrace.
 */
#include "markers.h"

#include <stddef.h>

#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

/* The semaphores, in .probes where tracers look for them.  sys/sdt.h names
 * each PROVIDER_NAME_semaphore; those names are given to the fields of one
 * union here, so that the eval hook tests them all in two loads. */
__attribute__((section(".probes"), aligned(16))) volatile union markers_semaphores pyperfmap_markers;

#define SEMAPHORE(name, field, offset)                                                 \
    _Static_assert(offsetof(union markers_semaphores, s.field) == offset, #field);    \
    __asm__(".set " #name ", pyperfmap_markers + " #offset);                         \
    extern volatile unsigned short name __attribute__((visibility("hidden")))

SEMAPHORE(python_function__entry_semaphore, function_entry, 0);
SEMAPHORE(python_function__return_semaphore, function_return, 2);
SEMAPHORE(python_import__find__load__start_semaphore, import_start, 4);
SEMAPHORE(python_import__find__load__done_semaphore, import_done, 6);
SEMAPHORE(python_gc__start_semaphore, gc_start, 8);
SEMAPHORE(python_gc__done_semaphore, gc_done, 10);
SEMAPHORE(python_audit_semaphore, audit, 12);
/* The calls mode's probes share the function markers' semaphores: raised
 * by either tracer, the same test in the hook fires both. */
SEMAPHORE(pyperfmap_call__entry_semaphore, function_entry, 0);
SEMAPHORE(pyperfmap_call__return_semaphore, function_return, 2);

#define SEM(field) (pyperfmap_markers.s.field)
/* Whether a marker fires: traced, or all switched on. */
#define ON(field) (SEM(field) | SEM(always))

/* A str as UTF-8 without touching the error state: an exception may be on
 * its way into the frame (generator.throw), and a name that cannot be
 * encoded (lone surrogates) is not worth losing it for. */
static const char *utf8(PyObject *s)
{
    if (PyUnicode_Check(s) && PyUnicode_IS_COMPACT_ASCII(s))
        return (const char *)PyUnicode_DATA(s);
    if (!PyUnicode_Check(s) || PyErr_Occurred())
        return "?";
    const char *u = PyUnicode_AsUTF8(s);
    if (u == NULL)
        PyErr_Clear();
    return u ? u : "?";
}

/* ---- gc__start, gc__done: a callback in gc.callbacks -------------------
 * It is in the list only while a tracer has their semaphores up: every
 * collection builds a dict for each callback, which nobody should pay for
 * while no one traces.  It leaves through a pending call, outside the
 * collection, since gc walks the list by index while calling it. */

static PyObject *gc_callbacks;     /* gc.callbacks */
static PyObject *gc_callback;      /* ours */
static int gc_installed, gc_leaving;

/* info[key] as a long; 0 when missing. */
static long info_long(PyObject *info, const char *key)
{
    PyObject *v = PyDict_GetItemString(info, key);
    long n = v && PyLong_Check(v) ? PyLong_AsLong(v) : 0;
    if (n == -1 && PyErr_Occurred())
        PyErr_Clear();
    return n;
}

static int gc_leave(void *unused)
{
    (void)unused;
    gc_leaving = 0;
    if (!gc_installed || ON(gc_start) || ON(gc_done))
        return 0;
    for (Py_ssize_t i = PyList_GET_SIZE(gc_callbacks) - 1; i >= 0; i--)
        if (PyList_GET_ITEM(gc_callbacks, i) == gc_callback && PyList_SetSlice(gc_callbacks, i, i + 1, NULL) < 0)
            PyErr_Clear();
    gc_installed = 0;
    return 0;
}

static PyObject *on_gc(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *phase = PyTuple_GET_SIZE(args) == 2 ? PyTuple_GET_ITEM(args, 0) : NULL;
    PyObject *info = phase ? PyTuple_GET_ITEM(args, 1) : NULL;
    if (info && PyUnicode_Check(phase) && PyDict_Check(info)) {
        if (ON(gc_start) && PyUnicode_CompareWithASCIIString(phase, "start") == 0)
            STAP_PROBE1(python, gc__start, (int)info_long(info, "generation"));
        else if (ON(gc_done) && PyUnicode_CompareWithASCIIString(phase, "stop") == 0)
            STAP_PROBE1(python, gc__done, info_long(info, "collected") + info_long(info, "uncollectable"));
    }
    if (!ON(gc_start) && !ON(gc_done) && !gc_leaving)
        gc_leaving = Py_AddPendingCall(gc_leave, NULL) == 0;
    Py_RETURN_NONE;
}

static PyMethodDef on_gc_def = {"_pyperfmap_gc_markers", on_gc, METH_VARARGS, NULL};

/* ---- audit: a C audit hook, which cannot be removed -------------------- */

static int audit_added;

static int on_audit(const char *event, PyObject *args, void *unused)
{
    (void)unused;
    if (ON(audit))
        STAP_PROBE2(python, audit, event, args);
    return 0;
}

/* Puts the gc callback and the audit hook where tracers now want them.
 * Not while an exception is on its way into the frame: the next call
 * will do it. */
static void sync_hooks(void)
{
    int want_gc = (ON(gc_start) | ON(gc_done)) != 0 && !gc_installed && gc_callback;
    int want_audit = ON(audit) && !audit_added;
    if ((!want_gc && !want_audit) || PyErr_Occurred())
        return;
    if (want_gc)
        gc_installed = PyList_Append(gc_callbacks, gc_callback) == 0;
    if (want_audit)
        audit_added = 1, PySys_AddAuditHook(on_audit, NULL);
    PyErr_Clear();    /* no memory, or another audit hook refused ours: no markers */
}

/* ---- import__find__load__start/done: calls of _find_and_load ------------
 * CPython fires them around its call of importlib's _find_and_load (a
 * module not yet in sys.modules); the hook sees that call. */

static PyObject *find_and_load;    /* its code object */

int markers__is_import(PyObject *code)
{
    return code == find_and_load && (ON(import_start) | ON(import_done));
}

void markers__init(void)
{
    PyObject *gc = PyImport_ImportModule("gc");
    PyObject *bootstrap = gc ? PyImport_ImportModule("_frozen_importlib") : NULL;
    PyObject *f = bootstrap ? PyObject_GetAttrString(bootstrap, "_find_and_load") : NULL;
    find_and_load = f ? PyObject_GetAttrString(f, "__code__") : NULL;
    gc_callbacks = find_and_load ? PyObject_GetAttrString(gc, "callbacks") : NULL;
    gc_callback = gc_callbacks && PyList_Check(gc_callbacks) ? PyCFunction_New(&on_gc_def, NULL) : NULL;
    Py_XDECREF(gc), Py_XDECREF(bootstrap), Py_XDECREF(f);
    if (gc_callback != NULL)
        return;
    /* Not worth failing enable() for: the function markers still work. */
    PyErr_Clear();
    Py_CLEAR(find_and_load);
    Py_CLEAR(gc_callbacks);
    fprintf(stderr, "pyperfmap: warning: no gc.callbacks list or importlib._find_and_load; the gc and"
            " import markers will not fire (the program continues)\n");
}

/* ---- function__entry, function__return --------------------------------- */

static void name_call(struct markers_call *c)
{
    PyCodeObject *co = (PyCodeObject *)c->code;
    c->filename = utf8(co->co_filename);
    c->funcname = utf8(co->co_name);
    c->lineno = co->co_firstlineno;
}

void markers__enter(struct markers_call *c, PyObject *code, void *t, PyObject *module,
                    enum markers_kind kind)
{
    sync_hooks();
    Py_INCREF(code);    /* its names outlive the frame's reference */
    c->code = code;
    c->filename = NULL;
    c->module = module && PyUnicode_Check(module) ? module : NULL;
    Py_XINCREF(c->module);
    if (c->module && ON(import_start))
        STAP_PROBE1(python, import__find__load__start, utf8(c->module));
    if (ON(function_entry)) {
        name_call(c);
        STAP_PROBE3(python, function__entry, c->filename, c->funcname, c->lineno);
        STAP_PROBE2(pyperfmap, call__entry, t, (int)kind);
    }
}

void markers__leave(struct markers_call *c, void *t, PyObject *result)
{
    if (ON(function_return)) {
        if (c->filename == NULL)
            name_call(c);
        STAP_PROBE3(python, function__return, c->filename, c->funcname, c->lineno);
        STAP_PROBE1(pyperfmap, call__return, t);
    }
    if (c->module && ON(import_done))
        STAP_PROBE2(python, import__find__load__done, utf8(c->module), (int)(result != NULL));
    Py_XDECREF(c->module);
    Py_DECREF(c->code);
}

PyObject *markers__semaphores(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return Py_BuildValue("{sisisisisisisi}", "function__entry", SEM(function_entry),
                         "function__return", SEM(function_return),
                         "import__find__load__start", SEM(import_start),
                         "import__find__load__done", SEM(import_done), "gc__start", SEM(gc_start),
                         "gc__done", SEM(gc_done), "audit", SEM(audit));
}

PyObject *markers__set_always(PyObject *self, PyObject *on)
{
    (void)self;
    int v = PyObject_IsTrue(on);
    if (v < 0)
        return NULL;
    pyperfmap_markers.s.always = (unsigned short)v;
    Py_RETURN_NONE;
}
