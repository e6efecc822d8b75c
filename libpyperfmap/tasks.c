/*
 * tasks.c - which asyncio task runs a coroutine, who awaits that task, and
 * the trampoline that names each task (tasks.h).
 *
 * The running task is the value for its loop in asyncio.tasks's
 * _current_tasks dict, in 3.8 to 3.13, with the C accelerator or without
 * (the accelerator exports its own dict under that name).  A task step
 * resumes the task's coroutine, so a coroutine frame is the task's outermost
 * one when its generator is a running task's coroutine.
 *
 * Who awaits a task is found as CPython 3.14's capture_call_graph() finds
 * it, from the task's done-callbacks: a task's wake-up (a bound method, or
 * the accelerator's own wrapper), a function whose closure holds the outer
 * future of a gather(), or a bound method of an object with a
 * _parent_task (TaskGroup).  The walk is redone on every step, because
 * awaiting changes (a task created first is awaited later); it reads the
 * accelerator's structures directly (tasks_cpython.h) and allocates
 * nothing.
 */
#include "tasks.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "evalhook.h"
#include "tasks_cpython.h"

static int unusable;     /* not the asyncio this file knows: no task frames */
static PyObject *current_tasks;                 /* asyncio.tasks._current_tasks */
static PyTypeObject *c_future, *c_task;         /* _asyncio's, or NULL */
static PyTypeObject *py_future, *py_task;       /* asyncio's pure-Python classes */
static PyTypeObject *py_gathering;              /* gather()'s outer future's, or NULL */
#ifdef TASK_WAKEUP_WRAPPER_NAME
static PyTypeObject *wakeup_wrapper;            /* once seen */
#endif
static Py_ssize_t c_coro_offset;                /* of the C Task's coroutine; 0: not learnt */
static PyObject *names;                         /* frame name -> trampoline address */
static PyObject *s_coro, *s_callbacks, *s_parent_task, *s_get_name, *s_qualname;

int tasks__seen_asyncio(PyObject *code)
{
    PyCodeObject *co = (PyCodeObject *)code;
    const char *name = PyUnicode_AsUTF8(co->co_name);
    const char *file = PyUnicode_AsUTF8(co->co_filename);
    static const char tail[] = "/asyncio/tasks.py";
    size_t n = file ? strlen(file) : 0, k = sizeof tail - 1;
    if (!name || !file) {
        PyErr_Clear();
        return 0;
    }
    return strcmp(name, "<module>") == 0 && n >= k && strcmp(file + n - k, tail) == 0;
}

int tasks__imported(void)
{
    PyObject *name = PyUnicode_FromString("asyncio.tasks");
    PyObject *m = name ? PyImport_GetModule(name) : NULL;
    int r = m && PyModule_Check(m);
    Py_XDECREF(name);
    Py_XDECREF(m);
    PyErr_Clear();
    return r;
}

/* module.attr as a type, or NULL. */
static PyTypeObject *module_type(const char *module, const char *attr)
{
    PyObject *name = PyUnicode_FromString(module);
    PyObject *m = name ? PyImport_GetModule(name) : NULL;
    PyObject *t = m && PyModule_Check(m) ? PyObject_GetAttrString(m, attr) : NULL;
    Py_XDECREF(name);
    Py_XDECREF(m);
    if (t && !PyType_Check(t))
        Py_CLEAR(t);
    PyErr_Clear();
    return (PyTypeObject *)t;
}

/* Finds asyncio's state once asyncio.tasks has run to its end: 0; until
 * then (its import runs coroutines of its own rarely) -EAGAIN; -ENOTSUP,
 * for good, when it is not the asyncio this file knows. */
