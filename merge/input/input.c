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

/* A bare (not gzip'd) profile.proto message: every writer puts its
 * sample types first, so it opens with field 1's tag (0x0a), a length, and
 * the ValueType's own first tag (0x08), control bytes that no folded text
 * starts with. */
static int bare_pprof(const uint8_t *b, size_t got)
{
    if (got < 3 || b[0] != 0x0a)
        return 0;
    size_t i = 1;
    while (i < got && i < 4 && (b[i] & 0x80))     /* the length's varint */
        i++;
    return i + 1 < got && b[i + 1] == 0x08;
}

/* Folded stacks: text whose first line is "STACK COUNT". */
static int folded_text(const char *b, size_t got)
{
    if (memchr(b, 0, got))
        return 0;
    const char *nl = memchr(b, '\n', got);
    size_t len = nl ? (size_t)(nl - b) : got;
    if (len && b[len - 1] == '\r')
        len--;
    size_t digits = 0;
    while (digits < len && b[len - 1 - digits] >= '0' && b[len - 1 - digits] <= '9')
        digits++;
    return digits > 0 && digits < len && b[len - 1 - digits] == ' ';
}

enum input_kind input__kind_of(const uint8_t *head, size_t got)
{
    /* PERFILE2, or its byte-swapped form from the other endianness */
    if (got >= 8 && (!memcmp(head, "PERFILE2", 8) || !memcmp(head, "2ELIFREP", 8)))
        return INPUT_PERF;
    if (pprof_in__is_gzip(head, got) || bare_pprof(head, got))
        return INPUT_PPROF;
    return folded_text((const char *)head, got) ? INPUT_FOLDED : INPUT_AUTO;
}

/* What path holds, from its first bytes (*empty: not a byte). */
static enum input_kind sniff(const char *path, int *empty)
{
    uint8_t head[INPUT_HEAD];
    FILE *f = fopen(path, "rb");
    if (!f)
        return INPUT_PERF;  /* let the reader report why it cannot be opened */
    size_t got = fread(head, 1, sizeof head, f);
    fclose(f);
    *empty = got == 0;
    return input__kind_of(head, got);
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
    int empty = 0;
    if (kind == INPUT_AUTO)
        kind = strcmp(path, "-") ? sniff(path, &empty) : INPUT_PERF;
    if (kind == INPUT_AUTO) {
        warnx_("%s: %s, not a perf.data file (no PERFILE2 magic), a pprof profile (gzip or "
               "protobuf) or folded stacks (\"STACK COUNT\" lines)", path,
               empty ? "empty" : "unrecognized bytes");
        return -EINVAL;
    }
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
