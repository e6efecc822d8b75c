/* out_trace.c - spans -> Chrome trace-event JSON (see out_trace.h). */
#include "out_trace.h"
#include "idmap.h"
#include "spanrows.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ns as microseconds, exactly: the format's unit, with ns kept. */
static void put_us(FILE *f, u64 ns)
{
    fprintf(f, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

static void put_meta(FILE *f, const char *what, u32 pid, u32 tid, const char *name, int *first)
{
    fprintf(f, "%s\n{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
            ",\"args\":{\"name\":", *first ? "" : ",", what, pid, tid);
    put_json_string(f, name, strlen(name));
    fputs("}}", f);
    *first = 0;
}

static const char *category(u8 kind)
{
    switch (kind) {
    case PK_PYTHON: return "python";
    case PK_NATIVE: return "native";
    case PK_KERNEL: return "kernel";
    case PK_JIT: return "jit";
    default: return "other";    /* [syscall write], [off-cpu: S] */
    }
}

/* A span track's tid: above any real one (pid_max is at most 2^22). */
#define TRACK_TID 0x40000000u

/* Names pid once: after its main thread (tid = pid) when that has a name
 * here, else after fallback, else its first thread's. */
static void name_process(FILE *f, const struct profile *p, struct idmap *named, u32 pid,
                         const char *fallback, int *first)
{
    if (idmap__get(named, pid))
        return;
    idmap__put(named, pid, (void *)1);
    const char *comm = fallback;
    for (u32 j = 0; j < profile__n_threads(p); j++) {
        const struct pthread *o = profile__get_thread(p, j);
        if (o->pid == pid && (o->tid == pid || !comm))
            comm = o->comm;
    }
    char num[24];
    snprintf(num, sizeof num, "%" PRIu32, pid);
    put_meta(f, "process_name", pid, pid, comm ? comm : num, first);
}

/* A span's labels as args, a key set twice (at its entry, then while it
 * ran) with its later value. */
static void put_labels(FILE *f, const char *labels)
{
    int n = 0;
    for (const char *l = labels; *l;) {
        const char *end = strchr(l, '\n'), *next;
        if (!end)
            end = l + strlen(l);
        next = *end ? end + 1 : end;
        const char *eq = memchr(l, '=', (size_t)(end - l));
        size_t klen = (size_t)((eq ? eq : end) - l);
        int later = 0;
        for (const char *o = next; *o && !later;) {
            const char *oe = strchr(o, '\n');
            later = !strncmp(o, l, klen) && (o[klen] == '=' || o[klen] == '\n' || !o[klen]);
            o = oe ? oe + 1 : o + strlen(o);
        }
        if (klen && !later) {
            fputs(n++ ? "," : ",\"args\":{", f);
            put_json_string(f, l, klen);
            fputc(':', f);
            put_json_string(f, eq ? eq + 1 : end, eq ? (size_t)(end - eq - 1) : 0);
        }
        l = next;
    }
    if (n)
        fputc('}', f);
}

/* pyperfmap.span's spans: each track of them a thread of its own, named
 * after the thread the spans ran on, each span a complete event. */
static void put_span_tracks(FILE *f, const struct span_rows *r, u64 t0, int *first)
{
    char name[96];
    for (size_t i = 0; i < r->n_spans; i++) {
        const struct span_one *s = &r->spans[i];
        if (i && s->track == s[-1].track)
            continue;
        int k = snprintf(name, sizeof name, "spans of %.40s %" PRIu32, s->comm ? s->comm : "",
                         s->tid);
        if (s->lane)
            snprintf(name + k, sizeof name - (size_t)k, " (%" PRIu32 ")", s->lane + 1);
        put_meta(f, "thread_name", s->pid, TRACK_TID + s->track, name, first);
    }
    for (size_t i = 0; i < r->n_spans; i++) {
        const struct span_one *s = &r->spans[i];
        const char *what = r->rows[s->row].name;
        fputs(*first ? "\n{\"name\":" : ",\n{\"name\":", f);
        *first = 0;
        put_json_string(f, what, strlen(what));
        fputs(",\"cat\":\"span\",\"ph\":\"X\",\"ts\":", f);
        put_us(f, s->begin - t0);
        fputs(",\"dur\":", f);
        put_us(f, s->end - s->begin);
        fprintf(f, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32, s->pid, TRACK_TID + s->track);
        put_labels(f, s->labels);
        fputc('}', f);
    }
}

int out_trace__write(FILE *f, const struct profile *p, const char *name)
{
    size_t n;
    const struct ptimed *t = profile__timed(p, &n);
    const struct span_rows *r = profile__span_rows(p);
    size_t n_spans = r ? r->n_spans : 0;
    u32 nt = profile__n_threads(p);
    u8 *used = xcalloc(nt + 1, 1);
    u64 t0 = UINT64_MAX;
    int first = 1;
    struct idmap named = {0};

    for (size_t i = 0; i < n; i++)
        if (t[i].end > t[i].time) {
            used[t[i].thread] = 1;
            if (t[i].time < t0)
                t0 = t[i].time;
        }
    for (size_t i = 0; i < n_spans; i++)
        if (r->spans[i].begin < t0)
            t0 = r->spans[i].begin;
    fputs("{\"traceEvents\":[", f);
    for (u32 i = 0; i < nt; i++)
        if (used[i])
            name_process(f, p, &named, profile__get_thread(p, i)->pid, NULL, &first);
    for (size_t i = 0; i < n_spans; i++)
        name_process(f, p, &named, r->spans[i].pid, r->spans[i].comm, &first);
    idmap__exit(&named);
    for (u32 i = 0; i < nt; i++) {
        const struct pthread *th = profile__get_thread(p, i);
        if (used[i])
            put_meta(f, "thread_name", th->pid, th->tid, th->comm, &first);
    }
    if (n_spans)
        put_span_tracks(f, r, t0, &first);
    for (size_t i = 0; i < n; i++) {
        if (t[i].end <= t[i].time)
            continue;
        const struct pthread *th = profile__get_thread(p, t[i].thread);
        size_t depth;
        const u32 *st = profile__get_stack(p, t[i].stack, &depth);
        if (!depth)
            continue;
        const struct pframe *leaf = profile__get_frame(p, st[depth - 1]);
        fputs(first ? "\n{\"name\":" : ",\n{\"name\":", f);
        first = 0;
        put_json_string(f, leaf->name, strlen(leaf->name));
        fprintf(f, ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":", category(leaf->kind));
        put_us(f, t[i].time - t0);
        fputs(",\"dur\":", f);
        put_us(f, t[i].end - t[i].time);
        /* No args (the file): speedscope would append them to every name. */
        fprintf(f, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 "}", th->pid, th->tid);
    }
    if (profile__lost(p)) {     /* a global instant: a line across every thread */
        fprintf(f, "%s\n{\"name\":\"[lost %" PRIu64 " records]\",\"ph\":\"i\",\"s\":\"g\",\"ts\":0,"
                "\"pid\":0,\"tid\":0}", first ? "" : ",", profile__lost(p));
        first = 0;
    }
    fputs("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"exporter\":\"pymerge\",\"source\":", f);
    put_json_string(f, name, strlen(name));
    if (profile__lost(p))
        fprintf(f, ",\"lostRecords\":%" PRIu64, profile__lost(p));
    fputs("}}\n", f);
    free(used);
    return written(f, t0 == UINT64_MAX ? -ENODATA : 0);
}
