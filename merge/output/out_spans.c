/* out_spans.c - one row per span name (out_spans.h). */
#include "out_spans.h"
#include "spanrows.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>

static void ms(FILE *f, uint64_t ns, int known)
{
    if (known)
        fprintf(f, " %11.3f", (double)ns / 1e6);
    else
        fprintf(f, " %11s", "-");
}

int out_spans__write(FILE *f, const struct profile *p)
{
    const struct span_rows *r = profile__span_rows(p);
    if (!r || !r->n)
        return -ENODATA;
    fprintf(f, "%9s %11s %11s %11s %11s %11s %11s %11s %11s  %s\n", "count", "total-ms", "mean-ms",
            "p50-ms", "p90-ms", "p99-ms", "max-ms", "cpu-ms", "offcpu-ms", "span");
    for (size_t i = 0; i < r->n; i++) {
        const struct span_row *s = &r->rows[i];
        fprintf(f, "%9" PRIu64, s->count);
        ms(f, s->total_ns, 1);
        ms(f, s->total_ns / s->count, 1);
        ms(f, s->p50_ns, 1);
        ms(f, s->p90_ns, 1);
        ms(f, s->p99_ns, 1);
        ms(f, s->max_ns, 1);
        ms(f, s->cpu_ns, r->has_cpu);
        ms(f, s->off_ns, r->has_off);
        fprintf(f, "  %s\n", s->name);
    }
    return written(f, 0);
}
