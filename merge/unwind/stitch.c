/*
 * stitch.c - truncated DWARF stacks completed through exact activation
 * matches, call paths, and callers by name (see stitch.h for the
 * reasoning).
 */
#include "stitch.h"

#include "idmap.h"
#include "../../libpyperfmap/trampoline.h"
#include "util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A stack and the activations in it, both leaf first. */
struct chain {
    u32 *ids;
    size_t n, cap_ids;
    struct stitch_act *acts;
    size_t n_acts, cap_acts;
};

struct tstate {
    struct chain last;          /* the thread's last complete stack */
    /* Truncated samples waiting for the next complete stack: a ring of
     * STITCH_MAX_PENDING slots, oldest at head; slot buffers are reused. */
    struct chain pend[STITCH_MAX_PENDING];
    uint64_t pend_program[STITCH_MAX_PENDING];  /* whose paths each follows (an exec
                                                 * may change it under the same tid) */
    unsigned char *payloads;    /* STITCH_MAX_PENDING * payload_size */
    size_t head, n_pend;
};

/* A sample kept for the end: its frames, its outermost activation only,
 * and whose paths it follows (its payload is in late_payloads). */
struct late {
    struct chain c;
    uint64_t program;
};

/* What a path was seen to continue with (stitch.h, PATHS): the frames
 * outward of a trampoline with that path, up to and including the next
 * trampoline out, whose path is `next` (0: they reach the root).  A call
 * link (CALLERS) is the same for a trampoline named `self` called from
 * one named `up`, whatever their paths. */
struct link {
    uint32_t off, len;          /* the frames: pool[off..off+len) */
    uint64_t next;
    uint64_t self, up;          /* the keys of the two trampolines (up 0: the root) */
    uint32_t frame;             /* the inner trampoline's own frame */
    uint32_t sibling;           /* call links: 1 + the next of the same callee, or 0 */
    int conflict;               /* two stacks disagreed: never used */
};

/* A link followed on the way out; unknown: only the trampoline it starts
 * from (its frame), behind a gap frame, for a call no stack showed. */
struct via_step {
    uint32_t link;
    int unknown;
};

/* How far a climb (complete_by_path) got: links followed and their frames;
 * whether it went past callers by name, and with gap frames. */
struct via_state {
    size_t n, frames;
    int calls, gaps;
};

struct stitch {
    size_t payload_size, max_frames;
    uint32_t gap;               /* stands for native frames two stacks disagree on */
    stitch_emit_fn emit;
    void *ctx;
    struct idmap threads;       /* thread key -> struct tstate */
    struct chain tmp;           /* a stack being completed from earlier */
    struct idmap paths;         /* path -> 1 + its index in links */
    struct idmap calls;         /* callee and caller keys -> 1 + the call link's index */
    struct idmap callers;       /* callee key -> 1 + its first call link's index */
    struct link *links;
    size_t n_links, cap_links;
    u32 *pool;                  /* the links' frames */
    size_t n_pool, cap_pool;
    /* complete_by_path: the links it follows, within via_room frames */
    struct via_step *via_steps;
    size_t cap_via, via_room, budget;
    struct via_state via;
    int via_cut;                /* a climb ran out of guesses */
    /* Samples nothing completed while their thread ran, retried by
     * stitch__finish (stitch.h, AT THE END) */
    struct late *late;
    size_t n_late, cap_late, late_bytes;
    unsigned char *late_payloads;
    size_t cap_late_payloads;
    struct stitch_counts counts;
};

struct stitch *stitch__new(size_t payload_size, size_t max_frames, uint32_t gap,
                           stitch_emit_fn emit, void *ctx)
{
    struct stitch *st = xcalloc(1, sizeof(*st));
    st->payload_size = payload_size;
    st->max_frames = max_frames;
    st->gap = gap;
    st->emit = emit;
    st->ctx = ctx;
    return st;
}

static void chain_free(struct chain *c)
{
    free(c->ids);
    free(c->acts);
}

static void tstate_free(void *v)
{
    struct tstate *t = v;
    chain_free(&t->last);
    for (size_t k = 0; k < STITCH_MAX_PENDING; k++)
        chain_free(&t->pend[k]);
    free(t->payloads);
    free(t);
}

