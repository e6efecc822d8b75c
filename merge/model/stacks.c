/* stacks.c - a hash table of frame-id arrays (see stacks.h). */
#include "stacks.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct entry {
    u64 hash;
    size_t at;              /* index of the first frame in st->frames */
    u32 n;
};

struct stacks {
    u32 *frames;            /* every distinct stack's frames, back to back */
    size_t n_frames, cap_frames;
    struct entry *ents;
    size_t n, cap;
    u32 *slots;             /* entry index + 1; 0 = empty */
    size_t n_slots;
};

struct stacks *stacks__new(void)
{
    struct stacks *st = xcalloc(1, sizeof(*st));
    st->n_slots = 1 << 12;
    st->slots = xcalloc(st->n_slots, sizeof(*st->slots));
    return st;
}

void stacks__delete(struct stacks *st)
{
    if (!st)
        return;
    free(st->frames);
    free(st->ents);
    free(st->slots);
    free(st);
}

static void rehash(struct stacks *st)
{
    free(st->slots);
    st->n_slots *= 2;
    st->slots = xcalloc(st->n_slots, sizeof(*st->slots));
    for (size_t e = 0; e < st->n; e++) {
        size_t i = st->ents[e].hash & (st->n_slots - 1);
        while (st->slots[i])
            i = (i + 1) & (st->n_slots - 1);
        st->slots[i] = (u32)e + 1;
    }
}

u32 stacks__intern(struct stacks *st, const u32 *fr, size_t n)
{
    u64 h = hash_bytes(fr, n * sizeof(u32));
    size_t i = h & (st->n_slots - 1);
    for (; st->slots[i]; i = (i + 1) & (st->n_slots - 1)) {
        struct entry *e = &st->ents[st->slots[i] - 1];
        /* n == 0 is a stack of the root alone: nothing to compare (and
         * st->frames may still be NULL) */
        if (e->hash == h && e->n == n && (n == 0 || !memcmp(st->frames + e->at, fr, n * sizeof(u32))))
            return st->slots[i] - 1;
    }
    GROW(st->frames, st->cap_frames, st->n_frames + n);
    if (n)
        memcpy(st->frames + st->n_frames, fr, n * sizeof(u32));
    GROW(st->ents, st->cap, st->n + 1);
    st->ents[st->n] = (struct entry){h, st->n_frames, (u32)n};
    st->n_frames += n;
    st->slots[i] = (u32)++st->n;
    if (st->n * 2 > st->n_slots)
        rehash(st);
    return (u32)(st->n - 1);
}

size_t stacks__count(const struct stacks *st)
{
    return st->n;
}

const u32 *stacks__get(const struct stacks *st, u32 id, size_t *n)
{
    *n = st->ents[id].n;
    return st->frames + st->ents[id].at;
}
