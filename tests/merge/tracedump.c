/*
 * tracedump.c - a test program, not installed: prints every tracepoint
 * sample of a recording with each numeric field as tracedata.c decodes it,
 * one line per sample:
 *
 *   raw_syscalls:sys_exit id=257 ret=-2
 *
 * so that tests/merge/test_events.py can compare the values, sample by
 * sample, with perf script's own decoding.  Signed fields print signed
 * (the sign extension is under test too).  Usage: tracedump FILE|-
 * Exit 0, or 2 with one line on stderr.
 */
#include "perfdata.h"
#include "tracedata.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void dump(struct tracedata *td, const struct pd_sample *s)
{
    uint64_t id = s->attr->attr.config, v;
    const char *name = tracedata__event_name(td, id);
    struct td_field_info fi;
    struct td_field f;

    if (!name)
        return;
    fputs(name, stdout);
    for (size_t i = 0; tracedata__field_info(td, id, i, &fi) == 0; i++) {
        if (!fi.numeric || tracedata__field(td, id, fi.name, &f) < 0)
            continue;
        if (td_field__read(&f, s->raw, s->raw_size, &v) < 0)
            printf(" %s=?", fi.name);
        else if (f.is_signed)
            printf(" %s=%" PRId64, fi.name, (int64_t)v);
        else
            printf(" %s=%" PRIu64, fi.name, v);
    }
    putchar('\n');
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fputs("usage: tracedump FILE|-\n", stderr);
        return 2;
    }
    struct perf_reader *r = perf_reader__open(argv[1]);    /* says why it fails */
    if (!r)
        return 2;
    struct tracedata *td = NULL;
    struct pd_event ev;
    int k;
    while ((k = perf_reader__next(r, &ev)) > 0) {
        if (ev.type != PD_SAMPLE || ev.u.sample.attr->attr.type != PERF_TYPE_TRACEPOINT)
            continue;
        /* In a pipe the formats are a record: there by the first sample. */
        size_t size;
        const void *data = perf_reader__tracing_data(r, &size);
        if (!td && !(td = data ? tracedata__new(data, size) : NULL)) {
            fprintf(stderr, "tracedump: %s: no readable tracing data at the first sample (%s)\n",
                    argv[1], strerror(data ? errno : ENOENT));
            perf_reader__delete(r);
            return 2;
        }
        dump(td, &ev.u.sample);
    }
    tracedata__delete(td);
    perf_reader__delete(r);
    return k < 0 || fflush(stdout) != 0 ? 2 : 0;
}
