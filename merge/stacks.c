/* stacks.c - a hash table of frame-id arrays (see stacks.h). */
#include "stacks.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct entry {
    u64 hash, weight;
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
    u32 *tmp;               /* the stack being added, root first */
    size_t cap_tmp;
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
    free(st->tmp);
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

void stacks__add(struct stacks *st, u32 root, const u32 *leaf_first, size_t n, u64 weight)
{
    GROW(st->tmp, st->cap_tmp, n + 1);
    st->tmp[0] = root;
    for (size_t i = 0; i < n; i++)
        st->tmp[1 + i] = leaf_first[n - 1 - i];
    n++;
    u64 h = hash_bytes(st->tmp, n * sizeof(u32));
    size_t i = h & (st->n_slots - 1);
    for (; st->slots[i]; i = (i + 1) & (st->n_slots - 1)) {
        struct entry *e = &st->ents[st->slots[i] - 1];
        if (e->hash == h && e->n == n && memcmp(st->frames + e->at, st->tmp, n * sizeof(u32)) == 0) {
            e->weight += weight;
            return;
        }
    }
    GROW(st->frames, st->cap_frames, st->n_frames + n);
    memcpy(st->frames + st->n_frames, st->tmp, n * sizeof(u32));
    GROW(st->ents, st->cap, st->n + 1);
    st->ents[st->n] = (struct entry){h, weight, st->n_frames, (u32)n};
    st->n_frames += n;
    st->slots[i] = (u32)++st->n;
    if (st->n * 2 > st->n_slots)
        rehash(st);
}

size_t stacks__count(const struct stacks *st)
{
    return st->n;
}

const u32 *stacks__get(const struct stacks *st, size_t i, size_t *n, u64 *weight)
{
    *n = st->ents[i].n;
    *weight = st->ents[i].weight;
    return st->frames + st->ents[i].at;
}
