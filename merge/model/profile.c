/* profile.c - the profile model (see profile.h). */
#include "profile.h"
#include "idmap.h"
#include "intern.h"
#include "spanrows.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct profile {
    struct intern *names;       /* frame names, files, comms, labels */
    struct pframe *frames;
    size_t n_frames, cap_frames;
    struct idmap frame_by_key;  /* name id << 3 | kind -> id + 1 */
    struct pthread *threads;
    size_t n_threads, cap_threads;
    struct idmap thread_by_key; /* hash of (pid, tid, comm, label) -> chain head + 1 */
    u32 *thread_next;           /* collision chains of thread_by_key */
    struct intern *stacks;      /* each the bytes of its frame ids, root first */
    struct psample *samples;
    size_t n_samples, cap_samples;
    struct idmap sample_by_key; /* thread << 32 | stack -> index + 1 */
    struct ptimed *timed;       /* NULL unless time order is kept */
    size_t n_timed, cap_timed;
    int keep_time;
    struct value_type types[PROFILE_MAX_VALUES];
    size_t n_types, weight;
    u64 start_ns, duration_ns;
    struct idmap build_ids;     /* interned path -> interned hex */
    const char *program;        /* interned, or NULL */
    u64 lost;                   /* records lost while recording */
    int var_type;               /* profile__variance_type */
    struct span_rows *span_rows;
};

struct profile *profile__new(int keep_time)
{
    struct profile *p = xcalloc(1, sizeof(*p));
    p->names = intern__new();
    p->stacks = intern__new();
    p->keep_time = keep_time;
    p->types[0] = (struct value_type){"samples", "count"};
    p->n_types = 1;
    p->var_type = -1;
    return p;
}

void profile__delete(struct profile *p)
{
    if (!p)
        return;
    intern__delete(p->names);
    free(p->frames);
    idmap__exit(&p->frame_by_key);
    free(p->threads);
    free(p->thread_next);
    idmap__exit(&p->thread_by_key);
    intern__delete(p->stacks);
    free(p->samples);
    idmap__exit(&p->sample_by_key);
    idmap__exit(&p->build_ids);
    free(p->timed);
    span_rows__delete(p->span_rows);
    free(p);
}

static const char *name_of(struct profile *p, const char *s, size_t len)
{
    return intern__str(p->names, intern__id(p->names, s, len));
}

int profile__set_types(struct profile *p, const struct value_type *types, size_t n, size_t weight)
{
    if (n == 0 || n > PROFILE_MAX_VALUES || weight >= n)
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        p->types[i] = (struct value_type){name_of(p, types[i].name, strlen(types[i].name)),
                                          name_of(p, types[i].unit, strlen(types[i].unit))};
    p->n_types = n;
    p->weight = weight;
    return 0;
}

size_t profile__n_types(const struct profile *p)
{
    return p->n_types;
}

const struct value_type *profile__type(const struct profile *p, size_t i)
{
    return &p->types[i];
}

size_t profile__weight(const struct profile *p)
{
    return p->weight;
}

int profile__find_type(const struct profile *p, const char *name)
{
    for (size_t i = 0; i < p->n_types; i++)
        if (!strcmp(p->types[i].name, name))
            return (int)i;
    return -1;
}

void profile__set_weight(struct profile *p, size_t i)
{
    if (i < p->n_types)
        p->weight = i;
}

uint32_t profile__frame(struct profile *p, const char *name, size_t len, enum pkind kind,
                        const char *file)
{
    u64 key = (u64)intern__id(p->names, name, len) << 3 | kind;
    uintptr_t id = (uintptr_t)idmap__get(&p->frame_by_key, key);
    if (id)
        return (u32)(id - 1);
    GROW(p->frames, p->cap_frames, p->n_frames + 1);
    p->frames[p->n_frames] = (struct pframe){intern__str(p->names, (u32)(key >> 3)),
                                             file ? name_of(p, file, strlen(file)) : NULL,
                                             (u8)kind, 0, 0};
    idmap__put(&p->frame_by_key, key, (void *)(uintptr_t)(p->n_frames + 1));
    return (u32)p->n_frames++;
}

const struct pframe *profile__get_frame(const struct profile *p, uint32_t id)
{
    return &p->frames[id];
}

void profile__frame_line(struct profile *p, uint32_t id, uint32_t function, uint32_t line)
{
    p->frames[id].function = function;
    p->frames[id].line = line;
}

