/* intern.c - open-addressing string set over chunked storage. */
#include "intern.h"
#include "strarena.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct entry {
    const char *s;
    u64 hash;
    u32 len;
};

struct intern {
    struct strarena strs;       /* the strings themselves; they never move */
    struct entry *ents;         /* id -> entry */
    size_t n, cap;
    u32 *slots;                 /* id + 1, 0 = empty */
    size_t n_slots;
};

struct intern *intern__new(void)
{
    struct intern *in = xcalloc(1, sizeof(*in));
    in->n_slots = 1024;
    in->slots = xcalloc(in->n_slots, sizeof(*in->slots));
    return in;
}

void intern__delete(struct intern *in)
{
    if (!in)
        return;
    strarena__exit(&in->strs);
    free(in->ents);
    free(in->slots);
    free(in);
}

static void rehash(struct intern *in)
{
    size_t n_slots = in->n_slots * 2;
    u32 *slots = xcalloc(n_slots, sizeof(*slots));
    for (size_t id = 0; id < in->n; id++) {
        size_t i = in->ents[id].hash & (n_slots - 1);
        while (slots[i])
            i = (i + 1) & (n_slots - 1);
        slots[i] = (u32)id + 1;
    }
    free(in->slots);
    in->slots = slots;
    in->n_slots = n_slots;
}

u32 intern__id(struct intern *in, const void *s, size_t len)
{
    u64 h = hash_bytes(s, len);
    size_t i = h & (in->n_slots - 1);

    for (; in->slots[i]; i = (i + 1) & (in->n_slots - 1)) {
        const struct entry *e = &in->ents[in->slots[i] - 1];
        if (e->hash == h && e->len == len && (len == 0 || memcmp(e->s, s, len) == 0))
            return in->slots[i] - 1;
    }
    GROW(in->ents, in->cap, in->n + 1);
    u32 id = (u32)in->n++;
    in->ents[id] = (struct entry){strarena__copy(&in->strs, s, len), h, (u32)len};
    in->slots[i] = id + 1;
    if (in->n * 2 > in->n_slots)
        rehash(in);
    return id;
}

const char *intern__str(const struct intern *in, u32 id)
{
    return in->ents[id].s;
}

size_t intern__len(const struct intern *in, u32 id)
{
    return in->ents[id].len;
}

u32 intern__count(const struct intern *in)
{
    return (u32)in->n;
}
