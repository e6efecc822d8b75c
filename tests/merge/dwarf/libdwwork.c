/* The shared-library half of the DWARF test program: known functions that
 * burn CPU, called from the executable, some calling back into it. */
#include "dwwork.h"

#include <unistd.h>

volatile unsigned long dw_sink;

__attribute__((noinline)) unsigned long lib_inner(unsigned long n)
{
    unsigned long x = n;
    for (unsigned long i = 0; i < n; i++)
        x = x * 6364136223846793005UL + i;
    dw_sink += x;
    return x + 1;
}

__attribute__((noinline)) unsigned long lib_outer(unsigned long n)
{
    /* A big frame and callee-saved registers in use across the call, so
     * the CFI is more than "cfa = rsp + 8". */
    volatile char pad[512];
    pad[n % sizeof(pad)] = (char)n;
    unsigned long r = lib_inner(n) + pad[n % sizeof(pad)];
    return r * 3 + 1;
}

__attribute__((noinline)) unsigned long lib_syscalls(int fd, unsigned long n)
{
    char c = 'x';
    unsigned long w = 0;
    for (unsigned long i = 0; i < n; i++)
        w += (unsigned long)write(fd, &c, 1);
    return w + 1;
}

__attribute__((noinline)) unsigned long lib_callback(unsigned long (*fn)(unsigned long), unsigned long n)
{
    return fn(n) + 1;
}

/* Tiny, so a loop calling it through the PLT spends a good share of its
 * time in the PLT stub, whose CFI is a DWARF expression. */
__attribute__((noinline)) unsigned long lib_tiny(unsigned long n)
{
    return n * 3 + 1;
}
