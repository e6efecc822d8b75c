/*
 * deepbind_alloc.c - a library for ctypes to load with RTLD_DEEPBIND after
 * start-up (tests/programs/native_keeper.py): its own calls of malloc and
 * free bind to the definitions of its dependencies (libc's) before those
 * of the global scope, where the preloaded interposer is.
 */
#include <stdlib.h>

void *deepbind_malloc(size_t size);
void deepbind_free(void *ptr);

void *deepbind_malloc(size_t size)
{
    return malloc(size);
}

void deepbind_free(void *ptr)
{
    free(ptr);
}
