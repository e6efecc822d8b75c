/*
 * heapsample.h - Python's allocations sampled by bytes (sampler.h), as
 * static probes that cost nothing while no one traces them:
 *
 *   pyperfmap:alloc(ptr, bytes, weight)  a sampled allocation of bytes at
 *                                        ptr, standing for weight bytes
 *   pyperfmap:free(ptr)                  a sampled block freed (only when
 *                                        frees are asked for)
 *   pyperfmap:finalize()                 the program's own code is done
 *                                        (atexit): live blocks now are
 *                                        what it leaves behind
 *
 * The raw, mem and object domains are wrapped as tracemalloc wraps them:
 * the allocators installed before stay underneath, so this can be switched
 * on in a running process and blocks allocated before are freed as always.
 * A block that one domain's allocator gets from another (pymalloc's big
 * blocks come from the raw domain, its arenas from mmap) counts once, as
 * the outer domain's.
 */
#ifndef PYPERFMAP_HEAPSAMPLE_H
#define PYPERFMAP_HEAPSAMPLE_H

#include <Python.h>

/* _pyperfmap.heap_sample(rate, frees=False): rate > 0 installs the
 * wrappers (or changes the rate), 0 removes them. */
PyObject *heapsample__py(PyObject *self, PyObject *args);

/* Fires pyperfmap:finalize (from the atexit hook). */
void heapsample__finalize(void);

#define HEAPSAMPLE_METHOD \
    {"heap_sample", heapsample__py, METH_VARARGS, \
     "heap_sample(rate, frees=False)\n\nSample Python's allocations, one per rate bytes on " \
     "average, as the static probe pyperfmap:alloc (and pyperfmap:free of the sampled blocks " \
     "with frees); rate 0 stops.  ValueError for a negative rate."}

#endif
