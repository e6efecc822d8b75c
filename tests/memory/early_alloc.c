/*
 * early_alloc.c - a library whose constructor allocates before the malloc
 * interposer's own constructor has run.  Preloaded after it
 * (LD_PRELOAD="libpyperfmap-preload.so libearly-alloc.so"), its malloc
 * calls reach the interposer first, while the dynamic loader runs the
 * later library's constructor first: the interposer must find the next
 * malloc then, from inside that call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((constructor)) static void allocate_early(void)
{
    void *blocks[64];
    for (int i = 0; i < 64; i++) {
        blocks[i] = (i & 1) ? calloc(16, (size_t)i + 1) : malloc((size_t)i * 1000 + 1);
        if (!blocks[i]) {
            fputs("early_alloc: allocation failed\n", stderr);
            exit(3);
        }
        memset(blocks[i], 0x5a, 1);
    }
    blocks[0] = realloc(blocks[0], 100000);
    for (int i = 0; i < 64; i++)
        free(blocks[i]);
}
