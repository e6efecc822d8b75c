/*
 * module.c - the _pyperfmap extension: enable(), disable(), is_enabled(),
 * map_path(), and the one lock that serialises trampoline creation.
 *
 * A profiler must never take its host down: every failure after import
 * (map file, arena, memory) prints one warning and leaves the program
 * running unprofiled.  Only misuse (another hook installed, a
 * sub-interpreter) raises.
 */
#define PY_SSIZE_T_CLEAN
#include "evalhook.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "heapsample.h"
#include "mapfile.h"
#include "spans.h"
#include "trampoline.h"
#ifdef PYPERFMAP_USDT
#  include "markers.h"
#  define MARKERS_INIT() markers__init()
#else
#  define MARKERS_INIT() (void)0
#endif

/* Serialises arena__take and the map file, and (through pthread_atfork)
 * keeps fork() from copying them half-updated.  Under the GIL it is never
 * contended.
 *
 * It does not make free-threaded builds correct by itself: the hot path
 * (evalhook.c) reads a code object's co_extra and its slot with plain loads,
 * and CPython's Code_SetExtra publishes them with plain stores (and may
 * reallocate co_extra).  On 3.13t this is safe only because _pyperfmap is a
 * single-phase-init module that does not declare Py_mod_gil, so importing it
 * re-enables the GIL for the whole process.  Running 3.13t/3.14t without the
 * GIL would need: multi-phase init with Py_mod_gil = Py_MOD_GIL_NOT_USED;
 * each trampoline published with release and read with acquire semantics,
 * which means a per-code-object atomic pointer of our own instead of
 * co_extra (CPython's setter cannot be made to release); first_calls and
 * the pending names of 3.8-3.10 made atomic or dropped; and the eval-frame
 * swap of evalhook__set done while no other thread runs Python. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int broken;        /* a failure was reported: stop making trampolines */
static int at_exit_done;  /* the map was closed at interpreter exit */
static int no_slot;       /* CPython had no co_extra slot for us: never enable */

static void lock_before_fork(void) { pthread_mutex_lock(&lock); }
static void unlock_after_fork(void) { pthread_mutex_unlock(&lock); }

/* One warning per process; the caller holds the lock or is single-threaded. */
static void warn_once(const char *what)
{
    if (broken)
        return;
    broken = 1;
    fprintf(stderr, "pyperfmap: warning: %s; Python functions will not be named in perf profiles"
            " (the program continues)\n", what);
}

/* The warning for a failure (err, a positive errno) of the perf map in
 * dir: the file's name and why, in words for the errnos that mapfile.h
 * gives a meaning of their own. */
static void warn_map(const char *dir, int err)
{
    char what[PATH_MAX + 128];
    const char *why = err == EEXIST
        ? "belongs to another user (left by an earlier process with this PID)"
        : err == EPERM
        ? "exists and is not a regular file owned by this user, or may not be changed;"
          " not touching it"
        : strerror(err);
    snprintf(what, sizeof what, "%s/perf-%ld.map: %s", dir, (long)getpid(), why);
    warn_once(what);
}

void pyperfmap__fail(const char *why)
{
    pthread_mutex_lock(&lock);
    warn_once(why);
    pthread_mutex_unlock(&lock);
}

void *pyperfmap__new_trampoline(const char *name, size_t len)
{
    void *t = NULL, *arena;
    pthread_mutex_lock(&lock);
    if (broken || at_exit_done)
        goto out;
    t = arena__take(&arena);
    if (t == NULL) {
        char what[128];
        snprintf(what, sizeof what, "cannot map memory for trampolines: %s", strerror(errno));
        warn_once(what);
        goto out;
    }
    *arena__key(t) = pyperfmap_path__key(name, len);
    int rc = 0;
    if (arena != NULL)
        rc = mapfile__add(arena, PYPERFMAP_TRAMPOLINE_SIZE, PYPERFMAP_ARENA_SYMBOL,
                          sizeof PYPERFMAP_ARENA_SYMBOL - 1);
    if (rc == 0)
        rc = mapfile__add(t, PYPERFMAP_TRAMPOLINE_SIZE, name, len);
    if (rc != 0)    /* the trampoline is still fine to run; it is only unnamed */
        warn_map(mapfile__dir(), -rc);
out:
    pthread_mutex_unlock(&lock);
    return t;
}

/* A line file that cannot grow (a full file system) costs only lines, and
 * says nothing: one warning per process is for the map, which names the
 * functions; pymerge -v counts the calling frames left without a line. */
void pyperfmap__add_lines(const char *line, size_t len)
{
    static int failed;
    pthread_mutex_lock(&lock);
    if (!failed && !broken && !at_exit_done)
        failed = mapfile__add_lines(line, len) != 0;
    pthread_mutex_unlock(&lock);
}

