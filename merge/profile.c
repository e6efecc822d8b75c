/*
 * profile.c - a recording or a folded file -> struct folded.
 *
 * A recording goes through the same pipeline as `pymerge FILE`, into a
 * memory stream, and is parsed back: the writers downstream see one format
 * whichever way the stacks came in.
 */
#include "profile.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
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

int profile__load(struct folded *fd, const char *path, enum input_kind kind,
                  const struct pipeline_opts *o)
{
    memset(fd, 0, sizeof(*fd));
    if (kind == INPUT_AUTO)
        kind = strcmp(path, "-") && !looks_like_perf_data(path) ? INPUT_FOLDED : INPUT_PERF;
    if (kind == INPUT_FOLDED)
        return folded__read(fd, path) ? 2 : 0;
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) {
        warnx_("out of memory");
        return 2;
    }
    int ret = pipeline__run(path, o, mem);
    if (fclose(mem) != 0 && ret == 0) {
        warnx_("out of memory");
        ret = 2;
    }
    if (ret != 0) {
        free(buf);
        return ret;
    }
    return folded__parse(fd, buf, len, path) ? 2 : 0;
}
