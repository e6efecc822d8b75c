/* spandiff.c - recordings compared span by span (spandiff.h). */
#include "spandiff.h"
#include "intern.h"
#include "spanrows.h"
#include "stats.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One span's, or one (span, function)'s, sums per run. */
struct series {
    double *w, *samples, *calls;    /* [runs] */
};

struct spandiff_acc {
    size_t runs[2], n_runs;
    struct intern *spans, *keys;    /* keys: the span's id (4 bytes), then the function's name */
    struct series *span, *fn;
    size_t span_cap, fn_cap;
    char *weight;                   /* the first run's weight type */
    int has_samples;                /* every run has a "samples" type */
};

struct spandiff_acc *spandiff__new(size_t base_runs, size_t new_runs)
{
    struct spandiff_acc *a = xcalloc(1, sizeof(*a));
    a->runs[0] = base_runs;
    a->runs[1] = new_runs;
    a->n_runs = base_runs + new_runs;
    a->spans = intern__new();
    a->keys = intern__new();
    a->has_samples = 1;
    return a;
}

static struct series *series_at(struct series **arr, size_t *cap, uint32_t id, size_t runs)
{
    size_t had = *cap;
    GROW_ZEROED(*arr, *cap, (size_t)id + 1);
    for (size_t i = had; i < *cap; i++)
        (*arr)[i] = (struct series){xcalloc(runs, sizeof(double)), xcalloc(runs, sizeof(double)),
                                    xcalloc(runs, sizeof(double))};
    return &(*arr)[id];
}

static int is_span_frame(const struct pframe *f)
{
    size_t len = strlen(f->name);
    return f->kind == PK_PYTHON && len > 7 && !strncmp(f->name, "[span ", 6) && f->name[len - 1] == ']';
}

/* The function a stack's time is the own time of: its innermost Python
 * frame (what it runs of the interpreter and of C is its work), else its
 * leaf; -1 when the stack holds only span frames. */
static long own_frame(const struct profile *p, const uint32_t *st, size_t n, size_t first)
{
    for (size_t i = n; i > first; i--)
        if (profile__get_frame(p, st[i - 1])->kind == PK_PYTHON)
            return (long)(i - 1);
    return n > first ? (long)(n - 1) : -1;
}

static void add_to(struct series *s, size_t run, double w, double samples)
{
    s->w[run] += w;
    s->samples[run] += samples;
}

/* One stack's weight w to each span of its chain (once per name) and to
 * its own function inside each. */
static void add_stack(struct spandiff_acc *a, size_t run, const struct profile *p,
                      const uint32_t *st, size_t n, double w, double samples)
{
    size_t k = 0;
    while (k < n && is_span_frame(profile__get_frame(p, st[k])))
        k++;
    long own = own_frame(p, st, n, k);
    const char *fname = own < 0 ? NULL : profile__get_frame(p, st[own])->name;
    size_t flen = fname ? strlen(fname) : 0;
    char *key = xmalloc(flen + 5);
    for (size_t j = 0; j < k; j++) {
        size_t dup = 0;
        for (size_t i = 0; i < j; i++)
            dup |= st[i] == st[j];
        if (dup)
            continue;
        const char *name = profile__get_frame(p, st[j])->name;
        uint32_t id = intern__id(a->spans, name + 6, strlen(name) - 7);
        add_to(series_at(&a->span, &a->span_cap, id, a->n_runs), run, w, samples);
        if (!fname)
            continue;
        memcpy(key, &id, 4);
        memcpy(key + 4, fname, flen);
        uint32_t kid = intern__id(a->keys, key, flen + 4);
        add_to(series_at(&a->fn, &a->fn_cap, kid, a->n_runs), run, w, samples);
    }
    free(key);
}

int spandiff__add(struct spandiff_acc *a, size_t run, const struct profile *p)
{
    size_t wi = profile__weight(p);
    const char *weight = profile__type(p, wi)->name;
    if (a->weight && strcmp(a->weight, weight))
        return -EINVAL;
    if (!a->weight)
        a->weight = xstrdup(weight);
    int si = profile__find_type(p, "samples");
    a->has_samples &= si >= 0;
    for (size_t i = 0; i < profile__n_samples(p); i++) {
        const struct psample *s = profile__sample(p, i);
        size_t n;
        const uint32_t *st = profile__get_stack(p, s->stack, &n);
        add_stack(a, run, p, st, n, (double)s->v[wi], si >= 0 ? (double)s->v[si] : 0);
    }
    const struct span_rows *r = profile__span_rows(p);
    for (size_t i = 0; r && i < r->n; i++) {
        uint32_t id = intern__id(a->spans, r->rows[i].name, strlen(r->rows[i].name));
        series_at(&a->span, &a->span_cap, id, a->n_runs)->calls[run] = (double)r->rows[i].count;
    }
    return 0;
}

