/* out_table.c - per-function counts, self and total (see out_table.h). */
#include "out_table.h"
#include "functions.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct row {
    const char *name;
    u64 count, resumes, self, total;
    double var;                 /* of total, a sampled estimate */
};

static int by_total(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->total != y->total)
        return x->total < y->total ? 1 : -1;
    if (x->self != y->self)
        return x->self < y->self ? 1 : -1;
    return strcmp(x->name, y->name);
}

void out_table__lost(FILE *f, const struct profile *p)
{
    if (profile__lost(p))
        fprintf(f, "%" PRIu64 " records were lost while recording: the figures above miss what"
                " they held (the row [lost %" PRIu64 " records] estimates it)\n",
                profile__lost(p), profile__lost(p));
}

int out_table__write(FILE *f, const struct profile *p, size_t top)
{
    struct intern *names = intern__new();
    size_t n;
    struct fsum *sums = functions__sum(names, p, &n);
    size_t weight = profile__weight(p);
    int resumes = profile__find_type(p, "resumes");     /* a calls recording's */
    struct row *rows = xmalloc((n + 1) * sizeof(*rows));
    for (size_t i = 0; i < n; i++)
        rows[i] = (struct row){intern__str(names, (u32)i), sums[i].self[0],
                               resumes < 0 ? 0 : sums[i].self[resumes], sums[i].self[weight],
                               sums[i].total[weight], sums[i].var_total};
    qsort(rows, n, sizeof(*rows), by_total);
    const char *count = profile__type(p, 0)->name, *w = profile__type(p, weight)->name;
    char self[64], total[64];
    snprintf(self, sizeof self, "self %s", w);
    snprintf(total, sizeof total, "total %s", w);
    /* sampled estimates: total's expected relative error, one standard error */
    int errors = profile__variance_type(p) == (int)weight;
    fprintf(f, "%12s", count);
    if (resumes >= 0)
        fprintf(f, " %12s", "resumes");
    fprintf(f, " %20s %20s%s  %s\n", self, total, errors ? "   +/-err" : "", "function");
    for (size_t i = 0; i < n && i < top; i++) {
        fprintf(f, "%12" PRIu64, rows[i].count);
        if (resumes >= 0)
            fprintf(f, " %12" PRIu64, rows[i].resumes);
        fprintf(f, " %20" PRIu64 " %20" PRIu64, rows[i].self, rows[i].total);
        if (errors)
            fprintf(f, " %8.1f%%", rows[i].total ? 100 * sqrt(rows[i].var) / rows[i].total : 0.0);
        fprintf(f, "  %s\n", rows[i].name);
    }
    out_table__lost(f, p);
    free(rows);
    free(sums);
    intern__delete(names);
    return written(f, n ? 0 : -ENODATA);
}
