/* stats.c - Welch's t-test and Holm's correction (stats.h). */
#include "stats.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>

static void mean_var(const double *x, size_t n, double *mean, double *var)
{
    double s = 0, ss = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    *mean = n ? s / (double)n : NAN;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - *mean) * (x[i] - *mean);
    *var = n > 1 ? ss / (double)(n - 1) : NAN;
}

struct welch stats__welch(const double *a, size_t na, const double *b, size_t nb)
{
    struct welch w = {.t = NAN, .df = NAN, .p = NAN};
    double va, vb;
    mean_var(a, na, &w.mean[0], &va);
    mean_var(b, nb, &w.mean[1], &vb);
    if (na < 2 || nb < 2)
        return w;
    double sa = va / (double)na, sb = vb / (double)nb, se2 = sa + sb;
    double d = w.mean[1] - w.mean[0];
    if (se2 == 0) {
        w.t = d == 0 ? 0 : d > 0 ? INFINITY : -INFINITY;
        w.df = (double)(na + nb - 2);
        w.p = d == 0 ? 1 : 0;
        return w;
    }
    w.t = d / sqrt(se2);
    w.df = se2 * se2 / (sa * sa / (double)(na - 1) + sb * sb / (double)(nb - 1));
    w.p = stats__t_two_sided(w.t, w.df);
    return w;
}

/* The continued fraction of I_x(a, b), by the modified Lentz method; it
 * converges fast for x < (a + 1) / (a + b + 2). */
static double beta_fraction(double x, double a, double b)
{
    const double tiny = 1e-300, eps = 1e-15;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    d = 1 / (fabs(d) < tiny ? tiny : d);
    double h = d;
    for (int m = 1; m <= 1000; m++) {
        for (int odd = 0; odd < 2; odd++) {
            double num = odd ? -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
                             : m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
            d = 1 + num * d;
            d = 1 / (fabs(d) < tiny ? tiny : d);
            c = 1 + num / c;
            c = fabs(c) < tiny ? tiny : c;
            h *= d * c;
            if (odd && fabs(d * c - 1) < eps)
                return h;
        }
    }
    return h;
}

double stats__ibeta(double x, double a, double b)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2))
        return front * beta_fraction(x, a, b) / a;
    return 1 - front * beta_fraction(1 - x, b, a) / b;
}

double stats__t_two_sided(double t, double df)
{
    if (isnan(t) || !(df > 0))
        return NAN;
    if (isinf(t))
        return 0;
    return stats__ibeta(df / (df + t * t), df / 2, 0.5);
}

struct ranked {
    double p;
    size_t i;
};

static int by_p(const void *x, const void *y)
{
    double a = ((const struct ranked *)x)->p, b = ((const struct ranked *)y)->p;
    return a < b ? -1 : a > b;
}

void stats__holm(const double *p, size_t n, double *adj)
{
    struct ranked *r = xcalloc(n + 1, sizeof(*r));
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        adj[i] = p[i];
        if (!isnan(p[i]))
            r[m++] = (struct ranked){p[i], i};
    }
    qsort(r, m, sizeof(*r), by_p);
    double run = 0;
    for (size_t k = 0; k < m; k++) {
        run = fmax(run, fmin(1, (double)(m - k) * r[k].p));    /* never decreasing */
        adj[r[k].i] = run;
    }
    free(r);
}
