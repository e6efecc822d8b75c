/*
 * markers.h - CPython's standard static markers (USDT, provider "python")
 * on every CPython, fired by pyperfmap while it is enabled:
 *
 *   function__entry(filename, funcname, lineno)
 *   function__return(filename, funcname, lineno)
 *   gc__start(generation)            gc__done(collected + uncollectable)
 *   import__find__load__start(module)
 *   import__find__load__done(module, found)
 *   audit(event, args)
 *
 * with CPython's names and argument types (Include/pydtrace.d).  The
 * strings are UTF-8 from the code object; lineno is the function's first
 * line (co_firstlineno) in both function probes.  Like CPython's, they
 * fire at every evaluation of a frame: each call, and each resumption of a
 * generator or coroutine.  Beside each function marker,
 * pyperfmap:call__entry(trampoline, kind) and call__return(trampoline)
 * carry the trampoline's address, which the perf map names, and what the
 * evaluation is (enum markers_kind), for pyperf-record's calls mode.  They
 * are probes of their own, not more arguments: a tool that merges
 * same-named markers of every file of a process (bcc) reads as many
 * arguments at each as the first file has, and an interpreter's own
 * markers have three.
 *
 * Each marker has a semaphore, which a tracer raises while it is attached.
 * All seven (and the switch that fires them all, markers__set_always) live
 * in two words, so that the eval hook's one test of
 * "anyone tracing?" is two loads and a branch never taken; only then does a
 * call go through the out-of-line path (evalhook.c) that computes
 * arguments and fires.  The gc callback and the audit hook are installed
 * from there too, the first time their markers are traced.
 */
#ifndef PYPERFMAP_MARKERS_H
#define PYPERFMAP_MARKERS_H

#include <Python.h>
#include <stdint.h>

union markers_semaphores {
    struct {
        unsigned short function_entry, function_return, import_start, import_done;
        unsigned short gc_start, gc_done, audit, always;
    } s;
    uint64_t w[2];
};

extern volatile union markers_semaphores pyperfmap_markers __attribute__((visibility("hidden")));

#define MARKERS_TRACED() \
    __builtin_expect((pyperfmap_markers.w[0] | pyperfmap_markers.w[1]) != 0, 0)

/* Finds gc.callbacks and importlib's _find_and_load.  Call with the GIL, at
 * the first enable().  Without them (one warning), no gc or import markers. */
void markers__init(void);

/* What a traced call keeps from its entry to its return. */
struct markers_call {
    PyObject *code;        /* a reference while the call runs */
    PyObject *module;      /* the import's module name, or NULL */
    const char *filename, *funcname;
    int lineno;
};

/* call__entry's kind: what an evaluation of a frame is.  A call starts a
 * function's body; a resumption continues a generator or coroutine after a
 * yield or await; neither is an evaluation that runs none of the body
 * (CPython 3.11+ evaluates a generator function's frame to create the
 * generator, which 3.8-3.10 do without one; a throw() into a generator not
 * yet started).  So a generator called once and resumed N times is one
 * call and N resumptions on every CPython.  evalhook.c tells them apart. */
enum markers_kind { MARKERS_CALL, MARKERS_RESUME, MARKERS_NO_CALL };

/* Whether a call of code is importlib's _find_and_load while an import
 * marker is traced: the caller then passes its first argument (the
 * module's name) to markers__enter. */
int markers__is_import(PyObject *code);

/* Fires the entry markers of an evaluation of code, of kind kind, through
 * trampoline t (and installs the gc callback or audit hook their tracers
 * want). */
void markers__enter(struct markers_call *c, PyObject *code, void *t, PyObject *module,
                    enum markers_kind kind);

/* Fires the return markers; result is the call's (NULL: it raised). */
void markers__leave(struct markers_call *c, void *t, PyObject *result);

/* _pyperfmap._markers(): {marker name: semaphore}, for tests that wait for
 * a tracer to attach. */
PyObject *markers__semaphores(PyObject *self, PyObject *unused);

/* _pyperfmap._markers_always(on): with on, every marker fires as if it
 * were traced.  For tools that raise only the interpreter's own copy of a
 * semaphore (bcc, where the interpreter has markers of its own); each
 * call then pays for its names while no one traces. */
PyObject *markers__set_always(PyObject *self, PyObject *on);

#endif
