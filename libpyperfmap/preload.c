/*
 * preload.c - libpyperfmap-preload.so: the C allocator's calls sampled by
 * bytes (sampler.h), for LD_PRELOAD.  malloc, calloc, realloc, free,
 * posix_memalign, aligned_alloc, memalign and anonymous mmap/munmap go to
 * the next definition (libc's, or a malloc the program links); the sampled
 * ones fire static probes:
 *
 *   pyperfmap:native_alloc(ptr, bytes, weight)
 *   pyperfmap:native_free(ptr)       (with PYPERFMAP_ALLOC_FREES=1)
 *
 * Calls that do not go through the global scope reach it too: dlsym on
 * the C library's own handle (ctypes.CDLL("libc.so.6").malloc, cffi's
 * dlopen) and the bindings of libraries loaded with RTLD_DEEPBIND find the
 * C library's definitions, which start-up makes name these (dynsym.h).
 *
 * PYPERFMAP_ALLOC_RATE sets the mean bytes between samples (default 512
 * KiB).  An allocator must work before anything is set up: dlsym itself
 * allocates, so while the next definitions are looked up, allocations come
 * from a static buffer that free() recognises and ignores.  Nothing here
 * holds a lock while it calls the next allocator, and the one lock there is
 * (the sampled set's) is taken across fork, so forks, threads and dlopen
 * calls made from anywhere cannot deadlock on it.
 */
#define _GNU_SOURCE
/* mmap and mmap64 are both defined here: the headers must not rename one
 * to the other (off_t is 64 bits either way on LP64). */
#undef _FILE_OFFSET_BITS
#include "contract.h"
#include "dynsym.h"
#include "sampler.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
__attribute__((section(".probes"))) volatile unsigned short pyperfmap_native_alloc_semaphore;
__attribute__((section(".probes"))) volatile unsigned short pyperfmap_native_free_semaphore;

#define EXPORT __attribute__((visibility("default")))

static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);
static int (*next_posix_memalign)(void **, size_t, size_t);
static void *(*next_aligned_alloc)(size_t, size_t);
static void *(*next_memalign)(size_t, size_t);
static void *(*next_mmap)(void *, size_t, int, int, int, off_t);
static int (*next_munmap)(void *, size_t);

static int frees;
static int (*in_python)(void);  /* pyperfmap's: that allocation is Python's own */

/* What dlsym allocates while it looks up the definitions above. */
static _Alignas(16) char boot[1 << 16];
static size_t boot_used;
static int resolving, resolved;

static void *boot_alloc(size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (size > sizeof boot - boot_used)
        return NULL;
    void *p = boot + boot_used;
    boot_used += size;
    return p;           /* static memory is zeroed, and never reused */
}

static int is_boot(const void *p)
{
    return (const char *)p >= boot && (const char *)p < boot + sizeof boot;
}

#define NEXT(name) (*(void **)&next_##name = dlsym(RTLD_NEXT, #name))

/* Looks up the next definitions (the first allocation does, before any
 * thread but the first can exist); 0, or -1 while that is under way. */
static int resolve(void)
{
    if (__builtin_expect(resolved, 1))
        return 0;
    if (resolving)
        return -1;
    resolving = 1;
    NEXT(malloc), NEXT(calloc), NEXT(realloc), NEXT(free), NEXT(posix_memalign);
    NEXT(aligned_alloc), NEXT(memalign), NEXT(mmap), NEXT(munmap);
    const char *rate = getenv(CONTRACT_ENV_ALLOC_RATE), *f = getenv(CONTRACT_ENV_ALLOC_FREES);
    long long r = rate ? atoll(rate) : SAMPLER_DEFAULT_RATE;
    frees = f && *f == '1';
    resolving = 0;
    resolved = 1;
    /* A bad rate (pyperf-record refuses those) samples at the default. */
    if (sampler__init(r > 0 ? r : SAMPLER_DEFAULT_RATE) != 0)
        frees = 0;
    return 0;
}

static void reach_direct_lookups(void);

__attribute__((constructor)) static void start(void)
{
    if (resolve() == 0)
        reach_direct_lookups();
}

EXPORT void pyperfmap_preload__filter(int (*inside)(void))
{
    __atomic_store_n(&in_python, inside, __ATOMIC_RELEASE);
}

__attribute__((noinline)) static void sampled_native_alloc(void *ptr, size_t size, uint64_t weight)
{
    int (*f)(void) = __atomic_load_n(&in_python, __ATOMIC_ACQUIRE);
    if (!ptr || !pyperfmap_native_alloc_semaphore || (f && f()))
        return;
    if (frees)
        sampler__remember((uintptr_t)ptr);
    STAP_PROBE3(pyperfmap, native_alloc, ptr, size, weight);
}

static inline void account(void *ptr, size_t size)
{
    uint64_t w;
    if (sampler__take(size, &w))
        sampled_native_alloc(ptr, size, w);
}

__attribute__((noinline)) static void freed(void *ptr)
{
    STAP_PROBE1(pyperfmap, native_free, ptr);
}

static inline void released(void *ptr)
{
    if (frees && ptr && sampler__forget((uintptr_t)ptr))
        freed(ptr);
}

