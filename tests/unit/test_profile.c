/* test_profile.c - the profile model's contracts (merge/model/profile.h), which
 * every writer relies on: what is interned and when two things are the
 * same, how values sum, which value weighs, what time order means. */
#include "check.h"
#include "profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Values on the heap, exactly n of them: ASan then catches a reader that
 * takes more than the profile's n_types values. */
static uint64_t *vals(size_t n, uint64_t a, uint64_t b)
{
    uint64_t *v = malloc(n * sizeof(*v));
    CHECK(v);
    v[0] = a;
    if (n > 1)
        v[1] = b;
    for (size_t i = 2; i < n; i++)
        v[i] = 0;
    return v;
}

/* A new profile counts samples: one type, "samples" in "count", the
 * weight; its timed list is empty and it has no span. */
static void defaults(void)
{
    struct profile *p = profile__new(0);
    CHECK(profile__n_types(p) == 1 && profile__weight(p) == 0);
    CHECK(!strcmp(profile__type(p, 0)->name, "samples"));
    CHECK(!strcmp(profile__type(p, 0)->unit, "count"));
    CHECK(profile__find_type(p, "samples") == 0 && profile__find_type(p, "cpu-ns") == -1);
    CHECK(profile__n_samples(p) == 0 && profile__total(p) == 0 && !profile__has_time(p));
    size_t n = 1;
    CHECK(profile__timed(p, &n) == NULL && n == 0);
    CHECK(profile__start_ns(p) == 0 && profile__duration_ns(p) == 0);
    profile__delete(p);
    profile__delete(NULL);
}

/* set_types refuses 0 or more than PROFILE_MAX_VALUES types and a weight
 * past the last, leaving the types as they were; it copies the names, so
 * the caller's buffers may change afterwards. */
static void set_types_bounds_and_copies(void)
{
    struct profile *p = profile__new(0);
    struct value_type many[PROFILE_MAX_VALUES + 1];
    for (size_t i = 0; i <= PROFILE_MAX_VALUES; i++)
        many[i] = (struct value_type){"t", "count"};
    CHECK(profile__set_types(p, many, 0, 0) == -EINVAL);
    CHECK(profile__set_types(p, many, PROFILE_MAX_VALUES + 1, 0) == -EINVAL);
    CHECK(profile__set_types(p, many, 2, 2) == -EINVAL);
    CHECK(profile__n_types(p) == 1 && !strcmp(profile__type(p, 0)->name, "samples"));

    char name0[16] = "cpu-ns", name1[16] = "wall-ns", unit[16] = "nanoseconds";
    struct value_type two[] = {{name0, unit}, {name1, unit}};
    CHECK(profile__set_types(p, two, 2, 1) == 0);
    strcpy(name0, "changed"), strcpy(name1, "changed"), strcpy(unit, "changed");
    CHECK(profile__n_types(p) == 2 && profile__weight(p) == 1);
    CHECK(!strcmp(profile__type(p, 0)->name, "cpu-ns"));
    CHECK(!strcmp(profile__type(p, 1)->name, "wall-ns"));
    CHECK(!strcmp(profile__type(p, 1)->unit, "nanoseconds"));
    CHECK(profile__find_type(p, "wall-ns") == 1 && profile__find_type(p, "samples") == -1);
    CHECK(profile__set_types(p, many, PROFILE_MAX_VALUES, PROFILE_MAX_VALUES - 1) == 0);
    CHECK(profile__n_types(p) == PROFILE_MAX_VALUES);
    profile__delete(p);
}

/* A frame is one (name, kind): the same pair gives the same id whatever
 * file is passed later (the first file stays), another kind gives another
 * frame, and only len bytes of the name count. */