double spandiff__shown(const struct spandiff *d, double v, const char **unit)
{
    size_t n = strlen(d->unit);
    int ns = n > 3 && !strcmp(d->unit + n - 3, "-ns");
    *unit = ns ? "ms" : d->unit;
    return ns ? v / 1e6 : v;
}

double spandiff__change(const struct sd_stat *s)
{
    return s->mean[0] > 0 ? 100 * (s->mean[1] / s->mean[0] - 1) : s->mean[1] > 0 ? INFINITY : 0;
}

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof(*v), by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The runs' values of s per call of its span (calls: the span's series),
 * divided by the runs' speeds (NULL: as they are). */
static void per_call(const struct spandiff_acc *a, const struct series *s, const struct series *calls,
                     const double *speed, double *v)
{
    for (size_t r = 0; r < a->n_runs; r++)
        v[r] = s->w[r] / (calls->calls[r] > 0 ? calls->calls[r] : 1) / (speed ? speed[r] : 1);
}

/* The side (0 base, 1 new) on which s has no sample and no call in any
 * run, or -1: a benchmark added or removed, a function renamed, has no
 * values there to test, only zeros without spread. */
static int absent_side(const struct spandiff_acc *a, const struct series *s)
{
    for (int side = 0; side < 2; side++) {
        size_t from = side ? a->runs[0] : 0;
        double any = 0;
        for (size_t r = from; r < from + a->runs[side]; r++)
            any += s->w[r] + s->samples[r] + s->calls[r];
        if (!(any > 0))
            return side;
    }
    return -1;
}

/* Whether s has enough samples to be tested; its mean samples per run. */
static int testable(const struct spandiff_acc *a, const struct series *s, double *samples)
{
    for (int side = 0; side < 2; side++) {
        size_t from = side ? a->runs[0] : 0;
        samples[side] = 0;
        for (size_t r = 0; r < a->runs[side]; r++)
            samples[side] += s->samples[from + r] / (double)a->runs[side];
    }
    return a->runs[0] >= 2 && a->runs[1] >= 2 && absent_side(a, s) < 0 &&
           (!a->has_samples || fmax(samples[0], samples[1]) >= SPANDIFF_MIN_SAMPLES);
}

static struct sd_stat test(const struct spandiff_acc *a, const double *v, int tested)
{
    struct welch w = stats__welch(v, a->runs[0], v + a->runs[0], a->runs[1]);
    return (struct sd_stat){{w.mean[0], w.mean[1]}, tested ? w.p : NAN, NAN};
}

/* speed[r]: 1, or with normalize the median over testable spans of the
 * span's value in run r against its base median.  Returns how many spans
 * gave it (0: not normalized). */
static size_t speeds(const struct spandiff_acc *a, const struct spandiff_opts *o, double *speed)
{
    size_t n = intern__count(a->spans), m = 0;
    double *ratio = xcalloc(a->n_runs * (n + 1), sizeof(*ratio)), *v = xcalloc(a->n_runs, sizeof(*v));
    double samples[2];
    for (size_t r = 0; r < a->n_runs; r++)
        speed[r] = 1;
    for (size_t s = 0; o->normalize && s < n; s++) {
        per_call(a, &a->span[s], &a->span[s], speed, v);
        double base = median(memcpy(ratio + n * a->n_runs, v, a->runs[0] * sizeof(*v)), a->runs[0]);
        if (!testable(a, &a->span[s], samples) || !(base > 0))
            continue;
        for (size_t r = 0; r < a->n_runs; r++)
            ratio[r * n + m] = v[r] / base;
        m++;
    }
    if (m < 3)
        m = 0;          /* a median of fewer is moved by the very change it should not see */
    for (size_t r = 0; m && r < a->n_runs; r++) {
        double f = median(ratio + r * n, m);
        speed[r] = f > 0 ? f : 1;       /* a run without those spans: nothing to scale */
    }
    free(ratio);
    free(v);
    return m;
}

static int by_growth(const void *x, const void *y)
{
    const struct sd_function *a = x, *b = y;
    double ga = a->per_call[1] - a->per_call[0], gb = b->per_call[1] - b->per_call[0];
    if (a->significant != b->significant)
        return b->significant - a->significant;
    return ga < gb ? 1 : ga > gb ? -1 : strcmp(a->name, b->name);
}

/* Each run's weight of fn against the rest of its span's (NaN where the
 * function is the whole span). */