void stitch__delete(struct stitch *st)
{
    if (!st)
        return;
    idmap__exit_with(&st->threads, tstate_free);
    chain_free(&st->tmp);
    idmap__exit(&st->paths);
    idmap__exit(&st->calls);
    idmap__exit(&st->callers);
    free(st->links);
    free(st->pool);
    free(st->via_steps);
    for (size_t i = 0; i < st->n_late; i++)
        chain_free(&st->late[i].c);
    free(st->late);
    free(st->late_payloads);
    free(st);
}

static void chain_set(struct chain *c, const u32 *ids, size_t n, const struct stitch_act *acts,
                      size_t n_acts)
{
    GROW(c->ids, c->cap_ids, n);
    GROW(c->acts, c->cap_acts, n_acts);
    if (n)
        memcpy(c->ids, ids, n * sizeof(*ids));
    if (n_acts)
        memcpy(c->acts, acts, n_acts * sizeof(*acts));
    c->n = n;
    c->n_acts = n_acts;
}

/* The index in c's activations of the one equal to a (same identity, same
 * trampoline), or -1.  Stacks hold tens to hundreds of activations, and a
 * match is looked up once per truncated sample: a scan is enough. */
static long find(const struct chain *c, const struct stitch_act *a)
{
    for (size_t i = c->n_acts; i-- > 0;)
        if (c->acts[i].id == a->id && c->acts[i].addr == a->addr)
            return (long)i;
    return -1;
}

/*
 * dst = the frames of src up to and including its outermost activation,
 * then those of `from` outward of the same activation (its k-th); the
 * activations likewise.  dst may be src.  -1 (dst unchanged) when the
 * result would be longer than max_frames.
 */
static int join(struct stitch *st, struct chain *dst, const struct chain *src,
                const struct chain *from, size_t k)
{
    /* by value: growing dst moves src's arrays when they are the same */
    size_t pos = src->acts[src->n_acts - 1].pos, src_acts = src->n_acts;
    size_t fpos = from->acts[k].pos;
    size_t n = pos + 1 + (from->n - fpos - 1), n_acts = src_acts + (from->n_acts - k - 1);
    if (n > st->max_frames)
        return -1;
    if (dst != src)
        chain_set(dst, src->ids, pos + 1, src->acts, src_acts);
    GROW(dst->ids, dst->cap_ids, n);
    GROW(dst->acts, dst->cap_acts, n_acts);
    memcpy(dst->ids + pos + 1, from->ids + fpos + 1, (from->n - fpos - 1) * sizeof(u32));
    for (size_t i = k + 1; i < from->n_acts; i++) {
        struct stitch_act b = from->acts[i];
        b.pos = (uint32_t)(b.pos - fpos + pos);
        dst->acts[src_acts + (i - k - 1)] = b;
    }
    dst->n = n;
    dst->n_acts = n_acts;
    return 0;
}

/* Whether c's outermost activation is in `from`, and if so c completed
 * from it into dst. */
static int complete_from(struct stitch *st, struct chain *dst, const struct chain *c,
                         const struct chain *from)
{
    long k = c->n_acts ? find(from, &c->acts[c->n_acts - 1]) : -1;
    return k >= 0 && join(st, dst, c, from, (size_t)k) == 0;
}

/* ---- paths --------------------------------------------------------------- */

/* The trampoline's own path, from its caller's and its name's key
 * (trampoline.h), or 0 when its frame kept no path. */
static uint64_t act_path(const struct stitch_act *a)
{
    return a->parent && a->key ? pyperfmap_path__step(a->parent, a->key) : 0;
}

/* A path's entry in the table: the same path of another program (another
 * interpreter build) has other native frames between its Python ones. */
static uint64_t path_key(uint64_t path, uint64_t program)
{
    return path ^ program * 0xc2b2ae3d27d4eb4full;
}

/* A call link's entry: the callee's and the caller's keys, in a program. */
static uint64_t call_key(uint64_t self, uint64_t up, uint64_t program)
{
    return pyperfmap_path__step(self, up) ^ program * 0x165667b19e3779f9ull;
}

/* The usable link of a table's key, or NULL (none, or disputed). */
static const struct link *link_of(const struct stitch *st, const struct idmap *table, uint64_t key)
{
    uintptr_t i = (uintptr_t)idmap__get(table, key);
    return i && !st->links[i - 1].conflict ? &st->links[i - 1] : NULL;
}

/* A new link for key: 1 + its index, as the tables hold it. */
static void add_link(struct stitch *st, struct idmap *table, uint64_t key, struct link l)
{
    GROW(st->links, st->cap_links, st->n_links + 1);
    st->links[st->n_links++] = l;
    idmap__put(table, key, (void *)(uintptr_t)st->n_links);
}

