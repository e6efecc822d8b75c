/* badchain.c - frame-pointer chains with stray words a kernel walk of the
 * user stack stores as they are.  x86-64 only.
 *
 * spin() builds a frame record {0, -1} on its stack and points %rbp at it
 * while it runs, so the chain holds -1 after the sampled ip: an entry above
 * PERF_CONTEXT_MAX that names no context.  perf discards such a chain
 * whole, kernel frames too.  `badchain N guest` stores PERF_CONTEXT_GUEST
 * (-2048) instead, which perf takes for corruption too.
 *
 * spin_context() (`badchain N context`) builds {&next, PERF_CONTEXT_KERNEL}
 * and next = {0, its own address}: the chain switches to kernel mode, and
 * its last entry is a user address taken for a kernel one, which perf finds
 * in no map and names [unknown]. */
#include <stdlib.h>
#include <string.h>

void spin(unsigned long n, unsigned long word);
__asm__(".text\n"
        ".globl spin\n"
        ".type spin, @function\n"
        "spin:\n"
        "    push %rbp\n"
        "    push %rsi\n"
        "    push $0\n"
        "    mov %rsp, %rbp\n"
        "1:  dec %rdi\n"
        "    jnz 1b\n"
        "    add $16, %rsp\n"
        "    pop %rbp\n"
        "    ret\n"
        ".size spin, .-spin\n");

void spin_context(unsigned long n);
__asm__(".text\n"
        ".globl spin_context\n"
        ".type spin_context, @function\n"
        "spin_context:\n"
        "    push %rbp\n"
        "    lea spin_context(%rip), %rax\n"
        "    push %rax\n"
        "    push $0\n"
        "    mov %rsp, %rax\n"
        "    push $-128\n"
        "    push %rax\n"
        "    mov %rsp, %rbp\n"
        "1:  dec %rdi\n"
        "    jnz 1b\n"
        "    add $32, %rsp\n"
        "    pop %rbp\n"
        "    ret\n"
        ".size spin_context, .-spin_context\n");

int main(int argc, char **argv)
{
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 300000000ul;
    if (argc > 2 && strcmp(argv[2], "context") == 0)
        spin_context(n);
    else
        spin(n, argc > 2 && strcmp(argv[2], "guest") == 0 ? (unsigned long)-2048 : (unsigned long)-1);
    return 0;
}
