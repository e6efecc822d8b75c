/*
 * out_svg.c - folded stacks -> an interactive flame graph in one SVG file.
 *
 * Layout follows flamegraph.pl: because the lines are sorted, frames that
 * merge are adjacent, so one pass comparing each stack with the previous
 * one closes the frames that end and opens the ones that begin.  The file
 * positions every frame itself (it renders without scripts); the embedded
 * script adds hover details, click-to-zoom, reset and search, and opens a
 * graph taller than the window on its root (a deep spire would otherwise
 * fill the first screen with empty space above it).
 */
#include "out_svg.h"
#include "calltree.h"
#include "util.h"

#include <errno.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define FRAME_H 16
#define FONT_SIZE 12
#define FONT_WIDTH 0.59  /* average glyph width, in font sizes */
#define XPAD 10
#define TOP_PAD (FONT_SIZE * 3)
#define BOTTOM_PAD (FONT_SIZE * 2 + 10)

/* A frame of the graph: a call-tree node with its position. */
struct box {
    const struct pframe *f;     /* NULL: the "all" root */
    u32 depth;
    u64 start, end;             /* in weight units */
    double delta;               /* differential: change of its share of the total */
};

/* Frames in pre-order, the root last (the script's Reset Zoom zooms to the
 * last frame).  With base, each frame's change is computed along the way:
 * base[i] is the base tree's node for the path of node i. */
