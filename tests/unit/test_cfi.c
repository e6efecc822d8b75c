/* test_cfi.c - the CFI compiler (merge/unwind/cfi.c), the DWARF expression
 * evaluator and the unwinder (merge/unwind/unwind_dwarf.c) on hand-written CFI
 * (cfi_frames.S, linked into this program) and a made-up stack. */
#include "cfi.h"
#include "check.h"
#include "unwind_dwarf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char t_plain_pc[], t_rbp_ret[], t_expr_ret[], t_root_ret[], t_bad_pc[];
extern char t_nocfi_pc[], t_nocfi_ret[];

static struct unwind_map exe;   /* our executable mapping that holds the code */
static const char *const exe_path = "/proc/self/exe";

static uint64_t addr(const char *label)
{
    return (uint64_t)(uintptr_t)label;
}

static void find_exe(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f);
    char line[512];
    uint64_t at = addr(t_plain_pc);
    while (fgets(line, sizeof(line), f)) {
        uint64_t lo, hi, off;
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64, &lo, &hi, &off) == 3 &&
            lo <= at && at < hi) {
            exe = (struct unwind_map){.kind = UNWIND_MAP_ELF, .start = lo, .end = hi,
                                      .pgoff = off, .path = exe_path, .dso = exe_path};
            break;
        }
    }
    fclose(f);
    CHECK(exe.start);
}

static int lookup(void *ctx, uint64_t addr, struct unwind_map *m)
{
    (void)ctx;
    if (addr < exe.start || addr >= exe.end)
        return -1;
    *m = exe;
    return 0;
}

static uint64_t off_of(uint64_t a)
{
    return a - exe.start + exe.pgoff;
}

/* The compiled rules, one kind of each. */
static void rules(void)
{
    struct cfi *c = cfi__new(exe_path);
    CHECK(c);
    const struct cfi_rule *r = cfi__rule(c, off_of(addr(t_plain_pc)));
    CHECK(r && r->cfa_reg == CFI_REG_RSP && r->cfa_off == 16);
    CHECK(r->regs[CFI_REG_RBP].how == CFI_AT_CFA && r->regs[CFI_REG_RBP].off == -16);
    CHECK(r->regs[CFI_REG_RA].how == CFI_AT_CFA && r->regs[CFI_REG_RA].off == -8);
    CHECK(r->at_cfa == (1u << CFI_REG_RBP | 1u << CFI_REG_RA) && !r->signal);
    /* the caller's sp is the CFA */
    CHECK(r->regs[CFI_REG_RSP].how == CFI_VAL_CFA && r->regs[CFI_REG_RSP].off == 0);
    r = cfi__rule(c, off_of(addr(t_rbp_ret) - 1));
    CHECK(r && r->cfa_reg == CFI_REG_RBP && r->cfa_off == 16);
    r = cfi__rule(c, off_of(addr(t_expr_ret) - 1));
    CHECK(r && r->cfa_reg == CFI_CFA_EXPR && r->regs[CFI_REG_RA].how == CFI_AT_EXPR);
    struct cfi_expr e = cfi__expr(c, r->cfa_off);
    CHECK(e.nops == 6 && e.ops[3].atom == 0x28 && e.ops[4].atom == 0x06);
    e = cfi__expr(c, r->regs[CFI_REG_RA].off);
    /* (libdw puts the push of the CFA in front) */
    CHECK(e.nops >= 2 && e.ops[e.nops - 2].atom == 0x08 && e.ops[e.nops - 2].n1 == 24);
    CHECK(e.ops[e.nops - 1].atom == 0x1c);
    r = cfi__rule(c, off_of(addr(t_root_ret) - 1));
    CHECK(r && r->regs[CFI_REG_RA].how == CFI_UNDEF && (r->undef >> CFI_REG_RA & 1));
    CHECK(cfi__rule(c, 1) == NULL);             /* the ELF header has no CFI */
    CHECK(cfi__rule(c, off_of(addr(t_nocfi_ret) - 1)) == NULL);
    uint8_t code;
    CHECK(cfi__read(c, off_of(addr(t_plain_pc)), &code, 1) == 0 && code == 0x90);  /* nop */
    cfi__delete(c);
}

/* perf's x86-64 user registers with mask 0xff0fff: ax bx cx dx si di bp
 * sp ip flags cs ss r8..r15. */
#define MASK 0xff0fffull
enum { BP = 6, SP = 7, IP = 8, NREGS = 20 };
#define S 0x7ffe00001000ull     /* the sampled stack pointer */

static void put(uint64_t *stack, uint64_t addr, uint64_t v)
{
    stack[(addr - S) / 8] = v;
}

