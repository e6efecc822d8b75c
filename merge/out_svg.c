/*
 * out_svg.c - folded stacks -> an interactive flame graph in one SVG file.
 *
 * Layout follows flamegraph.pl: because the lines are sorted, frames that
 * merge are adjacent, so one pass comparing each stack with the previous
 * one closes the frames that end and opens the ones that begin.  The file
 * positions every frame itself (it renders without scripts); the embedded
 * script adds hover details, click-to-zoom, reset and search.
 */
#include "out_svg.h"
#include "folded.h"
#include "util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define FRAME_H 16
#define FONT_SIZE 12
#define FONT_WIDTH 0.59  /* average glyph width, in font sizes */
#define XPAD 10
#define TOP_PAD (FONT_SIZE * 3)
#define BOTTOM_PAD (FONT_SIZE * 2 + 10)

struct slice {
    const char *s;
    size_t len;
};

struct node {
    struct slice name;   /* with its annotation, if any */
    struct slice path;   /* "root;...;name": the frame and its ancestors */
    u32 depth;           /* 0 is the "all" root */
    u64 start, end;      /* in weight units */
};

struct layout {
    struct node *nodes;
    size_t n, cap;
    u32 max_depth;
};

static void add_node(struct layout *l, const struct slice *frames, size_t d, u64 start, u64 end)
{
    struct slice path = {frames[0].s, (size_t)(frames[d].s + frames[d].len - frames[0].s)};
    u32 depth = (u32)d + 1;
    GROW(l->nodes, l->cap, l->n + 1);
    l->nodes[l->n++] = (struct node){frames[d], path, depth, start, end};
    if (depth > l->max_depth)
        l->max_depth = depth;
}

/* Splits "a;b;c" into frames; returns the count. */
static size_t split(const char *text, struct slice **fr, size_t *cap)
{
    size_t n = 0;
    for (const char *p = text;;) {
        const char *e = strchr(p, ';');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        GROW(*fr, *cap, n + 1);
        (*fr)[n++] = (struct slice){p, len};
        if (!e)
            return n;
        p = e + 1;
    }
}

static int same(struct slice a, struct slice b)
{
    return a.len == b.len && memcmp(a.s, b.s, a.len) == 0;
}

/* Frames of all stacks, with depth 0 the total. */
static u64 flow(struct layout *l, const struct folded_line *lines, size_t n)
{
    struct slice *prev = NULL, *cur = NULL;
    size_t prev_n = 0, prev_cap = 0, cur_cap = 0;
    u64 *open = NULL;   /* start of the open frame at each depth */
    size_t open_cap = 0;
    u64 x = 0;

    for (size_t i = 0; i < n; i++) {
        if (lines[i].weight == 0)
            continue;
        size_t cn = split(lines[i].text, &cur, &cur_cap);
        size_t common = 0;
        while (common < cn && common < prev_n && same(cur[common], prev[common]))
            common++;
        for (size_t d = prev_n; d-- > common;)
            add_node(l, prev, d, open[d], x);
        GROW(open, open_cap, cn);
        for (size_t d = common; d < cn; d++)
            open[d] = x;
        x += lines[i].weight;
        struct slice *t = prev;
        size_t tc = prev_cap;
        prev = cur, prev_cap = cur_cap, prev_n = cn;
        cur = t, cur_cap = tc;
    }
    for (size_t d = prev_n; d-- > 0;)
        add_node(l, prev, d, open[d], x);
    GROW(l->nodes, l->cap, l->n + 1);
    l->nodes[l->n++] = (struct node){{"all", 3}, {"", 0}, 0, 0, x};
    free(prev);
    free(cur);
    free(open);
    return x;
}

/* Red for a frame whose share grew, blue for one that shrank, by how much
 * of the largest change it is. */
static void diff_colour(char out[32], double delta, double max)
{
    double v = max > 0 ? (delta < 0 ? -delta : delta) / max : 0;
    int fade = (int)(230 * (1 - v));
    if (delta >= 0)
        snprintf(out, 32, "rgb(255,%d,%d)", fade, fade);
    else
        snprintf(out, 32, "rgb(%d,%d,255)", fade, fade);
}