/* key's link disputed from now on (a new, empty one if it had none). */
static void mark_disputed(struct stitch *st, struct idmap *table, uint64_t key)
{
    uintptr_t i = (uintptr_t)idmap__get(table, key);
    if (i && st->links[i - 1].conflict)
        return;
    if (table == &st->paths)
        st->counts.path_conflicts++;
    if (i)
        st->links[i - 1].conflict = 1;
    else
        add_link(st, table, key, (struct link){.conflict = 1});
}

/* Learns that l's frames (pool offset unset) follow key's trampoline;
 * 1 + the index of a link new in table, else 0. */
static uintptr_t learn_link(struct stitch *st, struct idmap *table, uint64_t key, const u32 *ids,
                            struct link l)
{
    uintptr_t i = (uintptr_t)idmap__get(table, key);
    if (i) {
        const struct link *o = &st->links[i - 1];
        if (!o->conflict && (o->next != l.next || o->len != l.len
                             || (l.len && memcmp(st->pool + o->off, ids, l.len * sizeof(*ids)) != 0)))
            mark_disputed(st, table, key);
        return 0;
    }
    if (st->n_pool + l.len > STITCH_MAX_PATH_FRAMES)
        return 0;
    GROW(st->pool, st->cap_pool, st->n_pool + l.len);
    if (l.len)
        memcpy(st->pool + st->n_pool, ids, l.len * sizeof(*ids));
    l.off = (uint32_t)st->n_pool;
    st->n_pool += l.len;
    add_link(st, table, key, l);
    return st->n_links;
}

/* Learns a call: trampoline `self` called from `up` through ids[0..len). */
static void learn_call(struct stitch *st, uint64_t self, uint64_t up, uint64_t program,
                       const u32 *ids, size_t len)
{
    uint64_t callee = path_key(self, program);     /* (a table of its own) */
    uintptr_t first = (uintptr_t)idmap__get(&st->callers, callee);
    uintptr_t i = learn_link(st, &st->calls, call_key(self, up, program), ids,
                             (struct link){.len = (uint32_t)len, .self = self, .up = up,
                                           .sibling = (uint32_t)first});
    if (i)
        idmap__put(&st->callers, callee, (void *)i);
}

/* Learns what c (of program) shows of its paths:
 * between two trampolines whose paths agree (the inner one's caller is the
 * outer one), the frames between them; from the outermost trampoline of a
 * complete stack, called from the root, the frames to the root.  A path
 * whose caller does not agree (a greenlet switched stacks under the hook,
 * a corrupt copy) teaches nothing; one whose next trampoline out kept no
 * path (the plain hook ran it: the path hook was switched on inside it)
 * may have been completed wrongly from a thread where it really starts at
 * the root, and is disputed from then on. */
static void learn(struct stitch *st, const struct chain *c, int complete, uint64_t program)
{
    uint64_t p = c->n_acts ? act_path(&c->acts[0]) : 0;
    for (size_t i = 0; i < c->n_acts; i++) {
        const struct stitch_act *a = &c->acts[i];
        uint64_t q = i + 1 < c->n_acts ? act_path(&c->acts[i + 1]) : 0;
        if (p && q && a->parent == q) {
            const u32 *between = c->ids + a->pos + 1;
            size_t len = c->acts[i + 1].pos - a->pos;
            learn_link(st, &st->paths, path_key(p, program), between,
                       (struct link){.len = (uint32_t)len, .next = q, .self = a->key,
                                     .up = c->acts[i + 1].key, .frame = c->ids[a->pos]});
            learn_call(st, a->key, c->acts[i + 1].key, program, between, len);
        } else if (p && i + 1 < c->n_acts && !q) {
            mark_disputed(st, &st->paths, path_key(p, program));
        } else if (p && i + 1 == c->n_acts && complete && a->parent == PYPERFMAP_PATH_ROOT) {
            learn_link(st, &st->paths, path_key(p, program), c->ids + a->pos + 1,
                       (struct link){.len = (uint32_t)(c->n - a->pos - 1), .self = a->key,
                                     .frame = c->ids[a->pos]});
        }
        p = q;
    }
}

/* Follows link l (unknown: see struct via_step): 0, or -1 when the
 * stack would grow too long (which also ends a cycle of links) or gap
 * frames are off.  Frames that are not known, of a disputed call link or
 * an unknown call, are two: the gap frame and the caller's trampoline. */
