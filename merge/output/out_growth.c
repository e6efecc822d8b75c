/* out_growth.c - live bytes over time, top stacks, as a table (see out_growth.h). */
#include "out_growth.h"
#include "growth.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>

static void put_plain(FILE *f, const char *s, size_t len)
{
    fwrite(s, 1, len, f);
}

int out_growth__write(FILE *f, const struct profile *p, size_t top)
{
    struct growth g;
    growth__init(&g, p, top, GROWTH_COLUMNS);
    /* "+0.100s" ...: the columns' times since the first allocation */
    for (size_t k = 0; k < GROWTH_COLUMNS; k++) {
        char h[32];
        snprintf(h, sizeof h, "+%.3fs", (double)(g.at[k] - g.t0) / 1e9);
        fprintf(f, "%12s ", h);
    }
    fputs(" live bytes of the blocks allocated at\n", f);
    for (size_t r = 0; r < g.n; r++) {
        for (size_t k = 0; k < GROWTH_COLUMNS; k++)
            fprintf(f, "%12" PRIu64 " ", g.live[r * GROWTH_COLUMNS + k]);
        fputc(' ', f);
        growth__put_stack(f, p, g.sample[r], put_plain);
        fputc('\n', f);
    }
    size_t n = g.n;
    growth__exit(&g);
    return written(f, n ? 0 : -ENODATA);
}
