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

/* The calling thread's stack as pthread knows it, [*lo, *hi): 0, or
 * -errno. */
static int stack_range(uintptr_t *lo, uintptr_t *hi)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    int r = pthread_getattr_np(pthread_self(), &attr);
    if (r != 0)
        return -r;
    r = pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    if (r != 0)
        return -r;
    *lo = (uintptr_t)addr;
    *hi = *lo + size;
    return 0;
}

/* Reads each page of a len-byte array on the stack, topmost first: every
 * read lies above the stack pointer, as a deeper call's would (valgrind
 * grows the main stack only so).  An instrumented build must not check
 * those reads against frames: the array is only ever read. */
__attribute__((noinline, no_sanitize_address)) static void read_pages(size_t len, size_t page)
{
    unsigned char pages[len];
    /* through an address, not the array: what was there before is read,
     * never used */
    uintptr_t at = (uintptr_t)pages;
    for (size_t i = len; i >= page; i -= page)
        (void)*(volatile const unsigned char *)(at + i - 1);
}

/* Only inside the stack pthread reports, a page of margin above its bottom
 * (a guard page lies under it on some layouts), and a page for
 * read_pages' own frame: code running on a stack of its own (a fiber)
 * reads nothing. */
void stackpages__map(void)
{
    stackpages__mapped = 1;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo, hi;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (stack_range(&lo, &hi) != 0 || here >= hi || here < lo + 4 * page)
        return;
    uintptr_t room = here - lo - 3 * page;
    read_pages(room < STACKPAGES_DEPTH ? room : STACKPAGES_DEPTH, page);
}
