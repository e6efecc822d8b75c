/* elfsyms.c - ELF symbol tables through libelf (see elfsyms.h). */
#include "elfsyms.h"
#include "contract.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

/* An open ELF file or memory image. */
struct elf_file {
    int fd;
    Elf *elf;
    size_t shstrndx;
    uint8_t bid[20];
    uint8_t bid_size;
};

static void elf_file_close(struct elf_file *f)
{
    if (f->elf)
        elf_end(f->elf);
    if (f->fd >= 0)
        close(f->fd);
    f->elf = NULL;
    f->fd = -1;
}

static void read_build_id(struct elf_file *f)
{
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    f->bid_size = 0;
    while ((scn = elf_nextscn(f->elf, scn))) {
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t off = 0, name_off, desc_off;
        GElf_Nhdr nh;
        while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                memcmp((char *)d->d_buf + name_off, "GNU", 4) == 0) {
                f->bid_size = nh.n_descsz < 20 ? (uint8_t)nh.n_descsz : 20;
                memcpy(f->bid, (char *)d->d_buf + desc_off, f->bid_size);
                return;
            }
        }
    }
}

static int elf_file_init(struct elf_file *f)
{
    if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || elf_getshdrstrndx(f->elf, &f->shstrndx)) {
        elf_file_close(f);
        return -ENOEXEC;
    }
    read_build_id(f);
    return 0;
}

static int elf_file_open(struct elf_file *f, const char *path)
{
    f->elf = NULL;
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0)
        return -errno;
    f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
    return elf_file_init(f);
}

static int same_bid(const struct elf_file *f, const uint8_t *want, uint8_t size)
{
    /* perf pads short build ids with zeros; compare what both have. */
    return f->bid_size && f->bid_size >= size && memcmp(f->bid, want, size) == 0;
}

static Elf_Scn *section(const struct elf_file *f, const char *name, GElf_Shdr *sh)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(f->elf, scn))) {
        const char *n;
        if (gelf_getshdr(scn, sh) && (n = elf_strptr(f->elf, f->shstrndx, sh->sh_name)) &&
            strcmp(n, name) == 0)
            return scn;
    }
    return NULL;
}

static Elf_Scn *section_of_type(const struct elf_file *f, Elf64_Word type, GElf_Shdr *sh)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(f->elf, scn)))
        if (gelf_getshdr(scn, sh) && sh->sh_type == type)
            return scn;
    return NULL;
}

/* Whether section ndx occupies memory, and whether it is text or data. */
static void section_kind(const struct elf_file *f, size_t ndx, int *alloc, int *text_or_data)
{
    GElf_Shdr sh;
    Elf_Scn *scn = elf_getscn(f->elf, ndx);
    const char *n;
    *alloc = *text_or_data = 0;
    if (!scn || !gelf_getshdr(scn, &sh))
        return;
    *alloc = (sh.sh_flags & SHF_ALLOC) != 0;
    n = elf_strptr(f->elf, f->shstrndx, sh.sh_name);
    *text_or_data = n && (strstr(n, "text") || strstr(n, "data"));
}

/*
 * perf's dso__load_sym filter: named functions and objects, and labels
 * (untyped, visible symbols) in text or data sections; never absolute
 * symbols (version names such as OPENSSL_3.0.9) or symbols of sections
 * that are not loaded (.gnu.warning.*).
 */
static int load_symbols(struct elf_image *img, const struct elf_file *f, Elf_Scn *scn,
                        const GElf_Shdr *sh)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d || sh->sh_entsize == 0)
        return 0;
    size_t n = sh->sh_size / sh->sh_entsize, loaded = 0;
    for (size_t i = 0; i < n; i++) {
        GElf_Sym s;
        int alloc, text_or_data;
        if (!gelf_getsym(d, (int)i, &s))
            break;
        int type = GELF_ST_TYPE(s.st_info), vis = GELF_ST_VISIBILITY(s.st_other);
        int is_label = type == STT_NOTYPE && vis != STV_HIDDEN && vis != STV_INTERNAL;
        if (s.st_name == 0 || s.st_shndx == SHN_UNDEF || s.st_shndx == SHN_ABS ||
            s.st_shndx >= SHN_LORESERVE)
            continue;
        if (!is_label && type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT)
            continue;
        section_kind(f, s.st_shndx, &alloc, &text_or_data);
        if (!alloc || (is_label && !text_or_data))
            continue;
        const char *name = elf_strptr(f->elf, sh->sh_link, s.st_name);
        if (!name || !*name)
            continue;
        symtab__add(&img->syms, s.st_value, s.st_size, (uint8_t)GELF_ST_BIND(s.st_info),
                    (uint8_t)type, name, strlen(name));
        loaded++;
    }
    return loaded > 0;
}

