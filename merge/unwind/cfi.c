/*
 * cfi.c - compile libdw's call frame information into struct cfi_rule,
 * once per address.  See cfi.h.
 */
#define _POSIX_C_SOURCE 200809L /* O_CLOEXEC */
#include "cfi.h"
#include "elfsyms.h"
#include "idmap.h"
#include "util.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Rules live in fixed blocks so the pointers cfi__rule hands out never
 * move when more rules are added. */
#define RULE_BLOCK 256

struct cfi {
    int fd;                 /* -1 for an image in memory */
    char *copy;             /* that image, ours */
    Elf *elf;
    const uint8_t *image;   /* the whole file, mmap'd by libelf */
    size_t image_size;
    Dwarf_CFI *eh;          /* .eh_frame, ours to dwarf_cfi_end */
    Dwarf *dwarf;           /* for .debug_frame */
    Dwarf_CFI *debug;       /* owned by dwarf */
    struct elf_load *loads;     /* file offsets -> ELF addresses */
    size_t nloads;
    uint64_t entry;         /* e_entry: where the kernel starts the program */

    struct idmap by_off;    /* file offset -> rule, or &no_rule */
    struct idmap by_content;    /* hash of a rule -> the rule */
    struct cfi_rule **blocks;
    size_t nrules, nblocks;

    struct cfi_op *ops;     /* all expressions, back to back */
    size_t nops, ops_cap;
    struct { uint32_t first, n; } *exprs;
    size_t nexprs, exprs_cap;
};

/* What by_off holds for an offset without CFI. */
static const struct cfi_rule no_rule;

/* Everything but opening: c->elf is set.  0, or -ENOEXEC for what libelf
 * cannot read as an ELF file. */
static int cfi_init(struct cfi *c)
{
    GElf_Ehdr eh;
    if (!c->elf || elf_kind(c->elf) != ELF_K_ELF)
        return -ENOEXEC;
    c->image = (const uint8_t *)elf_rawfile(c->elf, &c->image_size);
    if (!c->image || !gelf_getehdr(c->elf, &eh))
        return -ENOEXEC;
    c->nloads = elf_loads__read(c->elf, &c->loads);
    c->entry = eh.e_entry;
    /* Either may be missing; a file with neither just has no rules. */
    c->eh = dwarf_getcfi_elf(c->elf);
    c->dwarf = dwarf_begin_elf(c->elf, DWARF_C_READ, NULL);
    if (c->dwarf)
        c->debug = dwarf_getcfi(c->dwarf);
    return 0;
}

static struct cfi *cfi_alloc(void)
{
    struct cfi *c = xcalloc(1, sizeof(*c));
    c->fd = -1;
    idmap__init(&c->by_off);
    idmap__init(&c->by_content);
    elf_version(EV_CURRENT);
    return c;
}

/* c once cfi_init has run; NULL with errno set, and c freed, if it failed. */
static struct cfi *cfi_ready(struct cfi *c, int err)
{
    if (err == 0)
        err = cfi_init(c);
    if (err == 0)
        return c;
    cfi__delete(c);
    errno = -err;
    return NULL;
}

struct cfi *cfi__new(const char *path)
{
    struct cfi *c = cfi_alloc();
    c->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (c->fd < 0)
        return cfi_ready(c, -errno);
    c->elf = elf_begin(c->fd, ELF_C_READ_MMAP, NULL);
    return cfi_ready(c, 0);
}

struct cfi *cfi__new_image(const void *image, size_t size)
{
    struct cfi *c = cfi_alloc();
    c->copy = memcpy(xmalloc(size), image, size);  /* libelf wants its own */
    c->elf = elf_memory(c->copy, size);
    return cfi_ready(c, 0);
}

void cfi__delete(struct cfi *c)
{
    if (!c)
        return;
    if (c->eh)
        dwarf_cfi_end(c->eh);
    if (c->dwarf)
        dwarf_end(c->dwarf);
    if (c->elf)
        elf_end(c->elf);
    if (c->fd >= 0)
        close(c->fd);
    free(c->copy);
    for (size_t i = 0; i < c->nblocks; i++)
        free(c->blocks[i]);
    free(c->blocks);
    idmap__exit(&c->by_off);
    idmap__exit(&c->by_content);
    free(c->loads);
    free(c->ops);
    free(c->exprs);
    free(c);
}