static int resolve(void)
{
    PyObject *name = PyUnicode_FromString("asyncio.tasks");
    PyObject *m = name ? PyImport_GetModule(name) : NULL;
    PyObject *ct = m ? PyObject_GetAttrString(m, "_current_tasks") : NULL;
    Py_XDECREF(name);
    Py_XDECREF(m);
    PyErr_Clear();
    if (!ct || !PyDict_Check(ct)) {
        Py_XDECREF(ct);
        return -EAGAIN;
    }
    py_future = module_type("asyncio.futures", "_PyFuture");
    py_task = module_type("asyncio.tasks", "_PyTask");
    c_future = module_type("_asyncio", "Future");
    c_task = module_type("_asyncio", "Task");
    py_gathering = module_type("asyncio.tasks", "_GatheringFuture");
    names = PyDict_New();
    s_coro = PyUnicode_InternFromString("_coro");
    s_callbacks = PyUnicode_InternFromString("_callbacks");
    s_parent_task = PyUnicode_InternFromString("_parent_task");
    s_get_name = PyUnicode_InternFromString("get_name");
    s_qualname = PyUnicode_InternFromString("__qualname__");
    if (!py_future || !py_task || !names || !s_coro || !s_callbacks || !s_parent_task
        || !s_get_name || !s_qualname) {
        PyErr_Clear();
        unusable = 1;
        Py_DECREF(ct);
        return -ENOTSUP;
    }
    current_tasks = ct;
    return 0;
}

/* What a type is, as far as the walk cares: a few types (gather's cells:
 * int, list, loop; the futures) are asked about on every walk, so the
 * answers are cached, by type, holding the type (no other type can take
 * its address).  KIND_OWN_LIST: one of asyncio's own pure-Python future
 * classes, whose _callbacks list is made in __init__ and only ever emptied
 * and refilled in place after, so it is the same list for the future's
 * whole life. */
enum {
    KIND_OTHER = 1, KIND_FUTURE = 2, KIND_TASK = 4 | KIND_FUTURE, KIND_C_FUTURE = 8,
    KIND_OWN_LIST = 16
};
#define KIND_SLOTS 64
static struct kind_slot {
    PyTypeObject *type;
    int kind;
} kinds[KIND_SLOTS];

__attribute__((noinline)) static int learn_kind(PyTypeObject *tp, struct kind_slot *s)
{
    int c = c_future && PyType_IsSubtype(tp, c_future);
    int kind = (c_task && PyType_IsSubtype(tp, c_task)) || PyType_IsSubtype(tp, py_task)
               ? KIND_TASK
               : c || PyType_IsSubtype(tp, py_future) ? KIND_FUTURE : KIND_OTHER;
    kind |= c ? KIND_C_FUTURE : 0;
    kind |= !c && (tp == py_future || tp == py_task || tp == py_gathering) ? KIND_OWN_LIST : 0;
    Py_INCREF(tp);
    Py_XDECREF(s->type);
    *s = (struct kind_slot){tp, kind};
    return kind;
}

static inline int kind_of(PyObject *o)
{
    PyTypeObject *tp = Py_TYPE(o);
    struct kind_slot *s = &kinds[((uintptr_t)tp >> 6) % KIND_SLOTS];
    return s->type == tp ? s->kind : learn_kind(tp, s);
}

#define IS_FUTURE(o) ((kind_of(o) & KIND_FUTURE) != 0)
#define IS_TASK(o) ((kind_of(o) & KIND_TASK) == KIND_TASK)

/* The offset of the one word of the C Task `task` that holds `coro`, or -1. */
static Py_ssize_t learn_coro_offset(PyObject *task, PyObject *coro)
{
    PyObject **w = (PyObject **)task;
    Py_ssize_t found = -1, words = Py_TYPE(task)->tp_basicsize / (Py_ssize_t)sizeof *w;
    for (Py_ssize_t i = (Py_ssize_t)(sizeof(PyObject) / sizeof *w); i < words; i++)
        if (w[i] == coro) {
            if (found >= 0)
                return -1;
            found = i * (Py_ssize_t)sizeof *w;
        }
    return found;
}

static int runs_slow(PyObject *task, PyObject *gen);

/* Whether task's coroutine is gen.  A C Task's is one load once its offset
 * is learnt; otherwise task._coro. */
static inline int runs(PyObject *task, PyObject *gen)
{
    if (Py_TYPE(task) == c_task && c_coro_offset > 0)
        return *(PyObject **)((char *)task + c_coro_offset) == gen;
    return runs_slow(task, gen);
}

__attribute__((noinline)) static int runs_slow(PyObject *task, PyObject *gen)
{
    PyObject *coro = optional_attr(task, s_coro);
    if (coro && Py_TYPE(task) == c_task && c_coro_offset == 0)
        c_coro_offset = learn_coro_offset(task, coro);
    Py_XDECREF(coro);
    return coro == gen;
}

