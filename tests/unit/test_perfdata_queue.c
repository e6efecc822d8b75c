/* test_perfdata_queue.c - perf's FINISHED_ROUND ordering
 * (merge/perfdata/perfdata_queue.c) on hand-made records: what each round
 * delivers, ties, copies, compaction. */
#include "check.h"
#include "perfdata_queue.h"

#include <stdint.h>
#include <string.h>

/* A record whose 8 bytes are its tag, so a delivery can be identified. */
static void push(struct pd_queue *q, u64 tag, u64 time, int mapped, const u64 *store)
{
    if (mapped)
        pd_queue__push(q, (const u8 *)store, 8, 1, time, tag);
    else
        pd_queue__push(q, (const u8 *)&tag, 8, 0, time, tag);
}

/* Deliver everything ready; the tags in order into out.  Returns how many. */
static size_t drain(struct pd_queue *q, u64 *out)
{
    size_t n = 0;
    u32 size;
    u64 off, tag;
    const u8 *p;
    while ((p = pd_queue__next(q, &size, &off))) {
        CHECK(size == 8);
        memcpy(&tag, p, 8);
        CHECK(tag == off);          /* bytes and offset travel together */
        out[n++] = tag;
    }
    return n;
}

static void rounds(void)
{
    struct pd_queue q = {0};
    u64 got[16];
    /* Round 1: two CPU buffers, each in time order; tags 1..5. */
    push(&q, 1, 10, 0, NULL);
    push(&q, 2, 30, 0, NULL);
    push(&q, 3, 50, 0, NULL);
    push(&q, 4, 20, 0, NULL);
    push(&q, 5, 30, 0, NULL);       /* ties 2: input order decides */
    pd_queue__round(&q);            /* nothing is safe yet: a CPU may lag */
    CHECK(drain(&q, got) == 0);
    pd_queue__compact(&q, UINT64_MAX);
    /* Round 2: a late record from round 1's time range, and newer ones. */
    push(&q, 6, 45, 0, NULL);
    push(&q, 7, 60, 0, NULL);
    push(&q, 8, 50, 0, NULL);       /* ties 3, pushed later */
    pd_queue__round(&q);            /* up to round 1's newest time, 50 */
    size_t n = drain(&q, got);
    static const u64 want[] = {1, 4, 2, 5, 6, 3, 8};
    CHECK(n == sizeof(want) / sizeof(*want));
    CHECK(memcmp(got, want, sizeof(want)) == 0);
    pd_queue__compact(&q, UINT64_MAX);
    /* The end of the input: everything left. */
    push(&q, 9, 55, 0, NULL);
    pd_queue__flush(&q, UINT64_MAX);
    n = drain(&q, got);
    CHECK(n == 2 && got[0] == 9 && got[1] == 7);
    pd_queue__exit(&q);
}

/* Mapped records are delivered in place; compaction keeps the copies of
 * the others and reports the lowest offset of a mapped record still
 * queued, below which the input may be given back. */
static void compaction(void)
{
    struct pd_queue q = {0};
    static u64 file[4] = {100, 200, 300, 400};  /* tag == offset, as in drain() */
    static u64 got[1100];
    push(&q, 100, 5, 1, &file[0]);
    push(&q, 200, 40, 1, &file[1]);
    push(&q, 7, 6, 0, NULL);
    push(&q, 300, 41, 1, &file[2]);
    pd_queue__flush(&q, 10);
    u32 size;
    u64 off;
    CHECK(pd_queue__next(&q, &size, &off) == (const u8 *)&file[0]);
    CHECK(pd_queue__next(&q, &size, &off) != NULL && off == 7);
    CHECK(pd_queue__next(&q, &size, &off) == NULL);
    CHECK(pd_queue__compact(&q, UINT64_MAX) == 200);
    CHECK(pd_queue__compact(&q, 150) == 150);   /* a lower bound given wins */
    for (int i = 0; i < 1000; i++)              /* copies survive regrowth */
        push(&q, (u64)i + 1000, 42 + (u64)i, 0, NULL);
    push(&q, 400, 39, 1, &file[3]);
    pd_queue__flush(&q, UINT64_MAX);
    CHECK(drain(&q, got) == 1003);
    CHECK(got[0] == 400 && got[1] == 200 && got[2] == 300);
    for (int i = 0; i < 1000; i++)
        CHECK(got[3 + i] == (u64)i + 1000);
    pd_queue__exit(&q);
}

/* A big shuffled queue comes out sorted, ties in push order. */
static void stable_sort(void)
{
    struct pd_queue q = {0};
    enum { N = 20000 };
    static u64 tags[N];
    u64 x = 88172645463325252ull;
    for (u64 i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        u64 time = x % 500;         /* many ties */
        u64 tag = time << 32 | i;   /* order by (time, push order) */
        pd_queue__push(&q, (const u8 *)&tag, 8, 0, time, tag);
    }
    pd_queue__flush(&q, UINT64_MAX);
    size_t n = drain(&q, tags);
    CHECK(n == N);
    for (size_t i = 1; i < n; i++)
        CHECK(tags[i - 1] < tags[i]);
    pd_queue__exit(&q);
}

int main(void)
{
    rounds();
    compaction();
    stable_sort();
    return 0;
}
