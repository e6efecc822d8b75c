/* calltree.c - samples -> a tree of frames (see calltree.h). */
#include "calltree.h"
#include "idmap.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static u32 child_of(struct calltree *t, struct idmap *m, u32 parent, u32 frame)
{
    u64 key = (u64)parent << 32 | frame;
    uintptr_t id = (uintptr_t)idmap__get(m, key);
    if (id)
        return (u32)(id - 1);
    GROW(t->nodes, t->cap, t->n + 1);
    struct ctnode *pn = &t->nodes[parent];
    t->nodes[t->n] = (struct ctnode){frame, parent, CALLTREE_NONE, pn->first_child,
                                     pn->depth + 1, 0, 0};
    pn->first_child = (u32)t->n;
    idmap__put(m, key, (void *)(uintptr_t)(t->n + 1));
    return (u32)t->n++;
}

static const struct calltree *sort_tree;   /* qsort has no context argument in C11 */
static int by_name(const void *a, const void *b)
{
    const struct profile *p = sort_tree->p;
    const struct pframe *x = profile__get_frame(p, sort_tree->nodes[*(const u32 *)a].frame);
    const struct pframe *y = profile__get_frame(p, sort_tree->nodes[*(const u32 *)b].frame);
    int c = strcmp(x->name, y->name);
    return c ? c : (int)x->kind - (int)y->kind;
}

/* Relinks every node's children in name order. */
static void sort_children(struct calltree *t)
{
    u32 *kids = NULL;
    size_t cap = 0;
    sort_tree = t;
    for (size_t i = 0; i < t->n; i++) {
        size_t k = 0;
        for (u32 c = t->nodes[i].first_child; c != CALLTREE_NONE; c = t->nodes[c].next_sibling) {
            GROW(kids, cap, k + 1);
            kids[k++] = c;
        }
        if (k < 2)
            continue;
        qsort(kids, k, sizeof(*kids), by_name);
        for (size_t j = 0; j + 1 < k; j++)
            t->nodes[kids[j]].next_sibling = kids[j + 1];
        t->nodes[kids[k - 1]].next_sibling = CALLTREE_NONE;
        t->nodes[i].first_child = kids[0];
    }
    free(kids);
}

void calltree__init(struct calltree *t, const struct profile *p)
{
    struct idmap m;
    memset(t, 0, sizeof(*t));
    t->p = p;
    idmap__init(&m);
    GROW(t->nodes, t->cap, 1);
    t->nodes[t->n++] = (struct ctnode){CALLTREE_NONE, CALLTREE_NONE, CALLTREE_NONE,
                                       CALLTREE_NONE, 0, 0, 0};
    size_t wi = profile__weight(p);
    for (size_t i = 0; i < profile__n_samples(p); i++) {
        const struct psample *s = profile__sample(p, i);
        u64 w = s->v[wi];
        if (w == 0)
            continue;
        size_t n;
        const u32 *fr = profile__get_stack(p, s->stack, &n);
        u32 node = child_of(t, &m, 0, profile__get_thread(p, s->thread)->label);
        t->nodes[0].total += w;
        t->nodes[node].total += w;
        for (size_t k = 0; k < n; k++) {
            node = child_of(t, &m, node, fr[k]);
            t->nodes[node].total += w;
        }
        t->nodes[node].self += w;
    }
    idmap__exit(&m);
    sort_children(t);
}

void calltree__exit(struct calltree *t)
{
    free(t->nodes);
    memset(t, 0, sizeof(*t));
}

uint32_t calltree__child(const struct calltree *t, uint32_t node, const char *name, uint8_t kind)
{
    for (u32 c = t->nodes[node].first_child; c != CALLTREE_NONE; c = t->nodes[c].next_sibling) {
        const struct pframe *f = profile__get_frame(t->p, t->nodes[c].frame);
        if (f->kind == kind && !strcmp(f->name, name))
            return c;
    }
    return CALLTREE_NONE;
}
