/*
 * trampoline.h - the machine-code template of a pyperfmap trampoline, one
 * per architecture, and the unwind rule that every copy of it obeys.
 *
 * Both halves of the project include this header: libpyperfmap copies the
 * template into its arenas, and pymerge steps through trampolines with the
 * rule below when it unwinds DWARF stacks.  Keeping the bytes and the rule
 * in one place means the rule cannot drift from the code it describes.
 *
 * A trampoline is called as  tramp(a0, a1, a2, eval)  and tail-calls nothing:
 * it builds a frame record, calls eval(a0, a1, a2) and returns its result.
 * The point is the distinct return address it leaves on the native stack,
 * which the perf map names after the Python function being evaluated.
 *
 * HOW AN UNWINDER TELLS THAT AN ADDRESS IS A PYPERFMAP TRAMPOLINE
 *   Trampolines live in arenas of PYPERFMAP_ARENA_SIZE bytes, each aligned
 *   to its own size, inside anonymous executable mappings.  The first slot
 *   of every arena is never handed out; the process's perf map names it
 *   PYPERFMAP_ARENA_SYMBOL.  So an address A is a pyperfmap trampoline iff
 *   the perf map has an entry named PYPERFMAP_ARENA_SYMBOL starting at
 *   A & ~(PYPERFMAP_ARENA_SIZE - 1), and A is past that first slot.  The
 *   trampoline's own entry starts at A & ~(PYPERFMAP_TRAMPOLINE_SIZE - 1),
 *   and A's offset inside it selects the unwind rule below.  (CPython's own
 *   -X perf trampolines are also named py::..., but sit in arenas without
 *   the marker, so the two are never confused.)
 */
#ifndef PYPERFMAP_TRAMPOLINE_H
#define PYPERFMAP_TRAMPOLINE_H

#define PYPERFMAP_ARENA_SIZE 65536u
#define PYPERFMAP_ARENA_SYMBOL "pyperfmap::arena"

#if defined(__x86_64__) || defined(PYPERFMAP_TEMPLATE_X86_64)
/*
 *  0: 55        push %rbp
 *  1: 48 89 e5  mov  %rsp,%rbp
 *  4: ff d1     call *%rcx            (eval is the 4th argument)
 *  6: 5d        pop  %rbp             <- return address of every caller frame
 *  7: c3        ret
 *  8: cc ...    int3 padding to the slot size
 */
#define PYPERFMAP_TRAMPOLINE_SIZE 16u
#define PYPERFMAP_TEMPLATE_BYTES                                    \
    {0x55, 0x48, 0x89, 0xe5, 0xff, 0xd1, 0x5d, 0xc3,                \
     0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc}
#elif defined(__aarch64__)
/*
 *  0: a9bf7bfd  stp x29, x30, [sp, #-16]!
 *  4: 910003fd  mov x29, sp
 *  8: d63f0060  blr x3                 (eval is the 4th argument)
 * 12: a8c17bfd  ldp x29, x30, [sp], #16 <- return address of caller frames
 * 16: d65f03c0  ret
 * 20: d4200000  brk #0 padding to the slot size
 */
#define PYPERFMAP_TRAMPOLINE_SIZE 32u
#define PYPERFMAP_TEMPLATE_BYTES                                    \
    {0xfd, 0x7b, 0xbf, 0xa9, 0xfd, 0x03, 0x00, 0x91,                \
     0x60, 0x00, 0x3f, 0xd6, 0xfd, 0x7b, 0xc1, 0xa8,                \
     0xc0, 0x03, 0x5f, 0xd6, 0x00, 0x00, 0x20, 0xd4,                \
     0x00, 0x00, 0x20, 0xd4, 0x00, 0x00, 0x20, 0xd4}
#else
#error "pyperfmap: no trampoline template for this architecture"
#endif

/*
 * The unwind rule at byte offset `off` of a trampoline.  The canonical frame
 * address is always the stack pointer plus cfa_sp_offset; the caller's frame
 * pointer is saved at CFA - 16 while fp_saved is set (otherwise the frame
 * pointer register still holds the caller's value); the return address is
 * at CFA - 8 when ra_on_stack is set, otherwise in the link register
 * (aarch64 only).
 */
struct pyperfmap_unwind_rule {
    unsigned cfa_sp_offset;
    int fp_saved;
    int ra_on_stack;
};

static inline struct pyperfmap_unwind_rule pyperfmap_trampoline_rule(unsigned off)
{
    struct pyperfmap_unwind_rule r;
#if defined(__x86_64__) || defined(PYPERFMAP_TEMPLATE_X86_64)
    /* Before the push and at the ret, only the return address is on the
     * stack; in between, the saved %rbp sits under it. */
    int framed = off >= 1 && off <= 6;
    r.cfa_sp_offset = framed ? 16 : 8;
    r.fp_saved = framed;
    r.ra_on_stack = 1;
#else
    /* The stp both saves the pair and moves sp; the ldp undoes both. */
    int framed = off >= 4 && off <= 12;
    r.cfa_sp_offset = framed ? 16 : 0;
    r.fp_saved = framed;
    r.ra_on_stack = framed;
#endif
    return r;
}

#endif /* PYPERFMAP_TRAMPOLINE_H */
