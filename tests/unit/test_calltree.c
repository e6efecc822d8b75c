/* test_calltree.c - a profile's samples as one tree (merge/model/calltree.h), the
 * shape the flame graph and the differential flame graph are drawn from:
 * paths merge, weights add up, siblings come in flamegraph.pl's order, and
 * a path of one profile is found in another's tree. */
#include "calltree.h"
#include "check.h"

#include <stdio.h>
#include <string.h>

static uint32_t frame(struct profile *p, const char *name, enum pkind kind)
{
    return profile__frame(p, name, strlen(name), kind, NULL);
}

static enum pkind kind_of(const char *name)
{
    size_t len = strlen(name);
    return len > 3 && !strcmp(name + len - 3, ".py") ? PK_PYTHON : PK_NATIVE;
}

/* Adds weight w (type 1; type 0 counts 1) to the stack of names, root
 * first, each a native frame unless it ends in ".py". */
static void add(struct profile *p, uint32_t thread, const char *const *names, size_t n,
                uint64_t w)
{
    uint32_t ids[16];
    CHECK(n <= 16);
    for (size_t i = 0; i < n; i++)
        ids[i] = frame(p, names[i], kind_of(names[i]));
    uint64_t v[2] = {1, w};
    profile__add(p, thread, profile__stack(p, ids, n), 0, v);
}

static struct profile *two_types(void)
{
    struct profile *p = profile__new(0);
    struct value_type t[] = {{"samples", "count"}, {"cpu-ns", "nanoseconds"}};
    CHECK(profile__set_types(p, t, 2, 1) == 0);
    return p;
}

static const char *name_of(const struct calltree *t, uint32_t node)
{
    return profile__get_frame(t->p, t->nodes[node].frame)->name;
}

/* Every node's total is its self plus its children's totals, its depth
 * one more than its parent's, and its children link back to it. */
static void check_sums(const struct calltree *t)
{
    CHECK(t->n > 0 && t->nodes[0].frame == CALLTREE_NONE && t->nodes[0].depth == 0);
    for (uint32_t i = 0; i < t->n; i++) {
        uint64_t sum = t->nodes[i].self;
        for (uint32_t c = t->nodes[i].first_child; c != CALLTREE_NONE;
             c = t->nodes[c].next_sibling) {
            CHECK(t->nodes[c].parent == i && t->nodes[c].depth == t->nodes[i].depth + 1);
            sum += t->nodes[c].total;
        }
        CHECK(sum == t->nodes[i].total);
    }
}

/* Builds the tree of p, checked by check_sums. */
static void build(struct calltree *t, const struct profile *p)
{
    calltree__init(t, p);
    check_sums(t);
}

/* The node at path "label;frame;...", frames named as add() names them,
 * or CALLTREE_NONE. */
static uint32_t at(const struct calltree *t, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", path);
    uint32_t node = 0;
    enum pkind kind = PK_ROOT;
    for (char *save, *name = strtok_r(buf, ";", &save); name && node != CALLTREE_NONE;
         name = strtok_r(NULL, ";", &save)) {
        node = calltree__child(t, node, name, kind == PK_ROOT ? PK_ROOT : kind_of(name));
        kind = PK_NATIVE;
    }
    return node;
}

/* Threads with one label share one root; stacks with a common prefix share
 * its nodes; the root holds the profile's total; a sample ends where its
 * self weight is. */
static void paths_merge_and_weights_add_up(void)
{
    struct profile *p = two_types();
    uint32_t t1 = profile__thread(p, 1, 1, "app", "app");
    uint32_t t2 = profile__thread(p, 1, 2, "app", "app");
    uint32_t t3 = profile__thread(p, 9, 9, "db", "db");
    add(p, t1, (const char *[]){"main", "run.py", "f.py"}, 3, 10);
    add(p, t2, (const char *[]){"main", "run.py", "g.py"}, 3, 20);
    add(p, t2, (const char *[]){"main", "run.py"}, 2, 5);
    add(p, t3, (const char *[]){"main"}, 1, 7);
    struct calltree t;
    build(&t, p);
    CHECK(t.nodes[0].total == 42 && t.nodes[0].total == profile__total(p));
    /* all, app, db, app;main, app;main;run.py, its f.py and g.py, db;main */
    CHECK(t.n == 8);
    uint32_t app = at(&t, "app");
    CHECK(app != CALLTREE_NONE && t.nodes[app].total == 35 && t.nodes[app].self == 0);
    uint32_t run = at(&t, "app;main;run.py");
    CHECK(run != CALLTREE_NONE && t.nodes[run].total == 35 && t.nodes[run].self == 5);
    CHECK(t.nodes[run].depth == 3);
    uint32_t g = at(&t, "app;main;run.py;g.py");
    CHECK(g != CALLTREE_NONE && t.nodes[g].self == 20 && t.nodes[g].first_child == CALLTREE_NONE);
    CHECK(t.nodes[at(&t, "db;main")].self == 7);
    calltree__exit(&t);
    profile__delete(p);
}