static void frames_interned_by_name_and_kind(void)
{
    struct profile *p = profile__new(0);
    uint32_t f = profile__frame(p, "main;junk", 4, PK_NATIVE, "/bin/a");
    CHECK(profile__frame(p, "main", 4, PK_NATIVE, "/bin/other") == f);
    CHECK(profile__frame(p, "main", 4, PK_NATIVE, NULL) == f);
    CHECK(!strcmp(profile__get_frame(p, f)->name, "main"));
    CHECK(!strcmp(profile__get_frame(p, f)->file, "/bin/a"));
    uint32_t ids[PK_ROOT + 1];
    for (int k = PK_PYTHON; k <= PK_ROOT; k++) {
        ids[k] = profile__frame(p, "main", 4, (enum pkind)k, NULL);
        CHECK(profile__get_frame(p, ids[k])->kind == k);
        for (int j = PK_PYTHON; j < k; j++)
            CHECK(ids[j] != ids[k]);
    }
    CHECK(ids[PK_NATIVE] == f);
    CHECK(profile__get_frame(p, ids[PK_KERNEL])->file == NULL);
    CHECK(profile__n_frames(p) == PK_ROOT + 1);
    profile__delete(p);
}

/* A thread is one (pid, tid, comm, label, tags): the same five give the
 * same id, any one different gives a new thread; NULL tags differ from
 * empty ones.  Its label is a PK_ROOT frame, apart from a native frame
 * of the same text.  Thousands of threads stay apart and are found again. */
static void threads_interned_by_every_field(void)
{
    struct profile *p = profile__new(0);
    uint32_t t = profile__thread(p, 10, 11, "app", "app-10");
    CHECK(profile__thread(p, 10, 11, "app", "app-10") == t);
    CHECK(profile__thread_tagged(p, 10, 11, "app", "app-10", NULL) == t);
    uint32_t other[] = {
        profile__thread(p, 12, 11, "app", "app-10"),
        profile__thread(p, 10, 12, "app", "app-10"),
        profile__thread(p, 10, 11, "app2", "app-10"),
        profile__thread(p, 10, 11, "app", "app"),
        profile__thread_tagged(p, 10, 11, "app", "app-10", "host=a"),
        profile__thread_tagged(p, 10, 11, "app", "app-10", "host=b"),
        profile__thread_tagged(p, 10, 11, "app", "app-10", ""),
    };
    size_t n = sizeof(other) / sizeof(*other);
    for (size_t i = 0; i < n; i++) {
        CHECK(other[i] != t);
        for (size_t j = 0; j < i; j++)
            CHECK(other[i] != other[j]);
    }
    CHECK(profile__n_threads(p) == n + 1);
    CHECK(profile__thread_tagged(p, 10, 11, "app", "app-10", "host=a") == other[4]);
    const struct pthread *th = profile__get_thread(p, other[4]);
    CHECK(th->pid == 10 && th->tid == 11 && !strcmp(th->comm, "app"));
    CHECK(!strcmp(th->tags, "host=a"));
    const struct pframe *label = profile__get_frame(p, th->label);
    CHECK(label->kind == PK_ROOT && !strcmp(label->name, "app-10"));
    CHECK(profile__frame(p, "app-10", 6, PK_NATIVE, NULL) != th->label);

    for (uint32_t i = 0; i < 5000; i++)
        CHECK(profile__thread(p, 1000 + i / 7, i, "w", "w") == n + 1 + i);
    for (uint32_t i = 0; i < 5000; i++)
        CHECK(profile__thread(p, 1000 + i / 7, i, "w", "w") == n + 1 + i);
    CHECK(profile__n_threads(p) == n + 1 + 5000);
    profile__delete(p);
}

/* Equal stacks share an id; a prefix, a longer stack or the empty stack
 * is another; the stack comes back root first as given. */
static void stacks_interned(void)
{
    struct profile *p = profile__new(0);
    uint32_t a[] = {1, 2, 3}, b[] = {1, 2, 3}, c[] = {3, 2, 1};
    uint32_t sa = profile__stack(p, a, 3);
    CHECK(profile__stack(p, b, 3) == sa);
    uint32_t others[] = {profile__stack(p, a, 2), profile__stack(p, c, 3), profile__stack(p, a, 0)};
    for (size_t i = 0; i < 3; i++)
        CHECK(others[i] != sa);
    CHECK(others[0] != others[1] && others[1] != others[2] && others[0] != others[2]);
    size_t n;
    const uint32_t *got = profile__get_stack(p, sa, &n);
    CHECK(n == 3 && got[0] == 1 && got[1] == 2 && got[2] == 3);
    profile__get_stack(p, others[2], &n);
    CHECK(n == 0);
    profile__delete(p);
}