/* Name PLT slots after the .dynsym entries their relocations point at. */
static void load_plt(struct elf_image *img, const struct elf_file *f)
{
    GElf_Shdr rel_sh, plt_sh, dyn_sh;
    Elf_Scn *rel = section(f, ".rela.plt", &rel_sh);
    if (!rel)
        rel = section(f, ".rel.plt", &rel_sh);
    Elf_Scn *plt = section(f, ".plt.sec", &plt_sh);
    uint64_t first = 0, entsz = 16;
    if (!plt) {                         /* classic PLT: PLT0, then one per slot */
        plt = section(f, ".plt", &plt_sh);
        first = plt_sh.sh_entsize ? plt_sh.sh_entsize : 16;
        entsz = plt_sh.sh_entsize ? plt_sh.sh_entsize : 16;
    }
    if (!rel || !plt || rel_sh.sh_entsize == 0)
        return;
    Elf_Scn *dyn = elf_getscn(f->elf, rel_sh.sh_link);
    Elf_Data *rd = elf_getdata(rel, NULL), *dd = dyn ? elf_getdata(dyn, NULL) : NULL;
    if (!rd || !dd || !gelf_getshdr(dyn, &dyn_sh))
        return;
    size_t n = rel_sh.sh_size / rel_sh.sh_entsize;
    for (size_t i = 0; i < n; i++) {
        uint64_t info;
        if (rel_sh.sh_type == SHT_RELA) {
            GElf_Rela r;
            if (!gelf_getrela(rd, (int)i, &r))
                break;
            info = r.r_info;
        } else {
            GElf_Rel r;
            if (!gelf_getrel(rd, (int)i, &r))
                break;
            info = r.r_info;
        }
        GElf_Sym s;
        const char *name;
        uint64_t at = plt_sh.sh_addr + first + i * entsz;
        if (at + entsz > plt_sh.sh_addr + plt_sh.sh_size)
            break;
        if (!gelf_getsym(dd, (int)GELF_R_SYM(info), &s) ||
            !(name = elf_strptr(f->elf, dyn_sh.sh_link, s.st_name)))
            continue;
        char buf[512];
        int len = snprintf(buf, sizeof(buf), "%s@plt", name);
        symtab__add(&img->syms, at, entsz, STB_GLOBAL, STT_FUNC, buf,
                    len < (int)sizeof(buf) ? (size_t)len : sizeof(buf) - 1);
    }
}

size_t elf_loads__read(Elf *elf, struct elf_load **loads)
{
    size_t n, k = 0;
    *loads = NULL;
    if (elf_getphdrnum(elf, &n) || n == 0 || n > 65535)
        return 0;
    *loads = xmalloc(n * sizeof(**loads));
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
            (*loads)[k++] = (struct elf_load){ph.p_offset, ph.p_filesz, ph.p_vaddr};
    }
    return k;
}

int elf_loads__vaddr(const struct elf_load *loads, size_t n, uint64_t off, uint64_t *vaddr)
{
    for (size_t i = 0; i < n; i++) {
        const struct elf_load *l = &loads[i];
        if (off >= l->offset && off - l->offset < l->filesz) {
            *vaddr = off - l->offset + l->vaddr;
            return 1;
        }
    }
    return 0;
}

static void load_segments(struct elf_image *img, const struct elf_file *f)
{
    img->n_loads = elf_loads__read(f->elf, &img->loads);
}

static void bid_hex(char *out, const uint8_t *id, uint8_t size)
{
    for (int i = 0; i < size; i++)
        sprintf(out + 2 * i, "%02x", id[i]);
    out[2 * size] = 0;
}

/* cand, if it is an ELF file with build id want (else -ESTALE, or why it
 * cannot be opened).  used (PATH_MAX bytes, or NULL) receives its path. */
