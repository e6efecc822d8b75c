/*
 * unwind_dwarf.c - step from frame to frame through the copied user stack.
 * See unwind_dwarf.h for the contract.
 */
#include "unwind_dwarf.h"

#include "cfi.h"
#include "idmap.h"
#include "util.h"

#include <dwarf.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* perf.data from x86-64 is what we unwind, whatever we run on. */
#define PYPERFMAP_TEMPLATE_X86_64 1
#include "../../libpyperfmap/trampoline.h"

/*
 * CPython 3.12/3.13's x86-64 -X perf trampoline (Python/asm_trampoline.S):
 *   0: 48 83 ec 08   sub  $8,%rsp
 *   4: ff d1         call *%rcx
 *   6: 48 83 c4 08   add  $8,%rsp     <- return address of caller frames
 *  10: c3            ret
 * Between the sub and the ret the CFA is sp + 16, elsewhere sp + 8; the
 * return address is at CFA - 8 and no callee-saved register is touched.
 */
#define CPYTHON_TRAMP_SUB_END 4
#define CPYTHON_TRAMP_RET 10

/* Bounds on one expression, so looping CFI cannot hang a walk. */
#define MAX_EXPR_STEPS 256
#define EXPR_STACK 16
/* Memory just above the stack copy is the rest of the same stack: a read
 * there means the copy was too small, not that the frame is garbage. */
#define STACK_SLACK (256ULL << 20)

struct unwind_dwarf {
    uint64_t samples, stops[UNWIND_NSTOPS];     /* of unwind_dwarf__sample */
    struct idmap cfis;          /* dso key -> struct cfi, or &no_cfi */
    const void *last_dso;       /* consecutive frames often share a file */
    struct cfi *last_cfi;
    char *failed;               /* the first file without CFI, and why */
    int failed_errno;
};

/* What cfis holds for a file that could not be opened: it is tried once. */
static char no_cfi;

/* One walk in progress: registers of the current frame, and the stack. */
struct walk {
    struct unwind_dwarf *u;
    unwind_lookup_fn lookup;
    void *ctx;
    const uint8_t *stack;
    uint64_t lo, size;          /* the copy covers [lo, lo + size) */
    uint64_t r[CFI_NREGS];
    uint32_t valid;             /* bit i: r[i] is known */
    struct tramp_ids act;       /* the last step's trampoline identities, or 0s */
    struct unwind_map elf;      /* the last ELF mapping looked up (kind 0: none) */
};

/* DWARF register of each perf_event_x86_regs index (AX BX CX DX SI DI BP
 * SP IP FLAGS CS SS DS ES FS GS R8..R15); -1 for those CFI never uses.
 * IP goes to the return-address column: it is the pc of frame 0. */
static const int8_t perf_to_dwarf[24] = {
    0, 3, 2, 1, 4, 5, 6, 7, CFI_REG_RA, -1, -1, -1, -1, -1, -1, -1,
    8, 9, 10, 11, 12, 13, 14, 15,
};

const char *unwind_stop__name(enum unwind_stop stop)
{
    static const char *const names[UNWIND_NSTOPS] = {
        [UNWIND_COMPLETE] = "complete",     [UNWIND_TRUNCATED] = "truncated",
        [UNWIND_NO_REGS] = "no-regs",   [UNWIND_NO_MAP] = "no-map",
        [UNWIND_NO_CFI] = "no-cfi",     [UNWIND_BAD_FRAME] = "bad-frame",
        [UNWIND_DEPTH] = "too-deep",
    };
    return (unsigned)stop < UNWIND_NSTOPS ? names[stop] : "?";
}

struct unwind_dwarf *unwind_dwarf__new(void)
{
    return xcalloc(1, sizeof(struct unwind_dwarf));
}

static void cfi_free(void *v)
{
    if (v != &no_cfi)
        cfi__delete(v);
}

void unwind_dwarf__delete(struct unwind_dwarf *u)
{
    if (!u)
        return;
    idmap__exit_with(&u->cfis, cfi_free);
    free(u->failed);
    free(u);
}

