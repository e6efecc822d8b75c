/*
 * leaks.h - allocations paired with their frees (the leaks mode): which
 * blocks are still live at the end of a recording, and since when.
 *
 * The allocator's events come in three kinds, each from one thread:
 *   an entry    malloc, calloc, realloc or aligned_alloc with the bytes
 *               asked for (realloc: also the block it resizes) and the
 *               stack that asked;
 *   a return    the same function's return with the pointer it gave;
 *   a free      free(ptr).
 * An entry waits on its thread until that thread's return of the same
 * function: a per-thread stack of pending entries, because an allocator
 * may call another one (glibc's realloc(NULL, n) calls malloc) and the
 * inner return comes first.  A returned pointer becomes a live block; a
 * free, or a realloc that moved or released it, ends it.  A pointer given
 * again while still live is the same block when it was made after this
 * call began (the inner malloc of glibc's realloc(NULL, n): counted once,
 * as the outer call's), else a new one that ends the old (whose free was
 * not recorded).
 *
 * Addresses are per process (a forked child reuses its parent's).
 * Frees of pointers never seen allocated (made before the recording
 * started) are only counted: they are nothing this recording can blame.
 * A free of a pointer whose block was freed already, or in a process
 * whose exec() the recording holds, is counted apart: the record of its
 * allocation was lost.
 */
#ifndef PYMERGE_LEAKS_H
#define PYMERGE_LEAKS_H

#include <stddef.h>
#include <stdint.h>

enum leak_fn { LEAK_MALLOC, LEAK_CALLOC, LEAK_REALLOC, LEAK_ALIGNED };

struct leak_block {
    uint64_t ptr, bytes;
    uint64_t objects;           /* allocations it stands for: 1, or a sample's */
    uint64_t time, end;         /* allocated at; freed at, 0 while live */
    uint32_t thread, stack;     /* profile ids of who asked */
    uint32_t pid;
};

struct leak_counts {
    uint64_t unknown_frees;     /* frees (and reallocs) of pointers never seen allocated */
    uint64_t lost_allocs;       /* frees whose allocation's record was lost */
    uint64_t unpaired;          /* returns without their entry, entries without return */
    uint64_t failed;            /* returns of NULL */
};

struct leaks;

struct leaks *leaks__new(void);
void leaks__delete(struct leaks *l);    /* accepts NULL */

/* tid enters fn, asking for bytes (old: the block realloc resizes, or 0),
 * on behalf of (thread, stack). */
void leaks__enter(struct leaks *l, uint32_t tid, enum leak_fn fn, uint64_t bytes, uint64_t old,
                  uint32_t thread, uint32_t stack, uint64_t time);

/* tid's fn returned ptr, an address in process pid. */
void leaks__return(struct leaks *l, uint32_t pid, uint32_t tid, enum leak_fn fn, uint64_t ptr,
                   uint64_t time);

/* A sampled block at ptr in process pid, standing for bytes in objects
 * allocations, made by (thread, stack). */
void leaks__sampled(struct leaks *l, uint32_t pid, uint64_t ptr, uint64_t bytes, uint64_t objects,
                    uint32_t thread, uint32_t stack, uint64_t time);

/* Process pid began (exec) during the recording, with an empty heap. */
void leaks__exec(struct leaks *l, uint32_t pid);

/* free(ptr) in process pid. */
void leaks__free(struct leaks *l, uint32_t pid, uint64_t ptr, uint64_t time);

/* Every block, in the order allocated; entries still pending count as
 * unpaired from now on. */
const struct leak_block *leaks__blocks(struct leaks *l, size_t *n);
struct leak_counts leaks__counts(const struct leaks *l);

#endif
