/* dynsym.c - a dynamic definition made to name another function (see
 * dynsym.h).  The tables read here are those the dynamic loader itself
 * uses, of objects it has mapped and relocated. */
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE
#endif
#include "dynsym.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* One object's dynamic symbols, as loaded. */
struct table {
    const struct dl_phdr_info *obj;
    ElfW(Sym) *syms;
    const char *strs;
    const uint32_t *gnu_hash;
    const uint32_t *sysv_hash;
};

struct redirect {
    const char *name;
    uintptr_t from, to;
    int err;
};

static const ElfW(Phdr) *segment_of(const struct dl_phdr_info *o, uintptr_t addr, ElfW(Word) type)
{
    for (ElfW(Half) i = 0; i < o->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &o->dlpi_phdr[i];
        uintptr_t start = o->dlpi_addr + p->p_vaddr;
        if (p->p_type == type && addr >= start && addr - start < p->p_memsz)
            return p;
    }
    return NULL;
}

/* A d_ptr of the dynamic section: the loader relocates them in place on
 * most machines and leaves them as they are in the file on others. */
static uintptr_t dynamic_address(const struct dl_phdr_info *o, ElfW(Addr) ptr)
{
    if (segment_of(o, ptr, PT_LOAD))
        return ptr;
    if (segment_of(o, o->dlpi_addr + ptr, PT_LOAD))
        return o->dlpi_addr + ptr;
    return 0;
}

static int table_of(const struct dl_phdr_info *o, struct table *t)
{
    const ElfW(Dyn) *dyn = NULL;
    for (ElfW(Half) i = 0; i < o->dlpi_phnum; i++)
        if (o->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(o->dlpi_addr + o->dlpi_phdr[i].p_vaddr);
    *t = (struct table){.obj = o};
    for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
        uintptr_t a = dynamic_address(o, dyn->d_un.d_ptr);
        if (dyn->d_tag == DT_SYMTAB)
            t->syms = (ElfW(Sym) *)a;
        else if (dyn->d_tag == DT_STRTAB)
            t->strs = (const char *)a;
        else if (dyn->d_tag == DT_GNU_HASH)
            t->gnu_hash = (const uint32_t *)a;
        else if (dyn->d_tag == DT_HASH)
            t->sysv_hash = (const uint32_t *)a;
    }
    return t->syms && t->strs && (t->gnu_hash || t->sysv_hash) ? 0 : -ENOENT;
}

static int prot_of(const struct dl_phdr_info *o, uintptr_t addr)
{
    if (segment_of(o, addr, PT_GNU_RELRO))
        return PROT_READ;
    const ElfW(Phdr) *p = segment_of(o, addr, PT_LOAD);
    if (!p)
        return PROT_READ;
    return (p->p_flags & PF_R ? PROT_READ : 0) | (p->p_flags & PF_W ? PROT_WRITE : 0) |
           (p->p_flags & PF_X ? PROT_EXEC : 0);
}

/* sym's value set to r's function, its page writable meanwhile (an
 * aligned word: a lookup in another thread reads the old or the new). */
static int rewrite(const struct table *t, ElfW(Sym) *sym, const struct redirect *r)
{
    uintptr_t at = (uintptr_t)&sym->st_value, page = (uintptr_t)sysconf(_SC_PAGESIZE);
    void *start = (void *)(at & ~(page - 1));
    int prot = prot_of(t->obj, at);
    if (!(prot & PROT_WRITE) && mprotect(start, page, prot | PROT_WRITE) != 0)
        return -errno;
    __atomic_store_n(&sym->st_value, (ElfW(Addr))(r->to - t->obj->dlpi_addr), __ATOMIC_RELEASE);
    if (!(prot & PROT_WRITE) && mprotect(start, page, prot) != 0)
        return -errno;
    return 0;
}

/* Symbol i, rewritten if it is r's name defined at r's from (ELF32's
 * ST_TYPE is the same as ELF64's). */
static void consider(const struct table *t, uint32_t i, struct redirect *r)
{
    ElfW(Sym) *sym = &t->syms[i];
    if (sym->st_shndx == SHN_UNDEF || sym->st_shndx == SHN_ABS || ELF64_ST_TYPE(sym->st_info) != STT_FUNC)
        return;
    if (t->obj->dlpi_addr + sym->st_value != r->from || strcmp(t->strs + sym->st_name, r->name) != 0)
        return;
    int err = rewrite(t, sym, r);
    if (r->err == -ENOENT || err != 0)
        r->err = err;
}

static uint32_t gnu_hash(const char *s)
{
    uint32_t h = 5381;
    for (; *s; s++)
        h = h * 33 + (unsigned char)*s;
    return h;
}

static uint32_t sysv_hash(const char *s)
{
    uint32_t h = 0;
    for (; *s; s++) {
        h = (h << 4) + (unsigned char)*s;
        uint32_t g = h & 0xf0000000u;
        h ^= g >> 24;
        h &= ~g;
    }
    return h;
}

/* Every symbol of r's name, through the table's hash (the names in one
 * GNU chain are those whose hashes share a bucket; the low bit ends it). */
static void look_up(const struct table *t, struct redirect *r)
{
    if (t->gnu_hash) {
        const uint32_t *h = t->gnu_hash, nbuckets = h[0], first = h[1];
        const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(h + 4) + h[2]);
        const uint32_t *chain = buckets + nbuckets, want = gnu_hash(r->name);
        if (nbuckets == 0)
            return;
        for (uint32_t i = buckets[want % nbuckets]; i != STN_UNDEF && i >= first; i++) {
            if ((chain[i - first] | 1) == (want | 1))
                consider(t, i, r);
            if (chain[i - first] & 1)
                break;
        }
        return;
    }
    const uint32_t *h = t->sysv_hash, nbuckets = h[0], *chain = h + 2 + nbuckets;
    if (nbuckets == 0)
        return;
    for (uint32_t i = h[2 + sysv_hash(r->name) % nbuckets]; i != STN_UNDEF; i = chain[i])
        consider(t, i, r);
}

static int visit(struct dl_phdr_info *o, size_t size, void *arg)
{
    struct redirect *r = arg;
    struct table t;
    (void)size;
    if (!segment_of(o, r->from, PT_LOAD))
        return 0;
    if (table_of(o, &t) == 0)
        look_up(&t, r);
    return 1;
}

int dynsym__redirect(const char *name, const void *from, const void *to)
{
    struct redirect r = {name, (uintptr_t)from, (uintptr_t)to, -ENOENT};
    dl_iterate_phdr(visit, &r);
    return r.err;
}
