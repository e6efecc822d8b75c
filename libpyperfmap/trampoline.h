/*
 * trampoline.h - the machine-code template of a pyperfmap trampoline, one
 * per architecture, and the unwind rule that every copy of it obeys.
 *
 * Both halves of the project include this header: libpyperfmap copies the
 * template into its arenas, and pymerge steps through trampolines with the
 * rule below when it unwinds DWARF stacks.  Keeping the bytes and the rule
 * in one place means the rule cannot drift from the code it describes.
 *
 * A trampoline is called as  tramp(a0, a1, a2, eval, activation, parent)
 * and tail-calls nothing: it builds a frame record, keeps `activation` and
 * `parent` in its frame, calls eval(a0, a1, a2) and returns its result.  The point is the
 * distinct return address it leaves on the native stack, which the perf map
 * names after the Python function being evaluated.
 *
 * THE ACTIVATION IDENTITY
 *   `activation` is a number that no other call through any trampoline of
 *   the process has had (the eval hook counts its calls, under the GIL, in
 *   its low 32 bits: unique until the count wraps, and then still paired
 *   with the high 32 bits below).
 *   The trampoline stores it at CFA - PYPERFMAP_ACTIVATION_CFA_OFFSET while
 *   the rule below says id_saved, and that holds for the whole time the
 *   Python function runs.  So a DWARF stack copy that holds a trampoline
 *   frame also holds which call of that function it is: two samples of one
 *   thread whose copies show the same trampoline with the same number are
 *   inside the same activation, and everything outward of it (its callers)
 *   is the same in both.  pymerge completes stacks that a too-small copy
 *   cut off with that (merge/unwind/stitch.h).
 *
 * THE CALLER'S POSITION
 *   The high 32 bits of `activation` say where the calling Python frame was
 *   when it made the call (PYPERFMAP_CALLER_POS): the low 32 bits of base +
 *   offset, where offset is the caller's current instruction, the call, and
 *   base is what the line file (perf-PID.lines beside the map; docs/lines.md)
 *   gives for the caller's code object.  The next trampoline out is the
 *   caller's: its line file entry maps the position to the line of the
 *   call.  A position outside its code (the caller ran without a
 *   trampoline, or was not Python) names no line rather than a wrong one.
 *   It is fixed for the activation, so it leaves the identity one per call;
 *   the hook computes no line, only a load or three and a shift.

 * THE PATH IDENTITY
 *   An activation ends with its call, and a sample cut off deep inside a
 *   short call (a web request) rarely shares it with a sample that reaches
 *   the root.  The same call path recurs, though: every request runs through
 *   the same middlewares.  So each thread also folds its chain of running
 *   trampolines into a 64-bit path, path(t) = pyperfmap_path__step(path of
 *   the caller, key(t)), PYPERFMAP_PATH_ROOT outside any (never 0, which
 *   means "not kept"), and each trampoline keeps its caller's path
 *   (`parent`) at CFA - PYPERFMAP_PARENT_CFA_OFFSET while path_saved.
 *   key(t) is pyperfmap_path__key() of the name the perf map gives t, not
 *   its address, so a path means the same Python functions in every
 *   process: a program run ten times (or forked into workers, which reuse
 *   free slots for other functions) learns from all of its runs.  An
 *   unwinder recomputes each trampoline's own path from `parent` and the
 *   name, and checks it against the next trampoline out: a stack copy that
 *   ends above trampoline t still names the whole Python path outward of
 *   t, which another sample (any process, any time) that went through the
 *   same path can complete.  (Builds before 2026-11-23 folded addresses:
 *   their paths never check out, and complete nothing.)
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
 *  6: 41 51     push %r9              (the caller's path, 6th argument: CFA - 32)
 *  8: ff d1     call *%rcx            (eval is the 4th argument)
 * 10: c9        leave                 <- return address of every caller frame
 * 11: c3        ret
 * 12: cc ...    int3 padding to the slot size
 */
#define PYPERFMAP_TRAMPOLINE_SIZE 16u
#define PYPERFMAP_TEMPLATE_BYTES                                    \
    {0x55, 0x48, 0x89, 0xe5, 0x41, 0x50, 0x41, 0x51,                \
     0xff, 0xd1, 0xc9, 0xc3, 0xcc, 0xcc, 0xcc, 0xcc}