/* The CFI of the file behind an ELF mapping, opened on first use. */
static struct cfi *dso_cfi(struct unwind_dwarf *u, const struct unwind_map *m)
{
    if (m->dso == u->last_dso)
        return u->last_cfi;
    void *v = idmap__get(&u->cfis, (uint64_t)(uintptr_t)m->dso);
    if (!v) {
        v = m->path ? cfi__new(m->path) : cfi__new_image(m->image, m->image_size);
        if (!v && !u->failed) {
            u->failed = xstrdup(m->path ? m->path : "ELF image");
            u->failed_errno = errno;
        }
        if (!v)
            v = &no_cfi;
        idmap__put(&u->cfis, (uint64_t)(uintptr_t)m->dso, v);
    }
    u->last_dso = m->dso;
    u->last_cfi = v == &no_cfi ? NULL : v;
    return u->last_cfi;
}

/* read_mem() beyond the stack copy: the file mapped there, if any. */
static enum unwind_stop read_mapped(struct walk *w, uint64_t addr, unsigned len, uint64_t *val)
{
    struct unwind_map m;
    if (w->lookup(w->ctx, addr, &m) == 0 && m.kind == UNWIND_MAP_ELF) {
        struct cfi *c = dso_cfi(w->u, &m);
        if (c && cfi__read(c, addr - m.start + m.pgoff, val, len) == 0)
            return UNWIND_COMPLETE;
    }
    if (addr >= w->lo + w->size && addr - (w->lo + w->size) < STACK_SLACK)
        return UNWIND_TRUNCATED;
    return UNWIND_BAD_FRAME;
}

/* len bytes at addr from the stack copy alone: 0, or -1 outside it. */
static inline int read_copy(const struct walk *w, uint64_t addr, unsigned len, uint64_t *val)
{
    if (addr < w->lo || w->size < len || addr - w->lo > w->size - len)
        return -1;
    if (len == 8)       /* the common case, as one move */
        memcpy(val, w->stack + (addr - w->lo), 8);
    else
        memcpy(val, w->stack + (addr - w->lo), len);
    return 0;
}

/* Read LEN (<= 8) bytes at ADDR of the sampled process: from the stack
 * copy (one load in the usual case), else from the file mapped there. */
static inline enum unwind_stop read_mem(struct walk *w, uint64_t addr, unsigned len, uint64_t *val)
{
    *val = 0;
    if (read_copy(w, addr, len, val) == 0)
        return UNWIND_COMPLETE;
    return read_mapped(w, addr, len, val);
}

static int reg_known(const struct walk *w, uint64_t reg)
{
    return reg < CFI_NREGS && (w->valid >> reg & 1);
}

/* Index of the operation starting at byte offset TARGET, or -1. */
static long op_at(struct cfi_expr e, uint64_t target)
{
    for (uint32_t i = 0; i < e.nops; i++)
        if (e.ops[i].offset == target)
            return (long)i;
    return -1;
}

/*
 * Evaluate a DWARF expression over the current frame.  Only CFI that
 * libdw cannot reduce to "register + offset" gets here: PLT stubs, signal
 * frames, realigned stacks.  UNWIND_COMPLETE means success.
 */