/* The tree weighs by the profile's weight type: another weight gives other
 * totals, and a sample of weight 0 leaves no node at all. */
static void weight_type_chosen_and_zero_dropped(void)
{
    struct profile *p = two_types();
    uint32_t th = profile__thread(p, 1, 1, "app", "app");
    add(p, th, (const char *[]){"main", "busy"}, 2, 30);
    add(p, th, (const char *[]){"main", "idle"}, 2, 0);
    struct calltree t;
    build(&t, p);
    CHECK(t.nodes[0].total == 30 && at(&t, "app;main;idle") == CALLTREE_NONE);
    calltree__exit(&t);
    CHECK(t.nodes == NULL && t.n == 0);

    profile__set_weight(p, 0);      /* samples: the idle stack counts 1 */
    build(&t, p);
    CHECK(t.nodes[0].total == 2 && t.nodes[at(&t, "app;main;idle")].self == 1);
    calltree__exit(&t);
    profile__delete(p);
}

/* Siblings are sorted by name (strcmp: upper case first), then by kind,
 * whatever order the samples came in; a frame of the same name and
 * another kind is another node, which calltree__child tells apart. */
static void siblings_sorted_by_name_then_kind(void)
{
    struct profile *p = two_types();
    uint32_t th = profile__thread(p, 1, 1, "app", "app");
    const char *order[] = {"zeta", "beta", "Zeta", "alpha", "beta"};
    for (size_t i = 0; i < 5; i++) {
        uint32_t ids[] = {frame(p, "root", PK_NATIVE),
                          frame(p, order[i], i == 4 ? PK_KERNEL : PK_NATIVE)};
        uint64_t v[2] = {1, 1};
        profile__add(p, th, profile__stack(p, ids, 2), 0, v);
    }
    struct calltree t;
    build(&t, p);
    uint32_t root = at(&t, "app;root");
    const char *want[] = {"Zeta", "alpha", "beta", "beta", "zeta"};
    uint32_t c = t.nodes[root].first_child;
    for (size_t i = 0; i < 5; i++, c = t.nodes[c].next_sibling) {
        CHECK(c != CALLTREE_NONE && !strcmp(name_of(&t, c), want[i]));
        if (i == 2 || i == 3)
            CHECK(profile__get_frame(p, t.nodes[c].frame)->kind ==
                  (i == 2 ? PK_NATIVE : PK_KERNEL));
    }
    CHECK(c == CALLTREE_NONE);
    uint32_t bn = calltree__child(&t, root, "beta", PK_NATIVE);
    uint32_t bk = calltree__child(&t, root, "beta", PK_KERNEL);
    CHECK(bn != CALLTREE_NONE && bk != CALLTREE_NONE && bn != bk);
    CHECK(calltree__child(&t, root, "beta", PK_PYTHON) == CALLTREE_NONE);
    CHECK(calltree__child(&t, root, "gamma", PK_NATIVE) == CALLTREE_NONE);
    calltree__exit(&t);
    profile__delete(p);
}

/* A path of one profile is found in another's tree by its names and
 * kinds (what the differential flame graph does), though the two number
 * their frames differently. */
static void path_found_across_profiles(void)
{
    struct profile *a = two_types(), *b = two_types();
    frame(b, "padding", PK_NATIVE);     /* so b's frame ids are not a's */
    add(a, profile__thread(a, 1, 1, "app", "app"), (const char *[]){"main", "f.py"}, 2, 3);
    add(b, profile__thread(b, 2, 2, "app", "app"), (const char *[]){"main", "f.py"}, 2, 4);
    struct calltree ta, tb;
    build(&ta, a);
    build(&tb, b);
    uint32_t na = 0, nb = 0;
    for (int depth = 0; depth < 3; depth++) {
        na = ta.nodes[na].first_child;
        CHECK(na != CALLTREE_NONE);
        const struct pframe *f = profile__get_frame(a, ta.nodes[na].frame);
        nb = calltree__child(&tb, nb, f->name, f->kind);
        CHECK(nb != CALLTREE_NONE && tb.nodes[nb].frame != ta.nodes[na].frame);
    }
    CHECK(tb.nodes[nb].self == 4 && ta.nodes[na].self == 3);
    calltree__exit(&ta);
    calltree__exit(&tb);
    profile__delete(a);
    profile__delete(b);
}

/* An empty profile is the root alone, and exit takes a zeroed tree. */
static void empty_profile_is_root_alone(void)
{
    struct profile *p = profile__new(0);
    struct calltree t;
    calltree__init(&t, p);
    CHECK(t.n == 1 && t.nodes[0].total == 0 && t.nodes[0].first_child == CALLTREE_NONE);
    CHECK(calltree__child(&t, 0, "app", PK_ROOT) == CALLTREE_NONE);
    calltree__exit(&t);
    calltree__exit(&t);
    profile__delete(p);
}

int main(void)
{
    paths_merge_and_weights_add_up();
    weight_type_chosen_and_zero_dropped();
    siblings_sorted_by_name_then_kind();
    path_found_across_profiles();
    empty_profile_is_root_alone();
    return 0;
}