/* Share of the total that a frame gained since the base profile. */
static double delta_of(const struct node *nd, u64 total, const struct folded *base)
{
    u64 bw = nd->depth ? folded__weight_under(base, nd->path.s, nd->path.len) : base->total;
    return (double)(nd->end - nd->start) / (double)total
           - (base->total ? (double)bw / (double)base->total : 0);
}

/* The same name always gets the same shade, in every graph. */
static void colour(char out[32], struct slice name, enum annotation k)
{
    double v = (double)(hash_bytes(name.s, name.len) % 1000) / 1000.0;
    int r, g, b;
    switch (k) {
    case ANN_KERNEL:  r = 225 + (int)(30 * v); g = 140 + (int)(50 * v); b = (int)(40 * v); break;     /* orange */
    case ANN_PYTHON:  r = 50 + (int)(60 * v);  g = 185 + (int)(60 * v); b = 60 + (int)(60 * v); break; /* green */
    case ANN_INLINED: r = 60 + (int)(60 * v);  g = 170 + (int)(60 * v); b = 205 + (int)(50 * v); break; /* aqua */
    default:          r = 200 + (int)(55 * v); g = 50 + (int)(70 * v);  b = g; break;                /* red */
    }
    if (name.len > 1 && name.s[0] == '[')   /* [unknown], [truncated], [dso] */
        r = g = b = 160 + (int)(40 * v);
    snprintf(out, 32, "rgb(%d,%d,%d)", r, g, b);
}

static void put_escaped(FILE *f, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        switch (s[i]) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            /* Control characters are not allowed in XML 1.0. */
            fputc((unsigned char)s[i] < 0x20 ? '?' : s[i], f);
        }
    }
}

/* The label that fits in w pixels: the name, cut with "..", or nothing. */
static size_t label_len(size_t len, double w)
{
    size_t fit = w > 3 ? (size_t)((w - 3) / (FONT_SIZE * FONT_WIDTH)) : 0;
    return fit < 3 ? 0 : len <= fit ? len : fit - 2;
}

/* The interactive half: hover details, click to zoom, Reset Zoom, Search
 * (regular expressions, with the matched share of the total), and zoom and
 * search kept in the URL (?x=&d=&s=).  window.flamegraph exposes search()
 * and zoom() for scripted use and tests. */
