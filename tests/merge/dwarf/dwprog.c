/* DWARF test program, built without frame pointers.  Its call tree:
 *   main -> phase_lib -> lib_outer -> lib_inner            (user, in a .so)
 *   main -> phase_sys -> lib_syscalls -> write             (kernel under it)
 *   main -> phase_deep -> deep x DEPTH -> deep_leaf        (recursion)
 *   main -> phase_cb -> lib_callback -> cb_spin            (back into the exe)
 *   main -> phase_plt -> lib_tiny@plt, lib_tiny             (PLT stubs)
 *   thread_main -> phase_lib -> lib_outer -> lib_inner     (a thread: clone root)
 * Each phase runs for a fixed CPU time per round, so every chain is sampled. */
#define _POSIX_C_SOURCE 200809L
#include "dwwork.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define DEPTH 20

static volatile unsigned long sink;

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long phase_lib(void)
{
    return lib_outer(200000) + 1;
}

__attribute__((noinline)) static unsigned long phase_sys(int fd)
{
    return lib_syscalls(fd, 2000) + 1;
}

__attribute__((noinline)) static unsigned long deep_leaf(unsigned long n)
{
    unsigned long x = n;
    for (unsigned long i = 0; i < 100000; i++)
        x = x * 2862933555777941757UL + 3037000493UL;
    return x;
}

__attribute__((noinline)) static unsigned long deep(int d, unsigned long n)
{
    /* Used after the call, so the recursion cannot become a loop. */
    volatile int keep = d;
    if (d == 0)
        return deep_leaf(n) + 1;
    return deep(d - 1, n + 1) * 7 + (unsigned long)keep;
}

__attribute__((noinline)) static unsigned long phase_deep(void)
{
    return deep(DEPTH, 1) + 1;
}

__attribute__((noinline)) unsigned long cb_spin(unsigned long n)
{
    unsigned long x = n;
    for (unsigned long i = 0; i < 200000; i++)
        x ^= x << 7, x ^= x >> 9;
    return x;
}

__attribute__((noinline)) static unsigned long phase_cb(void)
{
    return lib_callback(cb_spin, 5) + 1;
}

__attribute__((noinline)) static unsigned long phase_plt(void)
{
    unsigned long x = 0;
    for (int i = 0; i < 100000; i++)
        x = lib_tiny(x);
    return x;
}

static double seconds;

static void *thread_main(void *arg)
{
    (void)arg;
    double end = cpu_now() + seconds / 4;
    while (cpu_now() < end)
        sink += phase_lib();
    return NULL;
}

int main(int argc, char **argv)
{
    seconds = argc > 1 ? atof(argv[1]) : 2.0;
    int fd = open("/dev/null", O_WRONLY);
    pthread_t t;
    if (fd < 0 || pthread_create(&t, NULL, thread_main, NULL) != 0)
        return 1;
    for (int round = 0; round < 20; round++) {
        double slice = seconds / 100, end;
        for (end = cpu_now() + slice; cpu_now() < end;)
            sink += phase_lib();
        for (end = cpu_now() + slice; cpu_now() < end;)
            sink += phase_sys(fd);
        for (end = cpu_now() + slice; cpu_now() < end;)
            sink += phase_deep();
        for (end = cpu_now() + slice; cpu_now() < end;)
            sink += phase_cb();
        for (end = cpu_now() + slice; cpu_now() < end;)
            sink += phase_plt();
    }
    pthread_join(t, NULL);
    printf("%lu\n", sink);
    return 0;
}
