/*
 * spans.h - the static probes of pyperfmap.span (pyperfmap/_spans.py):
 *
 *   pyperfmap:span__enter(id, parent, name, labels)
 *   pyperfmap:span__exit(id, parent, labels)
 *   pyperfmap:span__switch(id)
 *
 * id and parent are the process's span numbers (0: none); name and labels
 * are UTF-8 C strings, labels "key=value" lines joined by '\n' (at the exit, those set while the span
 * ran: a request's status).
 *
 * span__switch says which span is current on the thread from now on: the
 * eval hook fires it as an asyncio task's coroutine resumes (a task step),
 * with the task's context's span, so that interleaved tasks' samples go
 * under their own spans.
 *
 * They have semaphores of their own, apart from the standard markers', so
 * that recording spans does not send every Python call through the hook's
 * traced path.  While no one traces, pyperfmap.span asks spans__traced()
 * (one load) and fires nothing.
 */
#ifndef PYPERFMAP_SPANS_H
#define PYPERFMAP_SPANS_H

#include <Python.h>

#include <stdint.h>

/* ---- spans.c: the probes (with sys/sdt.h only) ------------------------ */

#ifdef PYPERFMAP_USDT
extern volatile unsigned short pyperfmap_span__enter_semaphore __attribute__((visibility("hidden")));
extern volatile unsigned short pyperfmap_span__exit_semaphore __attribute__((visibility("hidden")));
/* Whether a tracer records the enter or exit probe now. */
static inline int spans__traced_now(void)
{
    return (pyperfmap_span__enter_semaphore | pyperfmap_span__exit_semaphore) != 0;
}
/* Fire span__enter and span__exit (strings: UTF-8). */
void spans__fire_enter(uint64_t id, uint64_t parent, const char *name, const char *labels);
void spans__fire_exit(uint64_t id, uint64_t parent, const char *labels);
#else
static inline int spans__traced_now(void) { return 0; }
static inline void spans__fire_enter(uint64_t id, uint64_t parent, const char *name,
                                     const char *labels)
{
    (void)id, (void)parent, (void)name, (void)labels;
}
static inline void spans__fire_exit(uint64_t id, uint64_t parent, const char *labels)
{
    (void)id, (void)parent, (void)labels;
}
#endif

/* _pyperfmap._span_traced() -> bool: whether a tracer has span__enter. */
PyObject *spans__traced(PyObject *self, PyObject *unused);

/* _pyperfmap._span_enter(id, parent, name, labels): fires span__enter
 * (name and labels: str, encoded without failing). */
PyObject *spans__enter(PyObject *self, PyObject *const *args, Py_ssize_t n);

/* _pyperfmap._span_exit(id, parent, labels): fires span__exit. */
PyObject *spans__exit(PyObject *self, PyObject *const *args, Py_ssize_t n);

/* The eval hook, as a task's coroutine starts or resumes (no exception
 * set): fires span__switch while it is traced. */
extern volatile unsigned short pyperfmap_span__switch_semaphore __attribute__((visibility("hidden")));
void spans__switch_fire(void);
static inline void spans__switch(void)
{
    if (__builtin_expect(pyperfmap_span__switch_semaphore != 0, 0))
        spans__switch_fire();
}

/* _pyperfmap._span_var(var): the context variable that holds the current
 * span (a list whose first item is its id). */
PyObject *spans__set_var(PyObject *self, PyObject *var);

#define SPANS_METHODS                                                                        \
    {"_span_traced", spans__traced, METH_NOARGS,                                             \
     "_span_traced() -> bool\n\nWhether a tracer records the span probes."},                 \
    {"_span_enter", (PyCFunction)(void (*)(void))spans__enter, METH_FASTCALL,                 \
     "_span_enter(id, parent, name, labels)\n\nFire pyperfmap:span__enter."},                \
    {"_span_exit", (PyCFunction)(void (*)(void))spans__exit, METH_FASTCALL,                   \
     "_span_exit(id, parent, labels)\n\nFire pyperfmap:span__exit."},               \
    {"_span_var", spans__set_var, METH_O,                                                    \
     "_span_var(var)\n\nThe context variable span__switch reads."},

/* ---- spanobj.c: the Span type ------------------------------------------ */

/* Adds _pyperfmap.Span to module: 0, or -1 with an exception. */
int spans__add_type(PyObject *module);

/* _pyperfmap._span_setup(var, names, hooks): the context variable, the
 * name cache and the Python hooks that Span uses. */
PyObject *spans__setup(PyObject *self, PyObject *args);
/* _pyperfmap._span_plain(): no OpenTelemetry span to ask for; a traced
 * span's probes are fired from C. */
PyObject *spans__plain(PyObject *self, PyObject *unused);
/* _pyperfmap._span_state() -> (generation, stale). */
PyObject *spans__state(PyObject *self, PyObject *unused);
/* _pyperfmap._span_forked(): in a forked child. */
PyObject *spans__forked(PyObject *self, PyObject *unused);

#define SPANOBJ_METHODS                                                                      \
    {"_span_setup", spans__setup, METH_VARARGS, "_span_setup(var, names, hooks)"},           \
    {"_span_state", spans__state, METH_NOARGS, "_span_state() -> (generation, stale)"},      \
    {"_span_plain", spans__plain, METH_NOARGS, "_span_plain(): no OpenTelemetry to ask"},   \
    {"_span_forked", spans__forked, METH_NOARGS, "_span_forked(): in a forked child"},

#endif
