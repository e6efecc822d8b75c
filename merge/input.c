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
    if (o->weight) {
        /* Folded text does not say what its numbers are: --weight names them. */
        size_t n = strlen(o->weight);
        struct value_type t = {o->weight, n > 3 && !strcmp(o->weight + n - 3, "-ns") ? "nanoseconds"
                                          : strstr(o->weight, "bytes") ? "bytes" : "count"};
        profile__set_types(p, &t, 1, 0);
    }
    int ret = folded__read(p, path);
    if (ret < 0) {
        profile__delete(p);
        return ret;
    }
    *out = p;
    return 0;
}
