/*
 * arena.c - bump allocation of trampolines from size-aligned R+X arenas.
 */
#define _GNU_SOURCE
#include "arena.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

static unsigned char *cur;  /* next free slot of the current arena */
static unsigned char *end;  /* end of the current arena */

/* An arena and its key table after it.  Maps an arena's size more than
 * that and trims, which is the portable way to get an alignment larger
 * than a page from mmap. */
static unsigned char *map_aligned(void)
{
    size_t size = PYPERFMAP_ARENA_SIZE, keep = size + ARENA_KEYS_SIZE;
    unsigned char *raw = mmap(NULL, keep + size, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    uintptr_t base = ((uintptr_t)raw + size - 1) & ~(uintptr_t)(size - 1);
    size_t head = base - (uintptr_t)raw;
    if (head)
        munmap(raw, head);
    if (size - head)
        munmap((unsigned char *)base + keep, size - head);
    return (unsigned char *)base;
}

/* Opens the next arena; 0 or a negative errno. */
static int open_arena(void)
{
    static const unsigned char tmpl[] = PYPERFMAP_TEMPLATE_BYTES;
    _Static_assert(sizeof tmpl == PYPERFMAP_TRAMPOLINE_SIZE, "template fills a slot");

    unsigned char *a = map_aligned();
    if (a == NULL)
        return -errno;
    for (size_t off = 0; off < PYPERFMAP_ARENA_SIZE; off += sizeof tmpl)
        memcpy(a + off, tmpl, sizeof tmpl);
    __builtin___clear_cache((char *)a, (char *)a + PYPERFMAP_ARENA_SIZE);
    if (mprotect(a, PYPERFMAP_ARENA_SIZE, PROT_READ | PROT_EXEC) != 0) {
        int e = errno;
        munmap(a, PYPERFMAP_ARENA_SIZE + ARENA_KEYS_SIZE);
        return -e;
    }
    cur = a + PYPERFMAP_TRAMPOLINE_SIZE;  /* slot 0 is the marker */
    end = a + PYPERFMAP_ARENA_SIZE;
    return 0;
}

void *arena__take(void **new_arena)
{
    *new_arena = NULL;
    if (cur == end) {
        int rc = open_arena();
        if (rc != 0) {
            errno = -rc;
            return NULL;
        }
        *new_arena = cur - PYPERFMAP_TRAMPOLINE_SIZE;
    }
    void *t = cur;
    cur += PYPERFMAP_TRAMPOLINE_SIZE;
    return t;
}