static int via(struct stitch *st, const struct link *l, int unknown)
{
    int gap = unknown || l->conflict;
    size_t frames = gap ? 2 : l->len;
    if ((gap && st->gap == STITCH_NO_GAP) || frames > st->via_room - st->via.frames
        || st->via.n >= st->max_frames)
        return -1;
    GROW(st->via_steps, st->cap_via, st->via.n + 1);
    st->via_steps[st->via.n++] = (struct via_step){(uint32_t)(l - st->links), unknown};
    st->via.frames += frames;
    st->via.gaps |= gap;
    return 0;
}

/* The call link of callee `self` from caller `up`, or NULL; a disputed one
 * only when it has its caller's trampoline to keep. */
static const struct link *call_of(const struct stitch *st, uint64_t self, uint64_t up,
                                  uint64_t program)
{
    uintptr_t i = (uintptr_t)idmap__get(&st->calls, call_key(self, up, program));
    const struct link *l = i ? &st->links[i - 1] : NULL;
    return l && (!l->conflict || l->len) ? l : NULL;
}

/* The links from a trampoline of path q and key `self` out to the root,
 * appended to st->via: 0, or -1 (st->via as it was) when some are unknown.
 * Where no stack showed the path q (or stacks disagreed on it), the
 * trampoline's caller has the path pyperfmap_path__unstep(q, self), and
 * the frames between come from a call link of the two names (none seen:
 * they are unknown, and the gap frame stands for them); a caller
 * whose path no stack showed either is guessed among the callers seen for
 * that name, at most `guesses` times along the way, and only a guess that
 * leads to a path seen (a 64-bit match) is kept. */
static int climb(struct stitch *st, uint64_t q, uint64_t self, uint64_t program, int guesses)
{
    const struct via_state mark = st->via;
    while (q) {
        const struct link *l = link_of(st, &st->paths, path_key(q, program));
        if (l) {
            if (via(st, l, 0) != 0)
                break;
            q = l->next;
            self = l->up;
            continue;
        }
        uint64_t up_path = pyperfmap_path__unstep(q, self);
        if (up_path == PYPERFMAP_PATH_ROOT)
            break;          /* called from the root: no stack showed those frames */
        const struct link *up = link_of(st, &st->paths, path_key(up_path, program));
        if (up) {
            /* The caller is known; only the frames between may not be. */
            const struct link *call = call_of(st, self, up->self, program);
            if (call ? via(st, call, 0) != 0 : via(st, up, 1) != 0)
                break;
            st->via.calls = 1;
            q = up_path;
            self = up->self;
            continue;
        }
        if (!guesses) {
            st->via_cut = 1;    /* more guesses might have found a way */
            break;
        }
        uintptr_t i = (uintptr_t)idmap__get(&st->callers, path_key(self, program));
        for (; i && st->budget; i = st->links[i - 1].sibling) {
            const struct link *call = call_of(st, self, st->links[i - 1].up, program);
            const struct via_state m = st->via;
            st->budget--;
            if (!call || via(st, call, 0) != 0)
                continue;
            st->via.calls = 1;
            if (climb(st, up_path, call->up, program, guesses - 1) == 0)
                return 0;
            st->via = m;
        }
        break;
    }
    if (!q)
        return 0;
    st->via = mark;
    return -1;
}

/* dst = c's frames up to its outermost trampoline, then what its path was
 * seen to continue with in its program, link by link to the root (climb).
 * dst may be c.  -1 (dst unchanged) when no way out is known, or the
 * stack would be longer than max_frames. */
