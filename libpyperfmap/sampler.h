/*
 * sampler.h - allocations sampled by bytes, as tcmalloc, jemalloc and Go's
 * runtime sample them, and the set of the sampled blocks still live.
 *
 * Each thread counts down an exponentially distributed number of bytes
 * (mean: the rate); the allocation that crosses zero is sampled and the
 * count drawn again.  An allocation of s bytes is then sampled with
 * probability 1 - exp(-s/rate), independently of every other one, and
 * weighted by s / (1 - exp(-s/rate)) bytes, so that sums of weights are
 * unbiased estimates of bytes allocated (Go's runtime/pprof scaling).  An
 * allocation costs a subtraction and a branch when it is not sampled.
 *
 * A free must know whether its block was sampled: sampler__forget answers
 * from a counting filter (one relaxed byte load for a block never sampled)
 * and only then takes a spinlock and looks in the exact set.  The set's
 * memory comes from mmap (the system call), never from malloc, so that the
 * malloc interposer can use it.
 *
 * Each library that links this (the extension, the interposer) has a
 * sampler of its own.
 */
#ifndef PYPERFMAP_SAMPLER_H
#define PYPERFMAP_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#define SAMPLER_DEFAULT_RATE (512 * 1024)

#define SAMPLER_TLS __thread __attribute__((tls_model("initial-exec")))

/* Bytes left before this thread's next sample; starts at 0, so the first
 * allocation takes the slow path, which draws it. */
extern SAMPLER_TLS int64_t sampler_left;

/* Sets the mean bytes between samples and makes fork safe (it may call
 * malloc: never from inside an allocator); 0, or -EINVAL when rate <= 0. */
int sampler__init(long long rate);

/* The slow path of sampler__take: 1 with the sample's weight in *weight,
 * or 0 for a thread's first allocation (not sampled: its count is drawn). */
int sampler__crossed(size_t size, uint64_t *weight);

/* Whether an allocation of size bytes is sampled, and its weight then. */
static inline int sampler__take(size_t size, uint64_t *weight)
{
    /* (a size past 2^62 fails in any allocator: clamped, it cannot overflow) */
    sampler_left -= size < ((size_t)1 << 62) ? (int64_t)size : (int64_t)1 << 62;
    if (__builtin_expect(sampler_left > 0, 1))
        return 0;
    return sampler__crossed(size, weight);
}

/* Remembers a sampled block; 0, or -ENOMEM (it will then not be reported
 * freed). */
int sampler__remember(uintptr_t ptr);

/* Whether ptr was a sampled block still live, which it no longer is. */
int sampler__forget_slow(uintptr_t ptr);

extern unsigned char sampler_filter[];
#define SAMPLER_FILTER_BITS 18

static inline size_t sampler__slot(uintptr_t ptr)
{
    return (size_t)(((uint64_t)ptr * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - SAMPLER_FILTER_BITS));
}

static inline int sampler__forget(uintptr_t ptr)
{
    if (__builtin_expect(__atomic_load_n(&sampler_filter[sampler__slot(ptr)], __ATOMIC_RELAXED) == 0, 1))
        return 0;
    return sampler__forget_slow(ptr);
}

#endif
