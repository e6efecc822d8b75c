/* pyspans.c - pyperfmap.span's spans, read from a recording's probes
 * (pyspans.h). */
#include "pyspans.h"
#include "idmap.h"
#include "mode_ops.h"
#include "perfdata.h"
#include "tracedata.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

enum { EV_ENTER, EV_EXIT, EV_SWITCH, EV_THREAD_EXIT };

struct span_ev {
    uint64_t time, id, parent;
    uint32_t seq, pid, tid, name;
    uint8_t kind;
    char *labels;
};

struct step {                   /* from time on, tid's innermost span is span */
    uint64_t time;
    uint32_t tid, seq;
    int32_t span;
};

struct spantab {
    struct span_ev *ev;
    size_t n_ev, cap_ev;
    struct pyspan *spans;
    size_t n, cap;
    struct step *steps;
    size_t n_steps, cap_steps;
    char **names;
    size_t n_names, cap_names;
    struct idmap name_ids;      /* hash of a name -> index + 1 (chained by probing the list) */
    struct idmap open;          /* tid -> innermost open span + 1 */
    struct idmap by_pid;        /* pid -> idmap of id -> span index + 1 */
    uint64_t last_time;
    uint64_t unclosed, elsewhere, unmatched;
};

/* The fields of the probes, per attr (ok: a span probe). */
struct probe_fields {
    int ok, kind;               /* EV_ENTER, EV_EXIT or EV_SWITCH */
    int has_labels;             /* an exit's labels: those set while it ran */
    struct td_field id, parent, name, labels;
};

static uint32_t name_id(struct spantab *t, const char *s, size_t len)
{
    uint64_t key = hash_bytes(s, len);
    for (;; key++) {
        uintptr_t i = (uintptr_t)idmap__get(&t->name_ids, key);
        if (!i)
            break;
        if (strlen(t->names[i - 1]) == len && !memcmp(t->names[i - 1], s, len))
            return (uint32_t)(i - 1);
    }
    grow(&t->names, &t->cap_names, t->n_names + 1, sizeof(*t->names));
    char *copy = xmalloc(len + 1);
    memcpy(copy, s, len);
    copy[len] = '\0';
    t->names[t->n_names] = copy;
    idmap__put(&t->name_ids, key, (void *)(uintptr_t)(t->n_names + 1));
    return (uint32_t)t->n_names++;
}

int spantab__is_probe(const char *event)
{
    return modes__is_probe(event, "span__enter") || modes__is_probe(event, "span__exit") ||
           modes__is_probe(event, "span__switch");
}

static int probe_fields(struct tracedata *td, const struct pd_attr *a, struct probe_fields *f)
{
    uint64_t tp;
    f->kind = modes__is_probe(a->name, "span__enter") ? EV_ENTER
              : modes__is_probe(a->name, "span__exit") ? EV_EXIT
              : modes__is_probe(a->name, "span__switch") ? EV_SWITCH : -1;
    if (f->kind < 0)
        return 0;
    if (!td || !modes__tracepoint(a, &tp) || tracedata__field(td, tp, "id", &f->id) < 0 ||
        (f->kind != EV_SWITCH && tracedata__field(td, tp, "parent", &f->parent) < 0))
        return -EINVAL;
    f->has_labels = tracedata__string_field(td, tp, "labels", &f->labels) == 0;
    if (f->kind == EV_ENTER &&
        (tracedata__string_field(td, tp, "name", &f->name) < 0 || !f->has_labels))
        return -EINVAL;
    f->ok = 1;
    return 0;
}

static void add_event(struct spantab *t, const struct span_ev *e)
{
    grow(&t->ev, &t->cap_ev, t->n_ev + 1, sizeof(*t->ev));
    t->ev[t->n_ev] = *e;
    t->ev[t->n_ev].seq = (uint32_t)t->n_ev;
    t->n_ev++;
}

