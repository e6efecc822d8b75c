/*
 * cfi.c - compile libdw's call frame information into struct cfi_rule,
 * once per address.  See cfi.h.
 */
#define _POSIX_C_SOURCE 200809L /* O_CLOEXEC */
#include "cfi.h"

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
#define NO_RULE UINT32_MAX

struct load {               /* one PT_LOAD: file offsets -> ELF addresses */
    uint64_t off, filesz, vaddr;
};

struct addr_slot {          /* file offset + 1 (0 = empty) -> rule index */
    uint64_t key;
    uint32_t rule;
};

struct cfi {
    int fd;
    Elf *elf;
    const uint8_t *image;   /* the whole file, mmap'd by libelf */
    size_t image_size;
    Dwarf_CFI *eh;          /* .eh_frame, ours to dwarf_cfi_end */
    Dwarf *dwarf;           /* for .debug_frame */
    Dwarf_CFI *debug;       /* owned by dwarf */
    struct load *loads;
    size_t nloads;
    uint64_t entry;         /* e_entry: where the kernel starts the program */

    struct addr_slot *addrs;    /* open addressing, power-of-two size */
    size_t addr_cap, addr_used;

    struct cfi_rule **blocks;   /* interned rules */
    size_t nrules, nblocks;
    uint32_t *rule_hash;        /* rule index + 1 (0 = empty) */
    size_t rule_cap;

    struct cfi_op *ops;         /* all expressions, back to back */
    size_t nops, ops_cap;
    struct { uint32_t first, n; } *exprs;
    size_t nexprs, exprs_cap;
};

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

/* Grow *p (an array of *cap elements of size sz) to hold at least need. */
static int grow(void *p, size_t *cap, size_t need, size_t sz)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(*(void **)p, n * sz);
    if (!q)
        return -1;
    *(void **)p = q;
    *cap = n;
    return 0;
}

static int read_loads(struct cfi *c)
{
    size_t n;
    if (elf_getphdrnum(c->elf, &n) != 0)
        return -1;
    c->loads = calloc(n ? n : 1, sizeof(*c->loads));
    if (!c->loads)
        return -1;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(c->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
            continue;
        c->loads[c->nloads++] = (struct load){ph.p_offset, ph.p_filesz, ph.p_vaddr};
    }
    return 0;
}

struct cfi *cfi__new(const char *path, char *err, size_t errlen)
{
    struct cfi *c = calloc(1, sizeof(*c));
    if (!c) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    c->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (c->fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        goto fail;
    }
    elf_version(EV_CURRENT);
    c->elf = elf_begin(c->fd, ELF_C_READ_MMAP, NULL);
    if (!c->elf || elf_kind(c->elf) != ELF_K_ELF) {
        snprintf(err, errlen, "%s: not an ELF file", path);
        goto fail;
    }
    GElf_Ehdr eh;
    c->image = (const uint8_t *)elf_rawfile(c->elf, &c->image_size);
    if (!c->image || !gelf_getehdr(c->elf, &eh) || read_loads(c) != 0) {
        snprintf(err, errlen, "%s: bad ELF file: %s", path, elf_errmsg(-1));
        goto fail;
    }
    c->entry = eh.e_entry;
    /* Either may be missing; a file with neither just has no rules. */
    c->eh = dwarf_getcfi_elf(c->elf);
    c->dwarf = dwarf_begin_elf(c->elf, DWARF_C_READ, NULL);
    if (c->dwarf)
        c->debug = dwarf_getcfi(c->dwarf);
    return c;
fail:
    cfi__delete(c);
    return NULL;
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
    for (size_t i = 0; i < c->nblocks; i++)
        free(c->blocks[i]);
    free(c->blocks);
    free(c->rule_hash);
    free(c->addrs);
    free(c->loads);
    free(c->ops);
    free(c->exprs);
    free(c);
}