uint32_t profile__n_frames(const struct profile *p)
{
    return (u32)p->n_frames;
}

uint32_t profile__thread(struct profile *p, uint32_t pid, uint32_t tid, const char *comm,
                         const char *label)
{
    return profile__thread_tagged(p, pid, tid, comm, label, NULL);
}

uint32_t profile__thread_tagged(struct profile *p, uint32_t pid, uint32_t tid, const char *comm,
                                const char *label, const char *tags)
{
    const char *c = name_of(p, comm, strlen(comm));
    const char *tg = tags ? name_of(p, tags, strlen(tags)) : NULL;
    u32 label_frame = profile__frame(p, label, strlen(label), PK_ROOT, NULL);
    u64 key = hash_u64((u64)pid << 32 ^ tid ^ (u64)(uintptr_t)c * 31 ^ (u64)label_frame << 17 ^
                       (u64)(uintptr_t)tg * 131);
    uintptr_t head = (uintptr_t)idmap__get(&p->thread_by_key, key);
    for (uintptr_t i = head; i; i = p->thread_next[i - 1]) {
        const struct pthread *t = &p->threads[i - 1];
        if (t->pid == pid && t->tid == tid && t->comm == c && t->label == label_frame &&
            t->tags == tg)
            return (u32)(i - 1);
    }
    GROW(p->threads, p->cap_threads, p->n_threads + 1);
    size_t cap = p->cap_threads;
    p->thread_next = xrealloc(p->thread_next, cap * sizeof(*p->thread_next));
    p->threads[p->n_threads] = (struct pthread){pid, tid, c, label_frame, tg};
    p->thread_next[p->n_threads] = (u32)head;
    idmap__put(&p->thread_by_key, key, (void *)(uintptr_t)(p->n_threads + 1));
    return (u32)p->n_threads++;
}

const struct pthread *profile__get_thread(const struct profile *p, uint32_t id)
{
    return &p->threads[id];
}

uint32_t profile__n_threads(const struct profile *p)
{
    return (u32)p->n_threads;
}

uint32_t profile__stack(struct profile *p, const uint32_t *root_first, size_t n)
{
    return intern__id(p->stacks, root_first, n * sizeof(*root_first));
}

const uint32_t *profile__get_stack(const struct profile *p, uint32_t id, size_t *n)
{
    *n = intern__len(p->stacks, id) / sizeof(uint32_t);
    return (const uint32_t *)(const void *)intern__str(p->stacks, id);
}

void profile__add(struct profile *p, uint32_t thread, uint32_t stack, uint64_t time,
                  const uint64_t *v)
{
    profile__add_span(p, thread, stack, time, time, v);
}

/* The aggregated sample of (thread, stack), made when new. */
static struct psample *sample_at(struct profile *p, uint32_t thread, uint32_t stack)
{
    u64 key = (u64)thread << 32 | stack;
    uintptr_t at = (uintptr_t)idmap__get(&p->sample_by_key, key);
    if (!at) {
        GROW(p->samples, p->cap_samples, p->n_samples + 1);
        p->samples[p->n_samples] = (struct psample){.thread = thread, .stack = stack};
        at = ++p->n_samples;
        idmap__put(&p->sample_by_key, key, (void *)at);
    }
    return &p->samples[at - 1];
}

void profile__set_variance_type(struct profile *p, size_t i)
{
    p->var_type = (int)i;
}

int profile__variance_type(const struct profile *p)
{
    return p->var_type;
}

void profile__add_variance(struct profile *p, uint32_t thread, uint32_t stack, double var)
{
    sample_at(p, thread, stack)->var += var;
}

void profile__add_values(struct profile *p, uint32_t thread, uint32_t stack, const uint64_t *v)
{
    struct psample *s = sample_at(p, thread, stack);
    for (size_t i = 0; i < p->n_types; i++)
        s->v[i] += v[i];
}

void profile__add_timed(struct profile *p, uint32_t thread, uint32_t stack, uint64_t begin,
                        uint64_t end, uint64_t weight)
{
    if (p->keep_time) {
        GROW(p->timed, p->cap_timed, p->n_timed + 1);
        p->timed[p->n_timed++] = (struct ptimed){begin, end, thread, stack, weight};
    }
}

void profile__add_span(struct profile *p, uint32_t thread, uint32_t stack, uint64_t begin,
                       uint64_t end, const uint64_t *v)
{
    profile__add_values(p, thread, stack, v);
    profile__add_timed(p, thread, stack, begin, end, v[p->weight]);
}