/* One probe's sample as an event; a malformed one is skipped. */
static void probe_event(struct spantab *t, const struct probe_fields *f, const struct pd_sample *s)
{
    struct span_ev e = {.time = s->time, .pid = s->pid, .tid = s->tid, .kind = (uint8_t)f->kind};
    if (td_field__read(&f->id, s->raw, s->raw_size, &e.id) < 0 ||
        (f->kind != EV_SWITCH && td_field__read(&f->parent, s->raw, s->raw_size, &e.parent) < 0))
        return;
    const char *name, *labels = "";
    size_t n_name, n_labels = 0;
    if (f->has_labels && td_field__read_string(&f->labels, s->raw, s->raw_size, &labels, &n_labels) < 0)
        return;
    if (f->kind == EV_ENTER) {
        if (td_field__read_string(&f->name, s->raw, s->raw_size, &name, &n_name) < 0)
            return;
        e.name = name_id(t, name, n_name);
    }
    e.labels = xmalloc(n_labels + 1);
    memcpy(e.labels, labels, n_labels);
    e.labels[n_labels] = '\0';
    add_event(t, &e);
}

/* Every record of r: the probes' samples and the threads' exits. */
static int read_events(struct spantab *t, struct perf_reader *r, struct probe_fields *pf)
{
    struct pd_event ev;
    int k;
    while ((k = perf_reader__next(r, &ev)) > 0) {
        if (ev.time > t->last_time)
            t->last_time = ev.time;
        if (ev.type == PD_SAMPLE && pf[ev.u.sample.attr_idx].ok)
            probe_event(t, &pf[ev.u.sample.attr_idx], &ev.u.sample);
        else if (ev.type == PD_EXIT)
            add_event(t, &(struct span_ev){.time = ev.time, .pid = ev.u.task.pid,
                                           .tid = ev.u.task.tid, .kind = EV_THREAD_EXIT});
    }
    return k < 0 ? -EINVAL : 0;
}

static int by_time(const void *a, const void *b)
{
    const struct span_ev *x = a, *y = b;
    return x->time != y->time ? (x->time < y->time ? -1 : 1) : (x->seq < y->seq ? -1 : 1);
}

static void step(struct spantab *t, uint32_t tid, uint64_t time, int32_t span)
{
    grow(&t->steps, &t->cap_steps, t->n_steps + 1, sizeof(*t->steps));
    t->steps[t->n_steps] = (struct step){time, tid, (uint32_t)t->n_steps, span};
    t->n_steps++;
    idmap__put(&t->open, tid, (void *)(uintptr_t)(span + 2));    /* -1 -> 1: no span */
}

static int32_t open_on(const struct spantab *t, uint32_t tid)
{
    uintptr_t v = (uintptr_t)idmap__get(&t->open, tid);
    return v ? (int32_t)v - 2 : -1;
}

static struct idmap *ids_of(struct spantab *t, uint32_t pid)
{
    return idmap__get_or_new(&t->by_pid, pid, sizeof(struct idmap));
}

static int in_chain(const struct spantab *t, int32_t s, int32_t want)
{
    for (; s >= 0; s = t->spans[s].parent)
        if (s == want)
            return 1;
    return 0;
}

/* Ends the spans open on tid from its innermost up to and including
 * `upto` (-1: all) at time; the ones inside `upto` never closed.  A span
 * not on tid's chain (two asyncio tasks' spans interleaved on one thread)
 * ends alone. */
static void end_open(struct spantab *t, uint32_t tid, int32_t upto, uint64_t time)
{
    int32_t s = open_on(t, tid);
    if (upto >= 0 && !in_chain(t, s, upto)) {
        t->spans[upto].end = time;
        return;
    }
    while (s >= 0) {
        int32_t parent = t->spans[s].parent;
        if (!t->spans[s].end) {
            t->spans[s].end = time;
            t->unclosed += s != upto;
        }
        int last = s == upto;
        s = parent;
        if (last)
            break;
    }
    while (s >= 0 && t->spans[s].end)  /* an ancestor closed elsewhere */
        s = t->spans[s].parent;
    step(t, tid, time, s);
}

