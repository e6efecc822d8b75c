/*
 * trampoline.h - the machine-code template of a pyperfmap trampoline, one
 * per architecture, and the unwind rule that every copy of it obeys.
 *
 * Both halves of the project include this header: libpyperfmap copies the
 * template into its arenas, and pymerge steps through trampolines with the
 * rule below when it unwinds DWARF stacks.  Keeping the bytes and the rule
 * in one place means the rule cannot drift from the code it describes.
 *
 * A trampoline is called as  tramp(a0, a1, a2, eval, activation)  and
 * tail-calls nothing: it builds a frame record, keeps `activation` in its
 * frame, calls eval(a0, a1, a2) and returns its result.  The point is the
 * distinct return address it leaves on the native stack, which the perf map
 * names after the Python function being evaluated.
 *
 * THE ACTIVATION IDENTITY
 *   `activation` is a number that no other call through any trampoline of
 *   the process has had (the eval hook counts its calls, under the GIL).
 *   The trampoline stores it at CFA - PYPERFMAP_ACTIVATION_CFA_OFFSET while
 *   the rule below says id_saved, and that holds for the whole time the
 *   Python function runs.  So a DWARF stack copy that holds a trampoline
 *   frame also holds which call of that function it is: two samples of one
 *   thread whose copies show the same trampoline with the same number are
 *   inside the same activation, and everything outward of it (its callers)
 *   is the same in both.  pymerge completes stacks that a too-small copy
 *   cut off with that (merge/stitch.h).
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
 *  4: 41 50     push %r8              (the activation, 5th argument: CFA - 24)
 *  6: 41 50     push %r8              (again: keeps the call 16-byte aligned)
 *  8: ff d1     call *%rcx            (eval is the 4th argument)
 * 10: c9        leave                 <- return address of every caller frame
 * 11: c3        ret
 * 12: cc ...    int3 padding to the slot size
 */
#define PYPERFMAP_TRAMPOLINE_SIZE 16u
#define PYPERFMAP_TEMPLATE_BYTES                                    \
    {0x55, 0x48, 0x89, 0xe5, 0x41, 0x50, 0x41, 0x50,                \
     0xff, 0xd1, 0xc9, 0xc3, 0xcc, 0xcc, 0xcc, 0xcc}
#elif defined(__aarch64__)
/*
 * The same frame layout as on x86-64 (fp at CFA - 16, the return address at
 * CFA - 8, the activation at CFA - 24), so one rule describes both:
 *  0: d10083ff  sub sp, sp, #32
 *  4: a9017bfd  stp x29, x30, [sp, #16]
 *  8: f90007e4  str x4, [sp, #8]       (the activation, 5th argument)
 * 12: 910043fd  add x29, sp, #16
 * 16: d63f0060  blr x3                 (eval is the 4th argument)
 * 20: a9417bfd  ldp x29, x30, [sp, #16] <- return address of caller frames
 * 24: 910083ff  add sp, sp, #32
 * 28: d65f03c0  ret
 * (encodings checked with clang --target=aarch64-linux-gnu)
 */
#define PYPERFMAP_TRAMPOLINE_SIZE 32u
#define PYPERFMAP_TEMPLATE_BYTES                                    \
    {0xff, 0x83, 0x00, 0xd1, 0xfd, 0x7b, 0x01, 0xa9,                \
     0xe4, 0x07, 0x00, 0xf9, 0xfd, 0x43, 0x00, 0x91,                \
     0x60, 0x00, 0x3f, 0xd6, 0xfd, 0x7b, 0x41, 0xa9,                \
     0xff, 0x83, 0x00, 0x91, 0xc0, 0x03, 0x5f, 0xd6}
#else
#error "pyperfmap: no trampoline template for this architecture"
#endif

/* Where the activation sits: CFA - 24, under the saved frame pointer. */
#define PYPERFMAP_ACTIVATION_CFA_OFFSET 24u

/*
 * The unwind rule at byte offset `off` of a trampoline.  The canonical frame
 * address is always the stack pointer plus cfa_sp_offset; the caller's frame
 * pointer is saved at CFA - 16 while fp_saved is set (otherwise the frame
 * pointer register still holds the caller's value); the return address is
 * at CFA - 8 when ra_on_stack is set, otherwise in the link register
 * (aarch64 only); the activation is at CFA - PYPERFMAP_ACTIVATION_CFA_OFFSET
 * while id_saved is set, which includes the return address of the call.
 */
struct pyperfmap_unwind_rule {
    unsigned cfa_sp_offset;
    int fp_saved;
    int ra_on_stack;
    int id_saved;
};

static inline struct pyperfmap_unwind_rule pyperfmap_trampoline_rule(unsigned off)
{
    struct pyperfmap_unwind_rule r;
#if defined(__x86_64__) || defined(PYPERFMAP_TEMPLATE_X86_64)
    /* Before the push of %rbp and at the ret, only the return address is
     * on the stack; from the push to the leave, the saved %rbp sits under
     * it, and each push of the activation moves the stack pointer. */
    int framed = off >= 1 && off <= 10;
    r.cfa_sp_offset = !framed ? 8 : off < 6 ? 16 : off < 8 ? 24 : 32;
    r.fp_saved = framed;
    r.ra_on_stack = 1;
    r.id_saved = off >= 6 && off <= 10;
#else
    /* The sub makes the frame, the stp fills it, the ldp and add undo both. */
    r.cfa_sp_offset = off >= 4 && off <= 24 ? 32 : 0;
    r.fp_saved = off >= 8 && off <= 20;
    r.ra_on_stack = r.fp_saved;
    r.id_saved = off >= 12 && off <= 20;
#endif
    return r;
}

#endif /* PYPERFMAP_TRAMPOLINE_H */