/* A new rule slot that never moves. */
static struct cfi_rule *new_rule(struct cfi *c)
{
    if (c->nrules == c->nblocks * RULE_BLOCK) {
        c->blocks = xrealloc(c->blocks, (c->nblocks + 1) * sizeof(*c->blocks));
        c->blocks[c->nblocks++] = xmalloc(RULE_BLOCK * sizeof(**c->blocks));
    }
    size_t i = c->nrules++;
    return &c->blocks[i / RULE_BLOCK][i % RULE_BLOCK];
}

/* Copy an expression into our own storage; its index, or -E2BIG if too
 * many. */
static int32_t add_expr(struct cfi *c, const Dwarf_Op *ops, size_t n)
{
    if (n > UINT32_MAX || c->nexprs >= INT32_MAX)
        return -E2BIG;
    GROW(c->ops, c->ops_cap, c->nops + n);
    GROW(c->exprs, c->exprs_cap, c->nexprs + 1);
    for (size_t i = 0; i < n; i++)
        c->ops[c->nops + i] = (struct cfi_op){ops[i].atom, ops[i].number,
                                              ops[i].number2, ops[i].offset};
    c->exprs[c->nexprs].first = (uint32_t)c->nops;
    c->exprs[c->nexprs].n = (uint32_t)n;
    c->nops += n;
    return (int32_t)c->nexprs++;
}

struct cfi_expr cfi__expr(const struct cfi *c, int32_t idx)
{
    return (struct cfi_expr){c->ops + c->exprs[idx].first, c->exprs[idx].n};
}

static int fits32(int64_t v)
{
    return v >= INT32_MIN && v <= INT32_MAX;
}

/* "bregN off" or "bregx N off": register N plus a constant. */
static int is_reg_plus(const Dwarf_Op *op, unsigned *reg, int64_t *off)
{
    if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
        *reg = op->atom - DW_OP_breg0;
        *off = (int64_t)op->number;
    } else if (op->atom == DW_OP_bregx) {
        *reg = (unsigned)op->number;
        *off = (int64_t)op->number2;
    } else {
        return 0;
    }
    return *reg < CFI_NREGS && fits32(*off);
}

/* Fill R->regs[slot] from libdw's description of DWARF register regno;
 * 0, -EINVAL when libdw cannot describe it, -EOPNOTSUPP for a register
 * that the unwinder does not keep, or -E2BIG. */
static int compile_reg(struct cfi *c, Dwarf_Frame *f, int regno, struct cfi_rule *r, int slot)
{
    Dwarf_Op mem[3], *ops;
    size_t n;
    struct cfi_reg_rule *rr = &r->regs[slot];
    if (dwarf_frame_register(f, regno, mem, &ops, &n) != 0)
        return -EINVAL;
    if (n == 0) {
        rr->how = ops ? CFI_UNDEF : CFI_SAME;
        return 0;
    }
    int value = ops[n - 1].atom == DW_OP_stack_value;
    size_t m = n - (size_t)value;
    /* The simple forms libdw synthesizes: "cfa [plus_uconst N]" and "regx N". */
    if (m >= 1 && m <= 2 && ops[0].atom == DW_OP_call_frame_cfa &&
        (m == 1 || ops[1].atom == DW_OP_plus_uconst) &&
        fits32(m == 2 ? (int64_t)ops[1].number : 0)) {
        rr->how = value ? CFI_VAL_CFA : CFI_AT_CFA;
        rr->off = m == 2 ? (int32_t)(int64_t)ops[1].number : 0;
        return 0;
    }
    if (!value && m == 1 && (ops[0].atom == DW_OP_regx ||
                             (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31))) {
        uint64_t reg = ops[0].atom == DW_OP_regx ? ops[0].number : (uint64_t)(ops[0].atom - DW_OP_reg0);
        if (reg >= CFI_NREGS)
            return -EOPNOTSUPP;
        rr->how = CFI_IN_REG;
        rr->reg = (uint8_t)reg;
        return 0;
    }
    int32_t e = add_expr(c, ops, m);
    if (e < 0)
        return e;
    rr->how = value ? CFI_VAL_EXPR : CFI_AT_EXPR;
    rr->off = e;
    return 0;
}