static const char script[] =
    "(function () {\n"
    "  var g = document.getElementById('frames');\n"
    "  if (!g) return;\n"
    "  var num = function (e, a) { return +e.getAttribute(a); };\n"
    "  var total = num(g, 'data-total'), W = num(g, 'data-width'), pad = num(g, 'data-xpad');\n"
    "  var frames = [].slice.call(g.querySelectorAll('g.f'));\n"
    "  var details = document.getElementById('details'), matched = document.getElementById('matched');\n"
    "  var unzoom = document.getElementById('unzoom'), searchBtn = document.getElementById('search');\n"
    "  var zoomed = null, term = null;\n"
    "  frames.forEach(function (f) {\n"
    "    var title = f.querySelector('title').textContent;\n"
    "    f.fx = num(f, 'data-x'); f.fw = num(f, 'data-w'); f.fd = num(f, 'data-d');\n"
    "    f.name = title.substring(0, title.lastIndexOf(' ('));\n"
    "    f.rect = f.querySelector('rect'); f.label = f.querySelector('text');\n"
    "    f.fill = f.rect.getAttribute('fill');\n"
    "    f.addEventListener('click', function () { zoom(f); });\n"
    "    f.addEventListener('mouseover', function () { details.textContent = title; });\n"
    "    f.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
    "  });\n"
    "  function fit(name, w) {\n"
    "    var n = Math.floor((w - 3) / (12 * 0.59));\n"
    "    return n < 3 ? '' : name.length <= n ? name : name.substring(0, n - 2) + '..';\n"
    "  }\n"
    "  function layout() {\n"
    "    var x0 = zoomed ? zoomed.fx : 0, w0 = zoomed ? zoomed.fw : total, d0 = zoomed ? zoomed.fd : 0;\n"
    "    var scale = (W - 2 * pad) / w0;\n"
    "    frames.forEach(function (f) {\n"
    "      var inside = f.fx >= x0 && f.fx + f.fw <= x0 + w0 && f.fd >= d0;\n"
    "      var parent = zoomed !== null && f.fd < d0 && f.fx <= x0 && f.fx + f.fw >= x0 + w0;\n"
    "      var show = parent || (inside && f.fw * scale >= 0.1);\n"
    "      f.classList.toggle('hide', !show);\n"
    "      f.classList.toggle('parent', parent);\n"
    "      if (!show) return;\n"
    "      var x = parent ? pad : pad + (f.fx - x0) * scale, w = parent ? W - 2 * pad : f.fw * scale;\n"
    "      f.rect.setAttribute('x', x.toFixed(1));\n"
    "      f.rect.setAttribute('width', w.toFixed(1));\n"
    "      f.label.setAttribute('x', (x + 3).toFixed(1));\n"
    "      f.label.textContent = fit(f.name, w);\n"
    "    });\n"
    "    unzoom.classList.toggle('hide', zoomed === null);\n"
    "  }\n"
    "  function save() {\n"
    "    var q = [];\n"
    "    if (zoomed) q.push('x=' + zoomed.fx, 'd=' + zoomed.fd);\n"
    "    if (term) q.push('s=' + encodeURIComponent(term));\n"
    "    try { history.replaceState(null, '', location.pathname + (q.length ? '?' + q.join('&') : '')); } catch (e) {}\n"
    "  }\n"
    "  function zoom(f) { zoomed = f.fd === 0 ? null : f; layout(); save(); }\n"
    "  function search(s) {\n"
    "    var rx = null;\n"
    "    if (s) { try { rx = new RegExp(s); } catch (e) { rx = null; } }\n"
    "    term = rx ? s : null;\n"
    "    var ranges = [];\n"
    "    frames.forEach(function (f) {\n"
    "      var hit = rx !== null && rx.test(f.name);\n"
    "      f.classList.toggle('match', hit);\n"
    "      f.rect.setAttribute('fill', hit ? 'rgb(230,0,230)' : f.fill);\n"
    "      if (hit) ranges.push([f.fx, f.fx + f.fw]);\n"
    "    });\n"
    "    ranges.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
    "    var sum = 0, end = -1;\n"
    "    ranges.forEach(function (r) {\n"
    "      if (r[0] >= end) { sum += r[1] - r[0]; end = r[1]; }\n"
    "      else if (r[1] > end) { sum += r[1] - end; end = r[1]; }\n"
    "    });\n"
    "    matched.textContent = term ? 'Matched: ' + (100 * sum / total).toFixed(1) + '%' : ' ';\n"
    "    searchBtn.textContent = term ? 'Reset Search' : 'Search';\n"
    "    save();\n"
    "    return sum / total;\n"
    "  }\n"
    "  unzoom.addEventListener('click', function () { zoom(frames[frames.length - 1]); });\n"
    "  searchBtn.addEventListener('click', function () {\n"
    "    if (term) { search(null); return; }\n"
    "    var s = window.prompt('Search for (regular expression):', '');\n"
    "    if (s) search(s);\n"
    "  });\n"
    "  window.flamegraph = { search: search, zoom: zoom, frames: frames };\n"
    "  var p = new URLSearchParams(location.search);\n"
    "  if (p.has('x')) {\n"
    "    frames.forEach(function (f) { if (f.fx === +p.get('x') && f.fd === +p.get('d')) zoomed = f; });\n"
    "  }\n"
    "  layout();\n"
    "  if (p.get('s')) search(p.get('s'));\n"
    "})();\n";

