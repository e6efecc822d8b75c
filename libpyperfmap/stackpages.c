/*
 * stackpages.c - map the thread's stack pages before perf copies them
 * (stackpages.h).
 */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE
#endif
#include "stackpages.h"

#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

_Thread_local char stackpages__mapped __attribute__((tls_model("initial-exec")));

/* The lowest address of the calling thread's stack, or 0. */
static uintptr_t stack_floor(void)
{
    pthread_attr_t attr;
    void *lo;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return 0;
    int r = pthread_attr_getstack(&attr, &lo, &size);
    pthread_attr_destroy(&attr);
    return r == 0 ? (uintptr_t)lo : 0;
}

/* Reads below the frame of its own, where the program's deeper calls will
 * run: an instrumented build must not check those reads against frames. */
__attribute__((no_sanitize_address)) void stackpages__map(void)
{
    stackpages__mapped = 1;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t floor = stack_floor();
    uintptr_t here = (uintptr_t)__builtin_frame_address(0) & ~(page - 1);
    /* A page of margin above the floor: glibc's guard page lies under it
     * on some layouts, and the main thread's limit may move. */
    if (floor == 0 || here < floor + 2 * page)
        return;
    uintptr_t low = here - floor - 2 * page > STACKPAGES_DEPTH ? here - STACKPAGES_DEPTH : floor + 2 * page;
    for (uintptr_t p = here; p >= low; p -= page)
        (void)*(volatile const char *)p;
}
