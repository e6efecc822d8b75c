/* idmap.c - open-addressing u64 -> pointer map. */
#include "idmap.h"
#include "util.h"

#include <stdlib.h>

void idmap__init(struct idmap *m)
{
    m->n = 0;
    m->n_slots = 64;
    m->keys = xcalloc(m->n_slots, sizeof(*m->keys));
    m->vals = xcalloc(m->n_slots, sizeof(*m->vals));
}

void idmap__exit(struct idmap *m)
{
    free(m->keys);
    free(m->vals);
    *m = (struct idmap){0};             /* empty again */
}

void idmap__exit_with(struct idmap *m, void (*drop)(void *val))
{
    void *v;
    for (size_t i = 0; idmap__next(m, &i, &v);)
        drop(v);
    idmap__exit(m);
}

void idmap__free(void *m)
{
    idmap__exit(m);
    free(m);
}

static size_t slot(const struct idmap *m, uint64_t key)
{
    size_t i = hash_u64(key) & (m->n_slots - 1);
    while (m->vals[i] && m->keys[i] != key)
        i = (i + 1) & (m->n_slots - 1);
    return i;
}

void *idmap__get(const struct idmap *m, uint64_t key)
{
    return m->n_slots ? m->vals[slot(m, key)] : NULL;
}

void *idmap__get_or_new(struct idmap *m, uint64_t key, size_t size)
{
    void *v = idmap__get(m, key);
    if (!v) {
        v = xcalloc(1, size);
        idmap__put(m, key, v);
    }
    return v;
}

void *idmap__put(struct idmap *m, uint64_t key, void *val)
{
    if (!m->n_slots)                    /* zeroed: its first entry */
        idmap__init(m);
    size_t i = slot(m, key);
    void *old = m->vals[i];
    m->keys[i] = key;
    m->vals[i] = val;
    if (old)
        return old;
    if (++m->n * 2 > m->n_slots) {
        struct idmap big = {xcalloc(m->n_slots * 2, sizeof(uint64_t)),
                            xcalloc(m->n_slots * 2, sizeof(void *)), m->n, m->n_slots * 2};
        for (size_t j = 0; j < m->n_slots; j++)
            if (m->vals[j]) {
                size_t k = slot(&big, m->keys[j]);
                big.keys[k] = m->keys[j];
                big.vals[k] = m->vals[j];
            }
        idmap__exit(m);
        *m = big;
    }
    return NULL;
}

int idmap__next(const struct idmap *m, size_t *i, void **val)
{
    for (; *i < m->n_slots; (*i)++)
        if (m->vals[*i]) {
            *val = m->vals[(*i)++];
            return 1;
        }
    return 0;
}
