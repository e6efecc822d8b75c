/*
 * test_stackpages.c - stackpages__map() maps the stack pages that perf's
 * copy of a user stack would otherwise stop at (libpyperfmap/stackpages.h).
 *
 * perf copies a sample's stack without faulting pages in; a page the thread
 * never touched ends the copy.  Each test runs in a thread of its own, with
 * a stack of a known size, and asks mincore() which pages are mapped: a
 * thread that never went deep has unmapped pages under its frame (what made
 * every sample under select.select()'s 49 KB frame lose its callers), and
 * after stackpages__map() the 256 KiB under the caller are mapped, without
 * reading past the bottom of a small stack.
 */
#include "check.h"
#include "../../libpyperfmap/stackpages.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* How many of the n pages from `top` down are mapped. */
static size_t mapped_below(uintptr_t top, size_t n)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char in = 0;
        CHECK(mincore((void *)((top & ~(page - 1)) - i * page), page, &in) == 0);
        count += in & 1;
    }
    return count;
}

static void *deep_pages(void *map)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    size_t n = (STACKPAGES_DEPTH - 16 * 1024) / page;
    /* A fresh 8 MiB stack: the pages well below this frame were never
     * touched (the check the program's pages are judged by). */
    size_t before = mapped_below(here - 16 * 1024, n);
    if (map)
        stackpages__map();
    size_t after = mapped_below(here - 16 * 1024, n);
    CHECK(stackpages__mapped == (map != NULL));
    CHECK(before < n / 2);
    CHECK(map ? after == n : after == before);
    return NULL;
}

static void *small_stack(void *unused)
{
    (void)unused;
    stackpages__map();      /* must stop at the stack's bottom, not fault */
    CHECK(stackpages__mapped);
    return NULL;
}

static void in_thread(void *(*fn)(void *), void *arg, size_t stack)
{
    pthread_attr_t attr;
    pthread_t t;
    CHECK(pthread_attr_init(&attr) == 0);
    CHECK(pthread_attr_setstacksize(&attr, stack) == 0);
    CHECK(pthread_create(&t, &attr, fn, arg) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    pthread_attr_destroy(&attr);
}

int main(void)
{
    in_thread(deep_pages, NULL, 8u << 20);
    in_thread(deep_pages, (void *)1, 8u << 20);
    in_thread(small_stack, NULL, 64 * 1024);
    in_thread(small_stack, NULL, 16 * 1024 + 64 * 1024);
    return 0;
}
