/* heapsample.c - Python's allocations sampled by bytes (see heapsample.h). */
#define PY_SSIZE_T_CLEAN
#include "heapsample.h"
#include "sampler.h"

#include <dlfcn.h>
#include <errno.h>

#ifdef PYPERFMAP_USDT
#  define _SDT_HAS_SEMAPHORES 1
#  include <sys/sdt.h>
__attribute__((section(".probes"))) volatile unsigned short pyperfmap_alloc_semaphore;
__attribute__((section(".probes"))) volatile unsigned short pyperfmap_free_semaphore;
__attribute__((section(".probes"))) volatile unsigned short pyperfmap_finalize_semaphore;
#  define TRACED(probe) __builtin_expect(pyperfmap_##probe##_semaphore != 0, 0)
#else
#  define TRACED(probe) 0
#  define STAP_PROBE(p, n) (void)0
#  define STAP_PROBE1(p, n, a) (void)(a)
#  define STAP_PROBE3(p, n, a, b, c) (void)(a), (void)(b), (void)(c)
#endif

#define N_DOMAINS 3
static const PyMemAllocatorDomain domains[N_DOMAINS] = {PYMEM_DOMAIN_RAW, PYMEM_DOMAIN_MEM,
                                                        PYMEM_DOMAIN_OBJ};
static PyMemAllocatorEx under[N_DOMAINS];   /* the allocators installed before ours */
static PyMemAllocatorEx ours[N_DOMAINS];
static int installed[N_DOMAINS];
static int frees;               /* remember sampled blocks, report their frees */

/* Inside one of our wrappers: an allocation it makes through another
 * domain, or through the malloc interposer, is its own. */
static SAMPLER_TLS int inside;

/* Out of line: the probe's site is in the sampled path only. */
__attribute__((noinline)) static void sampled_python_alloc(void *ptr, size_t size, uint64_t weight)
{
    if (!ptr || !TRACED(alloc))
        return;
    if (frees)
        sampler__remember((uintptr_t)ptr);  /* full: its free goes unreported */
    STAP_PROBE3(pyperfmap, alloc, ptr, size, weight);
}

/* One site for the probe, as for alloc's. */
__attribute__((noinline)) static void freed(void *ptr)
{
    STAP_PROBE1(pyperfmap, free, ptr);
}

static inline void released(void *ptr)
{
    if (frees && ptr && sampler__forget((uintptr_t)ptr))
        freed(ptr);
}

/* p, a new block of size bytes, reported if the sampler takes it. */
static inline void *taken(void *p, size_t size)
{
    uint64_t w;
    if (p && sampler__take(size, &w))
        sampled_python_alloc(p, size, w);
    return p;
}

enum op { OP_MALLOC, OP_CALLOC, OP_REALLOC };

static inline void *call(PyMemAllocatorEx *a, enum op op, void *ptr, size_t nelem, size_t size)
{
    switch (op) {
    case OP_MALLOC:
        return a->malloc(a->ctx, size);
    case OP_CALLOC:
        return a->calloc(a->ctx, nelem, size);
    default:
        return a->realloc(a->ctx, ptr, size);
    }
}

/* The allocation op through the allocator under ours (ctx), reported if
 * the sampler takes it, unless another of our wrappers made it.  A block
 * that moves or grows (realloc) is the old one freed and a new one
 * allocated, as tcmalloc counts it. */
static inline void *wrapped(void *ctx, enum op op, void *ptr, size_t nelem, size_t size)
{
    PyMemAllocatorEx *a = ctx;
    if (inside)
        return call(a, op, ptr, nelem, size);
    inside = 1;
    void *p = call(a, op, ptr, nelem, size);
    inside = 0;
    if (op == OP_REALLOC) {
        if (!p)
            return p;           /* ptr is still there */
        released(ptr);
    }
    return taken(p, nelem * size);  /* a calloc product that overflows failed above */
}

static void *hs_malloc(void *ctx, size_t size)
{
    return wrapped(ctx, OP_MALLOC, NULL, 1, size);
}

static void *hs_calloc(void *ctx, size_t nelem, size_t elsize)
{
    return wrapped(ctx, OP_CALLOC, NULL, nelem, elsize);
}

static void *hs_realloc(void *ctx, void *ptr, size_t size)
{
    return wrapped(ctx, OP_REALLOC, ptr, 1, size);
}

static void hs_free(void *ctx, void *ptr)
{
    PyMemAllocatorEx *a = ctx;
    if (inside) {
        a->free(a->ctx, ptr);
        return;
    }
    released(ptr);
    inside = 1;
    a->free(a->ctx, ptr);
    inside = 0;
}

/* For the malloc interposer: whether this thread is inside a wrapper. */
static int in_python_allocator(void)
{
    return inside;
}

static void install(int raw)
{
    for (int d = 0; d < N_DOMAINS; d++) {
        if (installed[d] || (domains[d] == PYMEM_DOMAIN_RAW && !raw))
            continue;
        PyMem_GetAllocator(domains[d], &under[d]);
        ours[d] = (PyMemAllocatorEx){&under[d], hs_malloc, hs_calloc, hs_realloc, hs_free};
        PyMem_SetAllocator(domains[d], &ours[d]);
        installed[d] = 1;
    }
}

/* Puts back what was there, when ours is still what is installed (another
 * wrapper on top of ours, tracemalloc's, stays, and so does ours under it). */
static void uninstall(void)
{
    for (int d = 0; d < N_DOMAINS; d++) {
        PyMemAllocatorEx now;
        if (!installed[d])
            continue;
        PyMem_GetAllocator(domains[d], &now);
        if (now.ctx != &under[d])
            continue;
        PyMem_SetAllocator(domains[d], &under[d]);
        installed[d] = 0;
    }
}

PyObject *heapsample__py(PyObject *self, PyObject *args)
{
    long long rate;
    int want_frees = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "L|p:heap_sample", &rate, &want_frees))
        return NULL;
    if (rate < 0) {
        PyErr_Format(PyExc_ValueError, "pyperfmap: heap_sample: the sampling rate must be a "
                     "positive number of bytes (0 stops), not %lld", rate);
        return NULL;
    }
    if (rate == 0) {
        uninstall();
        Py_RETURN_NONE;
    }
#ifndef PYPERFMAP_USDT
    PyErr_SetString(PyExc_RuntimeError, "pyperfmap: built without sys/sdt.h: no static probes"
                    " to report allocations with");
    return NULL;
#endif
    if (sampler__init(rate) != 0)
        return PyErr_NoMemory();
    frees = want_frees;
    /* The interposer sees what the raw domain gets from malloc: it counts
     * those, and leaves to us what our wrappers get from it. */
    void (*filter)(int (*)(void)) =
        (void (*)(int (*)(void)))dlsym(RTLD_DEFAULT, "pyperfmap_preload__filter");
    if (filter)
        filter(in_python_allocator);
    install(filter == NULL);
    Py_RETURN_NONE;
}

void heapsample__finalize(void)
{
    if (TRACED(finalize))
        STAP_PROBE(pyperfmap, finalize);
}