static void enter(struct spantab *t, struct span_ev *e)
{
    uintptr_t parent = e->parent ? (uintptr_t)idmap__get(ids_of(t, e->pid), e->parent) : 0;
    grow(&t->spans, &t->cap, t->n + 1, sizeof(*t->spans));
    int32_t i = (int32_t)t->n++;
    t->spans[i] = (struct pyspan){.begin = e->time, .pid = e->pid, .tid = e->tid,
                                  .parent = (int32_t)parent - 1, .name = e->name,
                                  .labels = e->labels, .keep = 1};
    e->labels = NULL;
    idmap__put(ids_of(t, e->pid), e->id, (void *)(uintptr_t)(i + 1));
    step(t, e->tid, e->time, i);
}

static void leave(struct spantab *t, const struct span_ev *e)
{
    uintptr_t v = (uintptr_t)idmap__get(ids_of(t, e->pid), e->id);
    if (!v) {
        t->unmatched++;         /* entered before the recording, or before a fork */
        return;
    }
    struct pyspan *s = &t->spans[v - 1];
    if (s->end)
        return;
    if (s->tid != e->tid)
        t->elsewhere++;
    if (*e->labels) {           /* the labels set while it ran join the entry's */
        size_t a = strlen(s->labels), b = strlen(e->labels);
        char *all = xmalloc(a + b + 2);
        memcpy(all, s->labels, a);
        all[a] = '\n';
        memcpy(all + a + !!a, e->labels, b + 1);
        free((char *)s->labels);
        s->labels = all;
    }
    end_open(t, s->tid, (int32_t)(v - 1), e->time);
}

/* A task step begins: tid's innermost span is now the task's (or its
 * nearest ancestor still open; none for id 0). */
static void switch_to(struct spantab *t, const struct span_ev *e)
{
    uintptr_t v = e->id ? (uintptr_t)idmap__get(ids_of(t, e->pid), e->id) : 0;
    int32_t s = (int32_t)v - 1;
    while (s >= 0 && t->spans[s].end)
        s = t->spans[s].parent;
    if (s != open_on(t, e->tid))
        step(t, e->tid, e->time, s);
}

static void replay(struct spantab *t)
{
    if (t->n_ev)        /* (qsort takes no NULL, even for nothing) */
        qsort(t->ev, t->n_ev, sizeof(*t->ev), by_time);
    for (size_t i = 0; i < t->n_ev; i++) {
        struct span_ev *e = &t->ev[i];
        if (e->kind == EV_ENTER)
            enter(t, e);
        else if (e->kind == EV_EXIT)
            leave(t, e);
        else if (e->kind == EV_SWITCH)
            switch_to(t, e);
        else if (open_on(t, e->tid) >= 0)
            end_open(t, e->tid, -1, e->time);
    }
    size_t i = 0;
    void *v;
    uint64_t tid;
    while (idmap__next(&t->open, &i, &v))
        if ((intptr_t)(uintptr_t)v - 2 >= 0) {
            tid = t->spans[(uintptr_t)v - 2].tid;
            end_open(t, (uint32_t)tid, -1, t->last_time);
        }
    for (size_t k = 0; k < t->n; k++)   /* off every chain: its exit was lost */
        if (!t->spans[k].end) {
            t->spans[k].end = t->last_time;
            t->unclosed++;
        }
}

static int by_thread(const void *a, const void *b)
{
    const struct step *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->seq < y->seq ? -1 : 1;
}

int spantab__read(const char *path, const char *shown, struct spantab **out)
{
    *out = NULL;
    if (!strcmp(path, "-"))
        return 0;               /* a pipe is read once: no spans from it */
    /* Quiet: what is wrong with the file, the main reading says. */
    warn_mute(1);
    struct perf_reader *r = perf_reader__open(path);
    warn_mute(0);
    if (!r)
        return 0;
    size_t n = perf_reader__n_attrs(r), tsize = 0, found = 0;
    const void *tdata = perf_reader__tracing_data(r, &tsize);
    struct tracedata *td = tdata ? tracedata__new(tdata, tsize) : NULL;
    struct probe_fields *pf = xcalloc(n + 1, sizeof(*pf));
    int err = 0;
    for (size_t i = 0; i < n && !err; i++) {
        err = probe_fields(td, perf_reader__attr(r, i), &pf[i]);
        found += pf[i].ok;
        if (err)
            warnx_("%s: %s lacks the id, parent, name or labels field of pyperfmap's span probes",
                   shown, perf_reader__attr(r, i)->name);
    }
    struct spantab *t = found && !err ? xcalloc(1, sizeof(*t)) : NULL;
    warn_mute(1);
    if (t && read_events(t, r, pf) == 0) {
        replay(t);
        if (t->n_steps)
            qsort(t->steps, t->n_steps, sizeof(*t->steps), by_thread);
        *out = t;
        t = NULL;
    }
    warn_mute(0);
    spantab__delete(t);
    free(pf);
    tracedata__delete(td);
    perf_reader__delete(r);
    return err;
}

