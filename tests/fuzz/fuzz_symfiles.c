/*
 * fuzz_symfiles.c - the kallsyms and perf-map parsers (merge/symbols/kallsyms.c,
 * merge/symbols/perfmap.c) on any bytes, each followed by symtab__finish and
 * lookups, as symbols.c uses them.  The first byte picks the parser.
 */
#include "kallsyms.h"
#include "memfile.h"
#include "perfmap.h"
#include "symtab.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int kallsyms = data[0] & 1;
    const char *path = memfile(data + 1, size - 1);
    struct symtab t;
    struct perfmap_tail tail;
    memset(&t, 0, sizeof(t));
    int hidden = 0;
    uint64_t text = 0;
    int rc = kallsyms ? kallsyms__load(&t, path, &hidden, &text) : perfmap__load(&t, path, &tail);
    if (rc == 0) {
        symtab__finish(&t, kallsyms);
        for (size_t i = 0; i < t.n; i += 1 + t.n / 16) {
            const struct sym *s = symtab__find(&t, t.syms[i].start);
            if (!s || strlen(s->name) > size)
                abort();
            (void)symtab__find(&t, t.syms[i].end);
        }
        /* the tail lies within the file (its first byte was the selector) */
        if (!kallsyms && (tail.offset > (off_t)(size - 1) || tail.len > sizeof(tail.next)))
            abort();
    }
    symtab__exit(&t);
    return 0;
}