static struct cfi_rule *rule_at(const struct cfi *c, uint32_t i)
{
    return &c->blocks[i / RULE_BLOCK][i % RULE_BLOCK];
}

static uint64_t rule_hash(const struct cfi_rule *r)
{
    const unsigned char *p = (const unsigned char *)r;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < sizeof(*r); i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

/* The index of a rule equal to R, adding it if new; NO_RULE on ENOMEM.
 * R must be fully zero-initialised, padding included, for memcmp. */
static uint32_t intern_rule(struct cfi *c, const struct cfi_rule *r)
{
    if ((c->nrules + 1) * 2 > c->rule_cap) {
        size_t cap = c->rule_cap ? c->rule_cap * 2 : 64;
        uint32_t *h = calloc(cap, sizeof(*h));
        if (!h)
            return NO_RULE;
        for (size_t i = 0; i < c->nrules; i++) {
            size_t j = rule_hash(rule_at(c, (uint32_t)i)) & (cap - 1);
            while (h[j])
                j = (j + 1) & (cap - 1);
            h[j] = (uint32_t)i + 1;
        }
        free(c->rule_hash);
        c->rule_hash = h;
        c->rule_cap = cap;
    }
    size_t j = rule_hash(r) & (c->rule_cap - 1);
    for (; c->rule_hash[j]; j = (j + 1) & (c->rule_cap - 1))
        if (!memcmp(rule_at(c, c->rule_hash[j] - 1), r, sizeof(*r)))
            return c->rule_hash[j] - 1;
    if (c->nrules == c->nblocks * RULE_BLOCK) {
        struct cfi_rule **b = realloc(c->blocks, (c->nblocks + 1) * sizeof(*b));
        if (!b)
            return NO_RULE;
        c->blocks = b;
        if (!(b[c->nblocks] = malloc(RULE_BLOCK * sizeof(**b))))
            return NO_RULE;
        c->nblocks++;
    }
    uint32_t i = (uint32_t)c->nrules++;
    memcpy(rule_at(c, i), r, sizeof(*r));
    c->rule_hash[j] = i + 1;
    return i;
}

/* Copy an expression into our own storage; its index, or -1 on ENOMEM. */
static int32_t add_expr(struct cfi *c, const Dwarf_Op *ops, size_t n)
{
    if (n > UINT32_MAX || c->nexprs >= INT32_MAX ||
        grow(&c->ops, &c->ops_cap, c->nops + n, sizeof(*c->ops)) ||
        grow(&c->exprs, &c->exprs_cap, c->nexprs + 1, sizeof(*c->exprs)))
        return -1;
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

/* Fill R->regs[slot] from libdw's description of DWARF register regno. */
static int compile_reg(struct cfi *c, Dwarf_Frame *f, int regno, struct cfi_rule *r, int slot)
{
    Dwarf_Op mem[3], *ops;
    size_t n;
    struct cfi_reg_rule *rr = &r->regs[slot];
    if (dwarf_frame_register(f, regno, mem, &ops, &n) != 0)
        return -1;
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
            return -1;
        rr->how = CFI_IN_REG;
        rr->reg = (uint8_t)reg;
        return 0;
    }
    int32_t e = add_expr(c, ops, m);
    if (e < 0)
        return -1;
    rr->how = value ? CFI_VAL_EXPR : CFI_AT_EXPR;
    rr->off = e;
    return 0;
}

static int compile(struct cfi *c, Dwarf_Frame *f, struct cfi_rule *r)
{
    bool signal = false;
    int ra = dwarf_frame_info(f, NULL, NULL, &signal);
    Dwarf_Op *ops;
    size_t n;
    unsigned reg;
    int64_t off;
    if (ra < 0 || dwarf_frame_cfa(f, &ops, &n) != 0 || n == 0)
        return -1;
    r->signal = signal;
    if (n == 1 && is_reg_plus(&ops[0], &reg, &off)) {
        r->cfa_reg = (uint8_t)reg;
        r->cfa_off = (int32_t)off;
    } else {
        int32_t e = add_expr(c, ops, n);
        if (e < 0)
            return -1;
        r->cfa_reg = CFI_CFA_EXPR;
        r->cfa_off = e;
    }
    /* Slot CFI_REG_RA always holds the return address, whatever column
     * the CIE keeps it in. */
    for (int i = 0; i < CFI_NREGS; i++)
        if (compile_reg(c, f, i == CFI_REG_RA ? ra : i, r, i) != 0)
            return -1;
    return 0;
}

/* ELF address of file offset OFF, or -1 when no PT_LOAD maps it. */
static int to_vaddr(const struct cfi *c, uint64_t off, uint64_t *vaddr)
{
    for (size_t i = 0; i < c->nloads; i++)
        if (off - c->loads[i].off < c->loads[i].filesz) {
            *vaddr = off - c->loads[i].off + c->loads[i].vaddr;
            return 0;
        }
    return -1;
}

static uint32_t lookup_uncached(struct cfi *c, uint64_t off)
{
    uint64_t vaddr;
    if (to_vaddr(c, off, &vaddr) != 0)
        return NO_RULE;
    Dwarf_CFI *tables[2] = {c->eh, c->debug};
    for (int t = 0; t < 2; t++) {
        Dwarf_Frame *f = NULL;
        if (!tables[t] || dwarf_cfi_addrframe(tables[t], vaddr, &f) != 0)
            continue;
        struct cfi_rule r;
        memset(&r, 0, sizeof(r));
        int rc = compile(c, f, &r);
        free(f);
        if (rc == 0)
            return intern_rule(c, &r);
    }
    return NO_RULE;
}

static int addr_grow(struct cfi *c)
{
    size_t cap = c->addr_cap ? c->addr_cap * 2 : 1024;
    struct addr_slot *s = calloc(cap, sizeof(*s));
    if (!s)
        return -1;
    for (size_t i = 0; i < c->addr_cap; i++) {
        if (!c->addrs[i].key)
            continue;
        size_t j = mix64(c->addrs[i].key) & (cap - 1);
        while (s[j].key)
            j = (j + 1) & (cap - 1);
        s[j] = c->addrs[i];
    }
    free(c->addrs);
    c->addrs = s;
    c->addr_cap = cap;
    return 0;
}

const struct cfi_rule *cfi__rule(struct cfi *c, uint64_t off)
{
    uint64_t key = off + 1;
    if (c->addr_cap) {
        size_t j = mix64(key) & (c->addr_cap - 1);
        for (; c->addrs[j].key; j = (j + 1) & (c->addr_cap - 1))
            if (c->addrs[j].key == key)
                return c->addrs[j].rule == NO_RULE ? NULL : rule_at(c, c->addrs[j].rule);
    }
    uint32_t rule = lookup_uncached(c, off);
    /* Failure to cache only costs a later recomputation. */
    if ((c->addr_used + 1) * 2 <= c->addr_cap || addr_grow(c) == 0) {
        size_t j = mix64(key) & (c->addr_cap - 1);
        while (c->addrs[j].key)
            j = (j + 1) & (c->addr_cap - 1);
        c->addrs[j] = (struct addr_slot){key, rule};
        c->addr_used++;
    }
    return rule == NO_RULE ? NULL : rule_at(c, rule);
}

int cfi__read(const struct cfi *c, uint64_t off, void *buf, size_t len)
{
    if (off > c->image_size || len > c->image_size - off)
        return -1;
    memcpy(buf, c->image + off, len);
    return 0;
}

int cfi__is_entry(const struct cfi *c, uint64_t off)
{
    uint64_t vaddr;
    return c->entry && to_vaddr(c, off, &vaddr) == 0 && vaddr - c->entry < CFI_ENTRY_STUB;
}
