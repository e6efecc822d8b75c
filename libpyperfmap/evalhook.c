/*
 * evalhook.c - the PEP 523 eval-frame hook.  What it reads of CPython's
 * internals, version by version, it reads through cpython/cpython.h.
 *
 * The hook is the hot path of every Python call while enabled: find the
 * code object's trampoline in its co_extra slot and call the real evaluator
 * through it.  Only the first call of a code object takes the slow path.
 */
#include "evalhook.h"

#include "arena.h"
#include "stackpages.h"
#include "tasks.h"
#include "trampoline.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/cpython.h"

/* ---- frames ------------------------------------------------------------ */

/* The activation identity each trampoline keeps in its frame (trampoline.h):
 * the number of calls through the hook so far, in its low 32 bits, and the
 * caller's position in the high ones (ACTIVATION).  The hook runs with the
 * GIL held, so a plain counter gives every call its own number until it
 * wraps, and costs one increment; 32 bits of it are zero-extended for free. */
static uint32_t activations;

/* The path identity (trampoline.h), kept only by the path hook: the
 * thread's chain of running trampolines, folded.  Per thread, since each
 * has its own stack; initial-exec keeps its access to one %fs-relative
 * load (the module is small enough for the static TLS that glibc reserves
 * for dlopen). */
static _Thread_local uint64_t path __attribute__((tls_model("initial-exec"))) = PYPERFMAP_PATH_ROOT;

/* ---- the caller's position (trampoline.h) -------------------------------
 * The low 32 bits of where the calling frame is (FRAME_POS): on 3.11+ its
 * current instruction itself, which lies inside its code object; on
 * 3.8-3.10 the address of its bytecode plus f_lasti.  Either way a position
 * lies inside its own code's bytes, which no other live code object's
 * overlap, so a position read against another code's range names no line.
 * code_base() and code_unit say the same to the line file. */

/* The next activation identity of a call of frame (trampoline.h), with the
 * caller's position; 0 there, outside any range, when no Python frame
 * called. */
static inline uint64_t caller_word(frame_t *caller)
{
    return caller ? (uint64_t)FRAME_POS(caller) << 32 : 0;
}
#define ACTIVATION(frame) (caller_word(CALLER_FRAME(frame)) | ++activations)

/* ---- the negative cache -------------------------------------------------
 * A code object whose trampoline could not be made (the arena refused, the
 * map broken, the interpreter exiting, a name that is not UTF-8) caches this
 * instead: it has a trampoline's signature and calls the evaluator directly,
 * so later calls take the hot path and never the slow one again.  Aligned so
 * that bit 0 (the pending-name tag) is clear. */
__attribute__((aligned(16))) static PyObject *no_trampoline(TRAMPOLINE_PARAMS, void *eval,
                                                            uint64_t activation, uint64_t parent)
{
    (void)activation;
    (void)parent;
    return EVAL_WITH(eval);
}

/* Evaluates the frame through trampoline t, which names it to perf and
 * keeps its activation; a tail call.  The caller's path is 0: unknown. */
#define CALL_TRAMPOLINE(t) \
    ((trampoline_fn)(t))(TRAMPOLINE_ARGS, (void *)_PyEval_EvalFrameDefault, ACTIVATION(frame), 0)

/* The same, keeping the thread's path too.  Restoring it on return costs
 * the hook its tail call (24 instructions per call in all), which is why
 * only the path hook does it.  no_trampoline has no key slot: key 0. */
static inline PyObject *call_through_path(HOOK_PARAMS, void *t, void *eval)
{
    uint64_t parent = path;
    path = pyperfmap_path__step(parent, t == (void *)no_trampoline ? 0 : *arena__key(t));
    PyObject *r = ((trampoline_fn)t)(TRAMPOLINE_ARGS, eval, ACTIVATION(frame), parent);
    path = parent;
    return r;
}

static inline PyObject *call_trampoline_path(HOOK_PARAMS, void *t)
{
    return call_through_path(HOOK_ARGS, t, (void *)_PyEval_EvalFrameDefault);
}

typedef _PyFrameEvalFunction evalfunc_t;

