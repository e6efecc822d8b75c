/* pyspans_put.c - what the spans do to each profile entry (pyspans.h):
 * [span NAME] frames at its root, the filters, the per-name sums. */
#include "pyspans.h"
#include "pentry.h"
#include "profile.h"
#include "spanrows.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define CHAIN_MAX 64            /* deeper nests keep their outermost spans */

struct span_put {
    struct spantab *t;
    int frames, filtered;
    int v_cpu, v_off;           /* value indexes, or -1 */
    uint64_t *cpu, *off;        /* per name */
    uint32_t *stack;
    size_t cap;
    char *tags;
    size_t cap_tags;
};

struct span_put *span_put__new(struct spantab *t, const struct span_opts *o, struct profile *p)
{
    struct span_put *sp = xcalloc(1, sizeof(*sp));
    sp->t = t;
    sp->frames = !o->off;
    sp->filtered = o->pattern || o->slowest >= 0;
    sp->v_cpu = profile__find_type(p, "cpu-ns");
    sp->v_off = profile__find_type(p, "offcpu-ns");
    sp->cpu = xcalloc(spantab__n_names(t) + 1, sizeof(*sp->cpu));
    sp->off = xcalloc(spantab__n_names(t) + 1, sizeof(*sp->off));
    return sp;
}

void span_put__delete(struct span_put *sp)
{
    if (!sp)
        return;
    free(sp->cpu);
    free(sp->off);
    free(sp->stack);
    free(sp->tags);
    free(sp);
}

/* The chain of spans from s outward into c (innermost first); its length. */
static size_t chain(const struct spantab *t, int32_t s, int32_t *c)
{
    size_t n = 0;
    for (; s >= 0 && n < CHAIN_MAX; s = spantab__get(t, s)->parent)
        c[n++] = s;
    return n;
}

static int kept(const struct spantab *t, const int32_t *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (spantab__get(t, c[i])->keep)
            return 1;
    return 0;
}

/* Each name in the chain once (a recursion counts once). */
static void account(struct span_put *sp, const int32_t *c, size_t n, const uint64_t *v)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t name = spantab__get(sp->t, c[i])->name;
        int seen = 0;
        for (size_t j = 0; j < i; j++)
            seen |= spantab__get(sp->t, c[j])->name == name;
        if (seen)
            continue;
        if (sp->v_cpu >= 0)
            sp->cpu[name] += v[sp->v_cpu];
        if (sp->v_off >= 0)
            sp->off[name] += v[sp->v_off];
    }
}

/* The labels of the innermost span with a trace_id, as thread tags
 * ("span=NAME,trace_id=...,span_id=..."), or NULL. */
static const char *trace_tags(struct span_put *sp, const int32_t *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct pyspan *s = spantab__get(sp->t, c[i]);
        if (!strstr(s->labels, "trace_id="))
            continue;
        const char *name = spantab__name(sp->t, s->name);
        grow(&sp->tags, &sp->cap_tags, strlen(name) + strlen(s->labels) + 8, 1);
        char *w = sp->tags + sprintf(sp->tags, "span=%s,", name);
        for (const char *l = s->labels; *l; l++)  /* lines -> tags; a comma in a value would split it */
            *w++ = *l == '\n' ? ',' : *l == ',' ? ';' : *l;
        *w = '\0';
        return sp->tags;
    }
    return NULL;
}

/* The stack with the chain's [span NAME] frames at its root. */
static uint32_t rooted(struct span_put *sp, struct profile *p, uint32_t stack, const int32_t *c,
                       size_t n)
{
    size_t k;
    const uint32_t *frames = profile__get_stack(p, stack, &k);
    grow(&sp->stack, &sp->cap, n + k, sizeof(*sp->stack));
    for (size_t i = 0; i < n; i++) {
        const char *name = spantab__name(sp->t, spantab__get(sp->t, c[n - 1 - i])->name);
        size_t len = strlen(name);
        char *text = xmalloc(len + 8);
        memcpy(text, "[span ", 6);
        memcpy(text + 6, name, len);
        memcpy(text + 6 + len, "]", 2);
        sp->stack[i] = profile__frame(p, text, len + 7, PK_PYTHON, NULL);
        free(text);
    }
    memcpy(sp->stack + n, frames, k * sizeof(*frames));
    return profile__stack(p, sp->stack, n + k);
}

