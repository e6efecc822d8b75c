/* perfdata_queue.c - time ordering of records (see perfdata_queue.h). */
#include "perfdata_queue.h"

#include <stdlib.h>
#include <string.h>

static int qent_cmp(const void *pa, const void *pb)
{
    const struct qent *a = pa, *b = pb;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

void pd_queue__push(struct pd_queue *q, const u8 *p, u32 size, int mapped, u64 time,
                    u64 offset)
{
    size_t at = q->len;
    if (!mapped) {                      /* pipe or zstd bytes: keep a copy */
        GROW(q->data, q->cap, at + ((size + 7u) & ~7u));
        memcpy(q->data + at, p, size);
        q->len = at + ((size + 7u) & ~7u);
    }
    GROW(q->q, q->cap_q, q->n + 1);
    q->q[q->n++] = (struct qent){time, q->seq++, offset, mapped ? p : NULL, at, size};
    if (time > q->max_time)
        q->max_time = time;
}

/*
 * Stable natural merge sort.  A round holds one time-ordered run per CPU
 * buffer plus the sorted leftovers of the last round, so merging runs is
 * close to linear where qsort would pay n log n.
 */
static void sort_queue(struct pd_queue *q)
{
    size_t n = q->n;
    if (n < 2)
        return;
    GROW(q->tmp, q->cap_tmp, n);
    struct qent *a = q->q, *b = q->tmp;
    for (;;) {
        size_t runs = 0, i = 0;
        while (i < n) {
            size_t mid = i + 1;
            while (mid < n && qent_cmp(&a[mid - 1], &a[mid]) <= 0)
                mid++;
            size_t end = mid;
            if (end < n) {
                end++;
                while (end < n && qent_cmp(&a[end - 1], &a[end]) <= 0)
                    end++;
            }
            size_t x = i, y = mid, k = i;   /* merge a[i..mid) and a[mid..end) */
            while (x < mid && y < end)
                b[k++] = qent_cmp(&a[y], &a[x]) < 0 ? a[y++] : a[x++];
            while (x < mid)
                b[k++] = a[x++];
            while (y < end)
                b[k++] = a[y++];
            runs++;
            i = end;
        }
        struct qent *t = a;
        a = b;
        b = t;
        if (runs == 1)
            break;
    }
    if (a != q->q) {                    /* the result must end up in q->q */
        q->tmp = q->q;
        q->q = a;
        size_t c = q->cap_q;
        q->cap_q = q->cap_tmp;
        q->cap_tmp = c;
    }
}

void pd_queue__flush(struct pd_queue *q, u64 limit)
{
    sort_queue(q);
    size_t n = 0;
    while (n < q->n && q->q[n].time <= limit)
        n++;
    q->next = 0;
    q->ready = n;
    if (n)
        q->last_flush = q->q[n - 1].time;
}

void pd_queue__round(struct pd_queue *q)
{
    pd_queue__flush(q, q->next_flush);
    q->next_flush = q->max_time;
}

const u8 *pd_queue__next(struct pd_queue *q, u32 *size, u64 *offset)
{
    if (q->next >= q->ready)
        return NULL;
    const struct qent *e = &q->q[q->next++];
    *size = e->size;
    *offset = e->offset;
    return e->mapped ? e->mapped : q->data + e->at;
}

/* The undelivered records move to the spare buffer, which becomes the
 * queue's: one copy per round of what stays, never of the whole file. */
u64 pd_queue__compact(struct pd_queue *q, u64 low)
{
    size_t len = 0;
    for (size_t i = q->ready; i < q->n; i++)
        len += q->q[i].mapped ? 0 : (q->q[i].size + 7u) & ~7u;
    GROW(q->spare, q->spare_cap, len);
    len = 0;
    for (size_t i = q->ready; i < q->n; i++) {
        struct qent e = q->q[i];
        if (e.mapped) {
            if (e.offset < low)
                low = e.offset;
        } else {
            memcpy(q->spare + len, q->data + e.at, e.size);
            e.at = len;
            len += (e.size + 7u) & ~7u;
        }
        q->q[i - q->ready] = e;
    }
    q->n -= q->ready;
    q->next = q->ready = 0;
    u8 *t = q->data;
    size_t tc = q->cap;
    q->data = q->spare;
    q->cap = q->spare_cap;
    q->spare = t;
    q->spare_cap = tc;
    q->len = len;
    return low;
}

void pd_queue__exit(struct pd_queue *q)
{
    free(q->data);
    free(q->spare);
    free(q->q);
    free(q->tmp);
    memset(q, 0, sizeof(*q));
}
