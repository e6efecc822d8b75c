/*
 * pyspans.h - pyperfmap.span's spans in a recording (docs/spans.md): read
 * from its span__enter and span__exit probes before the samples, so that
 * each sample, whatever its mode, is found inside the spans open on its
 * thread at its time.
 *
 * A span ends at its exit, or (counted, and said once) when its thread
 * exits or the recording ends inside it; an exit in another thread ends it
 * where it began.  Spans are keyed by process and id, so a forked child's
 * spans stay its own.
 */
#ifndef PYMERGE_PYSPANS_H
#define PYMERGE_PYSPANS_H

#include <stddef.h>
#include <stdint.h>

struct pyspan {
    uint64_t begin, end;        /* perf's clock, ns */
    uint32_t pid, tid;
    int32_t parent;             /* index, or -1 */
    uint32_t name;              /* spantab__name */
    const char *labels;         /* "key=value" lines */
    int keep;                   /* passes --span and --slowest */
};

struct span_opts {
    int off;                    /* --no-spans: no [span] frames */
    const char *pattern;        /* --span REGEX, or NULL */
    double slowest;             /* --slowest P; < 0: none */
};

struct spantab;

/* The spans of recording path (shown: its name in messages), into *out:
 * NULL when it has no span probes.  0, or a negative errno after saying
 * what is wrong. */
int spantab__read(const char *path, const char *shown, struct spantab **out);
void spantab__delete(struct spantab *t);    /* accepts NULL */

/* Whether event is a span probe (pyperf_PID:span__enter, sdt_pyperfmap:...). */
int spantab__is_probe(const char *event);

/* Marks the spans o keeps; 0, or -EINVAL after saying the pattern is bad. */
int spantab__select(struct spantab *t, const struct span_opts *o, const char *shown);

/* The innermost span open on thread tid at time, or -1. */
int32_t spantab__at(const struct spantab *t, uint32_t tid, uint64_t time);
const struct pyspan *spantab__get(const struct spantab *t, int32_t i);
size_t spantab__n(const struct spantab *t);
const char *spantab__name(const struct spantab *t, uint32_t name);
size_t spantab__n_names(const struct spantab *t);

/* What went wrong in the spans (never closed, closed elsewhere, exits of
 * spans never entered), said once each on stderr. */
void spantab__report(const struct spantab *t, const char *shown);

/* ---- pyspans_put.c: each profile entry inside spans ------------------ */

struct pentry;
struct profile;
struct span_put;

struct span_put *span_put__new(struct spantab *t, const struct span_opts *o, struct profile *p);
void span_put__delete(struct span_put *sp);    /* accepts NULL */

/* e as it enters the profile, into *out: under its spans' [span NAME]
 * frames (unless --no-spans), on a thread tagged with the innermost
 * OpenTelemetry span's trace_id and span_id; 0 when the filters drop it. */
int span_put__entry(struct span_put *sp, struct profile *p, const struct pentry *e,
                    struct pentry *out);

/* The per-name summary (spanrows.h), handed to p. */
void span_put__finish(struct span_put *sp, struct profile *p);

/* ---- pyspans_tracks.c: each kept span, for the timelines ------------ */

struct span_rows;

/* rows->spans from t's kept spans, on their tracks; row_of: a name's
 * row in rows. */
void span_tracks__fill(const struct spantab *t, const struct profile *p, struct span_rows *rows,
                       const uint32_t *row_of);

#endif
