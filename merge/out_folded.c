/* out_folded.c - render, sort and print folded stacks. */
#include "out_folded.h"
#include "util.h"

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

int out_folded__write(FILE *f, const struct stacks *st, const struct symbols *sy,
                      const struct folded_opts *o)
{
    size_t n_stacks = stacks__count(st), len = 0, cap = 0;
    char *text = NULL;
    size_t *starts = xmalloc((n_stacks + 1) * sizeof(*starts));
    struct line *lines = xmalloc((n_stacks + 1) * sizeof(*lines));

    /* Render into one buffer first: pointers are taken once it stops moving. */
    for (size_t i = 0; i < n_stacks; i++) {
        size_t n;
        u64 w;
        const u32 *fr = stacks__get(st, i, &n, &w);
        starts[i] = len;
        for (size_t k = 0; k < n; k++) {
            const struct frame *fm = symbols__get(sy, fr[k]);
            const char *name = o->display_names ? fm->display : fm->name;
            const char *ann = !o->annotate ? ""
                              : fm->kind == FRAME_KERNEL ? "_[k]"
                              : fm->kind == FRAME_PYTHON || fm->kind == FRAME_JIT ? "_[j]" : "";
            size_t nl = strlen(name), al = strlen(ann);
            GROW(text, cap, len + nl + al + 2);
            if (k)
                text[len++] = ';';
            memcpy(text + len, name, nl);
            memcpy(text + len + nl, ann, al);
            len += nl + al;
        }
        GROW(text, cap, len + 1);
        text[len++] = 0;
        lines[i].weight = w;
    }
    for (size_t i = 0; i < n_stacks; i++)
        lines[i].text = text + starts[i];
    qsort(lines, n_stacks, sizeof(*lines), by_text);
    for (size_t i = 0; i < n_stacks;) {
        u64 w = lines[i].weight;
        size_t j = i + 1;
        while (j < n_stacks && strcmp(lines[j].text, lines[i].text) == 0)
            w += lines[j++].weight;
        fprintf(f, "%s %" PRIu64 "\n", lines[i].text, w);
        i = j;
    }
    free(text);
    free(starts);
    free(lines);
    return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}
