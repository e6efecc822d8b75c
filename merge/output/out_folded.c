/* out_folded.c - render, sort and print folded stacks. */
#include "out_folded.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct line {
    const char *text;       /* NUL-terminated, inside the text buffer */
    u64 weight;
};

static int by_text(const void *a, const void *b)
{
    return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

static void put_name(char **text, size_t *cap, size_t *len, const struct pframe *fm, int annotate)
{
    const char *ann = !annotate ? ""
                      : fm->kind == PK_KERNEL ? "_[k]"
                      : fm->kind == PK_PYTHON || fm->kind == PK_JIT ? "_[j]" : "";
    size_t nl = strlen(fm->name), al = strlen(ann);
    GROW(*text, *cap, *len + nl + al + 2);
    memcpy(*text + *len, fm->name, nl);
    memcpy(*text + *len + nl, ann, al);
    *len += nl + al;
}

int out_folded__write(FILE *f, const struct profile *p, int annotate)
{
    size_t n = profile__n_samples(p), len = 0, cap = 0, wi = profile__weight(p);
    char *text = NULL;
    size_t *starts = xmalloc((n + 1) * sizeof(*starts));
    struct line *lines = xmalloc((n + 1) * sizeof(*lines));

    /* Render into one buffer first: pointers are taken once it stops moving. */
    for (size_t i = 0; i < n; i++) {
        const struct psample *s = profile__sample(p, i);
        size_t depth;
        const u32 *fr = profile__get_stack(p, s->stack, &depth);
        starts[i] = len;
        put_name(&text, &cap, &len, profile__get_frame(p, profile__get_thread(p, s->thread)->label), 0);
        for (size_t k = 0; k < depth; k++) {
            text[len++] = ';';
            put_name(&text, &cap, &len, profile__get_frame(p, fr[k]), annotate);
        }
        GROW(text, cap, len + 1);
        text[len++] = 0;
        lines[i].weight = s->v[wi];
    }
    for (size_t i = 0; i < n; i++)
        lines[i].text = text + starts[i];
    qsort(lines, n, sizeof(*lines), by_text);
    for (size_t i = 0; i < n;) {
        u64 w = lines[i].weight;
        size_t j = i + 1;
        while (j < n && strcmp(lines[j].text, lines[i].text) == 0)
            w += lines[j++].weight;
        if (w)
            fprintf(f, "%s %" PRIu64 "\n", lines[i].text, w);
        i = j;
    }
    free(text);
    free(starts);
    free(lines);
    return written(f, 0);
}
