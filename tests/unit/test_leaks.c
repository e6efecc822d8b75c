/* test_leaks.c - the leaks mode's pairing (merge/modes/leaks.c) on hand-made
 * event sequences: entries to returns per thread, nesting, frees, realloc,
 * pointers reused, frees of the unknown, two processes. */
#include "check.h"
#include "leaks.h"

/* The block allocated n-th (0-based). */
static const struct leak_block *nth(struct leaks *l, size_t i)
{
    size_t n;
    const struct leak_block *b = leaks__blocks(l, &n);
    CHECK(i < n);
    return &b[i];
}

static size_t n_blocks(struct leaks *l)
{
    size_t n;
    leaks__blocks(l, &n);
    return n;
}

/* A whole call of fn by thread 1 of process 1, made for stack: its entry
 * at time t, its return of ptr at t + 1. */
static void call(struct leaks *l, enum leak_fn fn, uint64_t bytes, uint64_t old, uint32_t stack,
                 uint64_t ptr, uint64_t t)
{
    leaks__enter(l, 1, fn, bytes, old, 1, stack, t);
    leaks__return(l, 1, 1, fn, ptr, t + 1);
}

/* Two threads interleaved: each return pairs with its own thread's entry. */
static void threads(void)
{
    struct leaks *l = leaks__new();
    leaks__enter(l, 1, LEAK_MALLOC, 100, 0, 10, 20, 1);
    leaks__enter(l, 2, LEAK_CALLOC, 300, 0, 11, 21, 2);
    leaks__return(l, 1, 2, LEAK_CALLOC, 0x2000, 3);
    leaks__return(l, 1, 1, LEAK_MALLOC, 0x1000, 4);
    CHECK(n_blocks(l) == 2);
    CHECK(nth(l, 0)->ptr == 0x2000 && nth(l, 0)->bytes == 300 && nth(l, 0)->stack == 21);
    CHECK(nth(l, 1)->ptr == 0x1000 && nth(l, 1)->bytes == 100 && nth(l, 1)->thread == 10);
    leaks__free(l, 1, 0x1000, 5);
    CHECK(nth(l, 1)->end == 5 && nth(l, 0)->end == 0);
    leaks__free(l, 1, 0x1000, 6);              /* twice: its new allocation was lost */
    leaks__free(l, 1, 0x9000, 7);              /* allocated before the recording */
    leaks__free(l, 1, 0, 8);                   /* free(NULL) is nothing */
    leaks__enter(l, 3, LEAK_MALLOC, 50, 0, 12, 22, 9);  /* a forked child: the same address */
    leaks__return(l, 2, 3, LEAK_MALLOC, 0x2000, 10);
    CHECK(nth(l, 0)->end == 0 && nth(l, 2)->end == 0);
    leaks__free(l, 2, 0x2000, 11);
    CHECK(nth(l, 0)->end == 0 && nth(l, 2)->end == 11);
    struct leak_counts c = leaks__counts(l);
    CHECK(c.unknown_frees == 1 && c.lost_allocs == 1 && c.unpaired == 0 && c.failed == 0);
    leaks__delete(l);
}

/* Frees of pointers never seen allocated: in a process whose exec() the
 * recording holds, the allocation's record was lost (its heap began
 * empty); in another (attached to, or a forked child), the block may be
 * older than the recording.  A realloc moving such a block counts the same. */
static void lost_allocations(void)
{
    struct leaks *l = leaks__new();
    leaks__exec(l, 7);
    leaks__free(l, 7, 0x3000, 1);
    leaks__free(l, 8, 0x3000, 2);
    leaks__enter(l, 1, LEAK_REALLOC, 64, 0x4000, 1, 2, 3);
    leaks__return(l, 7, 1, LEAK_REALLOC, 0x5000, 4);
    struct leak_counts c = leaks__counts(l);
    CHECK(c.lost_allocs == 2 && c.unknown_frees == 1);
    CHECK(n_blocks(l) == 1 && nth(l, 0)->ptr == 0x5000 && nth(l, 0)->end == 0);
    leaks__delete(l);
}

/* realloc(NULL, n) calls malloc inside: the inner return pairs with the
 * inner entry, and the outer return gives the same pointer again, which
 * replaces the block (no double count). */
static void nested(void)
{
    struct leaks *l = leaks__new();
    leaks__enter(l, 1, LEAK_REALLOC, 64, 0, 1, 7, 1);
    call(l, LEAK_MALLOC, 64, 0, 8, 0x100, 2);                   /* inside realloc */
    leaks__return(l, 1, 1, LEAK_REALLOC, 0x100, 4);
    /* one block, the outer call's: its bytes are not counted twice */
    CHECK(n_blocks(l) == 1);
    CHECK(nth(l, 0)->end == 0 && nth(l, 0)->stack == 7 && nth(l, 0)->bytes == 64);
    CHECK(leaks__counts(l).unpaired == 0);
    leaks__delete(l);
}

