/*
 * strarena.h - storage for many small strings that live and die together
 * (symbol names of one table, interned names).  Strings never move, so
 * pointers into the arena stay valid until strarena__exit.  A copied one
 * starts at a multiple of 4 bytes, so it may hold an array of uint32_t.
 */
#ifndef PYMERGE_STRARENA_H
#define PYMERGE_STRARENA_H

#include <stddef.h>

struct strarena {
    char **blocks;
    size_t n_blocks, cap_blocks;
    char *cur;                  /* the block being filled */
    size_t left;                /* bytes free in it */
};

/* Copy s[0..len) plus a NUL into the arena. */
const char *strarena__copy(struct strarena *a, const char *s, size_t len);
/* Take ownership of a malloc'd block (strings already written into it). */
void strarena__adopt(struct strarena *a, char *block);
void strarena__exit(struct strarena *a);   /* frees everything; reusable after */

#endif