/* Many stacks of every length (past one storage block, through the table's
 * growth) come back whole, each aligned for its uint32_t frames: stored
 * one after another, an odd-sized neighbour would misalign the next. */
static void stacks_many_come_back_aligned(void)
{
    struct profile *p = profile__new(0);
    uint32_t fr[64];
    for (uint32_t i = 0; i < 64; i++)
        fr[i] = i * 7;
    for (uint32_t round = 0; round < 2; round++)    /* the second finds each again */
        for (uint32_t i = 0; i < 20000; i++) {
            fr[0] = i;
            CHECK(profile__stack(p, fr, 1 + i % 64) == i);
        }
    for (uint32_t i = 0; i < 20000; i++) {
        size_t n;
        const uint32_t *got = profile__get_stack(p, i, &n);
        CHECK(n == 1 + i % 64 && (uintptr_t)got % sizeof(uint32_t) == 0);
        CHECK(got[0] == i && got[n - 1] == (n > 1 ? (uint32_t)(n - 1) * 7 : i));
    }
    profile__delete(p);
}

/* Samples aggregate by (thread, stack), every type summed, in first-seen
 * order; thread 0 with stack 0 is a sample like any other.  The total is
 * the sum of the weight type, and follows set_weight, which ignores an
 * index past the last type. */
static void samples_sum_per_thread_and_stack(void)
{
    struct profile *p = profile__new(0);
    struct value_type t[] = {{"samples", "count"}, {"cpu-ns", "nanoseconds"}};
    CHECK(profile__set_types(p, t, 2, 1) == 0);
    uint32_t t0 = profile__thread(p, 1, 1, "a", "a"), t1 = profile__thread(p, 2, 2, "b", "b");
    uint32_t fr[] = {profile__frame(p, "f", 1, PK_NATIVE, NULL)};
    uint32_t s0 = profile__stack(p, fr, 0), s1 = profile__stack(p, fr, 1);
    CHECK(t0 == 0 && s0 == 0);
    uint64_t *v = vals(2, 1, 100);
    profile__add(p, t0, s0, 5, v);
    profile__add(p, t1, s1, 6, v);
    profile__add(p, t0, s1, 7, v);
    v[1] = 50;
    profile__add(p, t0, s0, 8, v);
    CHECK(profile__n_samples(p) == 3);
    const struct psample *a = profile__sample(p, 0), *b = profile__sample(p, 1),
                         *c = profile__sample(p, 2);
    CHECK(a->thread == t0 && a->stack == s0 && a->v[0] == 2 && a->v[1] == 150);
    CHECK(b->thread == t1 && b->stack == s1 && b->v[0] == 1 && b->v[1] == 100);
    CHECK(c->thread == t0 && c->stack == s1 && c->v[0] == 1 && c->v[1] == 100);
    CHECK(profile__total(p) == 350);
    profile__set_weight(p, 0);
    CHECK(profile__total(p) == 4 && profile__weight(p) == 0);
    profile__set_weight(p, 2);
    CHECK(profile__weight(p) == 0);
    size_t n;
    CHECK(profile__timed(p, &n) == NULL && n == 0);     /* time order not kept */
    free(v);
    profile__delete(p);
}

/* add_values sums without a timed record, add_timed records without
 * summing, and add_span does both, its timed weight the weight type's
 * value; timed records exist only once time order is kept, which
 * keep_time turns on for what follows. */
static void values_and_timed_halves(void)
{
    struct profile *p = profile__new(0);
    struct value_type t[] = {{"count", "count"}, {"latency-ns", "nanoseconds"}};
    CHECK(profile__set_types(p, t, 2, 1) == 0);
    uint32_t none[1] = {0};
    uint32_t th = profile__thread(p, 1, 1, "a", "a"), st = profile__stack(p, none, 0);
    uint64_t *v = vals(2, 1, 40);
    profile__add_span(p, th, st, 10, 50, v);    /* before keep_time: values only */
    CHECK(!profile__has_time(p));
    profile__keep_time(p);
    CHECK(profile__has_time(p));
    profile__add_values(p, th, st, v);
    profile__add_timed(p, th, st, 100, 130, 7);
    profile__add_span(p, th, st, 200, 260, v);
    profile__add(p, th, st, 300, v);
    profile__finish(p);
    CHECK(profile__n_samples(p) == 1);
    CHECK(profile__sample(p, 0)->v[0] == 4 && profile__sample(p, 0)->v[1] == 160);
    size_t n;
    const struct ptimed *tm = profile__timed(p, &n);
    CHECK(n == 3);
    CHECK(tm[0].time == 100 && tm[0].end == 130 && tm[0].weight == 7);
    CHECK(tm[1].time == 200 && tm[1].end == 260 && tm[1].weight == 40);
    CHECK(tm[2].time == 300 && tm[2].end == 300 && tm[2].weight == 40);
    CHECK(tm[2].thread == th && tm[2].stack == st);
    free(v);
    profile__delete(p);
}

