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

/* A stack to rank: its weight is copied in, since qsort passes no context. */
struct ranked {
    uint64_t w;
    size_t sample;
};

static int by_weight(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    return x->w != y->w ? (x->w < y->w ? 1 : -1) : (x->sample < y->sample ? -1 : 1);
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
    struct ranked *r = xmalloc((profile__n_samples(p) + 1) * sizeof(*r));
    for (size_t i = 0; i < profile__n_samples(p); i++)
        if (profile__sample(p, i)->v[w])
            r[n++] = (struct ranked){profile__sample(p, i)->v[w], i};
    qsort(r, n, sizeof(*r), by_weight);
    g->n = n < top ? n : top;
    g->sample = xmalloc((g->n + 1) * sizeof(*g->sample));
    for (size_t i = 0; i < g->n; i++)
        g->sample[i] = r[i].sample;
    free(r);

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

void growth__put_stack(FILE *f, const struct profile *p, size_t sample,
                       void (*put)(FILE *f, const char *s, size_t len))
{
    const struct psample *s = profile__sample(p, sample);
    size_t n;
    const uint32_t *fr = profile__get_stack(p, s->stack, &n);
    const char *thread = profile__get_frame(p, profile__get_thread(p, s->thread)->label)->name;
    put(f, thread, strlen(thread));
    for (size_t i = 0; i < n; i++) {
        const char *name = profile__get_frame(p, fr[i])->name;
        fputc(';', f);
        put(f, name, strlen(name));
    }
}
