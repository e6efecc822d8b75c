/*
 * test_spandiff.c - the verdicts of `pymerge diff --runs`
 * (merge/model/spandiff.c) on hand-made runs whose answer is known: the
 * rest of a span getting faster is no slowdown of its functions, a
 * function that did grow still makes its span slower, also when the
 * machine's speed moved its runs more than the change, and a span or
 * function on one side only is new or gone, never slower.
 */
#include "check.h"
#include "spandiff.h"

#include <math.h>
#include <string.h>

#define RUNS 3
#define MS 1000000.0

struct fn_time {
    const char *span, *fn;
    double base_ms, new_ms;     /* per run; 0: absent on that side */
};

/* The machine's speed in each run of each side: every function of a run
 * takes that much longer (NULL: 1). */
typedef double run_speeds[2][RUNS];

/* One run: each function's time (ms, cpu-ns weight, one sample a ms)
 * under its [span NAME] frame, moved by a small per-run jitter so that
 * the runs have a spread, and by the run's speed. */
static struct profile *run_of(const struct fn_time *t, size_t n, int side, int run, const run_speeds *slow)
{
    struct profile *p = profile__new(0);
    struct value_type types[] = {{"samples", "count"}, {"cpu-ns", "nanoseconds"}};
    CHECK(profile__set_types(p, types, 2, 1) == 0);
    uint32_t thread = profile__thread(p, 1, 1, "python", "python");
    for (size_t i = 0; i < n; i++) {
        double ms = side ? t[i].new_ms : t[i].base_ms;
        if (ms == 0)
            continue;
        ms *= (1 + 0.002 * (run - 1)) * (slow ? (*slow)[side][run] : 1);
        char span[64];
        snprintf(span, sizeof span, "[span %s]", t[i].span);
        uint32_t ids[2] = {profile__frame(p, span, strlen(span), PK_PYTHON, NULL),
                           profile__frame(p, t[i].fn, strlen(t[i].fn), PK_PYTHON, "bench.py")};
        uint64_t v[2] = {(uint64_t)ms, (uint64_t)(ms * MS)};
        profile__add(p, thread, profile__stack(p, ids, 2), 0, v);
    }
    return p;
}

static struct spandiff *compare(const struct fn_time *t, size_t n, double min_change, const run_speeds *slow)
{
    struct spandiff_acc *a = spandiff__new(RUNS, RUNS);
    for (int side = 0; side < 2; side++)
        for (int r = 0; r < RUNS; r++) {
            struct profile *p = run_of(t, n, side, r, slow);
            CHECK(spandiff__add(a, (size_t)(side * RUNS + r), p) == 0);
            profile__delete(p);
        }
    struct spandiff_opts o = {0.05, min_change, 0};
    return spandiff__finish(a, &o);
}

static const struct sd_span *span(const struct spandiff *d, const char *name)
{
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->spans[i].name, name))
            return &d->spans[i];
    CHECK(!"span not found");
    return NULL;
}

static const struct sd_function *function(const struct sd_span *s, const char *name)
{
    for (size_t i = 0; i < s->n_grown; i++)
        if (!strcmp(s->grown[i].name, name))
            return &s->grown[i];
    return NULL;
}

/* parse's time per call is the same; the rest of its span (check) got 6%
 * faster, so parse's share against the rest grew 6.4% with a certain p,
 * and the span's own time fell 3%, significantly but under min_change 5:
 * not slower. */
static void check_rest_faster(void)
{
    static const struct fn_time t[] = {{"a", "parse", 500, 500}, {"a", "check", 500, 470}};
    struct spandiff *d = compare(t, 2, 5, NULL);
    const struct sd_span *a = span(d, "a");
    CHECK(a->s.p_adj < 0.05 && spandiff__change(&a->s) < 0);
    const struct sd_function *parse = function(a, "parse");
    CHECK(parse && parse->s.p_adj < 0.05 && spandiff__change(&parse->s) > 5);
    CHECK(!parse->significant);
    CHECK(a->verdict == SD_SAME);
    spandiff__delete(d);
}

/* parse's own time grew 12% (span +6%, under min_change 10): slower,
 * named by its grown function. */
static void check_function_grew(void)
{
    static const struct fn_time t[] = {{"a", "parse", 500, 560}, {"a", "check", 500, 500}};
    struct spandiff *d = compare(t, 2, 10, NULL);
    const struct sd_span *a = span(d, "a");
    CHECK(a->n_grown && !strcmp(a->grown[0].name, "parse") && a->grown[0].significant);
    CHECK(a->verdict == SD_SLOWER);
    spandiff__delete(d);
}

/* parse 30% slower, on a machine whose base runs were slowed by up to
 * 40%: the span's time per call fell 9% and parse's own grew 3%, the
 * rest's fell 21% but not significantly, and parse against the rest grew
 * 30%: slower, named by parse. */
static void check_function_grew_under_load(void)
{
    static const struct fn_time t[] = {{"a", "parse", 500, 650}, {"a", "check", 500, 500}};
    static const run_speeds slow = {{1.0, 1.4, 1.2}, {0.95, 0.9, 1.0}};
    struct spandiff *d = compare(t, 2, 15, &slow);
    const struct sd_span *a = span(d, "a");
    CHECK(!(a->s.p_adj < 0.05));
    CHECK(a->n_grown && !strcmp(a->grown[0].name, "parse") && a->grown[0].significant);
    CHECK(!a->grown[0].rest_faster);
    CHECK(a->verdict == SD_SLOWER);
    spandiff__delete(d);
}

/* Span b only in the new runs, span c only in the base ones, function
 * extra only in the new runs of span a: new and gone, untested, never
 * slower. */
static void check_new_and_gone(void)
{
    static const struct fn_time t[] = {{"a", "parse", 500, 500}, {"a", "check", 500, 500},
                                       {"a", "extra", 0, 100},   {"b", "sort", 0, 300},
                                       {"c", "hash", 300, 0}};
    struct spandiff *d = compare(t, 5, 5, NULL);
    const struct sd_span *a = span(d, "a"), *b = span(d, "b"), *c = span(d, "c");
    CHECK(b->verdict == SD_NEW && isnan(b->s.p));
    CHECK(c->verdict == SD_GONE && isnan(c->s.p));
    const struct sd_function *extra = function(a, "extra");
    CHECK(extra && extra->absent == 0 && isnan(extra->s.p) && !extra->significant);
    spandiff__delete(d);
}

int main(void)
{
    check_rest_faster();
    check_function_grew();
    check_function_grew_under_load();
    check_new_and_gone();
    puts("ok");
    return 0;
}
