/* writer.c - the table of output formats (see writer.h). */
#include "writer.h"
#include "out_folded.h"
#include "growth.h"
#include "out_growth.h"
#include "out_growthplot.h"
#include "out_pprof.h"
#include "out_spandiff.h"
#include "out_spans.h"
#include "out_speedscope.h"
#include "out_table.h"
#include "out_trace.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int folded(FILE *f, const struct profile *p, const struct write_opts *o)
{
    return out_folded__write(f, p, o->annotate);
}

/* A recording that lost records says so under the title, beside its
 * [lost N records] frame. */
static int svg(FILE *f, const struct profile *p, const struct write_opts *o)
{
    struct svg_opts so = o->svg;
    char line[160];
    if (profile__lost(p)) {
        snprintf(line, sizeof line, "%s%s%" PRIu64 " records were lost while recording",
                 so.subtitle ? so.subtitle : "", so.subtitle ? "; " : "", profile__lost(p));
        so.subtitle = line;
    }
    return out_svg__write(f, p, &so);
}

static int speedscope(FILE *f, const struct profile *p, const struct write_opts *o)
{
    return out_speedscope__write(f, p, o->name);
}

static int pprof(FILE *f, const struct profile *p, const struct write_opts *o)
{
    (void)o;
    return out_pprof__write(f, p);
}

static int trace(FILE *f, const struct profile *p, const struct write_opts *o)
{
    return out_trace__write(f, p, o->name);
}

static int table(FILE *f, const struct profile *p, const struct write_opts *o)
{
    if (growth__applies(p))             /* a leaks recording */
        return out_growth__write(f, p, o->top);
    return out_table__write(f, p, o->top);
}

static int growth(FILE *f, const struct profile *p, const struct write_opts *o)
{
    return out_growthplot__write(f, p, o->top, o->svg.title ? o->svg.title : "Live bytes over time");
}

static int live(FILE *f, const struct profile *p, const struct write_opts *o)
{
    return live__write(f, p, o->live);
}

static int spans(FILE *f, const struct profile *p, const struct write_opts *o)
{
    (void)o;
    return out_spans__write(f, p);
}

/* A pull request comment: diff --runs's comparison, or else the span
 * table of one recording. */
static int markdown(FILE *f, const struct profile *p, const struct write_opts *o)
{
    if (o->spandiff)
        return out_spandiff__markdown(f, o->spandiff, o->top);
    return out_spandiff__rows(f, p);
}

static const struct writer writers[] = {
    {"folded", 0, folded},
    {"svg", 0, svg},
    {"speedscope", 1, speedscope},
    {"pprof", 0, pprof},
    {"trace", 1, trace},
    {"table", 0, table},
    {"growth", 0, growth},
    {"live", 0, live},
    {"spans", 0, spans},
    {"markdown", 0, markdown},
};

const struct writer *writer__find(const char *name)
{
    for (size_t i = 0; i < sizeof(writers) / sizeof(*writers); i++)
        if (!strcmp(writers[i].name, name))
            return &writers[i];
    return NULL;
}

const struct writer *writer__at(size_t i)
{
    return i < sizeof(writers) / sizeof(*writers) ? &writers[i] : NULL;
}

int writer__has_stacks(const struct profile *p)
{
    size_t w = profile__weight(p);
    for (size_t i = 0; i < profile__n_samples(p); i++)
        if (profile__sample(p, i)->v[w])
            return 1;
    return 0;
}
