/*
 * stats.h - the statistics of `pymerge diff --runs` (docs/ci.md): Welch's
 * t-test on per-run values of two sides, and Holm's correction of many
 * such tests' p-values.
 */
#ifndef PYMERGE_STATS_H
#define PYMERGE_STATS_H

#include <stddef.h>

struct welch {
    double mean[2];             /* [0] base, [1] new */
    double t, df;               /* (mean[1] - mean[0]) / its standard error */
    double p;                   /* two-sided; NaN with fewer than 2 values a side */
};

/* Welch's t-test of a[0..na) against b[0..nb): unequal variances, the
 * Welch-Satterthwaite degrees of freedom.  Both sides without any spread:
 * p is 1 for equal means, 0 for different ones. */
struct welch stats__welch(const double *a, size_t na, const double *b, size_t nb);

/* P(|T| >= |t|) for Student's t with df > 0 degrees of freedom (not an
 * integer for Welch's test). */
double stats__t_two_sided(double t, double df);

/* The regularized incomplete beta function I_x(a, b), 0 <= x <= 1. */
double stats__ibeta(double x, double a, double b);

/* Holm's step-down adjustment of p[0..n) into adj[0..n): a test is
 * significant at level alpha, with the chance of any false one among the
 * n kept under alpha, when adj < alpha.  NaN p-values (no test) stay NaN
 * and do not count among the n. */
void stats__holm(const double *p, size_t n, double *adj);

#endif