static int open_copy(struct elf_file *f, const char *cand, const uint8_t *want, uint8_t size,
                     char *used)
{
    int rc = elf_file_open(f, cand);
    if (rc < 0)
        return rc;
    if (same_bid(f, want, size)) {
        if (used)
            snprintf(used, PATH_MAX, "%s", cand);
        return 0;
    }
    elf_file_close(f);
    return -ESTALE;
}

/* A recording folder's copy (pyperf-record --archive):
 * ARCHIVE/.build-id/xx/rest/NAME, NAME "elf" for the object (a vdso too)
 * and "debug" for its separate debug file. */
static int open_archived(struct elf_file *f, const char *archive, const char *name,
                         const uint8_t *want, uint8_t size, char *used)
{
    char hex[41], cand[PATH_MAX];
    if (!archive || !size)
        return -ENOENT;
    bid_hex(hex, want, size);
    int n = snprintf(cand, sizeof(cand), "%s/" CONTRACT_DIR_BUILD_ID "/%.2s/%s/%s", archive, hex,
                     hex + 2, name);
    if (n < 0 || (size_t)n >= sizeof(cand))
        return -ENAMETOOLONG;
    return open_copy(f, cand, want, size, used);
}

/* A separate debug file for f that carries a .symtab, or -ENOENT: the
 * recording folder's copy (archive, may be NULL) first, then where perf
 * looks. */
static int open_debug_file(struct elf_file *dbg, const struct elf_file *f, const char *path,
                           const char *archive)
{
    char cand[PATH_MAX];
    GElf_Shdr sh;
    Elf_Scn *link = section(f, ".gnu_debuglink", &sh);
    Elf_Data *d = link ? elf_getdata(link, NULL) : NULL;
    const char *name = d && d->d_size && memchr(d->d_buf, 0, d->d_size) ? d->d_buf : NULL;
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path) : 0;

    if (open_archived(dbg, archive, "debug", f->bid, f->bid_size, NULL) == 0) {
        if (section_of_type(dbg, SHT_SYMTAB, &sh))
            return 0;
        elf_file_close(dbg);
    }
    for (int k = 0; k < 4; k++) {
        int n = -1;
        if (k == 0 && name)
            n = snprintf(cand, sizeof(cand), "%.*s/%s", dirlen, path, name);
        else if (k == 1 && name)
            n = snprintf(cand, sizeof(cand), "%.*s/.debug/%s", dirlen, path, name);
        else if (k == 2 && name)
            n = snprintf(cand, sizeof(cand), "/usr/lib/debug%.*s/%s", dirlen, path, name);
        else if (k == 3 && f->bid_size) {
            n = snprintf(cand, sizeof(cand), "/usr/lib/debug/.build-id/%02x/", f->bid[0]);
            for (int i = 1; i < f->bid_size; i++)
                n += snprintf(cand + n, sizeof(cand) - (size_t)n, "%02x", f->bid[i]);
            n += snprintf(cand + n, sizeof(cand) - (size_t)n, ".debug");
        }
        if (n <= 0 || (size_t)n >= sizeof(cand) || strcmp(cand, path) == 0)
            continue;
        if (elf_file_open(dbg, cand) < 0)
            continue;
        if ((!f->bid_size || same_bid(dbg, f->bid, f->bid_size)) &&
            section_of_type(dbg, SHT_SYMTAB, &sh))
            return 0;
        elf_file_close(dbg);
    }
    return -ENOENT;
}

static int load_from(struct elf_image *img, struct elf_file *f, const char *path,
                     const char *archive)
{
    struct elf_file dbg = {.fd = -1};
    GElf_Shdr sh;
    Elf_Scn *scn;
    int ok = 0;

    load_segments(img, f);
    if (open_debug_file(&dbg, f, path, archive) == 0) {
        scn = section_of_type(&dbg, SHT_SYMTAB, &sh);
        ok = load_symbols(img, &dbg, scn, &sh);
        elf_file_close(&dbg);
    }
    if (!ok && (scn = section_of_type(f, SHT_SYMTAB, &sh)))
        ok = load_symbols(img, f, scn, &sh);
    if (!ok && (scn = section_of_type(f, SHT_DYNSYM, &sh)))
        ok = load_symbols(img, f, scn, &sh);
    if (ok)                             /* perf adds PLT names to loaded tables */
        load_plt(img, f);
    symtab__finish(&img->syms, 0);
    return 0;
}

