/* functions.c - per-function self and total values (see functions.h). */
#include "functions.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct fsum *functions__sum(struct intern *names, const struct profile *p, size_t *n)
{
    struct fsum *sums = NULL;
    u64 *seen = NULL;               /* stamp of the last stack that counted a name's total */
    size_t cap = 0, cap_seen = 0, nt = profile__n_types(p);

    for (size_t i = 0; i < profile__n_samples(p); i++) {
        const struct psample *s = profile__sample(p, i);
        size_t depth;
        const u32 *fr = profile__get_stack(p, s->stack, &depth);
        for (size_t k = 0; k < depth; k++) {
            const char *name = profile__get_frame(p, fr[k])->name;
            u32 id = intern__id(names, name, strlen(name));
            GROW_ZEROED(sums, cap, (size_t)id + 1);
            GROW_ZEROED(seen, cap_seen, (size_t)id + 1);
            struct fsum *f = &sums[id];
            if (seen[id] != i + 1) {    /* once per stack, even when recursive */
                seen[id] = i + 1;
                for (size_t v = 0; v < nt; v++)
                    f->total[v] += s->v[v];
                f->var_total += s->var;
            }
            if (k + 1 == depth) {
                for (size_t v = 0; v < nt; v++)
                    f->self[v] += s->v[v];
                f->var_self += s->var;
            }
        }
    }
    *n = intern__count(names);
    GROW_ZEROED(sums, cap, *n + 1);     /* + 1: an array even for no names */
    free(seen);
    return sums;
}
