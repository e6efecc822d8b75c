/* live.c - snapshots of a recording while it is read (see live.h). */
#include "live.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define LIVE_SEP "\x1f"     /* the separator frame between two views */

struct live {
    FILE *out;
    uint64_t interval, next;    /* next: when the current interval ends */
    int started, headed;
    u64 *prev;                  /* weight per profile sample at the last snapshot */
    size_t cap_prev;
    u32 frames, threads;        /* how many were written */
    u8 *stack_seen;             /* per stack id */
    size_t cap_seen;
    u32 sep;                    /* the separator's profile frame id + 1 */
};

struct live *live__new(FILE *out, uint64_t interval_ns)
{
    struct live *l = xcalloc(1, sizeof(*l));
    l->out = out;
    l->interval = interval_ns;
    return l;
}

void live__delete(struct live *l)
{
    if (!l)
        return;
    free(l->prev);
    free(l->stack_seen);
    free(l);
}

size_t live__views(struct symbols *sy, const struct view_opts *o, const uint32_t *in, size_t n,
                   uint32_t *out)
{
    struct view_opts v = *o;
    uint32_t sep = symbols__named(sy, LIVE_SEP, FRAME_ROOT);
    v.view = VIEW_PYTHON;
    size_t m = view__apply(&v, sy, in, n, out);
    out[m++] = sep;
    v.view = VIEW_MIXED;
    m += view__apply(&v, sy, in, n, out + m);
    out[m++] = sep;
    for (size_t i = 0; i < n; i++) {
        /* A frame known by another name (a Python function's readable
         * one) gets a frame of its own, named as perf names it. */
        const struct frame *f = symbols__get(sy, in[i]);
        out[m++] = f->display == f->name ? in[i] : symbols__named(sy, f->name, FRAME_USER);
    }
    return m;
}

static void put_name(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(*s == '\n' || *s == '\r' ? '?' : *s, f);
    fputc('\n', f);
}

static void put_definitions(struct live *l, const struct profile *p)
{
    static const char kinds[] = {[PK_PYTHON] = 'p', [PK_NATIVE] = 'n', [PK_KERNEL] = 'k',
                                 [PK_JIT] = 'j', [PK_UNKNOWN] = 'u', [PK_ROOT] = 'r'};
    if (!l->headed) {
        fprintf(l->out, "h %s\n", profile__type(p, profile__weight(p))->name);
        l->headed = 1;
    }
    for (; l->frames < profile__n_frames(p); l->frames++) {
        const struct pframe *f = profile__get_frame(p, l->frames);
        if (!strcmp(f->name, LIVE_SEP)) {
            l->sep = l->frames + 1;
            continue;
        }
        fprintf(l->out, "f %" PRIu32 " %c ", l->frames, f->kind <= PK_ROOT ? kinds[f->kind] : 'u');
        put_name(l->out, f->name);
    }
    for (; l->threads < profile__n_threads(p); l->threads++) {
        const struct pthread *t = profile__get_thread(p, l->threads);
        fprintf(l->out, "t %" PRIu32 " %" PRIu32 " %" PRIu32 " ", l->threads, t->pid, t->tid);
        put_name(l->out, t->comm ? t->comm : "?");
    }
}

static void put_stack(struct live *l, const struct profile *p, uint32_t id)
{
    GROW_ZEROED(l->stack_seen, l->cap_seen, (size_t)id + 1);
    if (l->stack_seen[id])
        return;
    l->stack_seen[id] = 1;
    size_t n;
    const uint32_t *fr = profile__get_stack(p, id, &n);
    fprintf(l->out, "s %" PRIu32, id);
    int seps = 0;
    for (size_t i = 0; i < n; i++)
        if (fr[i] + 1 == l->sep) {
            fputs(" |", l->out);
            seps++;
        } else {
            fprintf(l->out, " %" PRIu32, fr[i]);
        }
    /* A stack made after unwinding ([lost N records]) is the same in
     * every view, so a reader always finds three. */
    for (int copy = 0; !seps && copy < 2; copy++)
        for (size_t i = 0; i < n; i++)
            fprintf(l->out, "%s %" PRIu32, i ? "" : " |", fr[i]);
    fputc('\n', l->out);
}

/* The weight gained by each (thread, stack) since the last snapshot. */
static int snapshot(struct live *l, const struct profile *p, char end, uint64_t time)
{
    size_t w = profile__weight(p), n = profile__n_samples(p);
    put_definitions(l, p);
    GROW_ZEROED(l->prev, l->cap_prev, n + 1);
    for (size_t i = 0; i < n; i++) {
        const struct psample *s = profile__sample(p, i);
        if (s->v[w] == l->prev[i])
            continue;
        put_stack(l, p, s->stack);
        fprintf(l->out, "w %" PRIu32 " %" PRIu32 " %" PRIu64 "\n", s->thread, s->stack,
                s->v[w] - l->prev[i]);
        l->prev[i] = s->v[w];
    }
    fprintf(l->out, "%c %" PRIu64 "\n", end, time);
    return fflush(l->out) != 0 || ferror(l->out) ? -EIO : 0;
}

int live__tick(struct live *l, const struct profile *p, uint64_t time)
{
    if (!time)
        return 0;
    if (!l->started) {
        l->started = 1;
        l->next = time + l->interval;
        return 0;
    }
    if (time < l->next || profile__n_types(p) == 0)
        return 0;
    /* A gap of several intervals (nothing sampled) is one snapshot. */
    l->next += ((time - l->next) / l->interval + 1) * l->interval;
    return snapshot(l, p, 'i', time);
}

int live__write(FILE *f, const struct profile *p, struct live *l)
{
    l->out = f;
    if (profile__n_types(p) == 0) {
        fputs("x 0\n", f);
        return written(f, -ENODATA);
    }
    return snapshot(l, p, 'x', l->next);
}