static void against_rest(const struct spandiff_acc *a, const struct series *fn,
                         const struct series *span, double *v)
{
    for (size_t r = 0; r < a->n_runs; r++) {
        double rest = span->w[r] - fn->w[r];
        v[r] = rest > 0 ? fn->w[r] / rest : NAN;
    }
}

/* Whether the rest of span (all but fn) got faster per call by Welch's
 * test at alpha, uncorrected: the stricter guard, as a rest that got
 * faster also grows fn's share. */
static int rest_faster(const struct spandiff_acc *a, const struct series *fn, const struct series *span,
                       const double *speed, double alpha, double *v)
{
    for (size_t r = 0; r < a->n_runs; r++)
        v[r] = (span->w[r] - fn->w[r]) / (span->calls[r] > 0 ? span->calls[r] : 1) / (speed ? speed[r] : 1);
    struct welch w = stats__welch(v, a->runs[0], v + a->runs[0], a->runs[1]);
    return w.p < alpha && w.mean[1] < w.mean[0];
}

/* Every function of span id, tested against the rest of its span; its
 * time per call divided by the runs' speeds, as its span's is. */
static void functions(const struct spandiff_acc *a, uint32_t id, const double *speed, double alpha,
                      struct sd_span *out)
{
    size_t nk = intern__count(a->keys), n = 0;
    struct sd_function *f = xcalloc(nk + 1, sizeof(*f));
    double *v = xcalloc(a->n_runs, sizeof(*v)), samples[2];
    int span_absent = absent_side(a, &a->span[id]);
    for (uint32_t k = 0; k < nk; k++) {
        uint32_t sid;
        memcpy(&sid, intern__str(a->keys, k), 4);
        if (sid != id)
            continue;
        struct sd_function *fn = &f[n++];
        fn->name = xstrdup(intern__str(a->keys, k) + 4);
        per_call(a, &a->fn[k], &a->span[id], speed, v);
        struct sd_stat abs = test(a, v, 0);
        fn->per_call[0] = abs.mean[0];
        fn->per_call[1] = abs.mean[1];
        fn->rest_faster = rest_faster(a, &a->fn[k], &a->span[id], speed, alpha, v);
        against_rest(a, &a->fn[k], &a->span[id], v);
        int whole = 0;
        for (size_t r = 0; r < a->n_runs; r++)
            whole |= isnan(v[r]);
        int tested = testable(a, &a->fn[k], samples);
        int side = span_absent < 0 ? absent_side(a, &a->fn[k]) : -1;
        fn->s = test(a, v, !whole && tested);
        /* a function seen in a sample or two of one side is no news */
        fn->absent = side >= 0 && (!a->has_samples || samples[!side] >= SPANDIFF_MIN_SAMPLES) ? side : -1;
    }
    out->grown = f;
    out->n_grown = n;
    free(v);
}

/* After Holm: the tested functions of s whose time grew against the rest
 * of its span, and those new or gone in it, significant ones first, then
 * by growth of their own time.  A function's share also grows when the
 * rest of its span got faster: it is significant only if its own time
 * grew and the rest did not get faster.  Its own time is no test of its
 * own: on a loaded machine it moves as much as the span's does. */
static void keep_grown(struct sd_span *s, const struct spandiff_opts *o)
{
    size_t kept = 0;
    for (size_t i = 0; i < s->n_grown; i++) {
        struct sd_function *f = &s->grown[i];
        f->significant = f->s.p_adj < o->alpha && spandiff__change(&f->s) >= o->min_change &&
                         f->per_call[1] > f->per_call[0] && !f->rest_faster;
        if ((!isnan(f->s.p) && f->s.mean[1] > f->s.mean[0]) || f->absent >= 0)
            s->grown[kept++] = *f;
        else
            free((char *)f->name);
    }
    s->n_grown = kept;
    qsort(s->grown, kept, sizeof(*s->grown), by_growth);
}

static int by_verdict(const void *x, const void *y)
{
    const struct sd_span *a = x, *b = y;
    static const int rank[] = {[SD_SLOWER] = 0, [SD_FASTER] = 1, [SD_NEW] = 2, [SD_GONE] = 3,
                               [SD_SAME] = 4, [SD_UNTESTED] = 5};
    if (a->verdict != b->verdict)
        return rank[a->verdict] - rank[b->verdict];
    double ca = fabs(spandiff__change(&a->s)), cb = fabs(spandiff__change(&b->s));
    if (a->verdict <= SD_FASTER && ca != cb)
        return ca < cb ? 1 : -1;
    return strcmp(a->name, b->name);
}

