/* input.c - a recording or a folded file -> a profile. */
#include "input.h"
#include "folded.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int looks_like_perf_data(const char *path)
{
    char magic[8] = {0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return 1;   /* let the reader report why it cannot be opened */
    size_t got = fread(magic, 1, sizeof magic, f);
    fclose(f);
    /* PERFILE2, or its byte-swapped form from the other endianness */
    return got == sizeof magic && (!memcmp(magic, "PERFILE2", 8) || !memcmp(magic, "2ELIFREP", 8));
}

int input__load(struct profile **out, const char *path, enum input_kind kind,
                const struct pipeline_opts *o)
{
    *out = NULL;
    if (kind == INPUT_AUTO)
        kind = strcmp(path, "-") && !looks_like_perf_data(path) ? INPUT_FOLDED : INPUT_PERF;
    if (kind == INPUT_PERF)
        return pipeline__run(path, o, out);
    struct profile *p = profile__new(0);
    int ret = folded__read(p, path);
    if (ret == 0 && o->weight && strcmp(o->weight, "samples") && strcmp(o->weight, "count")) {
        warnx_("%s: folded stacks carry one value (samples); no %s", path, o->weight);
        ret = -EINVAL;
    }
    if (ret < 0) {
        profile__delete(p);
        return ret;
    }
    *out = p;
    return 0;
}
