/* badchain.c - a frame-pointer chain whose next return address is -1:
 * spin() builds a frame record {0, -1} on its stack and points %rbp at it
 * while it runs, so the kernel's walk of the user stack stores -1 after
 * the sampled ip: an entry above PERF_CONTEXT_MAX that names no context.
 * perf discards such a chain whole, kernel frames too.  x86-64 only. */
#include <stdlib.h>

void spin(unsigned long n);
__asm__(".text\n"
        ".globl spin\n"
        ".type spin, @function\n"
        "spin:\n"
        "    push %rbp\n"
        "    push $-1\n"
        "    push $0\n"
        "    mov %rsp, %rbp\n"
        "1:  dec %rdi\n"
        "    jnz 1b\n"
        "    add $16, %rsp\n"
        "    pop %rbp\n"
        "    ret\n"
        ".size spin, .-spin\n");

int main(int argc, char **argv)
{
    spin(argc > 1 ? strtoul(argv[1], NULL, 10) : 300000000ul);
    return 0;
}
