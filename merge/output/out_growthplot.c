/* out_growthplot.c - live bytes over time as an SVG plot (see out_growthplot.h). */
#include "out_growthplot.h"
#include "growth.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#define POINTS 240              /* times per line: a step every 4 pixels */
#define WIDTH 1200
#define LEFT 90                 /* room for the byte axis' labels */
#define RIGHT 20
#define TOP 50
#define PLOT_H 300
#define LEGEND_LINE 18

/* Distinct, readable on white, in the order the stacks come. */
static const char *const palette[] = {"#d62728", "#1f77b4", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
#define MAX_LINES (sizeof(palette) / sizeof(*palette))

static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
#define N_UNITS (sizeof(units) / sizeof(*units))

/* bytes with a binary unit of their own, as the legend shows them */
static void put_bytes(FILE *f, double b)
{
    size_t u = 0;
    while (b >= 1024 && u + 1 < N_UNITS) {
        b /= 1024;
        u++;
    }
    fprintf(f, u ? "%.1f %s" : "%.0f %s", b, units[u]);
}

/* The smallest round step (1, 2, 2.5 or 5 times a power of ten, whole
 * bytes in B) that reaches v units in at most 6 steps: 3 to 6 labels. */
static void axis_steps(double v, int bytes, struct byte_axis *a)
{
    static const double round[] = {1, 2, 2.5, 5};
    for (double tens = bytes ? 1 : 0.1;; tens *= 10)
        for (size_t i = 0; i < sizeof(round) / sizeof(*round); i++) {
            double n = ceil(v / (round[i] * tens) - 1e-12);   /* 5.0000000000001 steps: 5 */
            if (n <= 6) {
                a->step = round[i] * tens;
                a->steps = n < 1 ? 1 : (int)n;
                return;
            }
        }
}

void out_growthplot__axis(uint64_t max, struct byte_axis *a)
{
    size_t u = 0;
    double unit = 1;
    while ((double)max >= unit * 1024 && u + 1 < N_UNITS) {
        unit *= 1024;
        u++;
    }
    axis_steps((double)max / unit, u == 0, a);
    if (a->step * a->steps >= 1024 && u + 1 < N_UNITS) {     /* 1023 KiB: 1.0 MiB, not 1200 KiB */
        unit *= 1024;
        u++;
        axis_steps((double)max / unit, 0, a);
    }
    a->unit = unit;
    a->name = units[u];
    a->decimals = 0;            /* as many as the step has: 2.5 one, 0.25 two */
    for (double s = a->step; a->decimals < 2 && fabs(s - round(s)) > 1e-9; s *= 10)
        a->decimals++;
}

void out_growthplot__label(const struct byte_axis *a, int i, char *buf, size_t size)
{
    snprintf(buf, size, "%.*f %s", i ? a->decimals : 0, a->step * i, a->name);
}

#define LEGEND_CHARS 150        /* what fits right of the swatch at 12 px */

/* The legend's text: the stack leaf first ("leaf < caller < ... <
 * thread"), cut with ".." to LEGEND_CHARS; the tooltip has it whole. */
static void put_legend(FILE *f, const struct profile *p, size_t sample)
{
    const struct psample *s = profile__sample(p, sample);
    size_t n, len = 0;
    const uint32_t *fr = profile__get_stack(p, s->stack, &n);
    char buf[LEGEND_CHARS + 1];
    for (size_t i = 0; i <= n && len < sizeof(buf) - 1; i++) {
        const char *name = i < n ? profile__get_frame(p, fr[n - 1 - i])->name
                                 : profile__get_frame(p, profile__get_thread(p, s->thread)->label)->name;
        int w = snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? " < " : "", name);
        len = w < 0 ? len : len + (size_t)w;
    }
    if (len >= sizeof(buf) - 1) {
        len = sizeof(buf) - 1;
        memcpy(buf + len - 2, "..", 2);
    }
    put_xml_text(f, buf, len);
}

int out_growthplot__write(FILE *f, const struct profile *p, size_t top, const char *title)
{
    if (!growth__applies(p)) {
        warnx_("--format growth plots a leaks recording (pyperf-record --mode leaks)");
        return -EINVAL;
    }
    struct growth g;
    growth__init(&g, p, top < MAX_LINES ? top : MAX_LINES, POINTS);
    uint64_t max = 0;
    for (size_t i = 0; i < g.n * POINTS; i++)
        if (g.live[i] > max)
            max = g.live[i];
    struct byte_axis axis;
    out_growthplot__axis(max ? max : 1, &axis);
    double ymax = axis.step * axis.steps * axis.unit;
    double span = g.n ? (double)(g.at[POINTS - 1] - g.t0) / 1e9 : 0;
    const int plot_w = WIDTH - LEFT - RIGHT, height = TOP + PLOT_H + 50 + LEGEND_LINE * (int)g.n;

    fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
               "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "xmlns=\"http://www.w3.org/2000/svg\" font-family=\"Verdana\" font-size=\"12\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
               "<text x=\"%d\" y=\"24\" font-size=\"17\" text-anchor=\"middle\">",
            WIDTH, height, WIDTH, height, WIDTH / 2);
    put_xml_text(f, title, strlen(title));
    fputs("</text>\n", f);

    /* axes: bytes in the axis' steps, seconds in fifths of the span */
    for (int i = 0; i <= axis.steps; i++) {
        double y = TOP + PLOT_H - (double)PLOT_H * i / axis.steps;
        char label[64];
        out_growthplot__label(&axis, i, label, sizeof label);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
                   "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                LEFT, y, WIDTH - RIGHT, y, LEFT - 6, y + 4, label);
    }
    for (int i = 0; i <= 5; i++)
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.2f s</text>\n",
                LEFT + plot_w * i / 5.0, TOP + PLOT_H + 18, span * i / 5);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">time since the first "
               "allocation; live bytes of the blocks allocated at each stack</text>\n",
            LEFT + plot_w / 2, TOP + PLOT_H + 36);

    /* A step line per stack: flat until the next time, then up or down.
     * Its value at 0 s is nothing (the first point is one step in). */
    for (size_t r = 0; r < g.n; r++) {
        fprintf(f, "<g class=\"stack\"><title>");
        growth__put_stack(f, p, g.sample[r], put_xml_text);   /* the whole stack, as a tooltip */
        fprintf(f, "</title>\n<path fill=\"none\" stroke=\"%s\" stroke-width=\"2\" d=\"M%d %d",
                palette[r], LEFT, TOP + PLOT_H);
        for (size_t k = 0; k < POINTS; k++) {
            double x = LEFT + (double)plot_w * (double)k / POINTS;
            double y = TOP + PLOT_H - PLOT_H * (double)g.live[r * POINTS + k] / ymax;
            fprintf(f, " H%.1f V%.1f", x, y);
        }
        fprintf(f, " H%d\" data-live=\"%" PRIu64 "\"/>\n", WIDTH - RIGHT, g.live[r * POINTS + POINTS - 1]);
        int ly = TOP + PLOT_H + 56 + LEGEND_LINE * (int)r;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"4\" fill=\"%s\"/>\n"
                   "<text x=\"%d\" y=\"%d\">",
                LEFT, ly - 6, palette[r], LEFT + 20, ly);
        put_bytes(f, (double)g.live[r * POINTS + POINTS - 1]);
        fputs(": ", f);
        put_legend(f, p, g.sample[r]);
        fputs("</text></g>\n", f);
    }
    fputs("</svg>\n", f);
    size_t n = g.n;
    growth__exit(&g);
    return written(f, n ? 0 : -ENODATA);
}