/* The future that a closure cell of function f holds (gather's outer).
 * The cell where the last one was found is tried first. */
static PyObject *future_in_closure(PyObject *f)
{
    static Py_ssize_t last_cell;
    PyObject *cl = PyFunction_GET_CLOSURE(f), *v;
    Py_ssize_t n = cl ? PyTuple_GET_SIZE(cl) : 0;
    if (last_cell < n && (v = PyCell_GET(PyTuple_GET_ITEM(cl, last_cell))) && IS_FUTURE(v))
        return v;
    for (Py_ssize_t i = 0; i < n; i++)
        if ((v = PyCell_GET(PyTuple_GET_ITEM(cl, i))) && IS_FUTURE(v)) {
            last_cell = i;
            return v;
        }
    return NULL;
}

/* The future (often a task) that done-callback cb wakes up, or NULL.
 * Borrowed: what cb refers to lives as long as cb. */
static PyObject *woken_by(PyObject *cb)
{
    PyObject *self = NULL;
    if (PyMethod_Check(cb))
        self = PyMethod_GET_SELF(cb);
    else if (PyCFunction_Check(cb))
        self = PyCFunction_GET_SELF(cb);
    else if (PyFunction_Check(cb))
        return future_in_closure(cb);
#ifdef TASK_WAKEUP_WRAPPER_NAME
    else if (Py_TYPE(cb) == wakeup_wrapper
             || (!wakeup_wrapper && strcmp(Py_TYPE(cb)->tp_name, TASK_WAKEUP_WRAPPER_NAME) == 0)) {
        wakeup_wrapper = Py_TYPE(cb);
        self = ((struct task_wakeup_wrapper *)cb)->task;
    }
#endif
    if (!self || IS_FUTURE(self))
        return self;
    /* Only asyncio's TaskGroup: another object's getattr may run any code. */
    if (strcmp(Py_TYPE(self)->tp_name, "TaskGroup") != 0)
        return NULL;
    PyObject *parent = optional_attr(self, s_parent_task);
    Py_XDECREF(parent);         /* the group keeps it */
    return parent && IS_TASK(parent) ? parent : NULL;
}

/* The most futures walked from a task to its outermost awaiter. */
#define MAX_HOPS (2 * TASKS_MAX_DEPTH)

/* The futures of the chain so far.  A callback may lead back into it:
 * shield()'s outer future has a callback closing over the inner one. */
struct seen {
    PyObject *f[MAX_HOPS + 2];
    int n;
};

/* What callback cb wakes, unless the chain has it already. */
static PyObject *woken_anew(PyObject *cb, const struct seen *seen)
{
    PyObject *w = woken_by(cb);
    for (int i = 0; w && i < seen->n; i++)
        if (seen->f[i] == w)
            return NULL;
    return w;
}

/* The first new future that one of the (callback, context) pairs of list
 * wakes. */
static PyObject *woken_by_any(PyObject *list, const struct seen *seen)
{
    for (Py_ssize_t i = 0; list && PyList_Check(list) && i < PyList_GET_SIZE(list); i++) {
        PyObject *pair = PyList_GET_ITEM(list, i);
        PyObject *w = PyTuple_Check(pair) && PyTuple_GET_SIZE(pair) > 0
                      ? woken_anew(PyTuple_GET_ITEM(pair, 0), seen) : NULL;
        if (w)
            return w;
    }
    return NULL;
}

/* The future that waits for fut to be done, or NULL. */
static PyObject *awaiter(PyObject *fut, const struct seen *seen)
{
    if (kind_of(fut) & KIND_C_FUTURE) {
        struct c_future_head *f = (struct c_future_head *)fut;
        PyObject *w = f->callback0 ? woken_anew(f->callback0, seen) : NULL;
        return w ? w : woken_by_any(f->callbacks, seen);
    }
    PyObject *list = optional_attr(fut, s_callbacks);
    PyObject *w = woken_by_any(list, seen);
    Py_XDECREF(list);           /* the future keeps it */
    return w;
}

/* ---- one trampoline per task name ---------------------------------------- */