/* ---- the co_extra slot ---------------------------------------------------
 * It holds the code object's trampoline.  On 3.8-3.10, where code objects
 * have no co_qualname, it can instead hold a pending qualified name (a
 * malloc'd string tagged with bit 0), set when the enclosing module, class
 * or function first ran, and replaced by the trampoline on the first call. */

static Py_ssize_t extra_index = -1;

/* Mirror of the private _PyCodeObjectExtra of Objects/codeobject.c (same
 * layout from 3.6 to 3.14): read on the hot path without a call. */
typedef struct {
    Py_ssize_t ce_size;
    void *ce_extras[1];
} code_extra;

static inline void *slot_get(PyObject *code)
{
    code_extra *ex = ((PyCodeObject *)code)->co_extra;
    return ex != NULL && extra_index < ex->ce_size ? ex->ce_extras[extra_index] : NULL;
}

#define PENDING(p) (((uintptr_t)(p) & 1u) != 0)
#define PENDING_NAME(p) ((char *)((uintptr_t)(p) & ~(uintptr_t)1))

/* Called when a code object dies: trampolines stay (they may be on a
 * stack), pending names are freed. */
static void slot_free(void *p)
{
    if (PENDING(p))
        free(PENDING_NAME(p));
}

int evalhook__init(void)
{
    extra_index = RequestCodeExtraIndex(slot_free);
    return extra_index < 0 ? -ENOSPC : 0;     /* other tools took every slot */
}

/* ---- names -------------------------------------------------------------- */

#if !CPYTHON_QUALNAME
/* Records "<qualname>.<name>" (class body) or "<qualname>.<locals>.<name>"
 * (function) as the pending qualname of each code object nested in `code`,
 * as the compiler computes __qualname__. */
static void name_children(PyObject *code, const char *qualname, size_t qlen)
{
    PyCodeObject *co = (PyCodeObject *)code;
    int module = strcmp(qualname, "<module>") == 0;
    const char *sep = (co->co_flags & CO_NEWLOCALS) ? ".<locals>." : ".";
    size_t slen = strlen(sep);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(co->co_consts); i++) {
        PyObject *child = PyTuple_GET_ITEM(co->co_consts, i);
        if (!PyCode_Check(child) || slot_get(child) != NULL)
            continue;
        Py_ssize_t nlen;
        const char *n = PyUnicode_AsUTF8AndSize(((PyCodeObject *)child)->co_name, &nlen);
        if (n == NULL)
            return;
        size_t len = module ? (size_t)nlen : qlen + slen + (size_t)nlen;
        char *q = malloc(len + 1);
        if (q == NULL)
            return;
        if (module) {
            memcpy(q, n, (size_t)nlen);
        } else {
            memcpy(q, qualname, qlen);
            memcpy(q + qlen, sep, slen);
            memcpy(q + qlen + slen, n, (size_t)nlen);
        }
        q[len] = '\0';
        if (Code_SetExtra(child, extra_index, (void *)((uintptr_t)q | 1u)) != 0)
            free(q);
    }
}
#endif

static unsigned long first_calls;  /* slow-path entries, for tests; under the GIL */

unsigned long evalhook__first_calls(void)
{
    return first_calls;
}

/* ---- line tables -------------------------------------------------------
 * One line of the line file per trampoline, written with its map entry:
 *   <trampoline> <base> <bytes> <unit> <offset>:<line>...
 * in hex but for unit and the lines, where unit is what one step of a
 * position is in bytes, and each <offset>:<line> starts a run of bytecode
 * on one line (-1: none).  A position p of the caller (trampoline.h) names
 * byte offset ((p - base) mod 2^32) * unit when that is below <bytes>.
 * Runs come from co_lines() (3.10+) or co_lnotab (3.8-3.9), once per code
 * object, not from PyCode_Addr2Line, which walks the table from its start
 * on each call. */
struct linebuf {
    char *p;
    size_t len, cap, runs;
    long last;      /* the line of the last run written */
};

