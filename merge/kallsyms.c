/* kallsyms.c - parse "ADDR TYPE NAME [\t[MODULE]]" lines into a symtab. */
#include "kallsyms.h"
#include "util.h"

#include <ctype.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kallsyms__load(struct symtab *t, const char *path, struct intern *names, int *hidden)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    size_t n_lines = 0, n_zero = 0;

    *hidden = 0;
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        char *end;
        unsigned long long addr = strtoull(line, &end, 16);
        n_lines++;
        n_zero += addr == 0;
        if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
            continue;
        char type = end[1];
        char up = (char)toupper((unsigned char)type);
        if (up != 'T' && up != 'W' && up != 'D' && up != 'B')
            continue;
        char *name = end + 3;
        name[strcspn(name, "\n")] = 0;
        if (!*name || name[0] == '$')   /* ARM mapping symbols */
            continue;
        /* The module tag stays in the name until symtab__finish has seen
         * where the kernel ends and the modules begin. */
        uint8_t bind = up == 'W' ? STB_WEAK : isupper((unsigned char)type) ? STB_GLOBAL : STB_LOCAL;
        uint8_t stype = (up == 'T' || up == 'W') ? STT_FUNC : STT_OBJECT;
        symtab__add(t, addr, 0, bind, stype,
                    intern__str(names, intern__id(names, name, strlen(name))));
    }
    fclose(f);
    if (n_lines && n_zero == n_lines) {
        *hidden = 1;
        symtab__exit(t);
        return 0;
    }
    symtab__finish(t, 1);
    for (size_t i = 0; i < t->n; i++) {
        const char *tab = strchr(t->syms[i].name, '\t');
        if (tab)
            t->syms[i].name = intern__str(names, intern__id(names, t->syms[i].name,
                                                            (size_t)(tab - t->syms[i].name)));
    }
    return 0;
}
