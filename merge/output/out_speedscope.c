/*
 * out_speedscope.c - a profile -> speedscope JSON, one profile per thread.
 */
#include "out_speedscope.h"
#include "spanrows.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* speedscope's units; anything else is a plain count. */
static const char *unit_of(const char *unit)
{
    return !strcmp(unit, "nanoseconds") || !strcmp(unit, "bytes") ? unit : "none";
}

struct run {
    FILE *f;
    const struct profile *p;
    u32 *index;                 /* profile frame -> speedscope frame + 1 */
    u32 *order;                 /* speedscope frame -> profile frame */
    u32 n_frames;
    int n_entries;              /* of the current profile */
};

static void put_stack(struct run *r, u32 stack, u64 weight, FILE *weights)
{
    size_t n;
    const u32 *fr = profile__get_stack(r->p, stack, &n);
    fputs(r->n_entries++ ? ",[" : "[", r->f);
    for (size_t k = 0; k < n; k++) {
        if (!r->index[fr[k]]) {
            r->order[r->n_frames] = fr[k];
            r->index[fr[k]] = ++r->n_frames;
        }
        fprintf(r->f, k ? ",%" PRIu32 : "%" PRIu32, r->index[fr[k]] - 1);
    }
    fputc(']', r->f);
    fprintf(weights, r->n_entries > 1 ? ",%" PRIu64 : "%" PRIu64, weight);
}

/* One thread's "sampled" profile; weights go to a memory stream first
 * because the format lists all stacks, then all weights. */
static void put_thread(struct run *r, u32 thread, const struct ptimed *timed, size_t n_timed)
{
    const struct pthread *t = profile__get_thread(r->p, thread);
    const struct value_type *vt = profile__type(r->p, profile__weight(r->p));
    size_t wi = profile__weight(r->p);
    char *wbuf = NULL;
    size_t wlen = 0;
    u64 total = 0;
    FILE *w = open_memstream(&wbuf, &wlen);
    if (!w)
        util__out_of_memory();      /* its only failure */
    fputs("{\"type\":\"sampled\",\"name\":", r->f);
    if (t->pid || t->tid) {
        char label[64];
        snprintf(label, sizeof label, "-%" PRIu32 "/%" PRIu32, t->pid, t->tid);
        char *s = xmalloc(strlen(t->comm) + sizeof label);
        strcpy(s, t->comm);
        strcat(s, label);
        put_json_string(r->f, s, strlen(s));
        free(s);
    } else {
        const char *s = profile__get_frame(r->p, t->label)->name;
        put_json_string(r->f, s, strlen(s));
    }
    fprintf(r->f, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":", unit_of(vt->unit));
    r->n_entries = 0;
    /* endValue comes before the stacks: they go to a memory stream too */
    char *sbuf = NULL;
    size_t slen = 0;
    FILE *main = r->f;
    FILE *sf = open_memstream(&sbuf, &slen);
    if (!sf)
        util__out_of_memory();
    r->f = sf;
    if (timed) {
        for (size_t i = 0; i < n_timed;) {
            if (timed[i].thread != thread || timed[i].weight == 0) {
                i++;
                continue;
            }
            u32 stack = timed[i].stack;
            u64 sum = 0;
            size_t j = i;
            /* a run of one stack in this thread, other threads' samples between are skipped */
            while (j < n_timed && (timed[j].thread != thread || timed[j].stack == stack)) {
                if (timed[j].thread == thread)
                    sum += timed[j].weight;
                j++;
            }
            put_stack(r, stack, sum, w);
            total += sum;
            i = j;
        }
    } else {
        for (size_t i = 0; i < profile__n_samples(r->p); i++) {
            const struct psample *s = profile__sample(r->p, i);
            if (s->thread != thread || s->v[wi] == 0)
                continue;
            put_stack(r, s->stack, s->v[wi], w);
            total += s->v[wi];
        }
    }
    r->f = main;
    int full = fclose(sf) != 0;
    full |= fclose(w) != 0;
    if (full)           /* a memory stream fails for want of memory only */
        util__out_of_memory();
    fprintf(main, "%" PRIu64 ",\"samples\":[", total);
    fwrite(sbuf, 1, slen, main);
    fputs("],\"weights\":[", main);
    fwrite(wbuf, 1, wlen, main);
    fputs("]}", main);
    free(sbuf);
    free(wbuf);
}

static void put_event(FILE *f, const char *type, u32 frame, u64 at)
{
    fprintf(f, ",{\"type\":\"%s\",\"frame\":%" PRIu32 ",\"at\":%" PRIu64 "}", type, frame, at);
}

/* One track's "evented" profile: its spans opened and closed in time
 * order, nested; a span's frame is its name's, after the profile's
 * frames (first). */
