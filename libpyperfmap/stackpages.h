/*
 * stackpages.h - every thread's stack pages mapped before perf copies them.
 *
 * perf copies a sample's user stack from the stack pointer up, without
 * faulting pages in: the copy ends at the first page the thread never
 * touched.  A C function that reserves a large array and writes only its
 * start (CPython's select.select() keeps about 49 KB of them) leaves such
 * pages between its callee and its own return address, so every sample
 * taken beneath it lost all of its callers, whatever the copy's size.
 * Reading the pages once maps them (to the shared zero page, so it costs
 * no memory until the program writes there).
 */
#ifndef PYPERFMAP_STACKPAGES_H
#define PYPERFMAP_STACKPAGES_H

/* Whether this thread's stack was mapped: set by stackpages__map(). */
extern _Thread_local char stackpages__mapped __attribute__((tls_model("initial-exec")));

/* Maps the calling thread's stack pages from here down to
 * STACKPAGES_DEPTH below, within the thread's stack. */
void stackpages__map(void);

#define STACKPAGES_DEPTH (256 * 1024)

#endif
