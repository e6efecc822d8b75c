/* test_growthaxis.c - the growth plot's byte axis (merge/output/out_growthplot.c):
 * one unit for every label, chosen from the largest value, round steps, a
 * top that holds the largest value without wasting most of the plot, and
 * labels that print their values exactly. */
#include "check.h"
#include "out_growthplot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int round_step(double step)
{
    double tens = pow(10, floor(log10(step)));
    double m = step / tens;
    return fabs(m - 1) < 1e-9 || fabs(m - 2) < 1e-9 || fabs(m - 2.5) < 1e-9 || fabs(m - 5) < 1e-9;
}

static void check_axis(uint64_t max)
{
    struct byte_axis a;
    out_growthplot__axis(max, &a);
    double top = a.step * a.steps;      /* in units */
    int ok = round_step(a.step) && a.steps >= 1 && a.steps <= 6
             && top * a.unit >= (double)max                             /* holds max */
             && (top < 1024 || !strcmp(a.name, "TiB"))                  /* the right unit */
             && top >= 1                                                /* not too big a one */
             && (max < 4 || top * a.unit <= 2.5 * (double)max)          /* not mostly empty */
             && (strcmp(a.name, "B") || a.step >= 1);                   /* whole bytes */
    for (int i = 0; ok && i <= a.steps; i++) {      /* each label says its value exactly */
        char label[64], *end;
        out_growthplot__label(&a, i, label, sizeof label);
        ok = fabs(strtod(label, &end) - a.step * i) < 1e-9 && !strcmp(end + 1, a.name);
    }
    if (!ok) {
        fprintf(stderr, "max %llu: step %g %s x %d (%d decimals)\n", (unsigned long long)max,
                a.step, a.name, a.steps, a.decimals);
        CHECK(0);
    }
}

/* The labels of the axis for max, joined by ", ". */
static const char *labels(uint64_t max)
{
    static char buf[256];
    struct byte_axis a;
    out_growthplot__axis(max, &a);
    size_t n = 0;
    for (int i = 0; i <= a.steps; i++) {
        char label[64];
        out_growthplot__label(&a, i, label, sizeof label);
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? ", " : "", label);
    }
    return buf;
}

static void is(const char *got, const char *want)
{
    if (strcmp(got, want)) {
        fprintf(stderr, "got \"%s\", want \"%s\"\n", got, want);
        CHECK(0);
    }
}

int main(void)
{
    /* one unit along the axis: not "0 B, 614.4 KiB, 1.2 MiB, ..." */
    is(labels(1258291), "0 MiB, 0.2 MiB, 0.4 MiB, 0.6 MiB, 0.8 MiB, 1.0 MiB, 1.2 MiB");
    is(labels(1400000), "0 MiB, 0.25 MiB, 0.50 MiB, 0.75 MiB, 1.00 MiB, 1.25 MiB, 1.50 MiB");
    is(labels(200 * 65536), "0 MiB, 2.5 MiB, 5.0 MiB, 7.5 MiB, 10.0 MiB, 12.5 MiB");
    is(labels(3ull << 30), "0 GiB, 0.5 GiB, 1.0 GiB, 1.5 GiB, 2.0 GiB, 2.5 GiB, 3.0 GiB");
    is(labels(1023 * 1024), "0 MiB, 0.2 MiB, 0.4 MiB, 0.6 MiB, 0.8 MiB, 1.0 MiB");
    is(labels(700), "0 B, 200 B, 400 B, 600 B, 800 B");
    is(labels(1), "0 B, 1 B");
    is(labels(3), "0 B, 1 B, 2 B, 3 B");
    /* every magnitude, and the values just around each unit's edge */
    for (uint64_t m = 1; m < (1ull << 62); m += m / 8 + 1)
        check_axis(m);
    for (uint64_t u = 1; u <= (1ull << 40); u *= 1024)
        for (uint64_t d = 0; d < 3; d++) {
            check_axis(u * 1024 - d);
            check_axis(u + d);
        }
    check_axis(UINT64_MAX);
    return 0;
}