/* "Task-<n>", the name of a task created without one. */
static int default_name(const char *n)
{
    if (strncmp(n, "Task-", 5) != 0 || !n[5])
        return 0;
    for (n += 5; *n; n++)
        if (*n < '0' || *n > '9')
            return 0;
    return 1;
}

/* The task's frame name: its name, or, for a default name, which numbers
 * every task apart, its coroutine's qualified name, so that a server making
 * a task per request gets one frame per kind of task. */
static PyObject *frame_name(PyObject *task)
{
    PyObject *name = PyObject_CallMethodObjArgs(task, s_get_name, NULL);
    const char *n = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (n && default_name(n)) {
        PyObject *coro = optional_attr(task, s_coro);
        PyObject *q = coro ? optional_attr(coro, s_qualname) : NULL;
        Py_XDECREF(coro);
        if (q && PyUnicode_Check(q)) {
            Py_SETREF(name, q);
            q = NULL;
        }
        Py_XDECREF(q);
    }
    PyObject *r = n ? PyUnicode_FromFormat("py::[task %U]", name) : NULL;
    Py_XDECREF(name);
    return r;
}

/* Distinct frame names kept before further ones share one frame. */
#define MAX_NAMES 4096

/* The trampoline named for task, made on the first use of its name. */
static void *name_trampoline(PyObject *task)
{
    PyObject *name = frame_name(task);
    if (name && PyDict_GET_SIZE(names) >= MAX_NAMES)
        Py_SETREF(name, PyUnicode_FromString("py::[task (more task names)]"));
    PyObject *have = name ? PyDict_GetItemWithError(names, name) : NULL;
    void *t = have ? PyLong_AsVoidPtr(have) : NULL;
    Py_ssize_t len;
    const char *s = name && !have && !PyErr_Occurred() ? PyUnicode_AsUTF8AndSize(name, &len) : NULL;
    if (s && (t = pyperfmap__new_trampoline(s, (size_t)len)) != NULL) {
        PyObject *addr = PyLong_FromVoidPtr(t);
        if (!addr || PyDict_SetItem(names, name, addr) != 0)
            t = NULL;          /* not remembered: never make a second one */
        Py_XDECREF(addr);
    }
    Py_XDECREF(name);
    PyErr_Clear();
    return t;
}

/* A direct-mapped cache task -> trampoline; a weak reference tells that the
 * task in a slot is still the one whose address it holds. */
#define CACHE_SLOTS 1024
static struct slot {
    PyObject *task;
    PyObject *weak;
    void *t;
} cache[CACHE_SLOTS];

__attribute__((noinline, cold)) static void *task_trampoline_slow(PyObject *task, struct slot *s)
{
    void *t = name_trampoline(task);
    PyObject *weak = t ? PyWeakref_NewRef(task, NULL) : NULL;
    PyErr_Clear();
    if (!weak)
        return t;
    PyObject *old = s->weak;
    *s = (struct slot){task, weak, t};
    Py_XDECREF(old);
    return t;
}

static void *task_trampoline(PyObject *task)
{
    struct slot *s = &cache[((uintptr_t)task >> 4) % CACHE_SLOTS];
    if (s->task == task && weak_is(s->weak, task))
        return s->t;
    return task_trampoline_slow(task, s);
}

/* ---- the hook's question ------------------------------------------------- */

/* The running task whose coroutine is gen, or NULL.  A coroutine is
 * resumed only by its task, so once found, a task is remembered by its
 * coroutine (a scan of the dict, or even a lookup, costs more than the rest
 * of the work of a step). */
#define GEN_SLOTS 1024
static struct gen_slot {
    PyObject *gen;
    PyObject *task;
    PyObject *weak;     /* to the task */
    PyObject *gweak;    /* to the coroutine */
} gens[GEN_SLOTS];