/* Registered with the atexit module, so it runs at the start of
 * finalization while the interpreter is whole: after the program's own
 * atexit handlers (registered later, run first), before module globals are
 * freed, which is when pyperfmap:finalize says the program's code is done.  (Py_AtExit would run it after
 * the interpreter is freed, and the time it takes there lets CPython's
 * daemon threads wake up into freed memory: a crash seen on 3.10.)  Later
 * calls run through the default evaluator; a thread already past the hook
 * gets no trampoline, and enable() refuses (see py_enable). */
static PyObject *close_at_exit(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    heapsample__finalize();
    if (evalhook__owner() == EVALHOOK_OURS)
        evalhook__set(EVALHOOK_DEFAULT, 0);
    pthread_mutex_lock(&lock);
    at_exit_done = 1;
    mapfile__close();
    pthread_mutex_unlock(&lock);
    Py_RETURN_NONE;
}

static PyMethodDef close_at_exit_def = {"_close_at_exit", close_at_exit, METH_NOARGS, NULL};

static PyObject *after_fork_child(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    pthread_mutex_lock(&lock);
    int rc = mapfile__after_fork();
    if (rc != 0)
        warn_map(mapfile__dir(), -rc);
    pthread_mutex_unlock(&lock);
    Py_RETURN_NONE;
}

static PyMethodDef after_fork_def = {"_after_fork_child", after_fork_child, METH_NOARGS, NULL};

static int in_main_interpreter(void)
{
    if (PyThreadState_Get()->interp == PyInterpreterState_Main())
        return 1;
    PyErr_SetString(PyExc_RuntimeError, "pyperfmap: only the main interpreter can be profiled");
    return 0;
}

/* module.function(**{kwname: our C function}), as in
 * os.register_at_fork(after_in_child=f) or atexit.register(f). */
static int register_callback(const char *module, const char *function, const char *kwname,
                             PyMethodDef *def)
{
    PyObject *mod = PyImport_ImportModule(module);
    PyObject *cb = mod ? PyCFunction_New(def, NULL) : NULL;
    PyObject *reg = cb ? PyObject_GetAttrString(mod, function) : NULL;
    PyObject *args = reg ? (kwname ? PyTuple_New(0) : PyTuple_Pack(1, cb)) : NULL;
    PyObject *kw = args && kwname ? Py_BuildValue("{sO}", kwname, cb) : NULL;
    PyObject *r = args && (kw || !kwname) ? PyObject_Call(reg, args, kw) : NULL;
    Py_XDECREF(mod), Py_XDECREF(cb), Py_XDECREF(reg), Py_XDECREF(args), Py_XDECREF(kw);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

/* Done once per process, on the first enable(). */
static int first_enable(void)
{
    static int done;
    if (done)
        return 0;
    if (register_callback("os", "register_at_fork", "after_in_child", &after_fork_def) != 0
        || register_callback("atexit", "register", NULL, &close_at_exit_def) != 0)
        return -1;
    if (pthread_atfork(lock_before_fork, unlock_after_fork, unlock_after_fork) != 0) {
        PyErr_SetString(PyExc_RuntimeError, "pyperfmap: cannot register fork handlers");
        return -1;
    }
    MARKERS_INIT();
    done = 1;
    return 0;
}

static PyObject *py_enable(PyObject *self, PyObject *args)
{
    const char *dir = "/tmp";
    int paths = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "|sp:enable", &dir, &paths) || !in_main_interpreter())
        return NULL;
    switch (evalhook__owner()) {
    case EVALHOOK_OURS:
        evalhook__set(EVALHOOK_OURS, paths);    /* with or without paths, as asked now */
        Py_RETURN_TRUE;
    case EVALHOOK_OTHER:
        PyErr_SetString(PyExc_RuntimeError,
                        "pyperfmap: another eval-frame hook is already installed (CPython's"
                        " -X perf, a debugger or another profiler); pyperfmap was not enabled");
        return NULL;
    default:
        break;
    }
    if (first_enable() != 0)
        return NULL;
    pthread_mutex_lock(&lock);
    /* After the map was finished at exit (say from an atexit handler that
     * runs after ours), opening it again would empty it. */
    int ok = 0, rc;
    if (no_slot)
        warn_once("CPython has no co_extra slot left for the trampolines"
                  " (other tools took all of them)");
    else if (broken || at_exit_done)
        warn_once(broken ? "an earlier failure disabled pyperfmap"
                  : "enable() after the perf map was closed at exit");
    else if ((rc = mapfile__open(dir)) != 0)
        warn_map(dir, -rc);
    else
        ok = 1;
    pthread_mutex_unlock(&lock);
    if (!ok)
        Py_RETURN_FALSE;
    evalhook__set(EVALHOOK_OURS, paths);
    Py_RETURN_TRUE;
}