static enum unwind_stop eval(struct walk *w, struct cfi_expr e, const uint64_t *cfa, uint64_t *out)
{
    uint64_t st[EXPR_STACK];
    int sp = 0;
    long i = 0;
    enum unwind_stop rc;
#define NEED(k) do { if (sp < (k)) return UNWIND_BAD_FRAME; } while (0)
#define PUSH(v) do { uint64_t v_ = (v); if (sp == EXPR_STACK) return UNWIND_BAD_FRAME; st[sp++] = v_; } while (0)
#define BINOP(expr) do { NEED(2); uint64_t b = st[--sp], a = st[sp - 1]; st[sp - 1] = (expr); } while (0)
    for (int steps = 0; i < (long)e.nops; steps++) {
        if (steps == MAX_EXPR_STEPS)
            return UNWIND_BAD_FRAME;
        const struct cfi_op *op = &e.ops[i++];
        uint8_t a = op->atom;
        if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
            PUSH((uint64_t)(a - DW_OP_lit0));
        } else if (a >= DW_OP_breg0 && a <= DW_OP_breg31) {
            if (!reg_known(w, a - DW_OP_breg0))
                return UNWIND_BAD_FRAME;
            PUSH(w->r[a - DW_OP_breg0] + op->n1);
        } else {
            switch (a) {
            case DW_OP_addr: case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u:
            case DW_OP_const2s: case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u:
            case DW_OP_const8s: case DW_OP_constu: case DW_OP_consts:
                PUSH(op->n1);
                break;
            case DW_OP_bregx:
                if (!reg_known(w, op->n1))
                    return UNWIND_BAD_FRAME;
                PUSH(w->r[op->n1] + op->n2);
                break;
            case DW_OP_call_frame_cfa:
                if (!cfa)
                    return UNWIND_BAD_FRAME;
                PUSH(*cfa);
                break;
            case DW_OP_dup: NEED(1); PUSH(st[sp - 1]); break;
            case DW_OP_drop: NEED(1); sp--; break;
            case DW_OP_over: NEED(2); PUSH(st[sp - 2]); break;
            case DW_OP_pick:
                if (op->n1 >= (uint64_t)sp)
                    return UNWIND_BAD_FRAME;
                PUSH(st[sp - 1 - (int)op->n1]);
                break;
            case DW_OP_swap: { NEED(2); uint64_t t = st[sp - 1]; st[sp - 1] = st[sp - 2]; st[sp - 2] = t; break; }
            case DW_OP_rot: {
                NEED(3);
                uint64_t t = st[sp - 1];
                st[sp - 1] = st[sp - 2]; st[sp - 2] = st[sp - 3]; st[sp - 3] = t;
                break;
            }
            case DW_OP_deref: case DW_OP_deref_size: {
                NEED(1);
                unsigned len = a == DW_OP_deref ? 8 : (unsigned)op->n1;
                if (len == 0 || len > 8)
                    return UNWIND_BAD_FRAME;
                if ((rc = read_mem(w, st[sp - 1], len, &st[sp - 1])) != UNWIND_COMPLETE)
                    return rc;
                break;
            }
            case DW_OP_plus_uconst: NEED(1); st[sp - 1] += op->n1; break;
            case DW_OP_neg: NEED(1); st[sp - 1] = -st[sp - 1]; break;
            case DW_OP_not: NEED(1); st[sp - 1] = ~st[sp - 1]; break;
            case DW_OP_abs: NEED(1); if ((int64_t)st[sp - 1] < 0) st[sp - 1] = -st[sp - 1]; break;
            case DW_OP_plus: BINOP(a + b); break;
            case DW_OP_minus: BINOP(a - b); break;
            case DW_OP_mul: BINOP(a * b); break;
            case DW_OP_and: BINOP(a & b); break;
            case DW_OP_or: BINOP(a | b); break;
            case DW_OP_xor: BINOP(a ^ b); break;
            case DW_OP_shl: BINOP(b < 64 ? a << b : 0); break;
            case DW_OP_shr: BINOP(b < 64 ? a >> b : 0); break;
            case DW_OP_shra: BINOP(b < 64 ? (uint64_t)((int64_t)a >> b) : ((int64_t)a < 0 ? ~0ULL : 0)); break;
            case DW_OP_eq: BINOP(a == b); break;
            case DW_OP_ne: BINOP(a != b); break;
            case DW_OP_lt: BINOP((int64_t)a < (int64_t)b); break;
            case DW_OP_gt: BINOP((int64_t)a > (int64_t)b); break;
            case DW_OP_le: BINOP((int64_t)a <= (int64_t)b); break;
            case DW_OP_ge: BINOP((int64_t)a >= (int64_t)b); break;
            case DW_OP_nop: break;
            case DW_OP_skip: case DW_OP_bra: {
                if (a == DW_OP_bra) {
                    NEED(1);
                    if (!st[--sp])
                        break;
                }
                /* The target is relative to the end of this 3-byte op. */
                i = op_at(e, op->offset + 3 + (uint64_t)(int64_t)(int16_t)op->n1);
                if (i < 0)
                    return UNWIND_BAD_FRAME;
                break;
            }
            default:
                return UNWIND_BAD_FRAME;
            }
        }
    }