/* finish sorts by time; at one time a longer span goes first (a caller
 * before the callee that started with it); records equal in both keep
 * the order they were added in.  Checked against an insertion sort over
 * records added nearly in order, as spans are (when they end). */
static void finish_orders_time_then_longer_span_stably(void)
{
    enum { N = 3000 };
    struct profile *p = profile__new(1);
    uint32_t th = profile__thread(p, 1, 1, "a", "a");
    static struct ptimed want[N];
    unsigned seed = 12345;
    for (size_t i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        uint64_t time = i / 4 + (seed >> 16) % 3;      /* ties and small inversions */
        uint64_t end = time + (seed >> 20) % 3;
        /* the stack id tells records apart: the order they were added */
        want[i] = (struct ptimed){time, end, th, (uint32_t)i, i};
        profile__add_timed(p, th, (uint32_t)i, time, end, i);
    }
    for (size_t i = 1; i < N; i++) {
        struct ptimed x = want[i];
        size_t j = i;
        while (j > 0 && (x.time < want[j - 1].time ||
                         (x.time == want[j - 1].time && x.end > want[j - 1].end))) {
            want[j] = want[j - 1];
            j--;
        }
        want[j] = x;
    }
    profile__finish(p);
    size_t n;
    const struct ptimed *got = profile__timed(p, &n);
    CHECK(n == N);
    for (size_t i = 0; i < N; i++)
        CHECK(got[i].time == want[i].time && got[i].end == want[i].end &&
              got[i].stack == want[i].stack && got[i].weight == want[i].weight);
    CHECK(profile__n_samples(p) == 0);     /* timed records alone add no values */
    profile__delete(p);
}

/* The recording's span is kept as given. */
static void span_kept(void)
{
    struct profile *p = profile__new(0);
    profile__set_span(p, 1700000000000000000ull, 2500000000ull);
    CHECK(profile__start_ns(p) == 1700000000000000000ull);
    CHECK(profile__duration_ns(p) == 2500000000ull);
    profile__delete(p);
}

/* A build id is found from a frame's file, whatever buffer the path was
 * set from; the first id set for a path stays; a file without one, and a
 * frame without a file, have none. */
static void build_id_by_frame_file(void)
{
    struct profile *p = profile__new(0);
    char path[32] = "/usr/lib/libc.so.6";
    profile__set_build_id(p, path, "abcdef01");
    strcpy(path, "/changed");
    profile__set_build_id(p, "/usr/lib/libc.so.6", "ffff");
    uint32_t libc = profile__frame(p, "malloc", 6, PK_NATIVE, "/usr/lib/libc.so.6");
    uint32_t other = profile__frame(p, "main", 4, PK_NATIVE, "/bin/app");
    uint32_t kernel = profile__frame(p, "schedule", 8, PK_KERNEL, NULL);
    CHECK(!strcmp(profile__build_id(p, profile__get_frame(p, libc)->file), "abcdef01"));
    CHECK(profile__build_id(p, profile__get_frame(p, other)->file) == NULL);
    CHECK(profile__build_id(p, profile__get_frame(p, kernel)->file) == NULL);
    profile__delete(p);
}

int main(void)
{
    defaults();
    set_types_bounds_and_copies();
    frames_interned_by_name_and_kind();
    threads_interned_by_every_field();
    stacks_interned();
    stacks_many_come_back_aligned();
    samples_sum_per_thread_and_stack();
    values_and_timed_halves();
    finish_orders_time_then_longer_span_stably();
    span_kept();
    build_id_by_frame_file();
    return 0;
}