/* perf's build-id cache: ~/.debug/.build-id/xx/rest/elf (or $PERF_BUILDID_DIR).
 * used (PATH_MAX bytes, or NULL) receives the path of the copy. */
static int open_cached(struct elf_file *f, const char *sub, const uint8_t *want, uint8_t size,
                       char *used)
{
    char hex[41], cand[PATH_MAX];
    const char *dir = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");
    bid_hex(hex, want, size);
    if (dir)
        snprintf(cand, sizeof(cand), "%s", dir);
    else
        snprintf(cand, sizeof(cand), "%s/.debug", home ? home : "");
    size_t n = strlen(cand);
    if (sub)    /* e.g. [vdso]/<id>/vdso */
        snprintf(cand + n, sizeof(cand) - n, "/%s/%s/%s", sub, hex, "vdso");
    else
        snprintf(cand + n, sizeof(cand) - n, "/.build-id/%.2s/%s/elf", hex, hex + 2);
    return open_copy(f, cand, want, size, used);
}

int elf_image__load(struct elf_image *img, const char *path, const uint8_t *want,
                    uint8_t want_size, const char *archive)
{
    struct elf_file f = {.fd = -1};
    char cached[PATH_MAX];
    const char *used = path;
    int ret;

    memset(img, 0, sizeof(*img));
    elf_version(EV_CURRENT);
    if (open_archived(&f, archive, "elf", want, want_size, cached) == 0)
        goto found_cached;
    if (elf_file_open(&f, path) < 0) {
        int e = errno;
        if (want_size && open_cached(&f, NULL, want, want_size, cached) == 0)
            goto found_cached;
        return f.fd < 0 && e ? -e : -ENOEXEC;
    }
    if (want_size && f.bid_size && !same_bid(&f, want, want_size)) {
        elf_file_close(&f);
        if (open_cached(&f, NULL, want, want_size, cached) == 0)
            goto found_cached;
        return -ESTALE;
    }
    goto found;
found_cached:
    used = cached;
found:
    ret = load_from(img, &f, path, archive);
    elf_file_close(&f);
    if (ret < 0)
        return -ENOEXEC;
    img->file = xstrdup(used);
    return 0;
}

const void *elf_own_vdso(size_t *size)
{
    const unsigned char *base = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
    if (!base || memcmp(base, ELFMAG, SELFMAG) != 0 || base[EI_CLASS] != ELFCLASS64)
        return NULL;
    /* The image ends with its section headers. */
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)(const void *)base;
    *size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
    return *size > 0 && *size < (1u << 20) ? base : NULL;
}

int elf_image__load_vdso(struct elf_image *img, const uint8_t *want, uint8_t want_size,
                         const char *archive)
{
    struct elf_file f = {.fd = -1};
    size_t size;
    const void *base = elf_own_vdso(&size);
    char *copy = NULL, cached[PATH_MAX] = "";

    memset(img, 0, sizeof(*img));
    elf_version(EV_CURRENT);
    if (open_archived(&f, archive, "elf", want, want_size, cached) == 0)
        base = NULL;
    if (base) {
        /* Copied so libelf may treat the memory as its own. */
        copy = xmalloc(size);
        memcpy(copy, base, size);
        f.elf = elf_memory(copy, size);
        if (elf_file_init(&f) == 0 && want_size && !same_bid(&f, want, want_size))
            elf_file_close(&f);
    }
    if (!f.elf && !(want_size && open_cached(&f, "[vdso]", want, want_size, cached) == 0)) {
        free(copy);
        return -ENOENT;
    }
    load_from(img, &f, "[vdso]", archive);
    elf_file_close(&f);
    free(copy);
    /* The recording machine's vdso: the unwinder must read its CFI too. */
    if (cached[0])
        img->file = xstrdup(cached);
    return 0;
}

void elf_image__exit(struct elf_image *img)
{
    symtab__exit(&img->syms);
    free(img->file);
    img->file = NULL;
    free(img->loads);
    img->loads = NULL;
    img->n_loads = 0;
}

int elf_image__vaddr(const struct elf_image *img, uint64_t off, uint64_t *vaddr)
{
    return elf_loads__vaddr(img->loads, img->n_loads, off, vaddr);
}