int span_put__entry(struct span_put *sp, struct profile *p, const struct pentry *e,
                    struct pentry *out)
{
    const struct pthread *th = profile__get_thread(p, e->thread);
    int32_t c[CHAIN_MAX];
    size_t n = chain(sp->t, spantab__at(sp->t, th->tid, e->begin), c);
    *out = *e;
    if (sp->filtered && !kept(sp->t, c, n))
        return 0;
    if (!n)
        return 1;
    account(sp, c, n, e->v);
    if (sp->frames)
        out->stack = rooted(sp, p, e->stack, c, n);
    const char *tags = trace_tags(sp, c, n);
    if (tags)
        out->thread = profile__thread_tagged(p, th->pid, th->tid, th->comm,
                                             profile__get_frame(p, th->label)->name, tags);
    return 1;
}

static int by_ns(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int by_total(const void *a, const void *b)
{
    const struct span_row *x = a, *y = b;
    return x->total_ns != y->total_ns ? (x->total_ns > y->total_ns ? -1 : 1) : strcmp(x->name, y->name);
}

/* Nearest rank: the smallest duration with at least p% at or below it. */
static uint64_t rank(const uint64_t *d, size_t n, double p)
{
    size_t k = (size_t)(p * (double)n / 100.0 + 0.999999);
    return d[k ? k - 1 : 0];
}

/* One name's row from the durations of its kept spans. */
static void fill_row(struct span_put *sp, uint32_t name, uint64_t *d, struct span_row *r)
{
    size_t k = 0;
    for (size_t i = 0; i < spantab__n(sp->t); i++) {
        const struct pyspan *s = spantab__get(sp->t, (int32_t)i);
        if (s->name == name && s->keep)
            d[k++] = s->end - s->begin;
    }
    *r = (struct span_row){.name = xstrdup(spantab__name(sp->t, name)), .count = k,
                           .cpu_ns = sp->cpu[name], .off_ns = sp->off[name]};
    if (!k)
        return;
    qsort(d, k, sizeof(*d), by_ns);
    for (size_t i = 0; i < k; i++)
        r->total_ns += d[i];
    r->p50_ns = rank(d, k, 50), r->p90_ns = rank(d, k, 90), r->p99_ns = rank(d, k, 99);
    r->max_ns = d[k - 1];
}

static int by_total_ptr(const void *a, const void *b)
{
    return by_total(*(const struct span_row *const *)a, *(const struct span_row *const *)b);
}

/* The rows of names with kept spans, longest total first, with their
 * spans one by one. */
void span_put__finish(struct span_put *sp, struct profile *p)
{
    struct span_rows *rows = xcalloc(1, sizeof(*rows));
    size_t names = spantab__n_names(sp->t), n = 0;
    uint64_t *d = xcalloc(spantab__n(sp->t) + 1, sizeof(*d));
    struct span_row *all = xcalloc(names + 1, sizeof(*all)), **by = xcalloc(names + 1, sizeof(*by));
    uint32_t *row_of = xcalloc(names + 1, sizeof(*row_of));
    for (uint32_t name = 0; name < names; name++) {
        fill_row(sp, name, d, &all[name]);
        if (all[name].count)
            by[n++] = &all[name];
        else
            free(all[name].name);
    }
    free(d);
    qsort(by, n, sizeof(*by), by_total_ptr);
    rows->rows = xcalloc(n + 1, sizeof(*rows->rows));
    for (rows->n = 0; rows->n < n; rows->n++) {
        rows->rows[rows->n] = *by[rows->n];
        row_of[by[rows->n] - all] = (uint32_t)rows->n;
    }
    rows->has_cpu = sp->v_cpu >= 0;
    rows->has_off = sp->v_off >= 0;
    span_tracks__fill(sp->t, p, rows, row_of);
    free(all);
    free(by);
    free(row_of);
    profile__set_span_rows(p, rows);
}