#undef NEED
#undef PUSH
#undef BINOP
    if (sp < 1)
        return UNWIND_BAD_FRAME;
    *out = st[sp - 1];
    return UNWIND_COMPLETE;
}

/* Index of the lowest set bit of a nonzero mask. */
static unsigned low_bit(uint32_t mask)
{
    return (unsigned)__builtin_ctz(mask);
}

/* The caller's value of register i by one of the rare rules (a register
 * copy, an expression, CFA + offset as a value); UNWIND_COMPLETE on success. */
static enum unwind_stop other_rule(struct walk *w, const struct cfi *c,
                                   const struct cfi_reg_rule *rr, uint64_t cfa, uint64_t *val)
{
    uint64_t addr = cfa + (uint64_t)(int64_t)rr->off;
    enum unwind_stop rc;
    switch (rr->how) {
    case CFI_VAL_CFA:
        *val = addr;
        return UNWIND_COMPLETE;
    case CFI_IN_REG:
        if (!reg_known(w, rr->reg))
            return UNWIND_BAD_FRAME;
        *val = w->r[rr->reg];
        return UNWIND_COMPLETE;
    case CFI_AT_EXPR:
        if ((rc = eval(w, cfi__expr(c, rr->off), &cfa, &addr)) != UNWIND_COMPLETE)
            return rc;
        return read_mem(w, addr, 8, val);
    case CFI_VAL_EXPR:
        return eval(w, cfi__expr(c, rr->off), &cfa, val);
    }
    return UNWIND_BAD_FRAME;
}

/* Registers of the caller of the current frame, by an ELF rule: only
 * those the rule changes are visited.  Only a missing return address or
 * CFA is fatal: other registers just become unknown, which matters only
 * if a caller's CFA needs them. */
static enum unwind_stop step_cfi(struct walk *w, const struct cfi *c, const struct cfi_rule *rule)
{
    uint64_t cfa, nr[CFI_NREGS];
    uint32_t known = 0, m;
    enum unwind_stop rc;
    if (rule->cfa_reg == CFI_CFA_EXPR) {
        if ((rc = eval(w, cfi__expr(c, rule->cfa_off), NULL, &cfa)) != UNWIND_COMPLETE)
            return rc;
    } else {
        if (!reg_known(w, rule->cfa_reg))
            return UNWIND_BAD_FRAME;
        cfa = w->r[rule->cfa_reg] + (uint64_t)(int64_t)rule->cfa_off;
    }
    /* The rare rules read this frame's registers: compute them first. */
    for (m = rule->other; m; m &= m - 1) {
        unsigned i = low_bit(m);
        rc = other_rule(w, c, &rule->regs[i], cfa, &nr[i]);
        if (rc == UNWIND_COMPLETE)
            known |= 1u << i;
        else if (i == CFI_REG_RA)
            return rc;
    }
    /* Saved registers depend on the CFA alone: load them in place.  A slot
     * below this frame's stack pointer was popped: in an epilogue (after
     * `leave` or `pop %rbp`, before `ret`) gcc's CFI still points at the
     * slot, but the register holds the caller's value again, and perf's
     * stack copy starts at sp.  Without this, every sample at such a `ret`
     * of code built with frame pointers loses %rbp and stops its caller. */
    for (m = rule->at_cfa; m; m &= m - 1) {
        unsigned i = low_bit(m);
        uint64_t slot = cfa + (uint64_t)(int64_t)rule->regs[i].off;
        if (i != CFI_REG_RA && reg_known(w, i) && reg_known(w, CFI_REG_RSP) &&
            slot < w->r[CFI_REG_RSP]) {
            known |= 1u << i;
            continue;
        }
        rc = read_mem(w, slot, 8, &w->r[i]);
        if (rc == UNWIND_COMPLETE)
            known |= 1u << i;
        else if (i == CFI_REG_RA)
            return rc;
    }
    for (m = known & rule->other; m; m &= m - 1)
        w->r[low_bit(m)] = nr[low_bit(m)];
    w->valid = (w->valid & ~(rule->undef | rule->at_cfa | rule->other)) | known;
    return UNWIND_COMPLETE;
}

