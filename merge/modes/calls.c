/* calls.c - call stacks from entry and return events (see calls.h). */
#include "calls.h"
#include "idmap.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

struct open_call {
    u64 key, begin;
    u64 child;                  /* time in the kept calls it made */
    u32 thread;
    u32 stack;                  /* profile stack of the nearest kept call (itself when kept) */
    u32 depth;                  /* frames in that stack */
    u32 kept_parent;            /* index of the nearest kept caller, or NONE */
    u8 kept, inside, resumed;
};

struct tstack {                 /* one thread's open calls and their frames */
    struct open_call *calls;
    size_t n, cap;
    u32 *frames;                /* root first, of the kept calls */
    size_t cap_frames;
};

struct calls {
    struct profile *p;
    pentry_fn put;              /* where the closed calls go */
    void *put_ctx;
    struct calls_filter f;
    struct idmap by_tid;        /* tid -> tstack index + 1 */
    struct tstack *threads;
    size_t n_threads, cap_threads;
    u8 *matches;                /* per profile frame: 0 unknown, else 1 + bit 0 only, bit 1 inside */
    size_t cap_matches;
    struct calls_stats st;
};

struct calls *calls__new(struct profile *p, pentry_fn put, void *ctx)
{
    struct calls *c = xcalloc(1, sizeof(*c));
    c->p = p;
    c->put = put;
    c->put_ctx = ctx;
    return c;
}

void calls__set_filter(struct calls *c, const struct calls_filter *f)
{
    c->f = *f;
}

void calls__delete(struct calls *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_threads; i++) {
        free(c->threads[i].calls);
        free(c->threads[i].frames);
    }
    free(c->threads);
    free(c->matches);
    idmap__exit(&c->by_tid);
    free(c);
}

static struct tstack *tstack_of(struct calls *c, u32 tid)
{
    uintptr_t at = (uintptr_t)idmap__get(&c->by_tid, tid);
    if (at)
        return &c->threads[at - 1];
    GROW(c->threads, c->cap_threads, c->n_threads + 1);
    memset(&c->threads[c->n_threads], 0, sizeof(*c->threads));
    idmap__put(&c->by_tid, tid, (void *)(uintptr_t)(c->n_threads + 1));
    return &c->threads[c->n_threads++];
}

static int matches(const regex_t *re, const struct pframe *f)
{
    return regexec(re, f->name, 0, NULL, 0) == 0 || (f->file && regexec(re, f->file, 0, NULL, 0) == 0);
}

/* The filters' verdicts on a frame, computed once per frame: bit 0 the
 * only pattern matches (or there is none), bit 1 the inside one does. */
static unsigned verdict(struct calls *c, u32 frame)
{
    GROW_ZEROED(c->matches, c->cap_matches, (size_t)frame + 1);
    if (!c->matches[frame]) {
        const struct pframe *f = profile__get_frame(c->p, frame);
        unsigned v = (!c->f.only || matches(c->f.only, f)) | (c->f.inside && matches(c->f.inside, f)) << 1;
        c->matches[frame] = (u8)(1 + v);
    }
    return c->matches[frame] - 1u;
}

void calls__enter(struct calls *c, u32 tid, u32 thread, u64 time, u64 key, u32 frame,
                  enum calls_kind kind)
{
    int syscall = kind == CALLS_SYSCALL;
    struct tstack *t = tstack_of(c, tid);
    const struct open_call *up = t->n ? &t->calls[t->n - 1] : NULL;
    struct open_call oc = {.key = key, .begin = time, .thread = thread, .stack = NONE,
                           .kept_parent = NONE, .resumed = kind == CALLS_RESUME};
    if (up) {
        oc.kept_parent = up->kept ? (u32)(t->n - 1) : up->kept_parent;
        oc.stack = up->stack;
        oc.depth = up->depth;
        oc.inside = up->inside;
    }
    unsigned v = syscall ? 0 : verdict(c, frame);
    oc.inside |= (v & 2) != 0;
    int filtered = c->f.only || c->f.inside;
    if (syscall)
        oc.kept = !filtered || oc.kept_parent != NONE;
    else if (kind == CALLS_NO_CALL)
        oc.kept = 0;
    else
        oc.kept = (v & 1) && (!c->f.inside || oc.inside);
    if (oc.kept) {
        GROW(t->frames, t->cap_frames, (size_t)oc.depth + 1);
        t->frames[oc.depth++] = frame;
        oc.stack = profile__stack(c->p, t->frames, oc.depth);
    }
    GROW(t->calls, t->cap, t->n + 1);
    t->calls[t->n++] = oc;
}

/* Pops t's innermost call, which ends at time. */
static void close_top(struct calls *c, struct tstack *t, u64 time)
{
    struct open_call *oc = &t->calls[--t->n];
    if (!oc->kept)
        return;
    u64 dur = time > oc->begin ? time - oc->begin : 0;
    u64 v[PROFILE_MAX_VALUES] = {0};
    v[CALLS_COUNT] = !oc->resumed;
    v[CALLS_RESUMES] = oc->resumed;
    v[CALLS_WALL] = dur > oc->child ? dur - oc->child : 0;
    v[CALLS_LATENCY] = dur;
    c->put(c->put_ctx, &(struct pentry){.thread = oc->thread, .stack = oc->stack, .v = v,
                                        .timed = 1, .begin = oc->begin, .end = oc->begin + dur});
    if (oc->kept_parent != NONE)
        t->calls[oc->kept_parent].child += dur;
}

void calls__return(struct calls *c, u32 tid, u64 time, u64 key)
{
    struct tstack *t = tstack_of(c, tid);
    size_t i = t->n;
    while (i > 0 && t->calls[i - 1].key != key)
        i--;
    if (i == 0) {
        c->st.unmatched++;
        return;
    }
    c->st.lost += t->n - i;
    while (t->n >= i)
        close_top(c, t, time);
}

static void close_all(struct calls *c, struct tstack *t, u64 time)
{
    c->st.unfinished += t->n;
    while (t->n)
        close_top(c, t, time);
}

void calls__exit(struct calls *c, u32 tid, u64 time)
{
    uintptr_t at = (uintptr_t)idmap__get(&c->by_tid, tid);
    if (at)
        close_all(c, &c->threads[at - 1], time);
}

void calls__finish(struct calls *c, u64 end)
{
    for (size_t k = 0; k < c->n_threads; k++)
        close_all(c, &c->threads[k], end);
}

const struct calls_stats *calls__stats(const struct calls *c)
{
    return &c->st;
}