static struct box *lay_out(const struct calltree *t, const struct calltree *base, size_t *n)
{
    struct box *boxes = xmalloc(t->n * sizeof(*boxes));
    u64 *start = xcalloc(t->n, sizeof(*start));
    u32 *match = xmalloc(t->n * sizeof(*match));
    u32 *todo = xmalloc(t->n * sizeof(*todo));
    size_t k = 0, sp = 0;
    u64 btotal = base ? base->nodes[0].total : 0, total = t->nodes[0].total;
    match[0] = 0;
    todo[sp++] = 0;
    while (sp) {
        u32 i = todo[--sp];
        const struct ctnode *nd = &t->nodes[i];
        u64 x = start[i];
        /* children: first child leftmost; push in reverse so it is visited first */
        size_t first = sp;
        for (u32 c = nd->first_child; c != CALLTREE_NONE; c = t->nodes[c].next_sibling) {
            start[c] = x;
            x += t->nodes[c].total;
            todo[sp++] = c;
            if (base) {
                const struct pframe *f = profile__get_frame(t->p, t->nodes[c].frame);
                match[c] = match[i] == CALLTREE_NONE ? CALLTREE_NONE
                                                     : calltree__child(base, match[i], f->name, f->kind);
            }
        }
        for (size_t a = first, b = sp; a + 1 < b; a++, b--) {
            u32 tmp = todo[a];
            todo[a] = todo[b - 1];
            todo[b - 1] = tmp;
        }
        if (i == 0)
            continue;
        struct box *bx = &boxes[k++];
        *bx = (struct box){profile__get_frame(t->p, nd->frame), nd->depth, start[i],
                           start[i] + nd->total, 0};
        if (base) {
            u64 bw = match[i] == CALLTREE_NONE ? 0 : base->nodes[match[i]].total;
            bx->delta = (double)nd->total / (double)total - (btotal ? (double)bw / (double)btotal : 0);
        }
    }
    boxes[k++] = (struct box){NULL, 0, 0, total, base && btotal ? (double)0 : 0};
    free(start);
    free(match);
    free(todo);
    *n = k;
    return boxes;
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

/* The same name always gets the same shade, in every graph. */
static void colour(char out[32], const char *name, size_t len, enum pkind k)
{
    double v = (double)(hash_bytes(name, len) % 1000) / 1000.0;
    int r, g, b;
    switch (k) {
    case PK_KERNEL: r = 225 + (int)(30 * v); g = 140 + (int)(50 * v); b = (int)(40 * v); break;     /* orange */
    case PK_PYTHON:
    case PK_JIT:    r = 50 + (int)(60 * v);  g = 185 + (int)(60 * v); b = 60 + (int)(60 * v); break; /* green */
    default:        r = 200 + (int)(55 * v); g = 50 + (int)(70 * v);  b = g; break;                /* red */
    }
    if (len > 1 && name[0] == '[')   /* [unknown], [truncated], [dso], [off-cpu: S] */
        r = g = b = 160 + (int)(40 * v);
    snprintf(out, 32, "rgb(%d,%d,%d)", r, g, b);
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
    "  function toRoot() {\n"
    "    var r = frames[frames.length - 1].rect.getBoundingClientRect();\n"
    "    var y = r.bottom + window.scrollY + 2 * pad + 12 - window.innerHeight;\n"
    "    if (y > window.scrollY) window.scrollTo(0, y);\n"
    "  }\n"
    "  toRoot();\n"
    "  window.addEventListener('load', toRoot);\n"
    "})();\n";

/* The graph's geometry and what every frame's line needs. */
struct graph {
    const struct svg_opts *o;
    const char *unit;           /* the weight's name, in each frame's title */
    u64 total, min_w;           /* frames of min_w or less are left out */
    int width, height;
    double scale;               /* pixels per weight unit */
    double max_delta;           /* differential: the largest change, for colours */
};

/* The graph's size, from the deepest frame wide enough to draw. */
static void measure(struct graph *g, const struct box *boxes, size_t n)
{
    const struct svg_opts *o = g->o;
    g->width = o->width > 0 ? o->width : 1200;
    g->scale = g->total ? (double)(g->width - 2 * XPAD) / (double)g->total : 0;
    g->min_w = g->scale > 0 ? (u64)(o->minwidth / g->scale) : 0;
    u32 depth = 0;
    for (size_t i = 0; i < n; i++)
        if (boxes[i].end - boxes[i].start > g->min_w && boxes[i].depth > depth)
            depth = boxes[i].depth;
    g->height = g->total ? (int)(depth + 1) * FRAME_H + TOP_PAD + BOTTOM_PAD : 60;
    for (size_t i = 0; o->base && i < n; i++) {
        double d = boxes[i].delta < 0 ? -boxes[i].delta : boxes[i].delta;
        if (d > g->max_delta)
            g->max_delta = d;
    }
}

/* The document up to the frames: style, title, controls. */
static void put_head(FILE *f, const struct graph *g)
{
    const struct svg_opts *o = g->o;
    int width = g->width, height = g->height;
    const char *title = o->title ? o->title : o->inverted ? "Icicle Graph" : "Flame Graph";
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
    put_xml_text(f, title, strlen(title));
    fputs("</text>\n", f);
    if (o->subtitle) {
        fprintf(f, "<text id=\"subtitle\" x=\"%d\" y=\"%d\">", width / 2, 24 + FONT_SIZE + 4);
        put_xml_text(f, o->subtitle, strlen(o->subtitle));
        fputs("</text>\n", f);
    }
    fprintf(f, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", XPAD, height - FONT_SIZE / 2);
    fprintf(f, "<text id=\"unzoom\" class=\"ctl hide\" x=\"%d\" y=\"24\">Reset Zoom</text>\n", XPAD);
    fprintf(f, "<text id=\"search\" class=\"ctl\" x=\"%d\" y=\"24\">Search</text>\n", width - XPAD - 60);
    fprintf(f, "<text id=\"matched\" x=\"%d\" y=\"%d\"> </text>\n", width - XPAD, height - FONT_SIZE / 2);
}

/* One frame: its title (name, weight, share, change), rect and label. */
static void put_frame(FILE *f, const struct graph *g, const struct box *nd)
{
    u64 w = nd->end - nd->start;
    const char *name = nd->f ? nd->f->name : "all";
    size_t len = strlen(name);
    char fill[32], change[48] = "";
    if (g->o->base) {
        diff_colour(fill, nd->delta, g->max_delta);
        snprintf(change, sizeof change, "; %+.2f points", 100 * nd->delta);
    } else {
        colour(fill, name, len, nd->f ? (enum pkind)nd->f->kind : PK_ROOT);
    }
    double x = XPAD + (double)nd->start * g->scale, wpx = (double)w * g->scale;
    int y = g->o->inverted ? TOP_PAD + (int)nd->depth * FRAME_H
                           : g->height - BOTTOM_PAD - (int)(nd->depth + 1) * FRAME_H;
    fprintf(f, "<g class=\"f\" data-x=\"%" PRIu64 "\" data-w=\"%" PRIu64 "\" data-d=\"%u\"><title>",
            nd->start, w, nd->depth);
    put_xml_text(f, name, len);
    fprintf(f, " (%" PRIu64 " %s, %.2f%%%s)</title>", w, g->unit,
            100.0 * (double)w / (double)g->total, change);
    fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" rx=\"2\" ry=\"2\"/>",
            x, y, wpx, FRAME_H - 1, fill);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + FRAME_H - 4.5);
    size_t ll = label_len(len, wpx);
    put_xml_text(f, name, ll);
    if (ll && ll < len)
        fputs("..", f);
    fputs("</text></g>\n", f);
}

/* The frames wide enough to draw, then the script. */
static void put_frames(FILE *f, const struct graph *g, const struct box *boxes, size_t n)
{
    fprintf(f, "<g id=\"frames\" data-total=\"%" PRIu64 "\" data-width=\"%d\" data-xpad=\"%d\">\n",
            g->total, g->width, XPAD);
    for (size_t i = 0; i < n; i++)
        if (boxes[i].end - boxes[i].start > g->min_w)
            put_frame(f, g, &boxes[i]);
    fputs("</g>\n<script type=\"text/ecmascript\"><![CDATA[\n", f);
    fputs(script, f);
    fputs("]]></script>\n</svg>\n", f);
}

int out_svg__write(FILE *f, const struct profile *p, const struct svg_opts *o)
{
    struct calltree t, bt;
    size_t n;
    calltree__init(&t, p);
    if (o->base)
        calltree__init(&bt, o->base);
    struct box *boxes = lay_out(&t, o->base ? &bt : NULL, &n);
    struct graph g = {
        .o = o,
        .unit = o->countname ? o->countname : profile__type(p, profile__weight(p))->name,
        .total = t.nodes[0].total,
    };
    int ret = 0;
    measure(&g, boxes, n);
    put_head(f, &g);
    if (g.total == 0) {
        fprintf(f, "<text x=\"%d\" y=\"48\" text-anchor=\"middle\">ERROR: no stacks to draw</text>\n"
                   "</svg>\n", g.width / 2);
        ret = -ENODATA;
    } else {
        put_frames(f, &g, boxes, n);
    }
    free(boxes);
    calltree__exit(&t);
    if (o->base)
        calltree__exit(&bt);
    return written(f, ret);
}
