#!/usr/bin/env python3
"""The reference values of test_stats.c, computed apart from stats.c:
the two-sided p of Student's t by Simpson's rule on its density (not
the incomplete beta's continued fraction stats.c uses), Welch's t and
degrees of freedom from their textbook formulas.  Run once; its output
is pasted into test_stats.c.  Published table values (two-sided 5% and
1% critical values of t) are checked here too, so the integration is
known right before its figures are used."""
import math


def density(x, df):
    c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(c - (df + 1) / 2 * math.log1p(x * x / df))


def two_sided(t, df, steps=200000):
    """1 - 2 * integral of the density over [0, |t|] by Simpson's rule."""
    t = abs(t)
    h = t / steps
    s = density(0, df) + density(t, df)
    for i in range(1, steps):
        s += (4 if i % 2 else 2) * density(i * h, df)
    return 1 - 2 * s * h / 3


def welch(a, b):
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    va = sum((x - ma) ** 2 for x in a) / (len(a) - 1)
    vb = sum((x - mb) ** 2 for x in b) / (len(b) - 1)
    sa, sb = va / len(a), vb / len(b)
    t = (mb - ma) / math.sqrt(sa + sb)
    df = (sa + sb) ** 2 / (sa ** 2 / (len(a) - 1) + sb ** 2 / (len(b) - 1))
    return t, df


# Published critical values (any t table): P(|T| >= t) = 0.05 or 0.01.
TABLE = [(12.706, 1, 0.05), (4.303, 2, 0.05), (2.776, 4, 0.05), (2.228, 10, 0.05),
         (2.042, 30, 0.05), (4.032, 5, 0.01), (2.845, 20, 0.01)]
for t, df, p in TABLE:
    got = two_sided(t, df)
    assert abs(got - p) < 2e-4 * max(1, p / 0.01), (t, df, got, p)

for t, df in [(1.0, 1.0), (2.5, 3.7), (0.3, 12.0), (4.2, 2.3), (6.0, 8.5), (1.96, 200.0)]:
    print("    {%.4g, %.4g, %.12g}," % (t, df, two_sided(t, df)))

# Welch's example 1 of Wikipedia's "Welch's t-test" (t = -2.46, df = 24.9, p = 0.021)
A1 = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4]
A2 = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4]
t, df = welch(A1, A2)
print("welch A1 A2: t %.12g df %.12g p %.12g" % (t, df, two_sided(t, df)))
B1 = [101.0, 99.5, 100.2]
B2 = [131.0, 128.0, 133.5]
t, df = welch(B1, B2)
print("welch B1 B2: t %.12g df %.12g p %.12g" % (t, df, two_sided(t, df)))
