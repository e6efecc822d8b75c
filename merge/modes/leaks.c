/* leaks.c - allocations paired with their frees (see leaks.h). */
#include "leaks.h"
#include "idmap.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>

struct pending {                /* an entry waiting for its return */
    uint64_t bytes, old, time;
    uint32_t thread, stack;
    uint8_t fn;
};

struct tstack {                 /* one thread's pending entries, innermost last */
    struct pending *e;
    size_t n, cap;
};

struct leaks {
    struct leak_block *blocks;
    size_t n, cap;
    struct idmap by_pid;        /* pid -> struct idmap: ptr -> index + 1 of its latest block */
    struct idmap by_tid;        /* tid -> struct tstack */
    struct idmap execs;         /* pids whose exec() the recording holds */
    struct leak_counts c;
};

struct leaks *leaks__new(void)
{
    return xcalloc(1, sizeof(struct leaks));
}

static void tstack_free(void *v)
{
    free(((struct tstack *)v)->e);
    free(v);
}

void leaks__delete(struct leaks *l)
{
    if (!l)
        return;
    idmap__exit_with(&l->by_tid, tstack_free);
    idmap__exit_with(&l->by_pid, idmap__free);
    idmap__exit(&l->execs);
    free(l->blocks);
    free(l);
}

static struct tstack *tstack_of(struct leaks *l, uint32_t tid)
{
    return idmap__get_or_new(&l->by_tid, tid, sizeof(struct tstack));
}

void leaks__enter(struct leaks *l, uint32_t tid, enum leak_fn fn, uint64_t bytes, uint64_t old,
                  uint32_t thread, uint32_t stack, uint64_t time)
{
    struct tstack *t = tstack_of(l, tid);
    GROW(t->e, t->cap, t->n + 1);
    t->e[t->n++] = (struct pending){bytes, old, time, thread, stack, (uint8_t)fn};
}

/* Process pid's blocks by address: two processes (a fork) have the same
 * addresses. */
static struct idmap *blocks_of(struct leaks *l, uint32_t pid)
{
    return idmap__get_or_new(&l->by_pid, pid, sizeof(struct idmap));
}

/* The live block at ptr, or NULL. */
static struct leak_block *live(struct leaks *l, struct idmap *by_ptr, uint64_t ptr)
{
    uintptr_t at = (uintptr_t)idmap__get(by_ptr, ptr);
    return at && !l->blocks[at - 1].end ? &l->blocks[at - 1] : NULL;
}

void leaks__exec(struct leaks *l, uint32_t pid)
{
    idmap__put(&l->execs, pid, (void *)1);
}

/* Ends ptr's block (process pid's) at time; when it was not live, counted:
 * the allocation's record was lost when the recording saw that pointer
 * allocated and freed before (a program frees a block once), or saw the
 * process begin (exec) with an empty heap; else the block was made before
 * the recording (or in the parent before a fork). */
static void release(struct leaks *l, uint32_t pid, struct idmap *by_ptr, uint64_t ptr,
                    uint64_t time)
{
    struct leak_block *b = live(l, by_ptr, ptr);
    if (!b) {
        if (idmap__get(by_ptr, ptr) || idmap__get(&l->execs, pid))
            l->c.lost_allocs++;
        else
            l->c.unknown_frees++;
        return;
    }
    b->end = time ? time : 1;   /* 0 means live */
}

/* A new live block; one still live at its address lost its free. */
static void add_block(struct leaks *l, struct idmap *by_ptr, struct leak_block nb)
{
    struct leak_block *b = live(l, by_ptr, nb.ptr);
    if (b)
        b->end = nb.time;
    GROW(l->blocks, l->cap, l->n + 1);
    l->blocks[l->n++] = nb;
    idmap__put(by_ptr, nb.ptr, (void *)(uintptr_t)l->n);
}

void leaks__return(struct leaks *l, uint32_t pid, uint32_t tid, enum leak_fn fn, uint64_t ptr,
                   uint64_t time)
{
    struct tstack *t = idmap__get(&l->by_tid, tid);
    size_t i = t ? t->n : 0;
    /* The innermost entry of this function; any inside it lost their return. */
    while (i > 0 && t->e[i - 1].fn != fn)
        i--;
    if (i == 0) {
        l->c.unpaired++;
        return;
    }
    struct pending e = t->e[i - 1];
    struct idmap *by_ptr = blocks_of(l, pid);
    l->c.unpaired += t->n - i;
    t->n = i - 1;
    if (fn == LEAK_REALLOC && e.old && (ptr || !e.bytes)) {
        /* Moved or released (realloc(p, 0)); glibc frees the latter through
         * free(), which the recording may have seen already. */
        if (e.bytes || live(l, by_ptr, e.old))
            release(l, pid, by_ptr, e.old, time);
    }
    if (!ptr) {
        l->c.failed += e.bytes != 0;
        return;
    }
    struct leak_block *b = live(l, by_ptr, ptr);
    if (b && b->time >= e.time) {
        /* Made by an allocator this call called (glibc's realloc(NULL, n)
         * calls malloc): the same block, which is this call's, once. */
        *b = (struct leak_block){ptr, e.bytes, 1, time, 0, e.thread, e.stack, pid};
        return;
    }
    add_block(l, by_ptr, (struct leak_block){ptr, e.bytes, 1, time, 0, e.thread, e.stack, pid});
}

void leaks__sampled(struct leaks *l, uint32_t pid, uint64_t ptr, uint64_t bytes, uint64_t objects,
                    uint32_t thread, uint32_t stack, uint64_t time)
{
    if (ptr)
        add_block(l, blocks_of(l, pid),
                  (struct leak_block){ptr, bytes, objects, time, 0, thread, stack, pid});
}

void leaks__free(struct leaks *l, uint32_t pid, uint64_t ptr, uint64_t time)
{
    if (ptr)
        release(l, pid, blocks_of(l, pid), ptr, time);
}

const struct leak_block *leaks__blocks(struct leaks *l, size_t *n)
{
    void *v;
    for (size_t i = 0; idmap__next(&l->by_tid, &i, &v);) {
        struct tstack *t = v;
        l->c.unpaired += t->n;
        t->n = 0;
    }
    *n = l->n;
    return l->blocks;
}

struct leak_counts leaks__counts(const struct leaks *l)
{
    return l->c;
}
