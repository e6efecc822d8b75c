/*
 * test_stats.c - Welch's t-test and Holm's correction (merge/model/stats.c)
 * against values computed apart from it: tests/unit/stats_reference.py
 * integrates Student's t density by Simpson's rule (checked there against
 * published t tables), and Wikipedia's Welch's t-test example 1.
 */
#include "check.h"
#include "stats.h"

#include <math.h>

static int near(double got, double want, double rel)
{
    return fabs(got - want) <= rel * fabs(want) + 1e-12;
}

/* P(|T| >= t) of stats_reference.py, integer and Welch-like degrees. */
static void check_t(void)
{
    static const double ref[][3] = {
        {1, 1, 0.5},
        {2.5, 3.7, 0.0718220229118},
        {0.3, 12, 0.769310474088},
        {4.2, 2.3, 0.0407803402209},
        {6, 8.5, 0.000254484818787},
        {1.96, 200, 0.0513848408458},
    };
    for (size_t i = 0; i < sizeof(ref) / sizeof(*ref); i++) {
        CHECK(near(stats__t_two_sided(ref[i][0], ref[i][1]), ref[i][2], 1e-8));
        CHECK(near(stats__t_two_sided(-ref[i][0], ref[i][1]), ref[i][2], 1e-8));
    }
    /* published critical values: two-sided 5% at 4 and 10 degrees */
    CHECK(fabs(stats__t_two_sided(2.776, 4) - 0.05) < 1e-4);
    CHECK(fabs(stats__t_two_sided(2.228, 10) - 0.05) < 1e-4);
    CHECK(stats__t_two_sided(0, 5) == 1);
    CHECK(stats__t_two_sided(INFINITY, 5) == 0);
    CHECK(isnan(stats__t_two_sided(1, 0)));
}

static void check_welch(void)
{
    static const double a1[] = {27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1,
                                21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4};
    static const double a2[] = {27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0,
                                24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4};
    struct welch w = stats__welch(a1, 15, a2, 15);
    CHECK(near(w.t, 2.45535639829, 1e-9));
    CHECK(near(w.df, 24.9885292902, 1e-9));
    CHECK(near(w.p, 0.0213780014629, 1e-7));
    CHECK(near(w.mean[0], 20.82, 1e-12) && near(w.mean[1], 22.98666666667, 1e-10));

    static const double b1[] = {101.0, 99.5, 100.2}, b2[] = {131.0, 128.0, 133.5};
    w = stats__welch(b1, 3, b2, 3);
    CHECK(near(w.t, 18.5691523937, 1e-9));
    CHECK(near(w.df, 2.29551211275, 1e-9));
    CHECK(near(w.p, 0.00149485830457, 1e-7));
    w = stats__welch(b2, 3, b1, 3);                 /* a slowdown's sign */
    CHECK(w.t < 0 && near(w.p, 0.00149485830457, 1e-7));

    /* no spread on either side: equal is no change, different is certain */
    static const double c[] = {5, 5, 5}, d[] = {6, 6};
    CHECK(stats__welch(c, 3, c, 3).p == 1);
    CHECK(stats__welch(c, 3, d, 2).p == 0);
    /* one run on a side: no test */
    CHECK(isnan(stats__welch(c, 1, d, 2).p));
}

/* Holm: sorted p 0.005, 0.01, 0.03, 0.04 of 4 tests -> 0.02, 0.03,
 * max(0.03, 0.06), max(0.06, 0.04); NaN is no test and not counted. */
static void check_holm(void)
{
    const double p[] = {0.01, 0.04, NAN, 0.03, 0.005, 0.9};
    double adj[6];
    stats__holm(p, 6, adj);
    CHECK(near(adj[4], 0.025, 1e-12));      /* 5 tests: 5 x 0.005 */
    CHECK(near(adj[0], 0.04, 1e-12));       /* 4 x 0.01 */
    CHECK(near(adj[3], 0.09, 1e-12));       /* 3 x 0.03 */
    CHECK(near(adj[1], 0.09, 1e-12));       /* 2 x 0.04 = 0.08, never below the one before */
    CHECK(near(adj[5], 0.9, 1e-12));
    CHECK(isnan(adj[2]));
    stats__holm(p, 0, adj);
}

int main(void)
{
    check_t();
    check_welch();
    check_holm();
    puts("ok");
    return 0;
}