/* realloc moves a block, keeps it in place, releases it (size 0, after
 * glibc's own free), and fails (NULL: the old block stays live). */
static void reallocs(void)
{
    struct leaks *l = leaks__new();
    call(l, LEAK_MALLOC, 10, 0, 1, 0xa0, 1);
    call(l, LEAK_REALLOC, 20, 0xa0, 2, 0xb0, 3);                /* moved */
    CHECK(nth(l, 0)->end == 4 && nth(l, 1)->ptr == 0xb0 && nth(l, 1)->bytes == 20);
    call(l, LEAK_REALLOC, 30, 0xb0, 3, 0xb0, 5);                /* in place */
    CHECK(nth(l, 1)->end == 6 && nth(l, 2)->bytes == 30 && !nth(l, 2)->end);
    call(l, LEAK_REALLOC, 1u << 30, 0xb0, 4, 0, 7);             /* failed */
    CHECK(!nth(l, 2)->end && n_blocks(l) == 3);
    leaks__enter(l, 1, LEAK_REALLOC, 0, 0xb0, 1, 5, 9);
    leaks__free(l, 1, 0xb0, 10);
    leaks__return(l, 1, 1, LEAK_REALLOC, 0, 11);                /* released */
    CHECK(nth(l, 2)->end == 10 && n_blocks(l) == 3);
    call(l, LEAK_REALLOC, 8, 0xdead, 6, 0xc0, 12);              /* of a block from before */
    struct leak_counts c = leaks__counts(l);
    CHECK(c.unknown_frees == 1 && c.failed == 1 && c.unpaired == 0);
    CHECK(nth(l, 3)->ptr == 0xc0 && !nth(l, 3)->end);
    leaks__delete(l);
}

/* A free never recorded: the pointer comes back live, replacing the old
 * block.  Lost events: a return without entry, an entry whose return was
 * lost under another, an entry still pending at the end. */
static void lost(void)
{
    struct leaks *l = leaks__new();
    call(l, LEAK_MALLOC, 5, 0, 1, 0x50, 1);
    call(l, LEAK_MALLOC, 6, 0, 2, 0x50, 3);
    CHECK(nth(l, 0)->end == 4 && !nth(l, 1)->end && nth(l, 1)->bytes == 6);
    leaks__return(l, 1, 3, LEAK_MALLOC, 0x60, 5);           /* no entry */
    leaks__enter(l, 1, LEAK_CALLOC, 7, 0, 1, 3, 6);
    leaks__enter(l, 1, LEAK_MALLOC, 8, 0, 1, 4, 7);      /* its return is lost */
    leaks__return(l, 1, 1, LEAK_CALLOC, 0x70, 8);
    CHECK(nth(l, 2)->ptr == 0x70 && nth(l, 2)->bytes == 7);
    leaks__enter(l, 2, LEAK_ALIGNED, 9, 0, 2, 5, 9);     /* still pending */
    CHECK(n_blocks(l) == 3);
    CHECK(leaks__counts(l).unpaired == 3);
    leaks__delete(l);
}

/* Sampled blocks: each made whole by one event, standing for its
 * objects; a free ends it; a sample at an address still live ends the
 * block there (its free was not sampled... or was lost); processes apart. */
static void sampled(void)
{
    struct leaks *l = leaks__new();
    leaks__sampled(l, 1, 0x1000, 524288, 16384, 3, 4, 1);
    leaks__sampled(l, 2, 0x1000, 700000, 1, 5, 6, 2);
    leaks__sampled(l, 1, 0, 100, 1, 3, 4, 3);          /* a failed allocation: nothing */
    CHECK(n_blocks(l) == 2);
    CHECK(nth(l, 0)->objects == 16384 && nth(l, 0)->pid == 1 && nth(l, 0)->bytes == 524288);
    CHECK(nth(l, 0)->thread == 3 && nth(l, 0)->stack == 4 && nth(l, 0)->end == 0);
    leaks__free(l, 2, 0x1000, 4);
    CHECK(nth(l, 1)->end == 4 && nth(l, 0)->end == 0);
    leaks__sampled(l, 1, 0x1000, 1000, 2, 3, 4, 5);
    CHECK(n_blocks(l) == 3 && nth(l, 0)->end == 5 && nth(l, 2)->end == 0);
    CHECK(leaks__counts(l).unknown_frees == 0);
    leaks__delete(l);
}

int main(void)
{
    threads();
    lost_allocations();
    nested();
    reallocs();
    lost();
    sampled();
    return 0;
}