/* The caller of a trampoline frame: the CFA is sp + cfa_off, the return
 * address sits just under it, and rbp under that if the frame saved it.
 * A pyperfmap trampoline's identities, when it has stored them, are below
 * both, so inside the copy whenever they are. */
static enum unwind_stop step_tramp(struct walk *w, unsigned cfa_off, int rbp_saved,
                                   int id_saved, int path_saved)
{
    uint64_t cfa = w->r[CFI_REG_RSP] + cfa_off, ra, rbp = 0;
    enum unwind_stop rc = read_mem(w, cfa - 8, 8, &ra);
    if (rc == UNWIND_COMPLETE && rbp_saved)
        rc = read_mem(w, cfa - 16, 8, &rbp);
    if (id_saved && read_mem(w, cfa - PYPERFMAP_ACTIVATION_CFA_OFFSET, 8, &w->act.activation))
        w->act.activation = 0;
    if (path_saved && read_mem(w, cfa - PYPERFMAP_PARENT_CFA_OFFSET, 8, &w->act.parent))
        w->act.parent = 0;
    /* older x86-64 builds pushed the activation twice: no path (older
     * aarch64 ones left CFA-32 unwritten; what is read there never chains
     * up with the next trampoline out, so stitch.c learns nothing from it) */
    if (w->act.parent == w->act.activation)
        w->act.parent = 0;
    if (rc != UNWIND_COMPLETE)
        return rc;
    w->r[CFI_REG_RA] = ra;
    w->r[CFI_REG_RSP] = cfa;
    if (rbp_saved) {
        w->r[CFI_REG_RBP] = rbp;
        w->valid |= 1u << CFI_REG_RBP;
    }
    return UNWIND_COMPLETE;
}

/* The caller of a frame in code without CFI that made a call: crt's
 * __do_global_dtors_aux, which runs the destructors at exit, and other
 * hand-written assembly.  Such code that calls out mostly keeps a frame
 * pointer, so take %rbp as one, as libdw's x86-64 fallback does.  Only
 * inside the stack copy and up the stack: a guess that leads nowhere ends
 * the walk at the next step, as the missing CFI would have here. */
static enum unwind_stop step_fp(struct walk *w)
{
    uint64_t fp = w->r[CFI_REG_RBP], sp = w->r[CFI_REG_RSP], up, ra;
    if (!reg_known(w, CFI_REG_RBP) || !reg_known(w, CFI_REG_RSP) || fp < sp || fp % 8 ||
        read_copy(w, fp, 8, &up) != 0 || read_copy(w, fp + 8, 8, &ra) != 0)
        return UNWIND_NO_CFI;
    w->r[CFI_REG_RBP] = up;
    w->r[CFI_REG_RSP] = fp + 16;
    w->r[CFI_REG_RA] = ra;
    w->valid |= 1u << CFI_REG_RBP | 1u << CFI_REG_RSP | 1u << CFI_REG_RA;
    return UNWIND_COMPLETE;
}

/* One frame up from pc.  exact: pc is where the frame stopped, not a
 * return address (which is looked up at pc - 1, inside the call).
 * *signal is set when the caller's pc is exact. */
