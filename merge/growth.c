/* growth.c - live bytes over time, per stack (see growth.h). */
#include "growth.h"
#include "idmap.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

int growth__applies(const struct profile *p)
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

/* The first k with at[k] >= t (points when none). */
static size_t first_at(const uint64_t *at, size_t points, uint64_t t)
{
    size_t lo = 0, hi = points;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (at[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void growth__init(struct growth *g, const struct profile *p, size_t top, size_t points)
{
    size_t w = profile__weight(p), n_timed, n = 0;
    const struct ptimed *t = profile__timed(p, &n_timed);
    memset(g, 0, sizeof(*g));
    g->points = points;
    g->sample = xmalloc((profile__n_samples(p) + 1) * sizeof(*g->sample));
    for (size_t i = 0; i < profile__n_samples(p); i++)
        if (profile__sample(p, i)->v[w])
            g->sample[n++] = i;
    sort_p = p;
    qsort(g->sample, n, sizeof(*g->sample), by_weight);
    g->n = n < top ? n : top;

    /* From the first block to the end of the recording (the end of a block
     * still live is one past it). */
    uint64_t t1 = n_timed ? t[0].time : 0;
    g->t0 = t1;
    for (size_t i = 0; i < n_timed; i++)
        if (t[i].end - 1 > t1)
            t1 = t[i].end - 1;
    g->at = xmalloc((points + 1) * sizeof(*g->at));
    for (size_t k = 0; k < points; k++)
        g->at[k] = g->t0 + (uint64_t)((double)(t1 - g->t0) * (double)(k + 1) / (double)points);

    /* Each block adds its bytes to the times in [time, end): +w where that
     * range starts, -w where it stops, summed along the times after. */
    struct idmap row_of;
    idmap__init(&row_of);
    for (size_t r = 0; r < g->n; r++) {
        const struct psample *s = profile__sample(p, g->sample[r]);
        idmap__put(&row_of, (u64)s->thread << 32 | s->stack, (void *)(uintptr_t)(r + 1));
    }
    int64_t *d = xcalloc(g->n * (points + 1) + 1, sizeof(*d));
    for (size_t i = 0; i < n_timed; i++) {
        uintptr_t r = (uintptr_t)idmap__get(&row_of, (u64)t[i].thread << 32 | t[i].stack);
        if (!r)
            continue;
        int64_t *row = d + (r - 1) * (points + 1);
        row[first_at(g->at, points, t[i].time)] += (int64_t)t[i].weight;
        row[first_at(g->at, points, t[i].end)] -= (int64_t)t[i].weight;
    }
    g->live = xcalloc(g->n * points + 1, sizeof(*g->live));
    for (size_t r = 0; r < g->n; r++) {
        int64_t sum = 0;
        for (size_t k = 0; k < points; k++) {
            sum += d[r * (points + 1) + k];
            g->live[r * points + k] = (uint64_t)sum;
        }
    }
    free(d);
    idmap__exit(&row_of);
}

void growth__exit(struct growth *g)
{
    free(g->sample);
    free(g->at);
    free(g->live);
    memset(g, 0, sizeof(*g));
}
