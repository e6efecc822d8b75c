/*
 * cfi.h - the unwind rules of one ELF file, compiled once per address.
 *
 * A struct cfi reads the call frame information of an ELF file (.eh_frame,
 * then .debug_frame) through libdw and answers "how do I find the caller's
 * registers at this address" with a small fixed-size struct cfi_rule.  libdw
 * is asked once per distinct address; the answer is kept in a hash table
 * keyed by file offset, and identical rules are stored once.
 *
 * Addresses are given as file offsets (address - map start + map pgoff), so
 * the same struct cfi serves every process that maps the file, wherever it
 * is loaded.  Registers are DWARF numbers (x86-64: 0 rax, 1 rdx, 2 rcx,
 * 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15, 16 return address).
 *
 * Not thread-safe: one struct cfi belongs to one unwinder.
 */
#ifndef PYMERGE_CFI_H
#define PYMERGE_CFI_H

#include <stddef.h>
#include <stdint.h>

#define CFI_NREGS 17        /* DWARF registers 0..16 */
#define CFI_REG_RBP 6
#define CFI_REG_RSP 7
#define CFI_REG_RA 16
#define CFI_CFA_EXPR 0xff   /* cfa_reg value: the CFA is expression cfa_off */

/* Where the caller's value of one register is.  The stack pointer is never
 * CFI_SAME: without a rule for it, the caller's sp is the CFA (x86-64). */
enum cfi_how {
    CFI_SAME = 0,   /* unchanged by this frame */
    CFI_UNDEF,      /* not recoverable; for the return address: outermost frame */
    CFI_AT_CFA,     /* saved in memory at CFA + off */
    CFI_VAL_CFA,    /* the value CFA + off itself */
    CFI_IN_REG,     /* the value of register `reg` in this frame */
    CFI_AT_EXPR,    /* saved in memory at the address expression `off` computes */
    CFI_VAL_EXPR,   /* the value expression `off` computes */
};

struct cfi_reg_rule {
    int32_t off;        /* CFA offset, or expression index for *_EXPR */
    uint8_t how;        /* enum cfi_how */
    uint8_t reg;        /* for CFI_IN_REG */
};

struct cfi_rule {
    int32_t cfa_off;    /* CFA = value(cfa_reg) + cfa_off, or expression index */
    uint8_t cfa_reg;    /* DWARF register, or CFI_CFA_EXPR */
    uint8_t signal;     /* signal frame: the caller's pc is exact, not a return address */
    /* Registers by kind of rule, bit i for regs[i], so a step visits only
     * what changes (CFI_SAME registers are in none of them). */
    uint32_t undef;     /* CFI_UNDEF */
    uint32_t at_cfa;    /* CFI_AT_CFA: the usual saved register */
    uint32_t other;     /* the rest */
    struct cfi_reg_rule regs[CFI_NREGS];
};

/* One DWARF expression operation, as libdw decodes it. */
struct cfi_op {
    uint8_t atom;
    uint64_t n1, n2;
    uint64_t offset;    /* byte offset in the expression, for skip/bra targets */
};

struct cfi_expr {
    const struct cfi_op *ops;
    uint32_t nops;
};

struct cfi;

/*
 * Open PATH and prepare to read its CFI.  Returns NULL with errno set when
 * the file cannot be opened (open's errno) or is not ELF (ENOEXEC); a file
 * without any CFI is not an error (every lookup then fails).
 * Free with cfi__delete, which accepts NULL.
 */
struct cfi *cfi__new(const char *path);
/* The same for an ELF image in memory (such as a vdso), which is copied. */
struct cfi *cfi__new_image(const void *image, size_t size);
void cfi__delete(struct cfi *cfi);

/*
 * The rule at file offset OFF, or NULL when the file has no CFI covering
 * it.  The pointer stays valid until cfi__delete.  Costs one hash lookup
 * after the first call for an offset.
 */
const struct cfi_rule *cfi__rule(struct cfi *cfi, uint64_t off);

/* The expression with index IDX of a rule from this cfi; its ops stay
 * valid until the next cfi__rule call (which may add expressions). */
struct cfi_expr cfi__expr(const struct cfi *cfi, int32_t idx);

/*
 * Whether file offset OFF is in the first CFI_ENTRY_STUB bytes of the
 * file's entry point.  The kernel jumps there with nothing to return to,
 * so it is the outermost frame even without CFI saying so.  ld.so's _start
 * and _dl_start_user have none, and the latter runs the constructors
 * through _dl_init: on x86-64 the two take 64 bytes (glibc 2.36), more on
 * aarch64.  Only code without CFI is asked about.
 */
#define CFI_ENTRY_STUB 128
int cfi__is_entry(const struct cfi *cfi, uint64_t off);

/*
 * Copy LEN bytes of the file at file offset OFF into BUF: what the loader
 * mapped there at start (code and read-only data; writable data may have
 * changed since).  Returns 0, or -EFAULT when the range is not in the
 * file.
 */
int cfi__read(const struct cfi *cfi, uint64_t off, void *buf, size_t len);

#endif /* PYMERGE_CFI_H */
