/* test_symtab.c - perf's symbol-table rules (merge/symbols/symtab.c): which alias
 * wins at one address (choose_best_symbol), where zero-sized symbols end
 * (symbols__fixup_end), and lookups, on hand-made tables. */
#include "check.h"
#include "symtab.h"

#include <elf.h>
#include <string.h>

static void add(struct symtab *t, uint64_t start, uint64_t size, int bind, int type,
                const char *name)
{
    symtab__add(t, start, size, (uint8_t)bind, (uint8_t)type, name, strlen(name));
}

/* The name found at addr, or NULL. */
static const char *at(const struct symtab *t, uint64_t addr)
{
    const struct sym *s = symtab__find(t, addr);
    return s ? s->name : NULL;
}

static int is(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* Two symbols at one address: the first argument must win in either
 * insertion order. */
static void wins(uint64_t sa, int ba, int ta, const char *na,
                 uint64_t sb, int bb, int tb, const char *nb)
{
    for (int order = 0; order < 2; order++) {
        struct symtab t = {0};
        if (order) {
            add(&t, 0x1000, sb, bb, tb, nb);
            add(&t, 0x1000, sa, ba, ta, na);
        } else {
            add(&t, 0x1000, sa, ba, ta, na);
            add(&t, 0x1000, sb, bb, tb, nb);
        }
        symtab__finish(&t, 0);
        CHECK(t.n == 1);
        if (!is(at(&t, 0x1000), na)) {
            fprintf(stderr, "expected %s over %s (order %d), got %s\n", na, nb, order,
                    at(&t, 0x1000));
            CHECK(0);
        }
        symtab__exit(&t);
    }
}

static void aliases(void)
{
    /* Each rule of choose_best_symbol, the others being equal. */
    /* (a zero-sized alias is judged before fixup_end stretches it, as in
     * perf's dso__load_sym: its longer name must not win) */
    wins(16, STB_GLOBAL, STT_FUNC, "sized", 0, STB_GLOBAL, STT_FUNC, "zero_sized_alias");
    wins(16, STB_GLOBAL, STT_FUNC, "func", 16, STB_GLOBAL, STT_NOTYPE, "label");
    wins(16, STB_GLOBAL, STT_FUNC, "strong", 16, STB_WEAK, STT_FUNC, "weak");
    wins(16, STB_GLOBAL, STT_FUNC, "global", 16, STB_LOCAL, STT_FUNC, "local");
    wins(16, STB_GLOBAL, STT_FUNC, "_one", 16, STB_GLOBAL, STT_FUNC, "__two");
    wins(16, STB_GLOBAL, STT_FUNC, "longer", 16, STB_GLOBAL, STT_FUNC, "short");
    /* Earlier rules decide before later ones. */
    wins(16, STB_WEAK, STT_FUNC, "__weak_sized", 0, STB_GLOBAL, STT_FUNC, "g");
    wins(16, STB_LOCAL, STT_FUNC, "__local_func", 16, STB_GLOBAL, STT_NOTYPE, "glob_label");
    /* A full tie: the first inserted stays (perf's rbtree order). */
    struct symtab t = {0};
    add(&t, 0x1000, 16, STB_GLOBAL, STT_FUNC, "abc");
    add(&t, 0x1000, 16, STB_GLOBAL, STT_FUNC, "xyz");
    symtab__finish(&t, 0);
    CHECK(t.n == 1 && is(at(&t, 0x1000), "abc"));
    symtab__exit(&t);
}

static void ends(void)
{
    struct symtab t = {0};
    add(&t, 0x3000, 0, STB_GLOBAL, STT_FUNC, "last");       /* inserted unsorted */
    add(&t, 0x1000, 0, STB_GLOBAL, STT_FUNC, "zero");       /* reaches 0x2000 */
    add(&t, 0x2000, 0x10, STB_GLOBAL, STT_FUNC, "sized");   /* ends at 0x2010 */
    add(&t, 0x2004, 4, STB_LOCAL, STT_NOTYPE, "nested");    /* inside sized */
    symtab__finish(&t, 0);
    CHECK(is(at(&t, 0x1000), "zero") && is(at(&t, 0x1fff), "zero"));
    CHECK(is(at(&t, 0x2000), "sized") && is(at(&t, 0x2004), "nested"));
    CHECK(is(at(&t, 0x2009), "sized"));                     /* found by looking back */
    CHECK(at(&t, 0x2010) == NULL && at(&t, 0xfff) == NULL);
    /* The last zero-sized symbol reaches the end of the page after the
     * one its address rounds up to (here: one page). */
    CHECK(is(at(&t, 0x3fff), "last"));
    CHECK(at(&t, 0x4000) == NULL);
    symtab__exit(&t);
}

/* kallsyms: a kernel symbol before a module's does not stretch across the
 * gap to it; between kernel symbols it does. */
static void kallsyms_gap(void)
{
    struct symtab t = {0};
    add(&t, 0xffffffff81000000, 0, STB_GLOBAL, STT_FUNC, "_text");
    add(&t, 0xffffffff81000100, 0, STB_GLOBAL, STT_FUNC, "kernel_last");
    add(&t, 0xffffffffc0000000, 0, STB_GLOBAL, STT_FUNC, "mod_fn\t[mod]");
    symtab__finish(&t, 1);
    CHECK(is(at(&t, 0xffffffff810000ff), "_text"));
    CHECK(is(at(&t, 0xffffffff81001fff), "kernel_last"));
    CHECK(at(&t, 0xffffffff81003000) == NULL);
    CHECK(at(&t, 0xffffffffbfffffff) == NULL);
    CHECK(is(at(&t, 0xffffffffc0000000), "mod_fn\t[mod]"));
    symtab__exit(&t);
    /* kallsyms aliases (all zero-sized there): perf stretches before it
     * chooses, so the last one at the address wins by its size. */
    add(&t, 0xffffffff81000000, 0, STB_GLOBAL, STT_FUNC, "memcpy");
    add(&t, 0xffffffff81000000, 0, STB_GLOBAL, STT_FUNC, "__pi_memcpy");
    add(&t, 0xffffffff81000040, 0, STB_GLOBAL, STT_FUNC, "next");
    symtab__finish(&t, 1);
    CHECK(is(at(&t, 0xffffffff81000000), "__pi_memcpy"));
    symtab__exit(&t);
    /* The same table without the kallsyms rule stretches. */
    add(&t, 0xffffffff81000100, 0, STB_GLOBAL, STT_FUNC, "kernel_last");
    add(&t, 0xffffffffc0000000, 0, STB_GLOBAL, STT_FUNC, "mod_fn\t[mod]");
    symtab__finish(&t, 0);
    CHECK(is(at(&t, 0xffffffffbfffffff), "kernel_last"));
    symtab__exit(&t);
}

int main(void)
{
    aliases();
    ends();
    kallsyms_gap();
    struct symtab empty = {0};
    symtab__finish(&empty, 0);
    CHECK(at(&empty, 0) == NULL);
    symtab__exit(&empty);
    return 0;
}