/* t_plain <- t_rbp <- t_expr <- t_root, through every kind of rule. */
static void walk(void)
{
    uint64_t regs[NREGS] = {0}, stack[12] = {0}, ips[8];
    regs[SP] = S;
    regs[IP] = addr(t_plain_pc);
    put(stack, S + 0, S + 32);                              /* t_plain: saved rbp */
    put(stack, S + 8, addr(t_rbp_ret));                     /* t_plain: CFA - 8 */
    put(stack, S + 40, addr(t_expr_ret));                   /* t_rbp: rbp + 16 - 8 */
    put(stack, S + 56, addr(t_root_ret));                   /* t_expr: (S + 48 + 32) - 24 */
    struct unwind_user u = {PERF_SAMPLE_REGS_ABI_64, MASK, regs, (const uint8_t *)stack,
                            sizeof(stack)};
    struct unwind_dwarf *ud = unwind_dwarf__new();
    unsigned n;
    enum unwind_stop stop = unwind_dwarf__walk(ud, &u, lookup, NULL, ips, NULL, 8, &n);
    CHECK(stop == UNWIND_COMPLETE);
    CHECK(n == 4);
    CHECK(ips[0] == addr(t_plain_pc) && ips[1] == addr(t_rbp_ret));
    CHECK(ips[2] == addr(t_expr_ret) && ips[3] == addr(t_root_ret));
    /* The stack copy ends before t_expr's return address: truncated. */
    u.stack_size = 48;
    stop = unwind_dwarf__walk(ud, &u, lookup, NULL, ips, NULL, 8, &n);
    CHECK(stop == UNWIND_TRUNCATED && n == 3);
    /* Room for two frames only. */
    u.stack_size = sizeof(stack);
    CHECK(unwind_dwarf__walk(ud, &u, lookup, NULL, ips, NULL, 2, &n) == UNWIND_DEPTH && n == 2);
    /* A saved rbp below the frame: the caller's stack pointer would not climb. */
    put(stack, S + 0, S - 64);
    stop = unwind_dwarf__walk(ud, &u, lookup, NULL, ips, NULL, 8, &n);
    CHECK(stop == UNWIND_BAD_FRAME || stop == UNWIND_TRUNCATED);
    CHECK(n == 2);
    /* An expression branching outside itself. */
    regs[IP] = addr(t_bad_pc);
    stop = unwind_dwarf__walk(ud, &u, lookup, NULL, ips, NULL, 8, &n);
    CHECK(stop == UNWIND_BAD_FRAME && n == 1);
    /* No stack pointer among the registers. */
    u.mask = MASK & ~(1ull << SP);
    CHECK(unwind_dwarf__walk(ud, &u, lookup, NULL, ips, NULL, 8, &n) == UNWIND_NO_REGS);
    unwind_dwarf__delete(ud);
}

/* t_plain <- t_nocfi <- t_root: code without CFI that called out is
 * stepped through by its frame pointer (__cxa_finalize at exit is called
 * by crt's __do_global_dtors_aux, which has none); as the sampled frame it
 * may be before its push %rbp, and stops the walk. */
static void walk_nocfi(void)
{
    uint64_t regs[NREGS] = {0}, stack[8] = {0}, ips[8];
    regs[SP] = S;
    regs[IP] = addr(t_plain_pc);
    put(stack, S + 0, S + 16);                              /* t_plain: saved rbp */
    put(stack, S + 8, addr(t_nocfi_ret));
    put(stack, S + 16, 0x1234);                             /* t_nocfi: its caller's rbp */
    put(stack, S + 24, addr(t_root_ret));
    struct unwind_user u = {PERF_SAMPLE_REGS_ABI_64, MASK, regs, (const uint8_t *)stack,
                            sizeof(stack)};
    struct unwind_dwarf *ud = unwind_dwarf__new();
    unsigned n;
    CHECK(unwind_dwarf__walk(ud, &u, lookup, NULL, ips, NULL, 8, &n) == UNWIND_COMPLETE);
    CHECK(n == 3 && ips[1] == addr(t_nocfi_ret) && ips[2] == addr(t_root_ret));
    /* a frame pointer below the stack pointer is no frame pointer */
    put(stack, S + 0, S - 16);
    CHECK(unwind_dwarf__walk(ud, &u, lookup, NULL, ips, NULL, 8, &n) == UNWIND_NO_CFI && n == 2);
    /* nor one past the stack copy */
    put(stack, S + 0, S + 8 * 8);
    CHECK(unwind_dwarf__walk(ud, &u, lookup, NULL, ips, NULL, 8, &n) == UNWIND_NO_CFI && n == 2);
    /* sampled in it: not taken */
    regs[IP] = addr(t_nocfi_pc);
    regs[BP] = S + 16;
    CHECK(unwind_dwarf__walk(ud, &u, lookup, NULL, ips, NULL, 8, &n) == UNWIND_NO_CFI && n == 1);
    unwind_dwarf__delete(ud);
}

/* ld.so's _start and _dl_start_user have no CFI, and _dl_init, which runs
 * the constructors, returns into the latter: up to the next function with
 * CFI, every byte is the outermost frame (call_init returns 47 bytes past
 * the entry, beyond a 32-byte stub). */
static void loader_entry(void)
{
    const char *ld = "/lib64/ld-linux-x86-64.so.2";
    FILE *f = fopen(ld, "rb");
    if (!f)
        return;                 /* not x86-64 */
    uint64_t entry = 0;
    CHECK(fseek(f, 24, SEEK_SET) == 0 && fread(&entry, 8, 1, f) == 1);   /* e_entry */
    fclose(f);
    struct cfi *c = cfi__new(ld);
    CHECK(c);
    /* its text is mapped at the file offset equal to its address */
    uint64_t off = entry;
    while (off < entry + CFI_ENTRY_STUB && !cfi__rule(c, off)) {
        CHECK(cfi__is_entry(c, off));
        off++;
    }
    CHECK(off > entry + 48 && off < entry + CFI_ENTRY_STUB);
    cfi__delete(c);
}

/* A file that cannot be read as ELF is NULL with errno: open's own for a
 * missing one, ENOEXEC for one that is not ELF, in memory too. */
static void not_elf(void)
{
    errno = 0;
    CHECK(cfi__new("/nonexistent/pymerge-test") == NULL && errno == ENOENT);
    char path[] = "/tmp/test_cfi.XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, "not an ELF file\n", 16) == 16);
    close(fd);
    errno = 0;
    CHECK(cfi__new(path) == NULL && errno == ENOEXEC);
    unlink(path);
    errno = 0;
    CHECK(cfi__new_image("\177ELF", 4) == NULL && errno == ENOEXEC);
}

int main(void)
{
    not_elf();
    find_exe();
    rules();
    walk();
    walk_nocfi();
    loader_entry();
    return 0;
}
