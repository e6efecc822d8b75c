/*
 * in_folded.c - parse folded stacks into the profile model.
 */
#include "in_folded.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct fline {
    const char *text;
    size_t len;             /* without the count */
    u64 weight;
};

static int by_text(const void *a, const void *b)
{
    const struct fline *x = a, *y = b;
    int c = memcmp(x->text, y->text, x->len < y->len ? x->len : y->len);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* flamegraph.pl's frame annotations: takes a kind's suffix off *len. */
static enum pkind annotation(const char *name, size_t *len)
{
    if (*len > 4 && !memcmp(name + *len - 4, "_[", 2) && name[*len - 1] == ']') {
        switch (name[*len - 2]) {
        case 'k': *len -= 4; return PK_KERNEL;
        case 'j': *len -= 4; return PK_PYTHON;
        case 'i': *len -= 4; return PK_NATIVE;
        }
    }
    return PK_NATIVE;
}

/* One line's stack into p. */
static void add_line(struct profile *p, const struct fline *l, u32 **fr, size_t *cap)
{
    const char *s = l->text, *end = l->text + l->len;
    const char *e = memchr(s, ';', l->len);
    size_t tlen = e ? (size_t)(e - s) : l->len;
    char *label = xmalloc(tlen + 1);
    memcpy(label, s, tlen);
    label[tlen] = 0;
    u32 thread = profile__thread(p, 0, 0, label, label);
    free(label);
    size_t n = 0;
    while (e) {
        s = e + 1;
        e = memchr(s, ';', (size_t)(end - s));
        size_t len = e ? (size_t)(e - s) : (size_t)(end - s);
        enum pkind k = annotation(s, &len);
        GROW(*fr, *cap, n + 1);
        (*fr)[n++] = profile__frame(p, s, len, k, NULL);
    }
    u64 v = l->weight;
    profile__add(p, thread, profile__stack(p, *fr, n), 0, &v);
}

int folded__parse(struct profile *p, const char *text, size_t len, const char *name)
{
    struct fline *lines = NULL;
    size_t n = 0, cap = 0, lineno = 0;
    for (const char *q = text, *end = text + len; q < end;) {
        const char *nl = memchr(q, '\n', (size_t)(end - q));
        const char *e = nl ? nl : end;
        lineno++;
        if (e > q && e[-1] == '\r')
            e--;
        if (e > q) {
            const char *sp = e;
            while (sp > q && sp[-1] != ' ')
                sp--;
            u64 w = 0;
            int ok = sp > q + 1 && sp < e;
            for (const char *d = sp; ok && d < e; d++) {
                ok = *d >= '0' && *d <= '9' && w <= (UINT64_MAX - 9) / 10;
                w = w * 10 + (u64)(*d - '0');
            }
            if (!ok || memchr(q, 0, (size_t)(e - q))) {
                warnx_("%s: line %zu: not a folded stack (\"frame;frame;... COUNT\")", name, lineno);
                free(lines);
                return -EINVAL;
            }
            GROW(lines, cap, n + 1);
            lines[n++] = (struct fline){q, (size_t)(sp - 1 - q), w};
        }
        q = nl ? nl + 1 : end;     /* not e: a final "\r" moved it */
    }
    /* Sorted as pymerge's own output is, so that every input lists its
     * stacks in one order. */
    if (n)
        qsort(lines, n, sizeof(*lines), by_text);
    u32 *fr = NULL;
    size_t fcap = 0;
    for (size_t i = 0; i < n; i++)
        add_line(p, &lines[i], &fr, &fcap);
    free(fr);
    free(lines);
    return 0;
}