void profile__keep_time(struct profile *p)
{
    p->keep_time = 1;
}

size_t profile__n_samples(const struct profile *p)
{
    return p->n_samples;
}

const struct psample *profile__sample(const struct profile *p, size_t i)
{
    return &p->samples[i];
}

uint64_t profile__total(const struct profile *p)
{
    u64 t = 0;
    for (size_t i = 0; i < p->n_samples; i++)
        t += p->samples[i].v[p->weight];
    return t;
}

int profile__has_time(const struct profile *p)
{
    return p->keep_time;
}

void profile__set_span(struct profile *p, uint64_t start_ns, uint64_t duration_ns)
{
    p->start_ns = start_ns;
    p->duration_ns = duration_ns;
}

uint64_t profile__start_ns(const struct profile *p)
{
    return p->start_ns;
}

uint64_t profile__duration_ns(const struct profile *p)
{
    return p->duration_ns;
}

/* b goes before a: it starts earlier, or at the same time and ends later
 * (a caller before the callee that started with it). */
static int before(const struct ptimed *b, const struct ptimed *a)
{
    return b->time < a->time || (b->time == a->time && b->end > a->end);
}

/* Stable merge sort by time: intervals are added when they end, samples
 * when they happen, so the input is nearly sorted but not quite. */
static void sort_timed(struct ptimed *a, struct ptimed *tmp, size_t n)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    sort_timed(a, tmp, h);
    sort_timed(a + h, tmp, n - h);
    if (!before(&a[h], &a[h - 1]))
        return;
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = before(&a[j], &a[i]) ? a[j++] : a[i++];
    while (i < h)
        tmp[k++] = a[i++];
    memcpy(a, tmp, k * sizeof(*a));
}

void profile__finish(struct profile *p)
{
    if (p->n_timed > 1) {
        struct ptimed *tmp = xmalloc(p->n_timed * sizeof(*tmp));
        sort_timed(p->timed, tmp, p->n_timed);
        free(tmp);
    }
}

const struct ptimed *profile__timed(const struct profile *p, size_t *n)
{
    *n = p->n_timed;
    return p->timed;
}

void profile__set_span_rows(struct profile *p, struct span_rows *rows)
{
    span_rows__delete(p->span_rows);
    p->span_rows = rows;
}

const struct span_rows *profile__span_rows(const struct profile *p)
{
    return p->span_rows;
}

void span_rows__delete(struct span_rows *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        free(r->rows[i].name);
    for (size_t i = 0; i < r->n_spans; i++)
        free(r->spans[i].labels);
    free(r->spans);
    free(r->rows);
    free(r);
}

void profile__set_build_id(struct profile *p, const char *path, const char *hex)
{
    u64 key = (u64)(uintptr_t)name_of(p, path, strlen(path));
    if (!idmap__get(&p->build_ids, key))
        idmap__put(&p->build_ids, key, (void *)name_of(p, hex, strlen(hex)));
}

void profile__set_program(struct profile *p, const char *path)
{
    if (!p->program)
        p->program = name_of(p, path, strlen(path));
}

const char *profile__program(const struct profile *p)
{
    return p->program;
}

const char *profile__build_id(const struct profile *p, const char *file)
{
    /* frames' files are interned in p->names, so the pointer is the key */
    return file ? idmap__get(&p->build_ids, (u64)(uintptr_t)file) : NULL;
}

void profile__set_lost(struct profile *p, uint64_t records, const uint64_t *v)
{
    char name[64];
    if (!records)
        return;
    p->lost = records;
    snprintf(name, sizeof name, "[lost %" PRIu64 " records]", records);
    u32 frame = profile__frame(p, name, strlen(name), PK_UNKNOWN, NULL);
    u32 thread = profile__thread(p, 0, 0, "[lost]", "[lost]"), stack = profile__stack(p, &frame, 1);
    profile__add_values(p, thread, stack, v);
    /* for the writers that read time order: at the end, an instant */
    u64 end = 0;
    for (size_t i = 0; i < p->n_timed; i++)
        end = p->timed[i].end > end ? p->timed[i].end : end;
    if (p->keep_time)
        profile__add_timed(p, thread, stack, end, end, v[p->weight]);
}

uint64_t profile__lost(const struct profile *p)
{
    return p->lost;
}