static void put_track(FILE *f, const struct span_one *s, size_t n, u32 first, u64 t0, size_t *open)
{
    u64 last = 0;
    size_t depth = 0;
    char label[64];
    for (size_t i = 0; i < n; i++)
        last = s[i].end > last ? s[i].end : last;
    fputs("{\"type\":\"evented\",\"name\":", f);
    snprintf(label, sizeof label, "-%" PRIu32 "/%" PRIu32 " spans", s->pid, s->tid);
    char *name = xmalloc(strlen(s->comm ? s->comm : "") + sizeof label + 16);
    sprintf(name, "%s%s", s->comm ? s->comm : "", label);
    if (s->lane)
        sprintf(name + strlen(name), " (%" PRIu32 ")", s->lane + 1);
    put_json_string(f, name, strlen(name));
    free(name);
    fprintf(f, ",\"unit\":\"nanoseconds\",\"startValue\":%" PRIu64 ",\"endValue\":%" PRIu64
            ",\"events\":[{\"type\":\"O\",\"frame\":%" PRIu32 ",\"at\":%" PRIu64 "}",
            s->begin - t0, last - t0, first + s->row, s->begin - t0);
    open[depth++] = 0;
    for (size_t i = 1; i < n; i++) {
        while (depth && s[open[depth - 1]].end <= s[i].begin) {
            depth--;
            put_event(f, "C", first + s[open[depth]].row, s[open[depth]].end - t0);
        }
        put_event(f, "O", first + s[i].row, s[i].begin - t0);
        open[depth++] = i;
    }
    while (depth--)
        put_event(f, "C", first + s[open[depth]].row, s[open[depth]].end - t0);
    fputs("]}", f);
}

/* pyperfmap.span's spans, a profile per track, in ns from the first. */
static void put_span_tracks(FILE *f, const struct span_rows *r, u32 first_frame, int first)
{
    u64 t0 = UINT64_MAX;
    size_t *open = xmalloc((r->n_spans + 1) * sizeof(*open));
    for (size_t i = 0; i < r->n_spans; i++)
        t0 = r->spans[i].begin < t0 ? r->spans[i].begin : t0;
    for (size_t i = 0, j; i < r->n_spans; i = j) {
        for (j = i; j < r->n_spans && r->spans[j].track == r->spans[i].track; j++)
            ;
        fputs(first ? "" : ",", f);
        first = 0;
        put_track(f, &r->spans[i], j - i, first_frame, t0, open);
    }
    free(open);
}

int out_speedscope__write(FILE *f, const struct profile *p, const char *name)
{
    size_t n_timed;
    const struct ptimed *timed = profile__timed(p, &n_timed);
    u32 nf = profile__n_frames(p), nt = profile__n_threads(p);
    struct run r = {f, p, xcalloc(nf + 1, sizeof(u32)), xmalloc((nf + 1) * sizeof(u32)), 0, 0};
    u8 *has = xcalloc(nt + 1, 1);

    for (size_t i = 0; i < profile__n_samples(p); i++)
        if (profile__sample(p, i)->v[profile__weight(p)])
            has[profile__sample(p, i)->thread] = 1;
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",", f);
    fputs("\"exporter\":\"pymerge\",\"name\":", f);
    put_json_string(f, name, strlen(name));
    fputs(",\"activeProfileIndex\":0,\"profiles\":[", f);
    int first = 1;
    for (u32 t = 0; t < nt; t++) {
        if (!has[t])
            continue;
        fputs(first ? "" : ",", f);
        first = 0;
        put_thread(&r, t, timed, n_timed);
    }
    const struct span_rows *spans = profile__span_rows(p);
    if (spans && spans->n_spans)
        put_span_tracks(f, spans, r.n_frames, first);
    fputs("],\"shared\":{\"frames\":[", f);
    for (u32 i = 0; i < r.n_frames; i++) {
        const struct pframe *fr = profile__get_frame(p, r.order[i]);
        fputs(i ? ",{\"name\":" : "{\"name\":", f);
        put_json_string(f, fr->name, strlen(fr->name));
        if (fr->file) {
            fputs(",\"file\":", f);
            put_json_string(f, fr->file, strlen(fr->file));
        }
        if (fr->line)
            fprintf(f, ",\"line\":%u", fr->line);
        fputc('}', f);
    }
    for (size_t i = 0; spans && spans->n_spans && i < spans->n; i++) {
        fputs(r.n_frames || i ? ",{\"name\":" : "{\"name\":", f);
        put_json_string(f, spans->rows[i].name, strlen(spans->rows[i].name));
        fputc('}', f);
    }
    fputs("]}}\n", f);
    free(r.index);
    free(r.order);
    free(has);
    return written(f, 0);
}
