/*
 * folded.c - parse, sort and merge folded stacks.
 */
#include "folded.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int by_text(const void *a, const void *b)
{
    return strcmp(((const struct folded_line *)a)->text, ((const struct folded_line *)b)->text);
}

int folded__parse(struct folded *fd, char *text, size_t len, const char *name)
{
    size_t cap = 0, lineno = 0;
    memset(fd, 0, sizeof(*fd));
    fd->text = text;
    for (char *p = text, *end = text + len; p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *e = nl ? nl : end;
        lineno++;
        if (e > p && e[-1] == '\r')
            e[-1] = 0, e--;
        *e = 0;
        if (e > p) {
            char *sp = strrchr(p, ' ');
            char *num_end = NULL;
            errno = 0;
            unsigned long long w = sp ? strtoull(sp + 1, &num_end, 10) : 0;
            if (!sp || sp == p || num_end == sp + 1 || *num_end || errno || sp[1] == '-') {
                warnx_("%s: line %zu: not a folded stack (\"frame;frame;... COUNT\")", name, lineno);
                folded__exit(fd);
                return -1;
            }
            *sp = 0;
            GROW(fd->lines, cap, fd->n + 1);
            fd->lines[fd->n++] = (struct folded_line){p, w};
        }
        p = e + 1;
    }
    if (fd->n)
        qsort(fd->lines, fd->n, sizeof(*fd->lines), by_text);
    /* Sum duplicates in place: other tools' output need not be distinct. */
    size_t out = 0;
    for (size_t i = 0; i < fd->n; i++) {
        if (out && strcmp(fd->lines[out - 1].text, fd->lines[i].text) == 0)
            fd->lines[out - 1].weight += fd->lines[i].weight;
        else
            fd->lines[out++] = fd->lines[i];
        fd->total += fd->lines[i].weight;
    }
    fd->n = out;
    fd->cum = xmalloc((fd->n + 1) * sizeof(*fd->cum));
    fd->cum[0] = 0;
    for (size_t i = 0; i < fd->n; i++)
        fd->cum[i + 1] = fd->cum[i] + fd->lines[i].weight;
    return 0;
}

int folded__read(struct folded *fd, const char *path)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        warnx_("%s: %s", path, strerror(errno));
        return -1;
    }
    size_t len = 0, cap = 4096;
    char *buf = xmalloc(cap);
    for (;;) {
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
        if (cap - len < 2)
            GROW(buf, cap, cap + 1);
    }
    int err = ferror(f);
    if (f != stdin)
        fclose(f);
    if (err) {
        warnx_("%s: read error", path);
        free(buf);
        return -1;
    }
    buf[len] = 0;
    if (memchr(buf, 0, len)) {
        warnx_("%s: binary data, not folded stacks (for a perf.data file, leave out --input folded)",
               path);
        free(buf);
        return -1;
    }
    return folded__parse(fd, buf, len, path);
}

/* First line >= key (bytewise), by binary search. */
static size_t lower_bound(const struct folded *fd, const char *key, size_t len)
{
    size_t lo = 0, hi = fd->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *t = fd->lines[mid].text;
        size_t tl = strlen(t);
        int c = memcmp(t, key, tl < len ? tl : len);
        if (c < 0 || (c == 0 && tl < len))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

uint64_t folded__weight_under(const struct folded *fd, const char *prefix, size_t len)
{
    /* The stack "prefix" itself, then the stacks "prefix;...": contiguous
     * in bytewise order, from "prefix;" up to "prefix<" (';' + 1). */
    uint64_t w = 0;
    size_t i = lower_bound(fd, prefix, len);
    if (i < fd->n && strlen(fd->lines[i].text) == len && !memcmp(fd->lines[i].text, prefix, len))
        w += fd->lines[i].weight;
    char *key = xmalloc(len + 1);
    memcpy(key, prefix, len);
    key[len] = ';';
    size_t from = lower_bound(fd, key, len + 1);
    key[len] = ';' + 1;
    size_t to = lower_bound(fd, key, len + 1);
    free(key);
    return w + fd->cum[to] - fd->cum[from];
}

void folded__exit(struct folded *fd)
{
    free(fd->lines);
    free(fd->cum);
    free(fd->text);
    memset(fd, 0, sizeof(*fd));
}

enum annotation folded__annotation(const char *name, size_t *len)
{
    static const char kinds[] = "kji";   /* in the order of enum annotation, from 1 */
    const char *k;
    if (*len > 4 && !memcmp(name + *len - 4, "_[", 2) && name[*len - 1] == ']'
        && (k = strchr(kinds, name[*len - 2])) != NULL && *k) {
        *len -= 4;
        return (enum annotation)(k - kinds + 1);
    }
    return ANN_NONE;
}