#elif defined(__aarch64__)
/*
 * The same frame layout as on x86-64 (fp at CFA - 16, the return address at
 * CFA - 8, the activation at CFA - 24, the parent path at CFA - 32), so one
 * rule describes both:
 *  0: d10083ff  sub sp, sp, #32
 *  4: a9017bfd  stp x29, x30, [sp, #16]
 *  8: a90013e5  stp x5, x4, [sp]       (the parent path and the activation)
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
     0xe5, 0x13, 0x00, 0xa9, 0xfd, 0x43, 0x00, 0x91,                \
     0x60, 0x00, 0x3f, 0xd6, 0xfd, 0x7b, 0x41, 0xa9,                \
     0xff, 0x83, 0x00, 0x91, 0xc0, 0x03, 0x5f, 0xd6}
#else
#error "pyperfmap: no trampoline template for this architecture"
#endif

/* Where the activation sits: CFA - 24, under the saved frame pointer; the
 * caller's path under it. */
#define PYPERFMAP_ACTIVATION_CFA_OFFSET 24u
#define PYPERFMAP_PARENT_CFA_OFFSET 32u

/* The caller's position in an activation identity (see above). */
#define PYPERFMAP_CALLER_POS(activation) ((unsigned)((activation) >> 32))

/*
 * The path of a call through the trampoline at `entry` from a caller whose
 * path is `parent`.  Two instructions in the hook; a multiply spreads the
 * parent so that f->g and g->f differ.  Not a cryptographic hash: pymerge
 * checks every path it learns against the next trampoline out and refuses
 * a path that two samples complete differently (merge/stitch.c).
 * (Builds of pyperfmap before the path pushed the activation twice, so a
 * parent equal to the activation means "no path".)
 */
#define PYPERFMAP_PATH_ROOT 0x7079706572666d61ull   /* "pyperfma" */

static inline unsigned long long pyperfmap_path__step(unsigned long long parent,
                                                     unsigned long long key)
{
    return parent * 0x9e3779b97f4a7c15ull + key;
}

/* The caller's path back from a trampoline's path and key (the multiplier
 * is odd, so the step is invertible): how pymerge climbs past a trampoline
 * that no stack copy showed. */
static inline unsigned long long pyperfmap_path__unstep(unsigned long long path,
                                                       unsigned long long key)
{
    return (path - key) * 0xf1de83e19937733dull;
}

/* A trampoline's key: 64-bit FNV-1a of its perf-map name, a control byte
 * counted as the space that a reader sees (a map line ends at a newline),
 * and never 0.  Computed once per trampoline, when it is named. */
static inline unsigned long long pyperfmap_path__key(const char *name, unsigned long len)
{
    unsigned long long h = 0xcbf29ce484222325ull;
    for (unsigned long i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        h = (h ^ (c < 0x20 ? 0x20 : c)) * 0x100000001b3ull;
    }
    return h ? h : 1;
}

/*
 * The unwind rule at byte offset `off` of a trampoline.  The canonical frame
 * address is always the stack pointer plus cfa_sp_offset; the caller's frame
 * pointer is saved at CFA - 16 while fp_saved is set (otherwise the frame
 * pointer register still holds the caller's value); the return address is
 * at CFA - 8 when ra_on_stack is set, otherwise in the link register
 * (aarch64 only); the activation is at CFA - PYPERFMAP_ACTIVATION_CFA_OFFSET
 * while id_saved is set, which includes the return address of the call, and
 * the caller's path at CFA - PYPERFMAP_PARENT_CFA_OFFSET while path_saved.
 */
struct pyperfmap_unwind_rule {
    unsigned cfa_sp_offset;
    int fp_saved;
    int ra_on_stack;
    int id_saved;
    int path_saved;
};

static inline struct pyperfmap_unwind_rule pyperfmap_trampoline__rule(unsigned off)
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
    r.path_saved = off >= 8 && off <= 10;
#else
    /* The sub makes the frame, the stp fills it, the ldp and add undo both. */
    r.cfa_sp_offset = off >= 4 && off <= 24 ? 32 : 0;
    r.fp_saved = off >= 8 && off <= 20;
    r.ra_on_stack = r.fp_saved;
    r.id_saved = off >= 12 && off <= 20;
    r.path_saved = r.id_saved;     /* one stp stores both */
#endif
    return r;
}

#endif /* PYPERFMAP_TRAMPOLINE_H */
