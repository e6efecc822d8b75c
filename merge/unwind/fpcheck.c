/* fpcheck.c - frame-pointer chains that stop inside code without frame
 * pointers (see fpcheck.h). */
#include "fpcheck.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

void fpcheck__init(struct fpcheck *c)
{
    memset(c, 0, sizeof(*c));
}

void fpcheck__exit(struct fpcheck *c)
{
    free(c->stops);
}

/* Frame f[i], looked up at its call instruction when it is a return address. */
static enum unwind_fp keeps_fp(struct unwind_dwarf *u, unwind_lookup_fn lookup, void *ctx,
                               const struct uframe *f, struct unwind_map *m)
{
    return unwind_dwarf__keeps_fp(u, lookup, ctx, f->addr - (f->is_return ? 1 : 0), m);
}

void fpcheck__sample(struct fpcheck *c, struct unwind_dwarf *u, unwind_lookup_fn lookup,
                     void *ctx, const struct uframe *f, size_t n)
{
    size_t first = 0;
    while (first < n && (f[first].kernel || f[first].guest))
        first++;
    if (first == n)
        return;
    c->chains++;
    struct unwind_map m;
    enum unwind_fp end = UNWIND_FP_UNKNOWN;
    size_t i = n;
    while (i > first && (end = keeps_fp(u, lookup, ctx, &f[i - 1], &m)) == UNWIND_FP_UNKNOWN)
        i--;
    if (end != UNWIND_FP_NONE || m.kind != UNWIND_MAP_ELF)
        return;
    struct unwind_map before;
    if (i - 1 > first && keeps_fp(u, lookup, ctx, &f[i - 2], &before) == UNWIND_FP_KEPT)
        return;     /* reached through a frame record: the thread's start */
    const struct dso *d = m.dso;    /* pymerge's lookup keys files by their struct dso */
    if (d->id >= c->cap_stops) {
        size_t old = c->cap_stops;
        GROW(c->stops, c->cap_stops, (size_t)d->id + 1);
        memset(c->stops + old, 0, (c->cap_stops - old) * sizeof(*c->stops));
    }
    c->stops[d->id].dso = d;
    c->stops[d->id].chains++;
}

const struct dso *fpcheck__culprit(const struct fpcheck *c, double *share)
{
    const struct fpcheck_stops *top = NULL;
    for (size_t i = 0; i < c->cap_stops; i++)
        if (!top || c->stops[i].chains > top->chains)
            top = &c->stops[i];
    if (!top || 2 * top->chains <= c->chains)
        return NULL;
    *share = (double)top->chains / (double)c->chains;
    return top->dso;
}
