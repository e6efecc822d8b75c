/*
 * symtab.h - a sorted table of symbols for one DSO (or the kernel, or one
 * perf map), with perf's rules for sizes and aliases so that lookups give
 * the names perf gives.
 */
#ifndef PYMERGE_SYMTAB_H
#define PYMERGE_SYMTAB_H

#include "strarena.h"

#include <stddef.h>
#include <stdint.h>

struct sym {
    uint64_t start, end;        /* [start, end); end == start: zero-sized */
    const char *name;           /* in the table's storage */
    uint8_t binding, type;      /* STB_* and STT_* */
    uint32_t seq;               /* insertion order, for a stable sort */
};

struct symtab {
    struct sym *syms;
    size_t n, cap;
    struct strarena names;      /* freed with the table */
};

/* Add a symbol; name[0..len) is copied into the table's storage. */
void symtab__add(struct symtab *t, uint64_t start, uint64_t size, uint8_t binding,
                 uint8_t type, const char *name, size_t len);
/* Add a symbol whose NUL-terminated name already lives in t->names (e.g.
 * a whole file adopted with strarena__adopt). */
void symtab__add_owned(struct symtab *t, uint64_t start, uint64_t size, uint8_t binding,
                       uint8_t type, const char *name);
/*
 * Sort, then apply perf's symbols__fixup_end (a zero-sized symbol reaches
 * the next one) and symbols__fixup_duplicate (of symbols at one address,
 * keep the one perf would show), in perf's order for the source (see
 * symtab.c).  is_kallsyms: module names are tagged "[mod]" and do not
 * stretch across the kernel/module gap.
 */
void symtab__finish(struct symtab *t, int is_kallsyms);
const struct sym *symtab__find(const struct symtab *t, uint64_t addr);
void symtab__exit(struct symtab *t);

#endif
