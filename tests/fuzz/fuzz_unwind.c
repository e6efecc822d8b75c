/*
 * fuzz_unwind.c - the CFI compiler (merge/unwind/cfi.c), the DWARF expression
 * evaluator and the unwinder (merge/unwind/unwind_dwarf.c): random registers and
 * stack bytes stepped through the real CFI of a real libpython.
 *
 * The library is "mapped" at BASE (whole file, offset 0); two windows
 * stand for a pyperfmap arena and a CPython -X perf trampoline.  Input:
 * a u32 picking the pc inside the library, a flags byte, the 20 registers
 * perf records for --call-graph dwarf, then the stack copy.  Stack words
 * whose top byte is 0xaa are turned into addresses inside the library, so
 * that walks can go on for several frames.
 */
#include "unwind_dwarf.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BASE 0x7f0000000000ull
#define ARENA 0x500000000000ull        /* pyperfmap trampolines */
#define PERFTRAMP 0x600000000000ull    /* CPython -X perf trampolines */
#define WINDOW 0x10000ull
#define NREGS 20                       /* perf's x86-64 user register mask */
#define REG_MASK 0xff0fffull
#define SP_INDEX 7                     /* sp and ip in perf_event_x86_regs order */
#define IP_INDEX 8

static const char *lib;
static uint64_t lib_size;
static struct unwind_dwarf *u;

static int lookup(void *ctx, uint64_t addr, struct unwind_map *m)
{
    (void)ctx;
    memset(m, 0, sizeof(*m));
    if (addr >= BASE && addr - BASE < lib_size) {
        *m = (struct unwind_map){.kind = UNWIND_MAP_ELF, .start = BASE, .end = BASE + lib_size,
                                 .path = lib, .dso = lib};
        return 0;
    }
    if (addr >= ARENA && addr - ARENA < WINDOW) {
        m->kind = UNWIND_MAP_PYPERFMAP;
        m->start = addr & ~31ull;
        m->end = m->start + 32;
        return 0;
    }
    if (addr >= PERFTRAMP && addr - PERFTRAMP < WINDOW) {
        m->kind = UNWIND_MAP_CPYTHON_PERF;
        m->start = addr & ~4095ull;
        m->end = m->start + 4096;
        return 0;
    }
    return -1;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static const char *const candidates[] = {
        "/root/.pyenv/versions/3.12.1/lib/libpython3.12.so.1.0",
        "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0",
        "/usr/bin/python3",
    };
    (void)argc, (void)argv;
    const char *env = getenv("FUZZ_UNWIND_ELF");
    struct stat st;
    for (size_t i = 0; !lib && i < sizeof(candidates) / sizeof(*candidates); i++)
        if (stat(candidates[i], &st) == 0)
            lib = candidates[i];
    if (env)
        lib = env;
    if (!lib || stat(lib, &st) < 0) {
        fprintf(stderr, "fuzz_unwind: no libpython or python3 (set FUZZ_UNWIND_ELF)\n");
        exit(1);
    }
    lib_size = (uint64_t)st.st_size;
    /* The CFI is read once here; the rules of each address are compiled
     * and cached as the fuzzer reaches it. */
    u = unwind_dwarf__new();
    uint64_t regs[NREGS] = {0}, ips[4];
    regs[SP_INDEX] = 0x7ffd00000000ull;
    regs[IP_INDEX] = BASE + lib_size / 2;
    struct unwind_user user = {PERF_SAMPLE_REGS_ABI_64, REG_MASK, regs, NULL, 0};
    unsigned n;
    (void)unwind_dwarf__walk(u, &user, lookup, NULL, ips, NULL, 4, &n);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint64_t stack[8192 / 8];
    if (size < 5 + 8 * NREGS)
        return 0;
    uint32_t pick;
    memcpy(&pick, data, 4);
    uint8_t flags = data[4];
    uint64_t regs[NREGS];
    memcpy(regs, data + 5, sizeof(regs));
    size_t stack_size = size - 5 - sizeof(regs);
    if (stack_size > sizeof(stack))
        stack_size = sizeof(stack);
    memcpy(stack, data + 5 + sizeof(regs), stack_size);
    for (size_t i = 0; i < stack_size / 8; i++)
        if (stack[i] >> 56 == 0xaa)
            stack[i] = BASE + (uint32_t)stack[i] % lib_size;
    if (!(flags & 1))       /* else the ip as given */
        regs[IP_INDEX] = BASE + pick % lib_size;
    if (!(flags & 2))       /* else the sp as given */
        regs[SP_INDEX] = 0x7ffd00000000ull;
    if (flags & 4)
        regs[IP_INDEX] = ARENA + pick % WINDOW;
    else if (flags & 8)
        regs[IP_INDEX] = PERFTRAMP + pick % WINDOW;
    struct unwind_user user = {PERF_SAMPLE_REGS_ABI_64, REG_MASK, regs,
                               (const uint8_t *)stack, stack_size};
    if (flags & 16)         /* a register mask missing some */
        user.mask &= ~((uint64_t)pick << 8 & 0xfffff);
    uint64_t ips[128];
    struct tramp_ids acts[128];
    unsigned n;
    (void)unwind_dwarf__walk(u, &user, lookup, NULL, ips, acts, 128, &n);
    return 0;
}