static int complete_by_path(struct stitch *st, struct chain *dst, const struct chain *c,
                            uint64_t program)
{
    if (!c->n_acts)
        return -1;
    const struct stitch_act *outer = &c->acts[c->n_acts - 1];
    uint64_t start = act_path(outer);
    size_t keep = outer->pos + 1;
    if (!start || keep > st->max_frames)
        return -1;
    /* Fewest guesses first (a function imported from 180 modules has as
     * many callers to try at each level), and no more once a climb ended
     * for another reason than its guesses. */
    st->budget = STITCH_MAX_GUESSES;
    st->via_room = st->max_frames - keep;
    int found = -1;
    st->via_cut = 1;
    for (int guesses = 0; found != 0 && st->via_cut && guesses <= STITCH_GUESS_DEPTH && st->budget;
         guesses++) {
        st->via = (struct via_state){0, 0, 0, 0};
        st->via_cut = 0;
        found = climb(st, start, outer->key, program, guesses);
    }
    if (found != 0)
        return -1;
    if (dst != c)
        chain_set(dst, c->ids, keep, c->acts, c->n_acts);
    GROW(dst->ids, dst->cap_ids, keep + st->via.frames);
    size_t k = keep;
    for (size_t i = 0; i < st->via.n; i++) {
        const struct link *l = &st->links[st->via_steps[i].link];
        if (st->via_steps[i].unknown) {
            dst->ids[k++] = st->gap;
            dst->ids[k++] = l->frame;
        } else if (l->conflict) {
            dst->ids[k++] = st->gap;
            dst->ids[k++] = st->pool[l->off + l->len - 1];
        } else if (l->len) {    /* the pool may still be NULL */
            memcpy(dst->ids + k, st->pool + l->off, l->len * sizeof(u32));
            k += l->len;
        }
    }
    dst->n = k;
    st->counts.through_calls += st->via.calls;
    st->counts.with_gap += st->via.gaps;
    return 0;
}

/* A settled waiting sample: given to emit when done (complete), else kept
 * for stitch__finish, or left truncated now when it has no path to follow
 * (the plain hook's) or the kept ones would take more than
 * STITCH_MAX_LATE_BYTES.  Only its outermost activation is kept: it is
 * all that complete_by_path reads. */
static void release(struct stitch *st, const struct chain *c, uint64_t program,
                    const void *payload, int done)
{
    size_t bytes = c->n * sizeof(u32) + sizeof(struct stitch_act) + sizeof(struct late)
                   + st->payload_size;
    if (done || !act_path(&c->acts[c->n_acts - 1])
        || st->late_bytes + bytes > STITCH_MAX_LATE_BYTES) {
        st->emit(st->ctx, payload, c->ids, c->n, done);
        return;
    }
    GROW(st->late, st->cap_late, st->n_late + 1);
    grow(&st->late_payloads, &st->cap_late_payloads,
         (st->n_late + 1) * (st->payload_size ? st->payload_size : 1), 1);
    struct late *k = &st->late[st->n_late];
    k->c.ids = xmalloc(c->n * sizeof(u32));    /* exact sizes: GROW would round up */
    k->c.acts = xmalloc(sizeof(*k->c.acts));
    k->c.cap_ids = k->c.n = c->n;
    k->c.cap_acts = k->c.n_acts = 1;
    memcpy(k->c.ids, c->ids, c->n * sizeof(u32));
    k->c.acts[0] = c->acts[c->n_acts - 1];
    k->program = program;
    memcpy(st->late_payloads + st->n_late * st->payload_size, payload, st->payload_size);
    st->n_late++;
    st->late_bytes += bytes;
}

/* A complete stack of t, newer than all its waiting samples, settles them
 * (see stitch.h): newest first, each completed one standing for the
 * complete stack the older ones are matched against. */
static void settle(struct stitch *st, struct tstate *t, const struct chain *complete)
{
    const struct chain *from = complete;
    while (t->n_pend) {
        size_t slot = (t->head + --t->n_pend) % STITCH_MAX_PENDING;
        struct chain *p = &t->pend[slot];
        int done = from && complete_from(st, p, p, from);
        if (done)
            st->counts.from_later++;
        else if ((done = complete_by_path(st, p, p, t->pend_program[slot]) == 0))
            st->counts.from_path++;
        if (done)
            from = p;
        release(st, p, t->pend_program[slot], t->payloads + slot * st->payload_size, done);
    }
    t->head = 0;
}

static struct tstate *thread_state(struct stitch *st, uint64_t key)
{
    return idmap__get_or_new(&st->threads, key, sizeof(struct tstate));
}

/* Keeps a truncated sample until the next complete stack of t; a full
 * ring first settles its oldest: through paths, kept for the end, or
 * left truncated. */