/* The rule of frame f in r; 0 or a negative errno, as compile_reg. */
static int compile(struct cfi *c, Dwarf_Frame *f, struct cfi_rule *r)
{
    bool signal = false;
    int ra = dwarf_frame_info(f, NULL, NULL, &signal);
    Dwarf_Op *ops;
    size_t n;
    unsigned reg;
    int64_t off;
    if (ra < 0 || dwarf_frame_cfa(f, &ops, &n) != 0 || n == 0)
        return -EINVAL;
    r->signal = signal;
    if (n == 1 && is_reg_plus(&ops[0], &reg, &off)) {
        r->cfa_reg = (uint8_t)reg;
        r->cfa_off = (int32_t)off;
    } else {
        int32_t e = add_expr(c, ops, n);
        if (e < 0)
            return e;
        r->cfa_reg = CFI_CFA_EXPR;
        r->cfa_off = e;
    }
    /* Slot CFI_REG_RA always holds the return address, whatever column
     * the CIE keeps it in. */
    for (int i = 0; i < CFI_NREGS; i++) {
        int rc = compile_reg(c, f, i == CFI_REG_RA ? ra : i, r, i);
        if (rc != 0)
            return rc;
    }
    if (r->regs[CFI_REG_RSP].how == CFI_SAME)
        r->regs[CFI_REG_RSP] = (struct cfi_reg_rule){0, CFI_VAL_CFA, 0};
    for (int i = 0; i < CFI_NREGS; i++) {
        uint8_t how = r->regs[i].how;
        if (how == CFI_UNDEF)
            r->undef |= 1u << i;
        else if (how == CFI_AT_CFA)
            r->at_cfa |= 1u << i;
        else if (how != CFI_SAME)
            r->other |= 1u << i;
    }
    return 0;
}

/* The rule at ELF address vaddr, from the first table that covers it.
 * Many addresses share a rule, so equal rules are stored once. */
static const struct cfi_rule *lookup_uncached(struct cfi *c, uint64_t vaddr)
{
    Dwarf_CFI *tables[2] = {c->eh, c->debug};
    for (unsigned t = 0; t < 2; t++) {
        Dwarf_Frame *f = NULL;
        if (!tables[t] || dwarf_cfi_addrframe(tables[t], vaddr, &f) != 0)
            continue;
        struct cfi_rule r;
        memset(&r, 0, sizeof(r));   /* padding too: rules are hashed as bytes */
        int rc = compile(c, f, &r);
        free(f);
        if (rc != 0)
            continue;
        uint64_t h = hash_bytes(&r, sizeof(r));
        struct cfi_rule *same = idmap__get(&c->by_content, h);
        if (same && !memcmp(same, &r, sizeof(r)))
            return same;
        struct cfi_rule *fresh = new_rule(c);
        memcpy(fresh, &r, sizeof(r));
        if (!same)      /* on a hash collision, keep the first one interned */
            idmap__put(&c->by_content, h, fresh);
        return fresh;
    }
    return NULL;
}

const struct cfi_rule *cfi__rule(struct cfi *c, uint64_t off)
{
    const struct cfi_rule *r = idmap__get(&c->by_off, off);
    if (!r) {
        uint64_t vaddr;
        r = elf_loads__vaddr(c->loads, c->nloads, off, &vaddr) ? lookup_uncached(c, vaddr) : NULL;
        idmap__put(&c->by_off, off, (void *)(r ? r : &no_rule));
    }
    return r == &no_rule ? NULL : r;
}

int cfi__read(const struct cfi *c, uint64_t off, void *buf, size_t len)
{
    if (off > c->image_size || len > c->image_size - off)
        return -EFAULT;
    memcpy(buf, c->image + off, len);
    return 0;
}

int cfi__is_entry(const struct cfi *c, uint64_t off)
{
    uint64_t vaddr;
    return c->entry && elf_loads__vaddr(c->loads, c->nloads, off, &vaddr) &&
           vaddr - c->entry < CFI_ENTRY_STUB;
}
