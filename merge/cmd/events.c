/* events.c - list a recording's events and their fields (see events.h). */
#include "events.h"
#include "perfdata.h"
#include "tracedata.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int events__list(const char *path, FILE *out)
{
    const char *shown = strcmp(path, "-") ? path : "<stdin>";
    struct perf_reader *r = perf_reader__open(path);     /* says why it fails */
    if (!r)
        return -EINVAL;
    u64 *count = NULL;
    size_t cap = 0;
    struct pd_event ev;
    int k;
    while ((k = perf_reader__next(r, &ev)) > 0) {
        if (ev.type != PD_SAMPLE)
            continue;
        size_t i = ev.u.sample.attr_idx, old = cap;
        if (i >= cap) {
            GROW(count, cap, i + 1);
            memset(count + old, 0, (cap - old) * sizeof(*count));
        }
        count[i]++;
    }
    if (k < 0) {
        free(count);
        perf_reader__delete(r);
        return -EINVAL;
    }
    size_t tsize;
    const void *tdata = perf_reader__tracing_data(r, &tsize);
    struct tracedata *td = tdata ? tracedata__new(tdata, tsize) : NULL;
    if (tdata && !td)
        warnx_("%s: tracing data unreadable: fields are unknown", shown);
    for (size_t i = 0; i < perf_reader__n_attrs(r); i++) {
        const struct pd_attr *a = perf_reader__attr(r, i);
        fprintf(out, "%s: %" PRIu64 " samples", a->name, i < cap ? count[i] : 0);
        if (a->lost)
            fprintf(out, ", %" PRIu64 " lost", a->lost);
        fputc('\n', out);
        struct td_field_info fi;
        for (size_t f = 0; td && a->attr.type == PERF_TYPE_TRACEPOINT &&
                           tracedata__field_info(td, a->attr.config, f, &fi) == 0; f++)
            fprintf(out, "  %-24s %s%s\n", fi.name, fi.type, fi.numeric ? "  (numeric)" : "");
    }
    tracedata__delete(td);
    free(count);
    perf_reader__delete(r);
    return fflush(out) == 0 && !ferror(out) ? 0 : -EIO;
}