static void free_acc(struct spandiff_acc *a)
{
    struct series *arr[2] = {a->span, a->fn};
    size_t cap[2] = {a->span_cap, a->fn_cap};
    for (int i = 0; i < 2; i++) {
        for (size_t k = 0; k < cap[i]; k++) {
            free(arr[i][k].w);
            free(arr[i][k].samples);
            free(arr[i][k].calls);
        }
        free(arr[i]);
    }
    intern__delete(a->spans);
    intern__delete(a->keys);
    free(a);
}

/* A span is slower when its own time per call grew significantly, or
 * when one of its functions grew against the rest of it and the span did
 * not get significantly faster (then it is the rest that got faster).
 * The span's mean alone is no guard: on a loaded machine it moves more
 * than the slowdown of one of its functions.  A span on one side only
 * keeps its verdict, new or gone. */
static enum sd_verdict verdict(const struct sd_span *sp, const struct spandiff_opts *o)
{
    const struct sd_stat *s = &sp->s;
    double change = spandiff__change(s);
    if (sp->verdict == SD_NEW || sp->verdict == SD_GONE)
        return sp->verdict;
    if (s->p_adj < o->alpha && fabs(change) >= o->min_change)
        return change > 0 ? SD_SLOWER : SD_FASTER;
    if (s->p_adj < o->alpha && change < 0)
        return SD_SAME;
    if (sp->n_grown && sp->grown[0].significant)
        return SD_SLOWER;
    return isnan(s->p) && !sp->n_grown ? SD_UNTESTED : SD_SAME;
}

/* Holm's correction over every test made, spans and functions: one
 * family, so that the chance of any false alarm stays under alpha. */
static void correct(struct spandiff *d)
{
    size_t n = d->n, k = 0;
    for (size_t s = 0; s < d->n; s++)
        n += d->spans[s].n_grown;
    double *p = xcalloc(n + 1, sizeof(*p)), *adj = xcalloc(n + 1, sizeof(*adj));
    for (size_t s = 0; s < d->n; s++) {
        p[k++] = d->spans[s].s.p;
        for (size_t i = 0; i < d->spans[s].n_grown; i++)
            p[k++] = d->spans[s].grown[i].s.p;
    }
    stats__holm(p, n, adj);
    for (k = 0; k < n; k++)
        d->tests += !isnan(p[k]);
    k = 0;
    for (size_t s = 0; s < d->n; s++) {
        d->spans[s].s.p_adj = adj[k++];
        for (size_t i = 0; i < d->spans[s].n_grown; i++)
            d->spans[s].grown[i].s.p_adj = adj[k++];
    }
    free(p);
    free(adj);
}

struct spandiff *spandiff__finish(struct spandiff_acc *a, const struct spandiff_opts *o)
{
    struct spandiff *d = xcalloc(1, sizeof(*d));
    size_t n = intern__count(a->spans);
    double *speed = xcalloc(a->n_runs, sizeof(*speed)), *v = xcalloc(a->n_runs, sizeof(*v));
    d->o = *o;
    d->runs[0] = a->runs[0];
    d->runs[1] = a->runs[1];
    d->unit = a->weight ? a->weight : xstrdup("");
    d->normalized_by = speeds(a, o, speed);
    d->spans = xcalloc(n + 1, sizeof(*d->spans));
    d->n = n;
    for (uint32_t s = 0; s < n; s++) {
        struct sd_span *sp = &d->spans[s];
        per_call(a, &a->span[s], &a->span[s], speed, v);
        sp->name = xstrdup(intern__str(a->spans, s));
        sp->s = test(a, v, testable(a, &a->span[s], sp->samples));
        int absent = absent_side(a, &a->span[s]);
        sp->verdict = absent == 0 ? SD_NEW : absent == 1 ? SD_GONE : SD_SAME;
        for (int side = 0; side < 2; side++)
            for (size_t r = 0; r < a->runs[side]; r++)
                sp->calls[side] += a->span[s].calls[r + (side ? a->runs[0] : 0)] / (double)a->runs[side];
        functions(a, s, speed, o->alpha, sp);
    }
    correct(d);
    for (uint32_t s = 0; s < n; s++) {
        keep_grown(&d->spans[s], o);
        d->spans[s].verdict = verdict(&d->spans[s], o);
    }
    qsort(d->spans, n, sizeof(*d->spans), by_verdict);
    free(speed);
    free(v);
    free_acc(a);
    return d;
}

void spandiff__delete(struct spandiff *d)
{
    if (!d)
        return;
    for (size_t s = 0; s < d->n; s++) {
        for (size_t i = 0; i < d->spans[s].n_grown; i++)
            free((char *)d->spans[s].grown[i].name);
        free(d->spans[s].grown);
        free(d->spans[s].graph);
        free((char *)d->spans[s].name);
    }
    free(d->spans);
    free((char *)d->unit);
    free(d);
}
