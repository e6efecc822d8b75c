/*
 * diff.c - per-function shares of two profiles and their changes.
 */
#include "diff.h"
#include "intern.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Interns every frame name of one profile (side 0 base, 1 new) and, when
 * rows is given, adds each stack's share to its functions.  Functions are
 * compared by name: the same function has different frame ids in two
 * profiles.  The thread's root label is not a function. */
static void account(struct intern *names, const struct profile *p, int side,
                    struct diff_row *rows, u64 *seen, u64 *stamp)
{
    u64 total = profile__total(p);
    size_t wi = profile__weight(p);
    for (size_t i = 0; i < profile__n_samples(p); i++) {
        const struct psample *s = profile__sample(p, i);
        double share = total ? 100.0 * (double)s->v[wi] / (double)total : 0;
        size_t n;
        const u32 *fr = profile__get_stack(p, s->stack, &n);
        ++*stamp;
        for (size_t k = 0; k < n; k++) {
            const char *name = profile__get_frame(p, fr[k])->name;
            u32 id = intern__id(names, name, strlen(name));
            if (!rows)
                continue;
            if (seen[id] != *stamp) {   /* once per stack, even when recursive */
                seen[id] = *stamp;
                rows[id].total[side] += share;
            }
            if (k + 1 == n)
                rows[id].self[side] += share;
        }
    }
}

static double change(const struct diff_row *r)
{
    double s = fabs(r->self[1] - r->self[0]), t = fabs(r->total[1] - r->total[0]);
    return s > t ? s : t;
}

static int by_change(const void *a, const void *b)
{
    const struct diff_row *x = a, *y = b;
    double cx = change(x), cy = change(y);
    if (cx != cy)
        return cx < cy ? 1 : -1;
    return strcmp(x->name, y->name);
}

struct diff_row *diff__rows(const struct profile *base, const struct profile *cur, size_t *n)
{
    /* Name every function first, then add the shares into dense rows. */
    struct intern *names = intern__new();
    u64 stamp = 0;
    account(names, base, 0, NULL, NULL, &stamp);
    account(names, cur, 1, NULL, NULL, &stamp);
    *n = intern__count(names);
    struct diff_row *rows = xcalloc(*n + 1, sizeof(*rows));
    u64 *seen = xcalloc(*n + 1, sizeof(*seen));
    account(names, base, 0, rows, seen, &stamp);
    account(names, cur, 1, rows, seen, &stamp);
    for (u32 id = 0; id < *n; id++)
        rows[id].name = xstrdup(intern__str(names, id));
    qsort(rows, *n, sizeof(*rows), by_change);
    free(seen);
    intern__delete(names);
    return rows;
}

void diff__free_rows(struct diff_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free((char *)rows[i].name);
    free(rows);
}

int diff__write_table(FILE *f, const struct diff_row *rows, size_t n, size_t top)
{
    fprintf(f, "%8s %8s  %-17s %-17s %s\n", "d.total", "d.self", "total% base->new",
            "self% base->new", "function");
    for (size_t i = 0; i < n && i < top; i++) {
        const struct diff_row *r = &rows[i];
        fprintf(f, "%+8.2f %+8.2f  %6.2f -> %6.2f  %6.2f -> %6.2f  %s\n",
                r->total[1] - r->total[0], r->self[1] - r->self[0], r->total[0], r->total[1],
                r->self[0], r->self[1], r->name);
    }
    return fflush(f) == 0 && !ferror(f) ? 0 : -EIO;
}