int out_svg__write(FILE *f, const struct folded_line *lines, size_t n, const struct svg_opts *o)
{
    struct layout l = {0};
    u64 total = flow(&l, lines, n);
    int width = o->width > 0 ? o->width : 1200;
    const char *title = o->title ? o->title : o->inverted ? "Icicle Graph" : "Flame Graph";
    const char *unit = o->countname ? o->countname : "samples";
    double scale = total ? (double)(width - 2 * XPAD) / (double)total : 0;
    u64 min_w = scale > 0 ? (u64)(o->minwidth / scale) : 0;

    u32 depth = 0;
    for (size_t i = 0; i < l.n; i++)
        if (l.nodes[i].end - l.nodes[i].start > min_w && l.nodes[i].depth > depth)
            depth = l.nodes[i].depth;
    int height = total ? (int)(depth + 1) * FRAME_H + TOP_PAD + BOTTOM_PAD : 60;

    fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
               "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
               " xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n",
            width, height, width, height);
    fprintf(f, "<style>text{font-family:Verdana,sans-serif;font-size:%dpx;fill:#000}"
               "#title{font-size:17px;text-anchor:middle}#subtitle{text-anchor:middle;fill:#555}"
               ".ctl{cursor:pointer}.ctl:hover{text-decoration:underline}#matched{text-anchor:end}"
               "g.f{cursor:pointer}g.f:hover rect{stroke:#000;stroke-width:0.5}"
               "g.f text{pointer-events:none}g.parent rect{opacity:0.5}.hide{display:none}</style>\n",
            FONT_SIZE);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f8f8f8\"/>\n", width, height);
    fputs("<text id=\"title\" x=\"", f);
    fprintf(f, "%d\" y=\"24\">", width / 2);
    put_escaped(f, title, strlen(title));
    fputs("</text>\n", f);
    if (o->subtitle) {
        fprintf(f, "<text id=\"subtitle\" x=\"%d\" y=\"%d\">", width / 2, 24 + FONT_SIZE + 4);
        put_escaped(f, o->subtitle, strlen(o->subtitle));
        fputs("</text>\n", f);
    }
    fprintf(f, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", XPAD, height - FONT_SIZE / 2);
    fprintf(f, "<text id=\"unzoom\" class=\"ctl hide\" x=\"%d\" y=\"24\">Reset Zoom</text>\n", XPAD);
    fprintf(f, "<text id=\"search\" class=\"ctl\" x=\"%d\" y=\"24\">Search</text>\n", width - XPAD - 60);
    fprintf(f, "<text id=\"matched\" x=\"%d\" y=\"%d\"> </text>\n", width - XPAD, height - FONT_SIZE / 2);

    if (total == 0) {
        fprintf(f, "<text x=\"%d\" y=\"48\" text-anchor=\"middle\">ERROR: no stacks to draw</text>\n"
                   "</svg>\n", width / 2);
        free(l.nodes);
        fflush(f);
        return -1;
    }

    double max_delta = 0;
    for (size_t i = 0; o->base && i < l.n; i++) {
        double d = delta_of(&l.nodes[i], total, o->base);
        if (d < 0)
            d = -d;
        if (d > max_delta)
            max_delta = d;
    }
    fprintf(f, "<g id=\"frames\" data-total=\"%" PRIu64 "\" data-width=\"%d\" data-xpad=\"%d\">\n",
            total, width, XPAD);
    for (size_t i = 0; i < l.n; i++) {
        struct node *nd = &l.nodes[i];
        u64 w = nd->end - nd->start;
        if (w <= min_w)
            continue;
        struct slice name = nd->name;
        enum annotation k = folded__annotation(name.s, &name.len);
        char fill[32], change[48] = "";
        if (o->base) {
            double d = delta_of(nd, total, o->base);
            diff_colour(fill, d, max_delta);
            snprintf(change, sizeof change, "; %+.2f points", 100 * d);
        } else {
            colour(fill, name, k);
        }
        double x = XPAD + (double)nd->start * scale, wpx = (double)w * scale;
        int y = o->inverted ? TOP_PAD + (int)nd->depth * FRAME_H
                            : height - BOTTOM_PAD - (int)(nd->depth + 1) * FRAME_H;
        fprintf(f, "<g class=\"f\" data-x=\"%" PRIu64 "\" data-w=\"%" PRIu64 "\" data-d=\"%u\"><title>",
                nd->start, w, nd->depth);
        put_escaped(f, name.s, name.len);
        fprintf(f, " (%" PRIu64 " %s, %.2f%%%s)</title>", w, unit, 100.0 * (double)w / (double)total,
                change);
        fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" rx=\"2\" ry=\"2\"/>",
                x, y, wpx, FRAME_H - 1, fill);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + FRAME_H - 4.5);
        size_t ll = label_len(name.len, wpx);
        put_escaped(f, name.s, ll);
        if (ll && ll < name.len)
            fputs("..", f);
        fputs("</text></g>\n", f);
    }
    fputs("</g>\n<script type=\"text/ecmascript\"><![CDATA[\n", f);
    fputs(script, f);
    fputs("]]></script>\n</svg>\n", f);
    free(l.nodes);
    return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}
