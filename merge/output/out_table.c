/* out_table.c - per-function counts, self and total (see out_table.h). */
#include "out_table.h"
#include "functions.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct row {
    const char *name;
    u64 count, resumes, self, total;
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
                               sums[i].total[weight]};
    qsort(rows, n, sizeof(*rows), by_total);
    const char *count = profile__type(p, 0)->name, *w = profile__type(p, weight)->name;
    char self[64], total[64];
    snprintf(self, sizeof self, "self %s", w);
    snprintf(total, sizeof total, "total %s", w);
    fprintf(f, "%12s", count);
    if (resumes >= 0)
        fprintf(f, " %12s", "resumes");
    fprintf(f, " %20s %20s  %s\n", self, total, "function");
    for (size_t i = 0; i < n && i < top; i++) {
        fprintf(f, "%12" PRIu64, rows[i].count);
        if (resumes >= 0)
            fprintf(f, " %12" PRIu64, rows[i].resumes);
        fprintf(f, " %20" PRIu64 " %20" PRIu64 "  %s\n", rows[i].self, rows[i].total, rows[i].name);
    }
    free(rows);
    free(sums);
    intern__delete(names);
    return written(f, n ? 0 : -ENODATA);
}
