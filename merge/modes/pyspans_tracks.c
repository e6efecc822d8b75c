/* pyspans_tracks.c - the kept spans one by one, on tracks that nest
 * (spanrows.h's span_one), for the writers that draw a timeline. */
#include "idmap.h"
#include "profile.h"
#include "pyspans.h"
#include "spanrows.h"
#include "util.h"

#include <stdlib.h>

static int cmp_u64(uint64_t x, uint64_t y)
{
    return x < y ? -1 : x > y;
}

/* By thread and lane, then begin; of two that begin together, the
 * longer first (it holds the other). */
static int by_track(const void *a, const void *b)
{
    const struct span_one *x = a, *y = b;
    int c = cmp_u64(x->pid, y->pid);
    c = c ? c : cmp_u64(x->tid, y->tid);
    c = c ? c : cmp_u64(x->lane, y->lane);
    c = c ? c : cmp_u64(x->begin, y->begin);
    c = c ? c : cmp_u64(y->end, x->end);
    return c ? c : cmp_u64(x->row, y->row);
}

/* Each span into the first lane of its thread whose open spans hold it
 * whole (or that has none open): a lane's spans nest. */
static void assign_lanes(struct span_one *s, size_t n)
{
    size_t *top = NULL, cap = 0, lanes = 0;     /* per lane: its innermost open span + 1 */
    size_t *under = xcalloc(n + 1, sizeof(*under));    /* per span: the one it is inside + 1 */
    for (size_t i = 0; i < n; i++) {
        if (i && (s[i].pid != s[i - 1].pid || s[i].tid != s[i - 1].tid))
            lanes = 0;
        uint32_t l = 0;
        for (;; l++) {
            if (l == lanes) {
                GROW(top, cap, lanes + 1);
                top[lanes++] = 0;
            }
            while (top[l] && s[top[l] - 1].end <= s[i].begin)
                top[l] = under[top[l] - 1];
            if (!top[l] || s[top[l] - 1].end >= s[i].end)
                break;
        }
        s[i].lane = l;
        under[i] = top[l];
        top[l] = i + 1;
    }
    free(top);
    free(under);
}

/* The profile's name of each thread, by pid and tid. */
static void thread_names(const struct profile *p, struct idmap *m)
{
    for (uint32_t i = 0; i < profile__n_threads(p); i++) {
        const struct pthread *th = profile__get_thread(p, i);
        uint64_t key = (uint64_t)th->pid << 32 | th->tid;
        if (!idmap__get(m, key))
            idmap__put(m, key, (void *)th->comm);
    }
}

void span_tracks__fill(const struct spantab *t, const struct profile *p, struct span_rows *rows,
                       const uint32_t *row_of)
{
    struct idmap comms = {0};
    size_t n = 0;
    thread_names(p, &comms);
    rows->spans = xcalloc(spantab__n(t) + 1, sizeof(*rows->spans));
    for (size_t i = 0; i < spantab__n(t); i++) {
        const struct pyspan *s = spantab__get(t, (int32_t)i);
        if (!s->keep)
            continue;
        rows->spans[n++] = (struct span_one){
            .begin = s->begin, .end = s->end, .pid = s->pid, .tid = s->tid,
            .comm = idmap__get(&comms, (uint64_t)s->pid << 32 | s->tid),
            .row = row_of[s->name], .labels = xstrdup(s->labels)};
    }
    idmap__exit(&comms);
    rows->n_spans = n;
    if (!n)
        return;
    qsort(rows->spans, n, sizeof(*rows->spans), by_track);
    assign_lanes(rows->spans, n);
    qsort(rows->spans, n, sizeof(*rows->spans), by_track);
    for (size_t i = 1; i < n; i++) {
        const struct span_one *a = &rows->spans[i - 1], *b = &rows->spans[i];
        rows->spans[i].track = a->track + (a->pid != b->pid || a->tid != b->tid || a->lane != b->lane);
    }
    rows->n_tracks = rows->spans[n - 1].track + 1;
}