static void keep_waiting(struct stitch *st, struct tstate *t, uint64_t program, const u32 *ids,
                         size_t n, const struct stitch_act *acts, size_t n_acts,
                         const void *payload)
{
    if (t->n_pend == STITCH_MAX_PENDING) {
        struct chain *old = &t->pend[t->head];
        int done = complete_by_path(st, old, old, t->pend_program[t->head]) == 0;
        st->counts.from_path += done;
        release(st, old, t->pend_program[t->head], t->payloads + t->head * st->payload_size,
                done);
        t->head = (t->head + 1) % STITCH_MAX_PENDING;
        t->n_pend--;
    }
    if (!t->payloads)
        t->payloads = xmalloc(STITCH_MAX_PENDING * (st->payload_size ? st->payload_size : 1));
    size_t slot = (t->head + t->n_pend++) % STITCH_MAX_PENDING;
    chain_set(&t->pend[slot], ids, n, acts, n_acts);
    t->pend_program[slot] = program;
    memcpy(t->payloads + slot * st->payload_size, payload, st->payload_size);
}

enum stitch_result stitch__sample(struct stitch *st, uint64_t thread, uint64_t program,
                                  uint32_t *ids, size_t *n,
                                  const struct stitch_act *acts, size_t n_acts, int complete,
                                  const void *payload)
{
    struct tstate *t = idmap__get(&st->threads, thread);
    if (complete) {
        /* A thread without Python activations needs no state until it
         * has some; one that had them must forget them now. */
        if (!t && !n_acts)
            return STITCH_COMPLETE;
        t = t ? t : thread_state(st, thread);
        chain_set(&t->last, ids, *n, acts, n_acts);
        learn(st, &t->last, 1, program);
        settle(st, t, &t->last);
        return STITCH_COMPLETE;
    }
    st->counts.truncated++;
    if (!n_acts)
        return STITCH_TRUNCATED;    /* nothing to match, ever */
    struct chain c = {ids, *n, *n, (struct stitch_act *)acts, n_acts, n_acts};
    learn(st, &c, 0, program);
    int found = t && complete_from(st, &st->tmp, &c, &t->last);
    if (found)
        st->counts.from_earlier++;
    else if ((found = complete_by_path(st, &st->tmp, &c, program) == 0))
        st->counts.from_path++;
    if (!found && !payload)
        return STITCH_TRUNCATED;
    t = t ? t : thread_state(st, thread);
    if (found) {
        settle(st, t, &st->tmp);
        /* the completed stack is now the thread's last complete one */
        struct chain old = t->last;
        t->last = st->tmp;
        st->tmp = old;
        memcpy(ids, t->last.ids, t->last.n * sizeof(*ids));
        *n = t->last.n;
        return STITCH_STITCHED;
    }
    keep_waiting(st, t, program, ids, *n, acts, n_acts, payload);
    return STITCH_WAITING;
}

void stitch__thread_exit(struct stitch *st, uint64_t thread)
{
    struct tstate *t = idmap__get(&st->threads, thread);
    if (!t)
        return;
    settle(st, t, NULL);
    /* The key stays (idmap never removes one) with a state that holds no
     * buffers, ready for a thread that reuses the id. */
    chain_free(&t->last);
    for (size_t k = 0; k < STITCH_MAX_PENDING; k++)
        chain_free(&t->pend[k]);
    free(t->payloads);
    memset(t, 0, sizeof(*t));
}

void stitch__finish(struct stitch *st)
{
    void *v;
    for (size_t i = 0; idmap__next(&st->threads, &i, &v);)
        settle(st, v, NULL);
    for (size_t i = 0; i < st->n_late; i++) {
        struct chain *c = &st->late[i].c;
        int done = complete_by_path(st, c, c, st->late[i].program) == 0;
        st->counts.from_path += done;
        st->counts.at_end += done;
        st->emit(st->ctx, st->late_payloads + i * st->payload_size, c->ids, c->n, done);
        chain_free(c);
    }
    st->n_late = 0;
    st->late_bytes = 0;
}

struct stitch_counts stitch__counts(const struct stitch *st)
{
    return st->counts;
}

void stitch__summary(const struct stitch *st)
{
    const struct stitch_counts *c = &st->counts;
    warnx_("DWARF stitching: %" PRIu64 " of %" PRIu64 " truncated stacks completed (through an"
           " activation: %" PRIu64 " from an earlier sample of their thread, %" PRIu64 " from a"
           " later one; %" PRIu64 " through their call path, %" PRIu64 " of them at the end of"
           " the input, %" PRIu64 " past callers by name, %" PRIu64 " with native frames unknown;"
           " %" PRIu64 " paths disputed)",
           c->from_earlier + c->from_later + c->from_path, c->truncated, c->from_earlier,
           c->from_later, c->from_path, c->at_end, c->through_calls, c->with_gap,
           c->path_conflicts);
}
