/*
 * spandiff.h - `pymerge diff --runs`: recordings of one suite compared
 * span by span (docs/ci.md).  Each run (a recording) gives each span name
 * a value, the profile's weight (cpu-ns for a cpu recording) per call of
 * the span; Welch's t-test on those per-run values tells a span that got
 * slower from run-to-run noise.  Inside each span, each function's own
 * weight against the rest of its span's, per run, is tested the same way:
 * a machine slower as a whole during a run changes it little (the span's
 * functions take turns under the same load), a function that got slower
 * changes it by its own change.  Holm's correction covers every test made.
 * What the report writers (table, markdown) and the gate read.
 */
#ifndef PYMERGE_SPANDIFF_H
#define PYMERGE_SPANDIFF_H

#include "profile.h"

#include <stddef.h>

/* A span or function is tested only when its runs average this many
 * samples on one side at least: fewer are sampling noise, and a handful
 * of samples on every run would make a zero-variance "certain" change. */
#define SPANDIFF_MIN_SAMPLES 10

/* SD_NEW, SD_GONE: a span with no sample and no call in any base run, or
 * in any new one: nothing to test, never slower. */
enum sd_verdict { SD_SAME, SD_SLOWER, SD_FASTER, SD_UNTESTED, SD_NEW, SD_GONE };

struct sd_stat {
    double mean[2];             /* per call, per run: [0] base, [1] new */
    double p, p_adj;            /* Welch's two-sided p; Holm's adjusted p (NaN: no test) */
};

struct sd_function {
    const char *name;
    struct sd_stat s;           /* its weight against the rest of its span's, per run */
    double per_call[2];         /* its weight per call of the span, means of the runs */
    int significant;            /* p_adj < alpha and grown by min_change or more against the
                                   rest, its own time per call grown, the rest not faster */
    int rest_faster;            /* the rest of its span got faster per call (Welch, alpha) */
    int absent;                 /* no sample in any run of side 0 (new), 1 (gone), or -1 */
};

struct sd_span {
    const char *name;
    struct sd_stat s;
    double calls[2], samples[2];    /* means per run */
    enum sd_verdict verdict;
    struct sd_function *grown;  /* functions that grew against the rest of the span, */
    size_t n_grown;             /* or new or gone in it; significant ones first, then by growth */
    char *graph;                /* its differential flame graph's file name, or NULL */
};

struct spandiff_opts {
    double alpha;               /* significance level of each family (0.05) */
    double min_change;          /* smallest change of a span, percent, to report (5) */
    int normalize;              /* divide each run by its speed (spandiff__finish) */
};

struct spandiff {
    struct sd_span *spans;      /* slower first, then faster, each by change; then the rest */
    size_t n, runs[2];
    struct spandiff_opts o;
    const char *unit;           /* the weight's name: "cpu-ns"... */
    size_t normalized_by;       /* spans the runs' speeds were taken from; 0: none */
    size_t tests;               /* the tests Holm's correction covered */
};

struct spandiff_acc;

/* An accumulator for runs[0] base runs then runs[1] new ones. */
struct spandiff_acc *spandiff__new(size_t base_runs, size_t new_runs);

/* Adds run number `run` (base ones first), a profile with [span NAME]
 * frames (the python or mixed view) and, for a recording, its span rows
 * (the calls).  0, or -EINVAL when its weight is not the first run's. */
int spandiff__add(struct spandiff_acc *a, size_t run, const struct profile *p);

/*
 * The comparison; a is freed.  With o->normalize, each run's values are
 * first divided by the run's speed: the median, over the tested spans,
 * of the span's value against its base median (three spans at least).
 * That cancels a run the machine made slower as a whole, and hides a
 * change that slows every span alike.
 */
struct spandiff *spandiff__finish(struct spandiff_acc *a, const struct spandiff_opts *o);
void spandiff__delete(struct spandiff *d);     /* accepts NULL */

/* v (a weight of d's unit) as shown: nanoseconds in milliseconds; *unit
 * gets the shown unit's name. */
double spandiff__shown(const struct spandiff *d, double v, const char **unit);

/* The change of s's mean, in percent of the base (inf from 0). */
double spandiff__change(const struct sd_stat *s);

#endif
