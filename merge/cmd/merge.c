/* merge.c - many profiles summed into one (see merge.h). */
#include "merge.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct merge {
    struct profile *m;
    const struct merge_opts *mo;
    int started;
    u64 start, end;             /* the inputs' wall-clock span, ns */
};

/* The first input decides the value types: all of its own, or only the
 * weight when --weight named it (a folded file has no other). */
static void take_types(struct merge *g, const struct profile *q)
{
    size_t w = profile__weight(q);
    struct value_type t[PROFILE_MAX_VALUES];
    size_t n = g->mo->o->weight ? 1 : profile__n_types(q);
    for (size_t i = 0; i < n; i++)
        t[i] = *profile__type(q, g->mo->o->weight ? w : i);
    profile__set_types(g->m, t, n, g->mo->o->weight ? 0 : w);
}

/* "input=PATH" (a recording's folder rather than its perf.data, which
 * every recording is called), with the characters that would split a tag
 * list as '_'. */
static char *default_label(const char *path)
{
    size_t n = strlen(path);
    if (n > 10 && !strcmp(path + n - 10, "/perf.data"))
        n -= 10;
    while (n > 1 && path[n - 1] == '/')
        n--;
    char *s = xmalloc(n + 7);
    memcpy(s, "input=", 6);
    for (size_t i = 0; i < n; i++)
        s[6 + i] = path[i] == ',' || path[i] == '=' || path[i] == ';' ? '_' : path[i];
    s[6 + n] = 0;
    return s;
}

/* Adds q (loaded from in) into the merged profile. */
static int add(struct merge *g, const struct profile *q, const struct merge_input *in)
{
    struct profile *m = g->m;
    size_t nt = profile__n_types(m);
    int col[PROFILE_MAX_VALUES];
    for (size_t i = 0; i < nt; i++) {
        if ((col[i] = profile__find_type(q, profile__type(m, i)->name)) < 0) {
            warnx_("%s: has no sample type %s, which the first input has (--weight names "
                   "one type every input has)", in->path, profile__type(m, i)->name);
            return -EINVAL;
        }
    }
    char *label = in->label ? xstrdup(in->label) : default_label(in->path);
    u32 nth = profile__n_threads(q), nf = profile__n_frames(q);
    u32 *thread = xmalloc((nth ? nth : 1) * sizeof(*thread));
    u32 *root = xmalloc((nth ? nth : 1) * sizeof(*root));
    u32 *frame = xmalloc((nf ? nf : 1) * sizeof(*frame));
    for (u32 i = 0; i < nth; i++) {
        const struct pthread *t = profile__get_thread(q, i);
        size_t ll = strlen(label), tl = t->tags ? strlen(t->tags) : 0;
        char *tags = xmalloc(ll + tl + 4);
        snprintf(tags, ll + tl + 4, "%s%s%s", label, t->tags ? "," : "", t->tags ? t->tags : "");
        thread[i] = profile__thread_tagged(m, t->pid, t->tid, t->comm,
                                           profile__get_frame(q, t->label)->name, tags);
        if (g->mo->label_frames) {
            char *name = xmalloc(ll + tl + 4);
            snprintf(name, ll + tl + 4, "[%s]", tags);
            root[i] = profile__frame(m, name, strlen(name), PK_UNKNOWN, NULL);
            free(name);
        }
        free(tags);
    }
    const char *program = profile__program(q);     /* the first input's names the sum's */
    if (program && !profile__program(m)) {
        const char *bid = profile__build_id(q, program);
        profile__set_program(m, program);
        if (bid)
            profile__set_build_id(m, program, bid);
    }
    for (u32 i = 0; i < nf; i++) {
        const struct pframe *f = profile__get_frame(q, i);
        const char *bid = profile__build_id(q, f->file);
        frame[i] = profile__frame(m, f->name, strlen(f->name), f->kind, f->file);
        if (bid)
            profile__set_build_id(m, f->file, bid);
    }
    u32 *fr = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < profile__n_samples(q); i++) {
        const struct psample *s = profile__sample(q, i);
        size_t depth, n = 0;
        const u32 *st = profile__get_stack(q, s->stack, &depth);
        GROW(fr, cap, depth + 1);
        if (g->mo->label_frames)
            fr[n++] = root[s->thread];
        for (size_t k = 0; k < depth; k++)
            fr[n++] = frame[st[k]];
        u64 v[PROFILE_MAX_VALUES] = {0};
        for (size_t k = 0; k < nt; k++)
            v[k] = s->v[col[k]];
        profile__add(m, thread[s->thread], profile__stack(m, fr, n), 0, v);
    }
    u64 start = profile__start_ns(q), end = start + profile__duration_ns(q);
    if (start && (!g->start || start < g->start))
        g->start = start;
    if (start && end > g->end)
        g->end = end;
    free(fr);
    free(frame);
    free(root);
    free(thread);
    free(label);
    return 0;
}

int merge__run(struct profile **out, const struct merge_input *in, size_t n,
               const struct merge_opts *mo)
{
    struct merge g = {.m = profile__new(0), .mo = mo};
    int ret = 0;
    *out = NULL;
    for (size_t i = 0; i < n && ret == 0; i++) {
        struct profile *q;
        if ((ret = input__load(&q, in[i].path, mo->kind, mo->o)) < 0)
            break;
        if (!g.started)
            take_types(&g, q);
        g.started = 1;
        ret = add(&g, q, &in[i]);
        profile__delete(q);     /* this input's state goes before the next is read */
    }
    if (ret < 0) {
        profile__delete(g.m);
        return ret;
    }
    if (g.start)
        profile__set_span(g.m, g.start, g.end - g.start);
    profile__finish(g.m);
    *out = g.m;
    return 0;
}
