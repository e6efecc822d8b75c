/* symtab.c - perf-compatible symbol tables (see tools/perf/util/symbol.c). */
#include "symtab.h"
#include "util.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

void symtab__add_owned(struct symtab *t, uint64_t start, uint64_t size, uint8_t binding,
                       uint8_t type, const char *name)
{
    GROW(t->syms, t->cap, t->n + 1);
    t->syms[t->n] = (struct sym){start, start + size, name, binding, type, (uint32_t)t->n};
    t->n++;
}

void symtab__add(struct symtab *t, uint64_t start, uint64_t size, uint8_t binding,
                 uint8_t type, const char *name, size_t len)
{
    symtab__add_owned(t, start, size, binding, type, strarena__copy(&t->names, name, len));
}

void symtab__exit(struct symtab *t)
{
    strarena__exit(&t->names);
    free(t->syms);
    memset(t, 0, sizeof(*t));
}

/* Order by start, then insertion order as perf's rbtree keeps it: that
 * order settles full ties between aliases. */
static int by_start(const void *pa, const void *pb)
{
    const struct sym *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int underscores(const char *s)
{
    int n = 0;
    while (s[n] == '_')
        n++;
    return n;
}

/* perf's choose_best_symbol(): 1 if a wins over b. */
static int better(const struct sym *a, const struct sym *b)
{
    int az = a->end == a->start, bz = b->end == b->start;
    if (az != bz)
        return bz;                              /* prefer a non-zero length */
    if (a->type != b->type) {
        if (a->type == STT_NOTYPE)
            return 0;                           /* prefer a real symbol to a label */
        if (b->type == STT_NOTYPE)
            return 1;
    }
    int aw = a->binding == STB_WEAK, bw = b->binding == STB_WEAK;
    if (aw != bw)
        return bw;                              /* prefer non-weak */
    int ag = a->binding == STB_GLOBAL, bg = b->binding == STB_GLOBAL;
    if (ag != bg)
        return ag;                              /* prefer global */
    int au = underscores(a->name), bu = underscores(b->name);
    if (au != bu)
        return au < bu;                         /* prefer fewer leading '_' */
    size_t al = strlen(a->name), bl = strlen(b->name);
    if (al != bl)
        return al > bl;                         /* prefer the longer name */
    return 1;
}

static int is_module_sym(const struct sym *s)
{
    return strchr(s->name, '[') != NULL;
}

/* perf's symbols__fixup_duplicate: of several symbols at one address,
 * keep the one perf would show. */
static void fixup_duplicate(struct symtab *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (n && t->syms[n - 1].start == t->syms[i].start) {
            if (!better(&t->syms[n - 1], &t->syms[i]))
                t->syms[n - 1] = t->syms[i];
            continue;
        }
        t->syms[n++] = t->syms[i];
    }
    t->n = n;
}

/* perf's symbols__fixup_end: a zero-sized symbol reaches the next one. */
static void fixup_end(struct symtab *t, int is_kallsyms)
{
    for (size_t i = 1; i < t->n; i++) {
        struct sym *prev = &t->syms[i - 1], *curr = &t->syms[i];
        if (prev->end != prev->start)
            continue;
        if (is_kallsyms && is_module_sym(prev) != is_module_sym(curr))
            prev->end = (prev->end + 4096 + 4095) & ~4095ULL;
        else
            prev->end = curr->start;
    }
    struct sym *last = &t->syms[t->n - 1];
    if (last->end == last->start)
        last->end = ((last->start + 4095) & ~4095ULL) + 4096;
}

void symtab__finish(struct symtab *t, int is_kallsyms)
{
    if (!t->n)
        return;
    size_t sorted = 1;                  /* kallsyms and symtabs mostly are */
    while (sorted < t->n && by_start(&t->syms[sorted - 1], &t->syms[sorted]) < 0)
        sorted++;
    if (sorted < t->n)
        qsort(t->syms, t->n, sizeof(*t->syms), by_start);
    /* perf's order differs by source: dso__load_sym (ELF) runs
     * symbols__fixup_duplicate before symbols__fixup_end, so a zero-sized
     * alias is judged as zero-sized; __dso__load_kallsyms runs them the
     * other way round, so the last alias at an address has been stretched
     * to the next symbol and wins by size. */
    if (is_kallsyms) {
        fixup_end(t, 1);
        fixup_duplicate(t);
    } else {
        fixup_duplicate(t);
        fixup_end(t, 0);
    }
}

const struct sym *symtab__find(const struct symtab *t, uint64_t addr)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {                   /* first symbol starting after addr */
        size_t mid = lo + (hi - lo) / 2;
        if (t->syms[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* Symbols can nest (a local label inside a function): look back a few. */
    for (size_t k = 0; k < 4 && lo > k; k++) {
        const struct sym *s = &t->syms[lo - 1 - k];
        if (addr < s->end || addr == s->start)
            return s;
    }
    return NULL;
}