static enum unwind_stop step(struct walk *w, uint64_t pc, int exact, int *signal)
{
    struct unwind_map m;
    uint64_t at = exact ? pc : pc - 1;
    *signal = 0;
    /* Callers often sit in the same library as their callee: ask the
     * lookup only when the last ELF mapping of this walk does not hold at. */
    if (w->elf.kind && at - w->elf.start < w->elf.end - w->elf.start)
        m = w->elf;
    else if (w->lookup(w->ctx, at, &m) != 0)
        return UNWIND_NO_MAP;
    switch (m.kind) {
    case UNWIND_MAP_ELF: {
        struct cfi *c = dso_cfi(w->u, &m);
        w->elf = m;
        uint64_t off = at - m.start + m.pgoff;
        const struct cfi_rule *rule = c ? cfi__rule(c, off) : NULL;
        if (!rule && c && cfi__is_entry(c, off)) {
            w->valid &= ~(1u << CFI_REG_RA);    /* nothing called it */
            return UNWIND_COMPLETE;
        }
        if (!rule)
            return exact ? UNWIND_NO_CFI : step_fp(w);
        *signal = rule->signal;
        return step_cfi(w, c, rule);
    }
    case UNWIND_MAP_PYPERFMAP: {
        struct pyperfmap_unwind_rule r = pyperfmap_trampoline__rule((unsigned)(at - m.start));
        return step_tramp(w, r.cfa_sp_offset, r.fp_saved, r.id_saved, r.path_saved);
    }
    case UNWIND_MAP_CPYTHON_PERF: {
        uint64_t off = at - m.start;
        return step_tramp(w, off >= CPYTHON_TRAMP_SUB_END && off < CPYTHON_TRAMP_RET ? 16 : 8, 0, 0, 0);
    }
    }
    return UNWIND_NO_MAP;
}

static int load_regs(struct walk *w, const struct unwind_user *user)
{
    /* 32-bit processes have other registers and CFI: not handled. */
    if (user->abi != PERF_SAMPLE_REGS_ABI_64 || !user->regs)
        return -1;
    unsigned k = 0;
    for (unsigned i = 0; i < 64; i++) {
        if (!(user->mask >> i & 1))
            continue;
        uint64_t v = user->regs[k++];
        if (i < sizeof(perf_to_dwarf) && perf_to_dwarf[i] >= 0) {
            w->r[perf_to_dwarf[i]] = v;
            w->valid |= 1u << perf_to_dwarf[i];
        }
    }
    uint32_t need = 1u << CFI_REG_RSP | 1u << CFI_REG_RA;
    return (w->valid & need) == need ? 0 : -1;
}

enum unwind_stop unwind_dwarf__walk(struct unwind_dwarf *u, const struct unwind_user *user,
                                    unwind_lookup_fn lookup, void *ctx,
                                    uint64_t *ips, struct tramp_ids *acts, unsigned max,
                                    unsigned *n)
{
    struct walk w = {.u = u, .lookup = lookup, .ctx = ctx, .stack = user->stack,
                     .size = user->stack ? user->stack_size : 0};
    *n = 0;
    if (load_regs(&w, user) != 0)
        return UNWIND_NO_REGS;
    w.lo = w.r[CFI_REG_RSP];
    int exact = 1;  /* frame 0's pc is where it stopped, not after a call */
    for (;;) {
        uint64_t pc = w.r[CFI_REG_RA], sp = w.r[CFI_REG_RSP];
        if (*n == max)
            return UNWIND_DEPTH;
        ips[(*n)++] = pc;
        int signal;
        w.act = (struct tramp_ids){0, 0};
        enum unwind_stop rc = step(&w, pc, exact, &signal);
        if (acts)
            acts[*n - 1] = w.act;
        if (rc != UNWIND_COMPLETE)
            return rc;
        if (!(w.valid >> CFI_REG_RA & 1) || w.r[CFI_REG_RA] == 0)
            return UNWIND_COMPLETE;
        /* Each caller's frame is above its callee's; a signal frame may
         * switch stacks, but then the next real frame must climb again. */
        if (!(w.valid >> CFI_REG_RSP & 1) || (!signal && w.r[CFI_REG_RSP] <= sp))
            return UNWIND_BAD_FRAME;
        exact = signal;
    }
}

int unwind_dwarf__wanted(const struct perf_event_attr *attr)
{
    uint64_t need = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    return (attr->sample_type & need) == need;
}

