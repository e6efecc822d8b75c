/*
 * idmap.h - a hash map from 64-bit keys (pids, tids, interned ids) to
 * pointers.  Open addressing; entries are never removed, only replaced,
 * which is all the session needs (pid reuse replaces the value).  A
 * zeroed struct idmap is an empty map, as idmap__init makes one.
 */
#ifndef PYMERGE_IDMAP_H
#define PYMERGE_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap {
    uint64_t *keys;
    void **vals;            /* NULL = empty slot */
    size_t n, n_slots;
};

void idmap__init(struct idmap *m);
void idmap__exit(struct idmap *m);   /* leaves m empty */
/* The same, after handing each value to drop (free, or the value's own
 * destructor). */
void idmap__exit_with(struct idmap *m, void (*drop)(void *val));
/* idmap__exit of m, an idmap from malloc, then free(m): the drop of a map
 * whose values are maps. */
void idmap__free(void *m);
void *idmap__get(const struct idmap *m, uint64_t key);
/* The value of key; a new zeroed one of size bytes when there was none. */
void *idmap__get_or_new(struct idmap *m, uint64_t key, size_t size);
/* Set key to val (val must not be NULL); returns the previous value. */
void *idmap__put(struct idmap *m, uint64_t key, void *val);
/* Iterate: for (i = 0; idmap__next(m, &i, &val);) */
int idmap__next(const struct idmap *m, size_t *i, void **val);

#endif
