/*
 * fuzz_linefile.c - the line file parser (merge/symbols/linefile.c) on any
 * bytes, then lookups as symbols.c makes them: each entry's runs rise from
 * 0, and a line found is one the entry's runs hold.
 */
#include "linefile.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct linefile lf;
    memset(&lf, 0, sizeof(lf));
    linefile__parse(&lf, (const char *)data, size);
    for (size_t i = 0; i < lf.n_codes; i++) {
        const struct line_code *c = &lf.codes[i];
        if (!c->n || c->first + c->n > lf.n_runs || lf.runs[c->first].off != 0 || !c->unit)
            abort();
        for (size_t k = 1; k < c->n; k++)
            if (lf.runs[c->first + k].off <= lf.runs[c->first + k - 1].off)
                abort();
        uint32_t probes[] = {(uint32_t)c->base, (uint32_t)c->base + 1, (uint32_t)c->base - 1,
                             (uint32_t)c->base + c->bytes, (uint32_t)c->base + c->bytes / 2};
        for (size_t k = 0; k < sizeof(probes) / sizeof(*probes); k++) {
            int line = linefile__line(&lf, c->tramp, probes[k]);
            int found = line == 0;
            for (size_t r = 0; r < c->n && !found; r++)
                found = lf.runs[c->first + r].line == line;
            if (!found || line < 0)
                abort();
        }
        (void)linefile__line(&lf, c->tramp + 1, (uint32_t)c->base);
    }
    linefile__exit(&lf);
    return 0;
}