/* Room for one more field of up to 96 bytes. */
static int linebuf__room(struct linebuf *b)
{
    if (b->cap - b->len >= 96)
        return 0;
    size_t cap = b->cap * 2 + 256;
    char *p = realloc(b->p, cap);
    if (p == NULL)
        return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

/* A run of bytecode from byte offset off on line (-1: none). */
static int linebuf__run(struct linebuf *b, unsigned long off, long line)
{
    if (b->runs && line == b->last)
        return 0;
    if (linebuf__room(b) != 0)
        return -1;
    b->last = line;
    b->runs++;
    b->len += (size_t)snprintf(b->p + b->len, b->cap - b->len, " %lx:%ld", off, line);
    return 0;
}

#if !CPYTHON_LNOTAB
static int code_runs(PyObject *code, struct linebuf *b)
{
    PyObject *it = PyObject_CallMethod(code, "co_lines", NULL), *t;
    if (it == NULL)
        return -1;
    int rc = 0;
    while (rc == 0 && (t = PyIter_Next(it)) != NULL) {
        PyObject *line = PyTuple_Check(t) && PyTuple_GET_SIZE(t) == 3 ? PyTuple_GET_ITEM(t, 2) : NULL;
        long start = line ? PyLong_AsLong(PyTuple_GET_ITEM(t, 0)) : -1;
        rc = start < 0 ? -1 : linebuf__run(b, (unsigned long)start,
                                            line == Py_None ? -1 : PyLong_AsLong(line));
        Py_DECREF(t);
    }
    Py_DECREF(it);
    return rc != 0 || PyErr_Occurred() ? -1 : 0;
}
#else
/* co_lnotab's pairs of (byte, signed line) increments, as dis.findlinestarts
 * reads them. */
static int code_runs(PyObject *code, struct linebuf *b)
{
    PyCodeObject *co = (PyCodeObject *)code;
    const unsigned char *t = (const unsigned char *)PyBytes_AS_STRING(co->co_lnotab);
    Py_ssize_t n = PyBytes_GET_SIZE(co->co_lnotab);
    unsigned long addr = 0;
    long line = co->co_firstlineno;
    for (Py_ssize_t i = 0; i + 1 < n; i += 2) {
        if (t[i] != 0 && linebuf__run(b, addr, line) != 0)
            return -1;
        addr += t[i];
        line += (signed char)t[i + 1];
    }
    return linebuf__run(b, addr, line);
}
#endif

/* Writes trampoline t's line; a failure leaves its frames without lines. */
static void write_lines(PyObject *code, void *t)
{
    PyCodeObject *co = (PyCodeObject *)code;
    struct linebuf b = {NULL, 0, 0, 0, 0};
    if (linebuf__room(&b) == 0) {
        b.len = (size_t)snprintf(b.p, b.cap, "%lx %lx %zx %u", (unsigned long)(uintptr_t)t,
                                 (unsigned long)code_base(co), code_bytes(co), code_unit);
        if (code_runs(code, &b) == 0 && linebuf__room(&b) == 0) {
            b.p[b.len++] = '\n';
            pyperfmap__add_lines(b.p, b.len);
        }
    }
    free(b.p);
}

/* A new trampoline named "py::<qualname>:<filename>", or NULL. */
static void *new_trampoline(PyObject *code)
{
    PyCodeObject *co = (PyCodeObject *)code;
    const char *q;
    Py_ssize_t qlen, flen;
#if CPYTHON_QUALNAME
    q = PyUnicode_AsUTF8AndSize(co->co_qualname, &qlen);
#else
    void *slot = slot_get(code);
    if (PENDING(slot)) {
        q = PENDING_NAME(slot);
        qlen = (Py_ssize_t)strlen(q);
    } else {
        q = PyUnicode_AsUTF8AndSize(co->co_name, &qlen);
    }
#endif
    const char *f = PyUnicode_AsUTF8AndSize(co->co_filename, &flen);
    if (q == NULL || f == NULL)
        return NULL;
    size_t len = 4 + (size_t)qlen + 1 + (size_t)flen;
    char stackbuf[512];
    char *name = len < sizeof stackbuf ? stackbuf : malloc(len + 1);
    if (name == NULL)
        return NULL;
    memcpy(name, "py::", 4);
    memcpy(name + 4, q, (size_t)qlen);
    name[4 + qlen] = ':';
    memcpy(name + 5 + qlen, f, (size_t)flen);
    void *t = pyperfmap__new_trampoline(name, len);
    if (t != NULL)
        write_lines(code, t);
#if !CPYTHON_QUALNAME
    if (t != NULL)
        name_children(code, q, (size_t)qlen);
#endif
    if (name != stackbuf)
        free(name);
    return t;
}

/* The code object's new trampoline, or no_trampoline, cached in its
 * co_extra slot.  May leave a Python exception set: the caller restores the
 * one being raised, if any. */
static void *code_trampoline(PyObject *code)
{
    void *t = new_trampoline(code);
    if (t == NULL)
        t = (void *)no_trampoline;
    /* Replacing a pending name frees it through slot_free.  Without the
     * cache (no memory for co_extra) every call would make a new trampoline:
     * stop making them, as for any other failure. */
    if (Code_SetExtra(code, extra_index, t) != 0)
        pyperfmap__fail("cannot cache a trampoline in its code object (out of memory)");
    return t;
}

/* ---- static probes (USDT) ------------------------------------------------
 * CPython's standard markers (markers.h).  While no one traces, they cost
 * two loads and a branch that is never taken: a tracer raises a marker's
 * semaphore while it is attached, and only then does a call go through
 * traced_call. */
#ifdef PYPERFMAP_USDT
#  include "markers.h"

/* What this evaluation of a frame is (markers.h).  A frame owned by a
 * generator or coroutine has started its body once its position is past
 * where the body starts (FRAME_STARTED).  On 3.11+ a generator function's
 * own call evaluates its frame, not owned by a generator yet, only to create
 * the generator; before 3.11 that call evaluated no frame. */
#  define GEN_FLAGS (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR)
static enum markers_kind frame_kind(frame_t *frame, PyObject *code, int throwflag)
{
    PyCodeObject *co = (PyCodeObject *)code;
    if (!(co->co_flags & GEN_FLAGS))
        return MARKERS_CALL;
    if (FRAME_GEN(frame) == NULL)
        return MARKERS_NO_CALL;
    if (FRAME_STARTED(frame, co))
        return MARKERS_RESUME;
    return throwflag ? MARKERS_NO_CALL : MARKERS_CALL;
}

/* A call while a tracer is attached.  Its frame sits between a Python
 * frame's trampoline and its caller's only then; pymerge's plumbing. */
__attribute__((noinline)) static PyObject *pyperfmap_traced_call(HOOK_PARAMS, void *t,
                                                                  int with_path)
{
    struct markers_call c;
    PyObject *code = FRAME_CODE(frame);
    markers__enter(&c, code, t, markers__is_import(code) ? FRAME_ARG0(frame) : NULL,
                   frame_kind(frame, code, throwflag));
    PyObject *r = with_path ? call_trampoline_path(HOOK_ARGS, t) : CALL_TRAMPOLINE(t);
    markers__leave(&c, t, r);
    return r;
}
#  define IF_TRACED_CALL(t, with_path) \
    if (MARKERS_TRACED()) return pyperfmap_traced_call(HOOK_ARGS, t, with_path)
#  include "spans.h"
#  define SPANS_SWITCH() spans__switch()
#else
#  define IF_TRACED_CALL(t, with_path) (void)0
#  define SPANS_SWITCH() (void)0
#endif

/* ---- the hooks ---------------------------------------------------------- */

static void tasks_note_code(PyObject *code);

/* The first call of a code object while enabled: its new trampoline, or
 * no_trampoline, cached. */
__attribute__((noinline, cold)) static void *pyperfmap_first_call(PyObject *code)
{
    void *t;
    first_calls++;
    tasks_note_code(code);
    struct raised raised;
    raised__save(&raised);
    t = code_trampoline(code);
    PyErr_Clear();
    raised__restore(&raised);
    return t;
}

/* The code object's cached trampoline, or NULL before its first call. */
static inline void *cached_trampoline(PyObject *code)
{
    void *t = slot_get(code);
#if CPYTHON_QUALNAME
    return t;
#else
    return PENDING(t) ? NULL : t;
#endif
}

/* The plain hook's first call of a code object: out of line and
 * tail-called, so that the hot path needs no frame of its own. */
__attribute__((noinline, cold)) static PyObject *pyperfmap_first_eval(HOOK_PARAMS)
{
    void *t = pyperfmap_first_call(FRAME_CODE(frame));
    IF_TRACED_CALL(t, 0);
    return CALL_TRAMPOLINE(t);
}

static PyObject *pyperfmap_eval_path(HOOK_PARAMS);

/* The path hook's first call of a code object, tail-called as in the plain
 * hook.  It goes back into the hook once the trampoline is cached, so that
 * a first call leaves the same native frames as any later one (pymerge
 * learns what each path continues with from them). */
__attribute__((noinline, cold)) static PyObject *pyperfmap_first_eval_path(HOOK_PARAMS)
{
    PyObject *code = FRAME_CODE(frame);
    void *t = pyperfmap_first_call(code);
    if (cached_trampoline(code) == t)
        return get_eval()(HOOK_ARGS);       /* the path hook, with tasks or not */
    return call_trampoline_path(HOOK_ARGS, t);     /* not cached (out of memory) */
}

/* ---- asyncio task frames (tasks.h) ---------------------------------------
 * Once asyncio is imported, the hook enters a task's frames, and those of
 * the tasks awaiting it, just before its coroutine's own frame.  Each task
 * frame's trampoline calls pyperfmap_next_task_frame as its evaluator.  The frames
 * still to enter can be one static record: no Python code runs, so the GIL
 * is not let go, between filling it and entering the coroutine's frame. */
static int tasks_on;    /* asyncio was imported: install the hooks with tasks */
static int tasks_refused;                 /* evalhook__task_frames(0) */
static struct {
    void *const *next, *const *end;     /* tasks__frames's, still to enter */
    void *code_t;       /* the coroutine frame's own trampoline */
} pending_tasks;

/* A task frame's evaluator, in two kinds so that neither asks which it is. */
static PyObject *pyperfmap_next_task_frame(HOOK_PARAMS)
{
    if (pending_tasks.next < pending_tasks.end)
        return ((trampoline_fn)*pending_tasks.next++)(TRAMPOLINE_ARGS,
                                                     (void *)pyperfmap_next_task_frame,
                                                     ACTIVATION(frame), 0);
    return CALL_TRAMPOLINE(pending_tasks.code_t);
}

static PyObject *pyperfmap_next_task_frame_path(HOOK_PARAMS)
{
    if (pending_tasks.next < pending_tasks.end)
        return call_through_path(HOOK_ARGS, *pending_tasks.next++,
                                 (void *)pyperfmap_next_task_frame_path);
    return call_trampoline_path(HOOK_ARGS, pending_tasks.code_t);
}

/* Whether the frame that resumes this one is a coroutine's: then this one
 * is awaited inside a task step, not the task's own coroutine. */
static inline int resumed_by_coroutine(frame_t *caller)
{
    PyObject *code = caller ? FRAME_CODE(caller) : NULL;
    return code && PyCode_Check(code) && (((PyCodeObject *)code)->co_flags & CO_COROUTINE);
}

/* A coroutine frame about to start or resume, with trampoline t, that no
 * coroutine resumes.  A throw (a cancellation) comes with its exception
 * set: no task frames then.  tasks__frames may run Python code, but never a
 * task step, so it fills the record itself. */
__attribute__((noinline)) static PyObject *pyperfmap_coroutine_eval(HOOK_PARAMS, void *t,
                                                                     int with_path)
{
    PyObject *gen = FRAME_GEN(frame);
    if (!throwflag)
        SPANS_SWITCH();     /* the task's own current span, from now on */
    /* Into the record, not a local: then the calls below are tail calls. */
    int n = gen && !throwflag ? tasks__frames(gen, &pending_tasks.next) : 0;
    if (n == 0)
        return with_path ? call_trampoline_path(HOOK_ARGS, t) : CALL_TRAMPOLINE(t);
    pending_tasks.end = pending_tasks.next + n;
    pending_tasks.code_t = t;
    return with_path ? pyperfmap_next_task_frame_path(HOOK_ARGS) : pyperfmap_next_task_frame(HOOK_ARGS);
}

/* A thread's first call through the hook: its stack pages are mapped
 * (stackpages.h), then the call goes on as any other. */
__attribute__((noinline, cold)) static PyObject *pyperfmap_first_in_thread(HOOK_PARAMS)
{
    stackpages__map();
    return get_eval()(HOOK_ARGS);
}

/* The hooks, with `with_path` and `with_tasks` constants in each. */
__attribute__((always_inline)) static inline PyObject *eval_hook(HOOK_PARAMS, int with_path,
                                                                 int with_tasks)
{
    if (__builtin_expect(!stackpages__mapped, 0))
        return pyperfmap_first_in_thread(HOOK_ARGS);
    PyObject *code = FRAME_CODE(frame);
    if (!IS_CODE(code))     /* an interpreter's shim frame (3.13+): no trampoline */
        return EVAL_DEFAULT(frame);
    void *t = cached_trampoline(code);
    if (__builtin_expect(t == NULL, 0))
        return with_path ? pyperfmap_first_eval_path(HOOK_ARGS) : pyperfmap_first_eval(HOOK_ARGS);
    IF_TRACED_CALL(t, with_path);
    if (with_tasks && (((PyCodeObject *)code)->co_flags & CO_COROUTINE)
        && !resumed_by_coroutine(CALLER_FRAME(frame)))
        return pyperfmap_coroutine_eval(HOOK_ARGS, t, with_path);
    return with_path ? call_trampoline_path(HOOK_ARGS, t) : CALL_TRAMPOLINE(t);
}

/* The hot path of every Python call while enabled.  Named for pymerge,
 * which removes it from mixed stacks as interpreter plumbing.  It
 * tail-calls the trampoline: the trampoline's frame record then links to
 * the hook's caller, and a `perf record -g` walk goes on from there. */
static PyObject *pyperfmap_eval(HOOK_PARAMS)
{
    return eval_hook(HOOK_ARGS, 0, 0);
}

/* The hook with the path identity (enable(paths=True)).  Its own frame
 * keeps a frame pointer (meson.build), so a `perf record -g` walk goes
 * through it to the Python caller. */
static PyObject *pyperfmap_eval_path(HOOK_PARAMS)
{
    return eval_hook(HOOK_ARGS, 1, 0);
}

/* The two hooks once asyncio is imported. */
static PyObject *pyperfmap_eval_tasks(HOOK_PARAMS)
{
    return eval_hook(HOOK_ARGS, 0, 1);
}

static PyObject *pyperfmap_eval_path_tasks(HOOK_PARAMS)
{
    return eval_hook(HOOK_ARGS, 1, 1);
}

/* The benchmark's floor: what any PEP 523 hook costs before it does work. */
static PyObject *pyperfmap_noop_eval(HOOK_PARAMS)
{
    return EVAL_DEFAULT(frame);
}

enum evalhook_owner evalhook__owner(void)
{
    evalfunc_t f = get_eval();
    if (f == NULL || f == _PyEval_EvalFrameDefault)
        return EVALHOOK_DEFAULT;
    if (f == pyperfmap_eval || f == pyperfmap_eval_path || f == pyperfmap_eval_tasks
        || f == pyperfmap_eval_path_tasks)
        return EVALHOOK_OURS;
    if (f == pyperfmap_noop_eval)
        return EVALHOOK_NOOP;
    return EVALHOOK_OTHER;
}

static evalfunc_t our_hook(int paths)
{
    if (tasks_on && !tasks_refused)
        return paths ? pyperfmap_eval_path_tasks : pyperfmap_eval_tasks;
    return paths ? pyperfmap_eval_path : pyperfmap_eval;
}

void evalhook__set(enum evalhook_owner owner, int paths)
{
    tasks_on |= owner == EVALHOOK_OURS && tasks__imported();
    set_eval(owner == EVALHOOK_OURS ? our_hook(paths)
             : owner == EVALHOOK_NOOP ? pyperfmap_noop_eval
             : _PyEval_EvalFrameDefault);
}

int evalhook__paths(void)
{
    evalfunc_t f = get_eval();
    return f == pyperfmap_eval_path || f == pyperfmap_eval_path_tasks;
}

/* On the first call of each code object: asyncio's import switches to the
 * hooks with tasks, so that programs without asyncio never pay for them. */
static void tasks_note_code(PyObject *code)
{
    if (tasks_on || !tasks__seen_asyncio(code))
        return;
    tasks_on = 1;
    if (evalhook__owner() == EVALHOOK_OURS)
        set_eval(our_hook(evalhook__paths()));
}

void evalhook__task_frames(int on)
{
    tasks_refused = !on;
    if (evalhook__owner() == EVALHOOK_OURS)
        set_eval(our_hook(evalhook__paths()));
}
