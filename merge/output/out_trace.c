/* out_trace.c - spans -> Chrome trace-event JSON (see out_trace.h). */
#include "out_trace.h"
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

int out_trace__write(FILE *f, const struct profile *p, const char *name)
{
    size_t n;
    const struct ptimed *t = profile__timed(p, &n);
    u32 nt = profile__n_threads(p);
    u8 *used = xcalloc(nt + 1, 1);
    u64 t0 = UINT64_MAX;
    int first = 1;

    for (size_t i = 0; i < n; i++)
        if (t[i].end > t[i].time) {
            used[t[i].thread] = 1;
            if (t[i].time < t0)
                t0 = t[i].time;
        }
    fputs("{\"traceEvents\":[", f);
    /* Each process once, named after its main thread (tid = pid) when
     * that has a name here; then each thread. */
    for (u32 i = 0; i < nt; i++) {
        const struct pthread *th = profile__get_thread(p, i);
        if (used[i] != 1)
            continue;
        const char *comm = th->comm;
        for (u32 j = 0; j < nt; j++) {
            const struct pthread *o = profile__get_thread(p, j);
            if (o->pid != th->pid)
                continue;
            used[j] |= 2;
            if (o->tid == o->pid)
                comm = o->comm;
        }
        put_meta(f, "process_name", th->pid, th->pid, comm, &first);
    }
    for (u32 i = 0; i < nt; i++) {
        const struct pthread *th = profile__get_thread(p, i);
        if (used[i] & 1)
            put_meta(f, "thread_name", th->pid, th->tid, th->comm, &first);
    }
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
