/*
 * diff.c - per-function shares of two profiles and their changes.
 */
#include "diff.h"
#include "functions.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* The "[lost N records]" frame that stands for what a recording lost. */
static int is_lost(const char *name)
{
    size_t len = strlen(name);
    return !strncmp(name, "[lost ", 6) && len > 15 && !strcmp(name + len - 9, " records]");
}

/* The weight of p's lost records, by the frame that stands for them. */
static double lost_weight(struct intern *names, const struct fsum *sums, size_t n, size_t wi)
{
    double w = 0;
    for (size_t id = 0; id < n; id++)
        if (is_lost(intern__str(names, (u32)id)))
            w += (double)sums[id].total[wi];
    return w;
}

/* Shares are of the samples each side kept: what a recording lost is an
 * unknown mix, and counted in its total it would shrink every function
 * of that side alike, a change that is not in the program. */
struct diff_row *diff__rows(const struct profile *base, const struct profile *cur, size_t *n)
{
    /* Functions are compared by name: the same function has different
     * frame ids in two profiles. */
    const struct profile *p[2] = {base, cur};
    struct intern *names = intern__new();
    struct fsum *sums[2];
    size_t ns[2];
    for (int side = 0; side < 2; side++)
        sums[side] = functions__sum(names, p[side], &ns[side]);
    *n = intern__count(names);
    struct diff_row *rows = xcalloc(*n + 1, sizeof(*rows));
    for (int side = 0; side < 2; side++) {
        size_t wi = profile__weight(p[side]);
        double lost = lost_weight(names, sums[side], ns[side], wi);
        double total = (double)profile__total(p[side]) - lost;
        if (lost > 0)
            warnx_("diff: the %s profile lost records while recording; its shares are of the samples"
                   " it kept", side ? "new" : "base");
        for (size_t id = 0; total > 0 && id < ns[side]; id++) {
            rows[id].self[side] = 100.0 * (double)sums[side][id].self[wi] / total;
            rows[id].total[side] = 100.0 * (double)sums[side][id].total[wi] / total;
        }
        free(sums[side]);
    }
    size_t kept = 0;
    for (u32 id = 0; id < *n; id++)
        if (!is_lost(intern__str(names, id))) {
            rows[kept] = rows[id];
            rows[kept++].name = xstrdup(intern__str(names, id));
        }
    *n = kept;
    qsort(rows, *n, sizeof(*rows), by_change);
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
    return written(f, 0);
}