__attribute__((noinline)) static PyObject *find_task(PyObject *gen, struct gen_slot *s)
{
    Py_ssize_t pos = 0;
    PyObject *loop, *task;
    while (PyDict_Next(current_tasks, &pos, &loop, &task))
        if (runs(task, gen)) {
            int c = Py_TYPE(task) == c_task && c_coro_offset > 0;   /* runs() is one load */
            PyObject *weak = PyWeakref_NewRef(task, NULL);
            PyObject *gweak = weak && !c ? PyWeakref_NewRef(gen, NULL) : NULL;
            if (!weak || (!c && !gweak)) {
                Py_XDECREF(weak);
                PyErr_Clear();
                return task;
            }
            Py_XSETREF(s->weak, weak);
            Py_XSETREF(s->gweak, gweak);
            s->gen = gen;
            s->task = task;
            return task;
        }
    return NULL;
}

/* Whether slot s remembers gen's task.  While both live, the coroutine is
 * the task's: a coroutine is resumed only by its task, and the weak
 * reference tells that no new coroutine took the old one's address (an
 * eager task drops its coroutine when done).  A slot without gweak is a C
 * Task's whose coroutine field's offset is learnt: one load asks it. */
__attribute__((always_inline)) static inline int slot_holds(const struct gen_slot *s,
                                                            PyObject *gen)
{
    return s->gen == gen && weak_is(s->weak, s->task)
           && (s->gweak ? weak_is(s->gweak, gen)
                        : *(PyObject **)((char *)s->task + c_coro_offset) == gen);
}

static inline struct gen_slot *gen_slot(PyObject *gen)
{
    return &gens[((uintptr_t)gen >> 4) % GEN_SLOTS];
}

static PyObject *task_of(PyObject *gen)
{
    struct gen_slot *s = gen_slot(gen);
    return slot_holds(s, gen) ? s->task : find_task(gen, s);
}

/* ---- the chain of a task, remembered -------------------------------------
 * Who awaits a task changes only when some future of its chain gains or
 * loses a done-callback.  The chain is remembered with each future's type
 * and callbacks: the accelerator's callback fields, or a Python future's
 * _callbacks list (asyncio empties and refills that one list in place),
 * with their lengths, and a step only compares them (a weak reference
 * tells that each future is still the one at its address).  A callback
 * replaced by a new one at the same address, the list's length unchanged,
 * goes unseen until the next change. */
#define CHAIN_SLOTS 256

struct level {
    PyObject *fut, *weak, *cb0, *cbs;
    PyTypeObject *type;     /* fut's, when remembered */
    int kind;               /* kind_of(fut) */
    Py_ssize_t ncbs;
};

static struct chain_slot {
    int levels, n;                  /* levels 0: nothing remembered */
    struct level lv[MAX_HOPS + 1];  /* lv[0] is the task */
    void *frames[TASKS_MAX_DEPTH];
} chains[CHAIN_SLOTS];

static inline struct chain_slot *chain_slot(PyObject *task)
{
    return &chains[((uintptr_t)task >> 4) % CHAIN_SLOTS];
}

static inline Py_ssize_t list_len(PyObject *list)
{
    return list && PyList_Check(list) ? PyList_GET_SIZE(list) : -1;
}

/* fut's callbacks as a level holds them.  A Python future's list is kept
 * by the future: only its address is compared later, and the list of one
 * of asyncio's own classes is read while its future lives (KIND_OWN_LIST),
 * never otherwise. */
static void read_callbacks(PyObject *fut, int kind, PyObject **cb0, PyObject **cbs)
{
    if (kind & KIND_C_FUTURE) {
        struct c_future_head *f = (struct c_future_head *)fut;
        *cb0 = f->callback0;
        *cbs = f->callbacks;
        return;
    }
    *cb0 = NULL;
    *cbs = optional_attr(fut, s_callbacks);
    Py_XDECREF(*cbs);
}

static void read_level(struct level *l, PyObject *fut)
{
    l->fut = fut;
    l->type = Py_TYPE(fut);
    l->kind = kind_of(fut);
    read_callbacks(fut, l->kind, &l->cb0, &l->cbs);
    l->ncbs = list_len(l->cbs);
}

/* Whether the future of level l, a Python future other than asyncio's
 * own, still has the callbacks list it had. */
__attribute__((noinline)) static int same_list_slow(const struct level *l)
{
    PyObject *cb0, *cbs;
    read_callbacks(l->fut, l->kind, &cb0, &cbs);
    return cbs == l->cbs && list_len(cbs) == l->ncbs;
}