EXPORT void *malloc(size_t size)
{
    if (resolve() < 0)
        return boot_alloc(size);
    void *p = next_malloc(size);
    account(p, size);
    return p;
}

EXPORT void *calloc(size_t nmemb, size_t size)
{
    if (resolve() < 0) {
        if (size && nmemb > SIZE_MAX / size)
            return NULL;
        return boot_alloc(nmemb * size);
    }
    void *p = next_calloc(nmemb, size);
    if (p)
        account(p, nmemb * size);
    return p;
}

EXPORT void free(void *ptr)
{
    if (!ptr || is_boot(ptr))
        return;
    released(ptr);
    if (resolve() == 0)
        next_free(ptr);
}

EXPORT void *realloc(void *ptr, size_t size)
{
    if (resolve() < 0 || is_boot(ptr)) {
        void *p = resolved ? next_malloc(size) : boot_alloc(size);
        if (p && ptr) {         /* a boot block: copy what it can have held */
            size_t have = (size_t)(boot + boot_used - (char *)ptr);
            memcpy(p, ptr, have < size ? have : size);
        }
        if (p && resolved)
            account(p, size);
        return p;
    }
    void *p = next_realloc(ptr, size);
    if (!p && size)
        return p;               /* ptr is still there */
    released(ptr);
    if (p)
        account(p, size);
    return p;
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    if (resolve() < 0)
        return ENOMEM;
    int r = next_posix_memalign(out, align, size);
    if (r == 0)
        account(*out, size);
    return r;
}

/* aligned_alloc and memalign: one contract, the next definition's own
 * checks of align apart.  next: where resolve() puts it. */
static void *aligned(void *(*const *next)(size_t, size_t), size_t align, size_t size)
{
    if (resolve() < 0)
        return NULL;
    void *p = (*next)(align, size);
    account(p, size);
    return p;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
    return aligned(&next_aligned_alloc, align, size);
}

EXPORT void *memalign(size_t align, size_t size)
{
    return aligned(&next_memalign, align, size);
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (resolve() < 0) {
        errno = EAGAIN;
        return MAP_FAILED;
    }
    void *p = next_mmap(addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED && (flags & MAP_ANONYMOUS))
        account(p, len);
    return p;
}

/* What _FILE_OFFSET_BITS=64 programs call (CPython's pymalloc among them). */
EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return mmap(addr, len, prot, flags, fd, off);
}

EXPORT int munmap(void *addr, size_t len)
{
    if (resolve() < 0) {
        errno = EAGAIN;
        return -1;
    }
    released(addr);
    return next_munmap(addr, len);
}

/* The definitions above, whatever the global scope binds their names to
 * (a library preloaded before this one may define them too), with the
 * attributes the C library's headers give them where the compiler wants
 * an alias to have them. */
#if defined(__has_attribute)
#  if __has_attribute(copy)
#    define LIKE(name) __attribute__((copy(name)))
#  endif
#endif
#ifndef LIKE
#  define LIKE(name)
#endif
#define OWN(name) \
    extern __typeof__(name) own_##name LIKE(name) __attribute__((alias(#name), visibility("hidden")))
OWN(malloc);
OWN(calloc);
OWN(realloc);
OWN(free);
OWN(posix_memalign);
OWN(aligned_alloc);
OWN(memalign);
OWN(mmap);
OWN(mmap64);
OWN(munmap);

/* The next definitions, where their own object's table holds them, made
 * to name ours: a lookup that starts at that object (dlsym on its handle,
 * a RTLD_DEEPBIND library's bindings) then reaches ours, which call them
 * as before, so every block still comes from and goes back to the same
 * allocator.  mmap64 is the C library's other name of mmap. */
static void reach_direct_lookups(void)
{
    const struct { const char *name; void *const *next; const void *own; } fns[] = {
        {"malloc", (void *const *)&next_malloc, (const void *)own_malloc},
        {"calloc", (void *const *)&next_calloc, (const void *)own_calloc},
        {"realloc", (void *const *)&next_realloc, (const void *)own_realloc},
        {"free", (void *const *)&next_free, (const void *)own_free},
        {"posix_memalign", (void *const *)&next_posix_memalign, (const void *)own_posix_memalign},
        {"aligned_alloc", (void *const *)&next_aligned_alloc, (const void *)own_aligned_alloc},
        {"memalign", (void *const *)&next_memalign, (const void *)own_memalign},
        {"mmap", (void *const *)&next_mmap, (const void *)own_mmap},
        {"mmap64", (void *const *)&next_mmap, (const void *)own_mmap64},
        {"munmap", (void *const *)&next_munmap, (const void *)own_munmap},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        int err = *fns[i].next ? dynsym__redirect(fns[i].name, *fns[i].next, fns[i].own) : -ENOENT;
        if (err == 0 || err == -ENOENT)
            continue;
        Dl_info lib;
        fprintf(stderr, "pyperfmap: allocations through dlsym on %s's handle or from "
                "RTLD_DEEPBIND libraries are not sampled: cannot redirect its %s (%s)\n",
                dladdr(*fns[i].next, &lib) && lib.dli_fname ? lib.dli_fname : "the C library",
                fns[i].name, strerror(-err));
        return;
    }
}