void spantab__delete(struct spantab *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_ev; i++)
        free(t->ev[i].labels);
    for (size_t i = 0; i < t->n; i++)
        free((char *)t->spans[i].labels);
    for (size_t i = 0; i < t->n_names; i++)
        free(t->names[i]);
    free(t->ev);
    free(t->spans);
    free(t->steps);
    free(t->names);
    idmap__exit(&t->name_ids);
    idmap__exit(&t->open);
    idmap__exit_with(&t->by_pid, idmap__free);
    free(t);
}

int32_t spantab__at(const struct spantab *t, uint32_t tid, uint64_t time)
{
    size_t lo = 0, hi = t->n_steps;     /* the last step of tid at or before time */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct step *s = &t->steps[mid];
        if (s->tid < tid || (s->tid == tid && s->time <= time))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo && t->steps[lo - 1].tid == tid ? t->steps[lo - 1].span : -1;
}

const struct pyspan *spantab__get(const struct spantab *t, int32_t i)
{
    return &t->spans[i];
}

size_t spantab__n(const struct spantab *t)
{
    return t->n;
}

const char *spantab__name(const struct spantab *t, uint32_t name)
{
    return t->names[name];
}

size_t spantab__n_names(const struct spantab *t)
{
    return t->n_names;
}

static int by_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The P-th percentile (nearest rank) of each name's durations. */
static uint64_t *percentiles(const struct spantab *t, double p)
{
    uint64_t *cut = xcalloc(t->n_names + 1, sizeof(*cut));
    uint64_t *d = xcalloc(t->n + 1, sizeof(*d));
    for (uint32_t name = 0; name < t->n_names; name++) {
        size_t k = 0;
        for (size_t i = 0; i < t->n; i++)
            if (t->spans[i].name == name)
                d[k++] = t->spans[i].end - t->spans[i].begin;
        qsort(d, k, sizeof(*d), by_u64);
        size_t rank = (size_t)ceil(p / 100.0 * (double)k);
        cut[name] = k ? d[rank ? rank - 1 : 0] : 0;
    }
    free(d);
    return cut;
}

int spantab__select(struct spantab *t, const struct span_opts *o, const char *shown)
{
    regex_t re;
    int err;
    if (o->pattern && (err = regcomp(&re, o->pattern, REG_EXTENDED | REG_NOSUB)) != 0) {
        char msg[256];
        regerror(err, &re, msg, sizeof msg);
        warnx_("--span %s: %s", o->pattern, msg);
        return -EINVAL;
    }
    (void)shown;
    uint64_t *cut = o->slowest >= 0 ? percentiles(t, o->slowest) : NULL;
    for (size_t i = 0; i < t->n; i++) {
        struct pyspan *s = &t->spans[i];
        s->keep = (!o->pattern || regexec(&re, t->names[s->name], 0, NULL, 0) == 0) &&
                  (!cut || s->end - s->begin > cut[s->name]);
    }
    free(cut);
    if (o->pattern)
        regfree(&re);
    return 0;
}

void spantab__report(const struct spantab *t, const char *shown)
{
    if (t->unclosed)
        warnx_("%s: %" PRIu64 " spans were never closed (their thread or the program ended"
               " inside them); each ends there", shown, t->unclosed);
    if (t->elsewhere)
        warnx_("%s: %" PRIu64 " spans were closed in another thread than they opened in; each"
               " ends there, on its own thread", shown, t->elsewhere);
    if (t->unmatched)
        warnx_("%s: %" PRIu64 " span exits without their entry (entered before the recording"
               " or, in a forked child, before the fork) were ignored", shown, t->unmatched);
}
