/*
 * symtab.h - a sorted table of symbols for one DSO (or the kernel, or one
 * perf map), with perf's rules for sizes and aliases so that lookups give
 * the names perf gives.
 */
#ifndef PYMERGE_SYMTAB_H
#define PYMERGE_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

struct sym {
    uint64_t start, end;        /* [start, end); end == start: zero-sized */
    const char *name;           /* interned by the caller, not owned */
    uint8_t binding, type;      /* STB_* and STT_* */
    uint32_t seq;               /* insertion order, for a stable sort */
};

struct symtab {
    struct sym *syms;
    size_t n, cap;
};

void symtab__add(struct symtab *t, uint64_t start, uint64_t size, uint8_t binding,
                 uint8_t type, const char *name);
/*
 * Sort, then apply perf's symbols__fixup_end (a zero-sized symbol reaches
 * the next one) and symbols__fixup_duplicate (of symbols at one address,
 * keep the one perf would show).  is_kallsyms: module names are tagged
 * "[mod]" and do not stretch across the kernel/module gap.
 */
void symtab__finish(struct symtab *t, int is_kallsyms);
const struct sym *symtab__find(const struct symtab *t, uint64_t addr);
void symtab__exit(struct symtab *t);

#endif
