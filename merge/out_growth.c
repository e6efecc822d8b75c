/* out_growth.c - live bytes over time, top stacks (see out_growth.h). */
#include "out_growth.h"
#include "idmap.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int out_growth__applies(const struct profile *p)
{
    return profile__has_time(p) && !strcmp(profile__type(p, profile__weight(p))->name, "live-bytes");
}

static const struct profile *sort_p;    /* qsort has no context argument in C11 */

static int by_weight(const void *a, const void *b)
{
    size_t w = profile__weight(sort_p);
    uint64_t x = profile__sample(sort_p, *(const size_t *)a)->v[w];
    uint64_t y = profile__sample(sort_p, *(const size_t *)b)->v[w];
    return x != y ? (x < y ? 1 : -1) : (*(const size_t *)a < *(const size_t *)b ? -1 : 1);
}

/* The stack as a folded line names it: thread label, then root to leaf. */
static void write_stack(FILE *f, const struct profile *p, const struct psample *s)
{
    size_t n;
    const uint32_t *fr = profile__get_stack(p, s->stack, &n);
    fputs(profile__get_frame(p, profile__get_thread(p, s->thread)->label)->name, f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, ";%s", profile__get_frame(p, fr[i])->name);
    fputc('\n', f);
}

int out_growth__write(FILE *f, const struct profile *p, size_t top)
{
    size_t w = profile__weight(p), n_timed, n = 0;
    const struct ptimed *t = profile__timed(p, &n_timed);
    size_t *rows = xmalloc((profile__n_samples(p) + 1) * sizeof(*rows));
    for (size_t i = 0; i < profile__n_samples(p); i++)
        if (profile__sample(p, i)->v[w])
            rows[n++] = i;
    sort_p = p;
    qsort(rows, n, sizeof(*rows), by_weight);
    if (n > top)
        n = top;

    /* The columns' times: from the first block to the end of the recording
     * (the end of a block still live is one past it). */
    uint64_t t0 = n_timed ? t[0].time : 0, t1 = t0, at[GROWTH_COLUMNS];
    for (size_t i = 0; i < n_timed; i++)
        if (t[i].end - 1 > t1)
            t1 = t[i].end - 1;
    for (size_t k = 0; k < GROWTH_COLUMNS; k++)
        at[k] = t0 + (uint64_t)((double)(t1 - t0) * (double)(k + 1) / GROWTH_COLUMNS);

    struct idmap row_of;
    idmap__init(&row_of);
    for (size_t r = 0; r < n; r++) {
        const struct psample *s = profile__sample(p, rows[r]);
        idmap__put(&row_of, (u64)s->thread << 32 | s->stack, (void *)(uintptr_t)(r + 1));
    }
    uint64_t (*live)[GROWTH_COLUMNS] = xcalloc(n + 1, sizeof(*live));
    for (size_t i = 0; i < n_timed; i++) {
        uintptr_t r = (uintptr_t)idmap__get(&row_of, (u64)t[i].thread << 32 | t[i].stack);
        for (size_t k = 0; r && k < GROWTH_COLUMNS; k++)
            if (t[i].time <= at[k] && at[k] < t[i].end)
                live[r - 1][k] += t[i].weight;
    }

    /* "+0.100s" ...: the columns' times since the first allocation */
    for (size_t k = 0; k < GROWTH_COLUMNS; k++) {
        char h[32];
        snprintf(h, sizeof h, "+%.3fs", (double)(at[k] - t0) / 1e9);
        fprintf(f, "%12s ", h);
    }
    fputs(" live bytes of the blocks allocated at\n", f);
    for (size_t r = 0; r < n; r++) {
        for (size_t k = 0; k < GROWTH_COLUMNS; k++)
            fprintf(f, "%12" PRIu64 " ", live[r][k]);
        fputc(' ', f);
        write_stack(f, p, profile__sample(p, rows[r]));
    }
    free(live);
    idmap__exit(&row_of);
    free(rows);
    if (fflush(f) != 0 || ferror(f))
        return -EIO;
    return n ? 0 : -ENODATA;
}
