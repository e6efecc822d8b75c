/* out_spandiff.c - the span-by-span comparison as text and markdown
 * (out_spandiff.h). */
#include "out_spandiff.h"
#include "spanrows.h"
#include "util.h"

#include <errno.h>

#include <math.h>
#include <string.h>

static const char *const verdicts[] = {[SD_SAME] = "same", [SD_SLOWER] = "slower",
                                       [SD_FASTER] = "faster", [SD_UNTESTED] = "untested",
                                       [SD_NEW] = "new", [SD_GONE] = "gone"};

/* A span on one side only: its word, shown where a change would be. */
static const char *absent(const struct sd_span *s)
{
    return s->verdict == SD_NEW || s->verdict == SD_GONE ? verdicts[s->verdict] : NULL;
}

static double shown(const struct spandiff *d, double v)
{
    const char *u;
    return spandiff__shown(d, v, &u);
}

static const char *unit(const struct spandiff *d)
{
    const char *u;
    spandiff__shown(d, 0, &u);
    return u;
}

/* A p-value, or "-" for no test. */
static void pval(FILE *f, double p, const char *fmt)
{
    if (isnan(p))
        fprintf(f, fmt, "-");
    else {
        char buf[32];
        snprintf(buf, sizeof buf, "%.2g", p);
        fprintf(f, fmt, buf);
    }
}

static void table_function(FILE *f, const struct spandiff *d, const struct sd_function *fn)
{
    if (fn->absent >= 0) {
        fprintf(f, "%8s %+11.3f %-4s %s: %s\n", "", shown(d, fn->per_call[1] - fn->per_call[0]), unit(d),
                fn->absent ? "gone" : "new", fn->name);
        return;
    }
    fprintf(f, "%8s %+11.3f %-4s %+7.1f%% vs the rest, p-holm", "",
            shown(d, fn->per_call[1] - fn->per_call[0]), unit(d), spandiff__change(&fn->s));
    pval(f, fn->s.p_adj, " %-8s");
    fprintf(f, " %s%s\n", fn->name, fn->significant ? "" : "  (not significant)");
}

int out_spandiff__table(FILE *f, const struct spandiff *d, size_t top)
{
    fprintf(f, "%8s %11s %11s %9s %-8s  %s\n", "change", "base", "new", "p-holm", "verdict",
            "span (per call, mean of the runs)");
    for (size_t i = 0; i < d->n; i++) {
        const struct sd_span *s = &d->spans[i];
        if (absent(s))
            fprintf(f, "%8s", absent(s));
        else
            fprintf(f, "%+7.1f%%", spandiff__change(&s->s));
        fprintf(f, " %11.3f %11.3f", shown(d, s->s.mean[0]), shown(d, s->s.mean[1]));
        pval(f, s->s.p_adj, " %9s");
        fprintf(f, " %-8s  %s\n", verdicts[s->verdict], s->name);
        for (size_t k = 0; k < s->n_grown && k < top; k++)
            table_function(f, d, &s->grown[k]);
    }
    fprintf(f, "%zu base runs, %zu new runs; %s per call%s; Welch's t-test, Holm's correction "
               "over %zu tests, alpha %g, changes under %g%% not counted\n",
            d->runs[0], d->runs[1], unit(d), d->normalized_by ? ", each run divided by its speed" : "",
            d->tests, d->o.alpha, d->o.min_change);
    return written(f, 0);
}

