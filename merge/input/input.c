/* input.c - a recording, a folded file or a pprof profile -> a profile. */
#include "input.h"
#include "in_folded.h"
#include "in_pprof.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* What path holds, from its first bytes. */
static enum input_kind sniff(const char *path)
{
    char magic[8] = {0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return INPUT_PERF;  /* let the reader report why it cannot be opened */
    size_t got = fread(magic, 1, sizeof magic, f);
    fclose(f);
    /* PERFILE2, or its byte-swapped form from the other endianness */
    if (got == sizeof magic && (!memcmp(magic, "PERFILE2", 8) || !memcmp(magic, "2ELIFREP", 8)))
        return INPUT_PERF;
    return pprof_in__is_gzip((const uint8_t *)magic, got) ? INPUT_PPROF : INPUT_FOLDED;
}

/* A folded or pprof file, read whole and parsed into p. */
static int parse_file(struct profile *p, const char *path, enum input_kind kind)
{
    char *buf;
    size_t len;
    int ret = read_whole_file(path, &buf, &len);
    if (ret < 0)
        return ret;
    if (kind == INPUT_PPROF) {
        ret = pprof_in__parse(p, (const uint8_t *)buf, len, path);
    } else if (memchr(buf, 0, len)) {
        warnx_("%s: binary data, not folded stacks (for a perf.data file, leave out --input folded)",
               path);
        ret = -EINVAL;
    } else {
        ret = folded__parse(p, buf, len, path);
    }
    free(buf);
    return ret;
}

int input__load(struct profile **out, const char *path, enum input_kind kind,
                const struct pipeline_opts *o)
{
    struct stat st;
    *out = NULL;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        /* a recording folder (pyperf-record -o DIR): its perf.data */
        size_t n = strlen(path);
        char *data = xmalloc(n + sizeof("/perf.data"));
        snprintf(data, n + sizeof("/perf.data"), "%s/perf.data", path);
        int ret = input__load(out, data, kind == INPUT_AUTO ? INPUT_PERF : kind, o);
        free(data);
        return ret;
    }
    if (kind == INPUT_AUTO)
        kind = strcmp(path, "-") ? sniff(path) : INPUT_PERF;
    if (kind == INPUT_PERF)
        return pipeline__run(path, o, out);
    /* A view chooses among a recording's frames by what each is (Python,
     * interpreter, native); a folded or pprof input has names only, often
     * written in a view already (a diff's baseline): said, not refused. */
    if (o->view.view != VIEW_MIXED)
        warnx_("%s: --view %s applies to perf.data recordings; this %s input keeps the frames"
               " it has", path, o->view.view == VIEW_PYTHON ? "python" : "native",
               kind == INPUT_PPROF ? "pprof" : "folded");
    struct profile *p = profile__new(0);
    if (kind == INPUT_FOLDED && o->weight) {
        /* Folded text does not say what its numbers are: --weight names them. */
        size_t n = strlen(o->weight);
        struct value_type t = {o->weight, n > 3 && !strcmp(o->weight + n - 3, "-ns") ? "nanoseconds"
                                          : strstr(o->weight, "bytes") ? "bytes" : "count"};
        profile__set_types(p, &t, 1, 0);
    }
    int ret = parse_file(p, path, kind);
    if (ret == 0 && kind == INPUT_PPROF && o->weight) {
        int i = profile__find_type(p, o->weight);
        if (i < 0) {
            warnx_("%s: no sample type %s", path, o->weight);
            ret = -EINVAL;
        } else {
            profile__set_weight(p, (size_t)i);
        }
    }
    if (ret < 0) {
        profile__delete(p);
        return ret;
    }
    *out = p;
    return 0;
}