static PyObject *py_disable(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    if (!in_main_interpreter())
        return NULL;
    /* Trampolines stay mapped and cached: frames running through them
     * finish normally, and a later enable() reuses them. */
    if (evalhook__owner() == EVALHOOK_OURS)
        evalhook__set(EVALHOOK_DEFAULT, 0);
    Py_RETURN_NONE;
}

static PyObject *py_is_enabled(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return PyBool_FromLong(evalhook__owner() == EVALHOOK_OURS);
}

static PyObject *py_map_path(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    pthread_mutex_lock(&lock);
    const char *p = mapfile__path();
    PyObject *r = p ? PyUnicode_DecodeFSDefault(p) : (Py_INCREF(Py_None), Py_None);
    pthread_mutex_unlock(&lock);
    return r;
}

static PyObject *py_set_noop_hook(PyObject *self, PyObject *arg)
{
    (void)self;
    int on = PyObject_IsTrue(arg);
    if (on < 0 || !in_main_interpreter())
        return NULL;
    enum evalhook_owner cur = evalhook__owner();
    if (cur == EVALHOOK_OTHER || cur == EVALHOOK_OURS) {
        PyErr_SetString(PyExc_RuntimeError, "pyperfmap: another eval-frame hook is installed");
        return NULL;
    }
    evalhook__set(on ? EVALHOOK_NOOP : EVALHOOK_DEFAULT, 0);
    Py_RETURN_NONE;
}

static PyObject *py_task_frames(PyObject *self, PyObject *arg)
{
    (void)self;
    int on = PyObject_IsTrue(arg);
    if (on < 0)
        return NULL;
    evalhook__task_frames(on);
    Py_RETURN_NONE;
}

static PyObject *py_stats(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return Py_BuildValue("{sksO}", "first_calls", evalhook__first_calls(), "paths",
                         evalhook__paths() ? Py_True : Py_False);
}

static PyMethodDef methods[] = {
    {"enable", py_enable, METH_VARARGS,
     "enable(dir='/tmp', paths=False) -> bool\n\nRun every Python function through its own "
     "trampoline and name it in <dir>/perf-<pid>.map; with paths, each trampoline also keeps its "
     "caller's call path.  False (after one warning) when the map cannot be written."},
    {"disable", py_disable, METH_NOARGS, "disable()\n\nStop making and using trampolines."},
    {"is_enabled", py_is_enabled, METH_NOARGS, "is_enabled() -> bool"},
    {"map_path", py_map_path, METH_NOARGS, "map_path() -> str or None\n\nThis process's perf map."},
    HEAPSAMPLE_METHOD,
    SPANOBJ_METHODS
    {"_set_noop_hook", py_set_noop_hook, METH_O,
     "Install a PEP 523 hook that only calls the default evaluator (benchmark floor)."},
    {"_task_frames", py_task_frames, METH_O,
     "_task_frames(on)\n\nasyncio task frames on (the default) or off (PYPERFMAP_TASKS=0)."},
    {"_stats", py_stats, METH_NOARGS,
     "_stats() -> dict\n\nfirst_calls: how often the hook took its slow path; paths: whether "
     "the hook keeps paths (for tests)."},
#ifdef PYPERFMAP_USDT
    {"_markers", markers__semaphores, METH_NOARGS,
     "_markers() -> dict\n\nEach standard marker's semaphore: how many tracers have it (for tests)."},
    {"_markers_always", markers__set_always, METH_O,
     "_markers_always(on)\n\nFire every standard marker as if traced (PYPERFMAP_MARKERS=always)."},
    SPANS_METHODS
#endif
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_pyperfmap",
    "Native half of pyperfmap: PEP 523 perf trampolines.", -1, methods,
    NULL, NULL, NULL, NULL,
};

/* The one exported symbol; everything else is hidden.  (A pragma, because
 * 3.8's PyMODINIT_FUNC carries no visibility of its own.) */
#pragma GCC visibility push(default)
PyMODINIT_FUNC PyInit__pyperfmap(void)
{
    PyObject *m = PyModule_Create(&moduledef);
    if (m == NULL)
        return NULL;
    /* Without a slot, the import still works and enable() says why it
     * cannot: a profiler must not take the program down. */
    no_slot = evalhook__init() != 0;
    if (PyModule_AddIntConstant(m, "TRAMPOLINE_SIZE", PYPERFMAP_TRAMPOLINE_SIZE) != 0
        || PyModule_AddIntConstant(m, "ARENA_SIZE", PYPERFMAP_ARENA_SIZE) != 0
        || PyModule_AddStringConstant(m, "ARENA_SYMBOL", PYPERFMAP_ARENA_SYMBOL) != 0
        || spans__add_type(m) != 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
#pragma GCC visibility pop