size_t unwind_dwarf__sample(struct unwind_dwarf *u, const struct pd_sample *s, uint16_t misc,
                            unwind_lookup_fn lookup, void *ctx, struct uframe *out, size_t max,
                            enum unwind_stop *stop)
{
    uint16_t mode = misc & PERF_RECORD_MISC_CPUMODE_MASK;
    size_t n = unwind_fp(s, misc, out, max), k = 0;
    *stop = UNWIND_COMPLETE;
    if (mode == PERF_RECORD_MISC_GUEST_KERNEL || mode == PERF_RECORD_MISC_GUEST_USER)
        return n;   /* the guest's memory was not recorded */
    /* The callchain holds the kernel part (perf asks for no user part);
     * a user-mode sample's chain is just its ip, which frame 0 repeats. */
    for (size_t i = 0; i < n; i++)
        if (out[i].kernel)
            out[k++] = out[i];
    if (!s->regs_abi && mode == PERF_RECORD_MISC_KERNEL)
        return k;   /* a kernel thread */
    struct unwind_user user = {s->regs_abi, s->regs_mask, s->regs, s->stack, s->stack_dyn_size};
    uint64_t ips[UNWIND_MAX_FRAMES];
    struct tramp_ids acts[UNWIND_MAX_FRAMES];
    unsigned m, room = (unsigned)(max - k < UNWIND_MAX_FRAMES ? max - k : UNWIND_MAX_FRAMES);
    if (room == 0)
        return k;
    *stop = unwind_dwarf__walk(u, &user, lookup, ctx, ips, acts, room, &m);
    for (unsigned i = 0; i < m; i++)
        out[k++] = (struct uframe){ips[i], 0, 0, i > 0, acts[i]};
    u->samples++;
    u->stops[*stop]++;
    return k;
}

enum unwind_fp unwind_dwarf__keeps_fp(struct unwind_dwarf *u, unwind_lookup_fn lookup, void *ctx,
                                      uint64_t at, struct unwind_map *map)
{
    if (lookup(ctx, at, map) != 0)
        return UNWIND_FP_UNKNOWN;
    if (map->kind != UNWIND_MAP_ELF)
        return UNWIND_FP_KEPT;      /* trampolines: pyperfmap's push %rbp, CPython's leave it be */
    struct cfi *c = dso_cfi(u, map);
    const struct cfi_rule *rule = c ? cfi__rule(c, at - map->start + map->pgoff) : NULL;
    if (!rule)
        return UNWIND_FP_UNKNOWN;
    return rule->cfa_reg == CFI_REG_RBP ? UNWIND_FP_KEPT : UNWIND_FP_NONE;
}

void unwind_dwarf__summary(const struct unwind_dwarf *u)
{
    if (!u->samples)    /* the unwinder only served unwind_dwarf__keeps_fp */
        return;
    uint64_t n = u->samples ? u->samples : 1;
    uint64_t errors = u->samples - u->stops[UNWIND_COMPLETE] - u->stops[UNWIND_TRUNCATED];
    struct warn_msg w;
    FILE *f = warn_begin(&w);
    fprintf(f, "DWARF unwinding: %.1f%% of user stacks complete, %.1f%% truncated "
            "(stack copy too small), %" PRIu64 " unwinding errors",
            100.0 * u->stops[UNWIND_COMPLETE] / n, 100.0 * u->stops[UNWIND_TRUNCATED] / n, errors);
    const char *sep = " (";
    for (int i = UNWIND_TRUNCATED + 1; i < UNWIND_NSTOPS; i++)
        if (u->stops[i]) {
            fprintf(f, "%s%s %" PRIu64, sep, unwind_stop__name((enum unwind_stop)i), u->stops[i]);
            sep = ", ";
        }
    if (errors)
        fputc(')', f);
    warn_end(&w);
    if (u->failed)
        warnx_("DWARF unwinding: no CFI from %s: %s", u->failed,
               u->failed_errno == ENOEXEC ? "not an ELF file" : strerror(u->failed_errno));
}