/* Text that markdown shows as it is, inside a table cell too. */
static void md(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (strchr("\\`*_[]<>|#~", *s))
            fputc('\\', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
}

static void md_functions(FILE *f, const struct spandiff *d, const struct sd_span *s, size_t top)
{
    for (size_t k = 0; k < s->n_grown && k < top; k++) {
        const struct sd_function *fn = &s->grown[k];
        fputs(k ? "<br>" : "", f);
        md(f, fn->name);
        if (fn->absent >= 0) {
            fprintf(f, " %+.3g %s, %s", shown(d, fn->per_call[1] - fn->per_call[0]), unit(d),
                    fn->absent ? "gone" : "new");
            continue;
        }
        fprintf(f, " %+.3g %s, %+.0f%% against the rest (p ", shown(d, fn->per_call[1] - fn->per_call[0]),
                unit(d), spandiff__change(&fn->s));
        pval(f, fn->s.p_adj, "%s");
        fputs(fn->significant ? ")" : ", not significant)", f);
    }
    fputs(s->n_grown ? " |" : "- |", f);
}

static void md_row(FILE *f, const struct spandiff *d, const struct sd_span *s, size_t top)
{
    fputs("| ", f);
    md(f, s->name);
    fprintf(f, " | %.4g | %.4g | ", shown(d, s->s.mean[0]), shown(d, s->s.mean[1]));
    if (absent(s))
        fprintf(f, "%s | ", absent(s));
    else
        fprintf(f, "%+.1f%% | ", spandiff__change(&s->s));
    pval(f, s->s.p_adj, "%s | ");
    if (top == 0)
        return (void)fputs("\n", f);
    md_functions(f, d, s, top);
    if (s->graph)
        fprintf(f, " [flame graph](%s) |\n", s->graph);
    else
        fputs(" - |\n", f);
}

static size_t count(const struct spandiff *d, enum sd_verdict v)
{
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
        n += d->spans[i].verdict == v;
    return n;
}

int out_spandiff__markdown(FILE *f, const struct spandiff *d, size_t top)
{
    size_t slower = count(d, SD_SLOWER), faster = count(d, SD_FASTER);
    size_t added = count(d, SD_NEW), gone = count(d, SD_GONE);
    fprintf(f, "### Benchmarks: %zu slower, %zu faster, %zu unchanged", slower, faster, count(d, SD_SAME));
    if (added + gone)
        fprintf(f, ", %zu new, %zu gone", added, gone);
    fputs("\n\n", f);
    fprintf(f, "%zu base runs against %zu new runs; %s per call (%s)%s. A span is slower when "
               "its time per call, or one of its functions' time against the rest of it, changed "
               "by %g%% or more with p < %g (Welch's t-test on the runs, Holm-corrected over the "
               "%zu tests made).\n\n",
            d->runs[0], d->runs[1], unit(d), d->unit,
            d->normalized_by ? ", each run divided by its speed" : "", d->o.min_change, d->o.alpha,
            d->tests);
    if (slower + faster) {
        fprintf(f, "| span | base %s | new %s | change | p | grown functions | |\n", unit(d), unit(d));
        fputs("|---|---:|---:|---:|---:|---|---|\n", f);
        for (size_t i = 0; i < slower + faster; i++)
            md_row(f, d, &d->spans[i], top ? top : 1);
    }
    if (d->n > slower + faster) {
        fprintf(f, "\n<details><summary>%zu unchanged, untested, new or gone spans</summary>\n\n",
                d->n - slower - faster);
        fprintf(f, "| span | base %s | new %s | change | p |\n|---|---:|---:|---:|---:|\n", unit(d),
                unit(d));
        for (size_t i = slower + faster; i < d->n; i++)
            md_row(f, d, &d->spans[i], 0);
        fputs("\n</details>\n", f);
    }
    return written(f, 0);
}

int out_spandiff__rows(FILE *f, const struct profile *p)
{
    const struct span_rows *r = profile__span_rows(p);
    if (!r || !r->n)
        return -ENODATA;
    fputs("| span | count | mean ms | p50 ms | p90 ms | p99 ms | cpu ms |\n"
          "|---|---:|---:|---:|---:|---:|---:|\n", f);
    for (size_t i = 0; i < r->n; i++) {
        const struct span_row *s = &r->rows[i];
        fputs("| ", f);
        md(f, s->name);
        fprintf(f, " | %llu | %.3f | %.3f | %.3f | %.3f | ", (unsigned long long)s->count,
                (double)s->total_ns / (double)s->count / 1e6, s->p50_ns / 1e6, s->p90_ns / 1e6,
                s->p99_ns / 1e6);
        if (r->has_cpu)
            fprintf(f, "%.3f |\n", s->cpu_ns / 1e6);
        else
            fputs("- |\n", f);
    }
    return written(f, 0);
}