/* Whether the future of level l, alive, still has the callbacks it had.
 * The accelerator's futures hold a list or NULL in their field (whatever
 * their class, as __class__ can change only to one of the same layout), and
 * asyncio's own Python futures always the same list: their lengths are
 * read without asking what the object is.  Other futures' lists are looked
 * up only when may_look_up (else: not known to be the same). */
__attribute__((always_inline)) static inline int same_callbacks(const struct level *l,
                                                                int may_look_up)
{
    if (l->kind & KIND_C_FUTURE) {
        struct c_future_head *f = (struct c_future_head *)l->fut;
        return f->callback0 == l->cb0 && f->callbacks == l->cbs
               && (l->cbs ? PyList_GET_SIZE(l->cbs) : -1) == l->ncbs;
    }
    if (Py_TYPE(l->fut) != l->type)     /* __class__ was assigned */
        return 0;
    if ((l->kind & KIND_OWN_LIST) && l->ncbs >= 0)
        return PyList_GET_SIZE(l->cbs) == l->ncbs;
    return may_look_up && same_list_slow(l);
}

/* Whether c remembers task's chain, unchanged.  Level 0, the task, is
 * known to be alive; a slot that remembers nothing has no level 0. */
__attribute__((always_inline)) static inline int same_chain(const struct chain_slot *c,
                                                            PyObject *task, int may_look_up)
{
    if (c->lv[0].fut != task || !same_callbacks(&c->lv[0], may_look_up))
        return 0;
    for (int i = 1; i < c->levels; i++)
        if (!weak_is(c->lv[i].weak, c->lv[i].fut) || !same_callbacks(&c->lv[i], may_look_up))
            return 0;
    return 1;
}

static void forget(struct chain_slot *c)
{
    for (int i = 0; i < c->levels; i++)
        Py_CLEAR(c->lv[i].weak);
    c->levels = 0;
    c->lv[0].fut = NULL;
}

/* Walks from task to its outermost awaiter: fills c's frames, and c with
 * the chain when it can be remembered. */
__attribute__((noinline)) static void walk(PyObject *task, struct chain_slot *c)
{
    PyObject *chain[TASKS_MAX_DEPTH], *f = task;
    int n = 0, m = 0, levels = 0, keep = 1;
    struct seen seen = {{task}, 1};
    forget(c);
    chain[n++] = f;
    for (int hops = 0; f && hops <= MAX_HOPS; hops++) {
        if (keep && (c->lv[levels].weak = PyWeakref_NewRef(f, NULL)) != NULL)
            read_level(&c->lv[levels++], f);
        keep = keep && levels > 0 && c->lv[levels - 1].fut == f;
        if (!(f = n < TASKS_MAX_DEPTH ? awaiter(f, &seen) : NULL))
            break;
        seen.f[seen.n++] = f;
        if (IS_TASK(f))
            chain[n++] = f;
    }
    PyErr_Clear();
    while (n > 0) {
        void *t = task_trampoline(chain[--n]);
        if (t)
            c->frames[m++] = t;
    }
    c->levels = levels;
    if (!keep || f)
        forget(c);
    c->n = m;
}

/* gen's task's chain, found, and walked again if it changed; NULL when gen
 * is no running task's coroutine. */
__attribute__((noinline)) static struct chain_slot *look_up(PyObject *gen)
{
    if (unusable || (!current_tasks && resolve() != 0))
        return NULL;
    PyObject *task = task_of(gen);
    if (!task)
        return NULL;
    struct chain_slot *c = chain_slot(task);
    if (!same_chain(c, task, 1))
        walk(task, c);
    return c;
}

/* The common case, a task's next step: gen's task and its chain are what
 * they were last time, as told with loads and compares only (no call, so
 * no frame to set up). */
static inline struct chain_slot *remembered(PyObject *gen)
{
    const struct gen_slot *s = gen_slot(gen);
    if (!current_tasks || !slot_holds(s, gen))
        return NULL;
    struct chain_slot *c = chain_slot(s->task);
    return same_chain(c, s->task, 0) ? c : NULL;
}

int tasks__frames(PyObject *gen, void *const **frames)
{
    struct chain_slot *c = remembered(gen);
    if (!c && !(c = look_up(gen)))
        return 0;
    *frames = c->frames;
    return c->n;
}
