/* out_growth.c - live bytes over time, top stacks, as a table (see out_growth.h). */
#include "out_growth.h"
#include "growth.h"
#include "out_table.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>

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
    /* sampled estimates: the last column's expected relative error */
    int errors = profile__variance_type(p) == (int)profile__weight(p);
    fputs(errors ? "   +/-err  live bytes of the blocks allocated at\n"
                 : " live bytes of the blocks allocated at\n", f);
    for (size_t r = 0; r < g.n; r++) {
        for (size_t k = 0; k < GROWTH_COLUMNS; k++)
            fprintf(f, "%12" PRIu64 " ", g.live[r * GROWTH_COLUMNS + k]);
        uint64_t last = g.live[r * GROWTH_COLUMNS + GROWTH_COLUMNS - 1];
        if (errors)
            fprintf(f, "%8.1f%% ", last ? 100 * sqrt(profile__sample(p, g.sample[r])->var) / last
                                        : 0.0);
        fputc(' ', f);
        growth__put_stack(f, p, g.sample[r], put_plain);
        fputc('\n', f);
    }
    out_table__lost(f, p);
    size_t n = g.n;
    growth__exit(&g);
    return written(f, n ? 0 : -ENODATA);
}
