/*
 * test_spandiff.c - the verdicts of `pymerge diff --runs`
 * (merge/model/spandiff.c) on hand-made runs whose answer is known: the
 * rest of a span getting faster is no slowdown of its functions, a
 * function that did grow still makes its span slower, and a span or
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

/* One run: each function's time (ms, cpu-ns weight, one sample a ms)
 * under its [span NAME] frame, moved by a small per-run jitter so that
 * the runs have a spread. */
static struct profile *run_of(const struct fn_time *t, size_t n, int side, int run)
{
    struct profile *p = profile__new(0);
    struct value_type types[] = {{"samples", "count"}, {"cpu-ns", "nanoseconds"}};
    CHECK(profile__set_types(p, types, 2, 1) == 0);
    uint32_t thread = profile__thread(p, 1, 1, "python", "python");
    for (size_t i = 0; i < n; i++) {
        double ms = side ? t[i].new_ms : t[i].base_ms;
        if (ms == 0)
            continue;
        ms *= 1 + 0.002 * (run - 1);
        char span[64];
        snprintf(span, sizeof span, "[span %s]", t[i].span);
        uint32_t ids[2] = {profile__frame(p, span, strlen(span), PK_PYTHON, NULL),
                           profile__frame(p, t[i].fn, strlen(t[i].fn), PK_PYTHON, "bench.py")};
        uint64_t v[2] = {(uint64_t)ms, (uint64_t)(ms * MS)};
        profile__add(p, thread, profile__stack(p, ids, 2), 0, v);
    }
    return p;
}

static struct spandiff *compare(const struct fn_time *t, size_t n, double min_change)
{
    struct spandiff_acc *a = spandiff__new(RUNS, RUNS);
    for (int side = 0; side < 2; side++)
        for (int r = 0; r < RUNS; r++) {
            struct profile *p = run_of(t, n, side, r);
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
    struct spandiff *d = compare(t, 2, 5);
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
    struct spandiff *d = compare(t, 2, 10);
    const struct sd_span *a = span(d, "a");
    CHECK(a->n_grown && !strcmp(a->grown[0].name, "parse") && a->grown[0].significant);
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
    struct spandiff *d = compare(t, 5, 5);
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
    check_new_and_gone();
    puts("ok");
    return 0;
}
