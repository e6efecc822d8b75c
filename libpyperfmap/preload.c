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
#include "sampler.h"

#include <dlfcn.h>
#include <errno.h>
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
    const char *rate = getenv("PYPERFMAP_ALLOC_RATE"), *f = getenv("PYPERFMAP_ALLOC_FREES");
    long long r = rate ? atoll(rate) : SAMPLER_DEFAULT_RATE;
    frees = f && *f == '1';
    resolving = 0;
    resolved = 1;
    /* A bad rate (pyperf-record refuses those) samples at the default. */
    if (sampler__init(r > 0 ? r : SAMPLER_DEFAULT_RATE) != 0)
        frees = 0;
    return 0;
}

__attribute__((constructor)) static void start(void)
{
    resolve();
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
