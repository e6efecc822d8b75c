/* strarena.c - chunked string storage (see strarena.h). */
#include "strarena.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define BLOCK (64 * 1024)

void strarena__adopt(struct strarena *a, char *block)
{
    GROW(a->blocks, a->cap_blocks, a->n_blocks + 1);
    a->blocks[a->n_blocks++] = block;
}

const char *strarena__copy(struct strarena *a, const char *s, size_t len)
{
    char *dst;
    size_t room = (len + 1 + 3) & ~(size_t)3;  /* the next one stays aligned */
    if (len + 1 > BLOCK / 4) {          /* a long string gets its own block */
        dst = xmalloc(len + 1);
        strarena__adopt(a, dst);
    } else {
        if (a->left < room) {
            a->cur = xmalloc(BLOCK);
            strarena__adopt(a, a->cur);
            a->left = BLOCK;
        }
        dst = a->cur + (BLOCK - a->left);
        a->left -= room;
    }
    if (len)                            /* s may be NULL then */
        memcpy(dst, s, len);
    dst[len] = 0;
    return dst;
}

void strarena__exit(struct strarena *a)
{
    for (size_t i = 0; i < a->n_blocks; i++)
        free(a->blocks[i]);
    free(a->blocks);
    memset(a, 0, sizeof(*a));
}
