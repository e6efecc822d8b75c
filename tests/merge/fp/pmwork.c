/* pmwork.c - the shared-library half of the pymerge test program: frames
 * that must be named from a second ELF file. */
#include "pmwork.h"

/* Tests that rebuild the library give each build its own build id. */
#ifdef PMTAG
const char pm_tag[] = PMTAG;
#endif

/* noinline keeps each function a frame of its own at -O1. */
__attribute__((noinline)) unsigned long lib_inner(unsigned long n)
{
    unsigned long x = 1;
    for (unsigned long i = 0; i < n; i++)
        x = x * 6364136223846793005UL + i;
    return x;
}

__attribute__((noinline)) unsigned long lib_work(unsigned long n)
{
    return lib_inner(n) ^ lib_inner(n / 2);
}
