/* sampler.c - allocations sampled by bytes (see sampler.h). */
#define _GNU_SOURCE
#include "sampler.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

SAMPLER_TLS int64_t sampler_left;
static SAMPLER_TLS uint64_t rng;        /* xorshift64*; 0 until the thread draws */
static double rate = SAMPLER_DEFAULT_RATE;

unsigned char sampler_filter[1u << SAMPLER_FILTER_BITS];

static void take(void);
static void after_fork(void);

int sampler__init(long long r)
{
    static int registered;
    if (r <= 0)
        return -EINVAL;
    rate = (double)r;
    if (!registered && pthread_atfork(take, after_fork, after_fork) != 0)
        return -ENOMEM;
    registered = 1;
    return 0;
}

/* A uniform draw in (0, 1]: one stream per thread, seeded from its TLS
 * address and the clock so that forked children and threads differ. */
static double uniform(void)
{
    if (rng == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        rng = ((uint64_t)(uintptr_t)&rng * 0x2545F4914F6CDD1DULL) ^ (uint64_t)ts.tv_nsec ^
              ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_sec;
        rng |= 1;
    }
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return ((double)((rng * 0x2545F4914F6CDD1DULL) >> 11) + 1.0) / 9007199254740992.0;
}

static int64_t draw(void)
{
    double d = -log(uniform()) * rate;
    return d < 1 ? 1 : d > 1e15 ? (int64_t)1e15 : (int64_t)d;
}

int sampler__crossed(size_t size, uint64_t *weight)
{
    if (rng == 0) {             /* the thread's first allocation: draw its count */
        sampler_left = draw() - (size < ((size_t)1 << 62) ? (int64_t)size : (int64_t)1 << 62);
        if (sampler_left > 0)
            return 0;
    }
    sampler_left = draw();
    double s = (double)size, p = -expm1(-s / rate);
    *weight = (uint64_t)(p > 0 ? s / p + 0.5 : rate);
    return 1;
}

/* ---- the exact set: open addressing, under a spinlock ------------------- */

#define EMPTY 0
#define GONE 1                  /* a tombstone; no block lives at address 1 */

static uintptr_t *table;
static size_t cap, used;        /* used: live and tombstones */
static int lock;

static void take(void)
{
    while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&lock, __ATOMIC_RELAXED))
            ;
}

static void give(void)
{
    __atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
}

/* A fork copies the lock as it is: hold it across, so that it is free in
 * both processes after. */
static void after_fork(void) { give(); }

static void *pages(size_t bytes)
{
    void *p = (void *)syscall(SYS_mmap, NULL, bytes, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static size_t find(const uintptr_t *t, size_t n, uintptr_t ptr)
{
    size_t i = (size_t)(((uint64_t)ptr * UINT64_C(0x9E3779B97F4A7C15)) >> 20) & (n - 1);
    while (t[i] != EMPTY && t[i] != ptr)
        i = (i + 1) & (n - 1);
    return i;
}

/* Rehashes the live entries into a table with room for twice as many. */
static int regrow(void)
{
    size_t live = 0;
    for (size_t i = 0; i < cap; i++)
        live += table[i] > GONE;
    size_t n = 1024;
    while (n < 4 * (live + 1))
        n *= 2;
    uintptr_t *t = pages(n * sizeof(*t));
    if (!t)
        return -ENOMEM;
    for (size_t i = 0; i < cap; i++)
        if (table[i] > GONE)
            t[find(t, n, table[i])] = table[i];
    if (table)
        syscall(SYS_munmap, table, cap * sizeof(*table));
    table = t, cap = n, used = live;
    return 0;
}

int sampler__remember(uintptr_t ptr)
{
    int r = 0;
    take();
    if (2 * (used + 1) > cap)
        r = regrow();
    if (r == 0) {
        size_t i = find(table, cap, ptr);
        if (table[i] == EMPTY)
            used++;
        if (table[i] != ptr) {
            table[i] = ptr;
            unsigned char *f = &sampler_filter[sampler__slot(ptr)];
            if (*f != 255)      /* saturated slots stay: they only cost a look */
                __atomic_store_n(f, (unsigned char)(*f + 1), __ATOMIC_RELAXED);
        }
    }
    give();
    return r;
}

int sampler__forget_slow(uintptr_t ptr)
{
    int found = 0;
    take();
    if (cap) {
        size_t i = find(table, cap, ptr);
        if (table[i] == ptr) {
            table[i] = GONE;
            found = 1;
            unsigned char *f = &sampler_filter[sampler__slot(ptr)];
            if (*f != 255)
                __atomic_store_n(f, (unsigned char)(*f - 1), __ATOMIC_RELAXED);
        }
    }
    give();
    return found;
}
