/*
 * unwind_dwarf.h - the user part of a `perf record --call-graph dwarf`
 * sample: from the user registers and the copy of the user stack to the
 * list of return addresses, through ELF code (CFI) and through Python
 * trampolines (their fixed rules).  x86-64.
 *
 * WHAT THE CALLER PROVIDES
 *   A lookup callback that says what the sampled process had mapped at an
 *   address at the time of the sample:
 *
 *     int lookup(void *ctx, uint64_t addr, struct unwind_map *map);
 *
 *   It fills *map and returns 0, or a negative errno (-ENOENT) when
 *   nothing is mapped there.  ctx is passed through unchanged (e.g. the
 *   process or thread the sample belongs to).  map->kind says what holds addr:
 *
 *   UNWIND_MAP_ELF            an ELF file mapping: start, end, pgoff as in
 *                             MMAP2, path = the file to read (the mapped
 *                             file, or a saved copy such as perf's vdso
 *                             copy) or, with path NULL, image/image_size =
 *                             the ELF image in memory (pymerge's own vdso,
 *                             which is this machine's), and dso = a key for
 *                             that file.  The
 *                             unwinder caches the file's CFI under dso, so
 *                             the same file must give the same key and the
 *                             key must stay unique while the unwinder lives
 *                             (a struct dso pointer, an interned path).
 *                             path or image is only read the first time a
 *                             dso is seen.
 *   UNWIND_MAP_PYPERFMAP      a pyperfmap trampoline (see trampoline.h for
 *                             how to tell): start = the trampoline's first
 *                             byte (addr & ~(PYPERFMAP_TRAMPOLINE_SIZE-1)).
 *   UNWIND_MAP_CPYTHON_PERF   a CPython 3.12/3.13 `-X perf` trampoline: an
 *                             anonymous executable mapping whose perf map
 *                             entry (named py::...) is not in a pyperfmap
 *                             arena; start = the entry's start address.
 *
 *   Any other address (anonymous memory without a perf map entry, a
 *   file that is gone) returns -1.  The callback is called up to once per
 *   frame (not when the frame is in the same ELF mapping as the one
 *   before), and for memory a rule needs outside the stack copy, so it
 *   must be cheap: no allocation, a cached search.
 *
 * WHAT THE CALLER GETS
 *   ips[0] is the sampled user pc; ips[1..] are return addresses, callee
 *   to caller, like the user part of a frame-pointer callchain (symbolize
 *   them at pc - 1).  acts[i], when asked for, holds the identities that
 *   the pyperfmap trampoline of frame i keeps (trampoline.h), or 0s:
 *   another kind of frame, or a trampoline caught before it stored them.  The return value says why the walk stopped:
 *   UNWIND_COMPLETE means the outermost frame was reached (its CFI marks the
 *   return address undefined, as _start and clone do); anything else
 *   means the stack is incomplete, and the caller should put a
 *   `[truncated]` frame at its root and count the reason.
 *
 * LIFETIME AND THREADS
 *   unwind_dwarf__new/__delete; one unwinder per thread (its caches are
 *   not locked).  Walking a sample allocates nothing once the CFI of the
 *   files involved and the rules of the addresses involved are cached.
 */
#ifndef PYMERGE_UNWIND_DWARF_H
#define PYMERGE_UNWIND_DWARF_H

#include "perfdata.h"
#include "unwind.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum unwind_map_kind {
    UNWIND_MAP_ELF = 1,
    UNWIND_MAP_PYPERFMAP,
    UNWIND_MAP_CPYTHON_PERF,
};

struct unwind_map {
    enum unwind_map_kind kind;
    uint64_t start, end;    /* the mapping (ELF) or the trampoline */
    uint64_t pgoff;         /* ELF: file offset of start */
    const char *path;       /* ELF: file to read CFI and data from, or NULL: */
    const void *image;      /* ELF: its image in memory */
    size_t image_size;
    const void *dso;        /* ELF: cache key of that file */
};

typedef int (*unwind_lookup_fn)(void *ctx, uint64_t addr, struct unwind_map *map);

/* The user registers and stack of one sample, as perf recorded them. */
struct unwind_user {
    uint64_t abi;           /* PERF_SAMPLE_REGS_ABI_*; NONE: no registers */
    uint64_t mask;          /* attr.sample_regs_user */
    const uint64_t *regs;   /* popcount(mask) values, enum perf_event_x86_regs order */
    const uint8_t *stack;   /* STACK_USER data: a copy of memory from sp upward */
    uint64_t stack_size;    /* its dyn_size: how many bytes are valid */
};

enum unwind_stop {
    UNWIND_COMPLETE,        /* reached the outermost frame: complete */
    UNWIND_TRUNCATED,   /* the stack copy ended before the root */
    UNWIND_NO_REGS,     /* no usable user registers (none, 32-bit, no sp or ip) */
    UNWIND_NO_MAP,      /* an address the lookup does not know */
    UNWIND_NO_CFI,      /* ELF code without unwind info, or unreadable file */
    UNWIND_BAD_FRAME,   /* garbage: stack not growing, bad expression, bad memory */
    UNWIND_DEPTH,       /* the ips array is full */
    UNWIND_NSTOPS
};

/* A short name for a stop reason, for summaries ("truncated", "no-cfi", ...). */
const char *unwind_stop__name(enum unwind_stop stop);

struct unwind_dwarf;

/* Never NULL: running out of memory exits, as everywhere in pymerge.
 * __delete accepts NULL. */
struct unwind_dwarf *unwind_dwarf__new(void);
void unwind_dwarf__delete(struct unwind_dwarf *u);

/*
 * Unwind one sample into ips (room for max >= 1 entries), and the
 * trampoline identities into acts unless it is NULL (room for as many);
 * *n gets the number written.  Never fails as a call: garbage input ends
 * the walk with the frames found so far and a stop reason.
 */
enum unwind_stop unwind_dwarf__walk(struct unwind_dwarf *u, const struct unwind_user *user,
                                    unwind_lookup_fn lookup, void *ctx,
                                    uint64_t *ips, struct tramp_ids *acts, unsigned max,
                                    unsigned *n);

/* Whether samples of this event carry a user stack to unwind. */
int unwind_dwarf__wanted(const struct perf_event_attr *attr);

/*
 * The frames of one such sample, leaf first, in the form unwind_fp()
 * gives for frame-pointer samples: the kernel part of its callchain, then
 * the user part unwound here.  *stop tells how the user part ended;
 * UNWIND_COMPLETE also for a kernel thread, which has no user part.
 */
size_t unwind_dwarf__sample(struct unwind_dwarf *u, const struct pd_sample *s, uint16_t misc,
                            unwind_lookup_fn lookup, void *ctx, struct uframe *out, size_t max,
                            enum unwind_stop *stop);

/*
 * Whether the code at `at` keeps a frame pointer, by its CFI (sharing this
 * unwinder's cache): the canonical frame address is computed from %rbp
 * there (KEPT), from another register (NONE: %rbp may hold anything, so a
 * frame-pointer walk past this function goes astray), or `at` is no code
 * with CFI (UNKNOWN: unmapped, data, a file without CFI).  Trampolines
 * count as KEPT: a walk goes through them.  *map gets what lookup says is mapped at `at`.  Look up a return
 * address at address - 1.  For the check of frame-pointer recordings
 * (fpcheck.h).
 */
enum unwind_fp { UNWIND_FP_UNKNOWN, UNWIND_FP_NONE, UNWIND_FP_KEPT };
enum unwind_fp unwind_dwarf__keeps_fp(struct unwind_dwarf *u, unwind_lookup_fn lookup, void *ctx,
                                      uint64_t at, struct unwind_map *map);

/*
 * For -v: how the user stacks of unwind_dwarf__sample ended (complete,
 * truncated, errors by cause), and the first file whose CFI could not be
 * read (each file is tried once; unwinds through it stop with NO_CFI).
 * Nothing when no sample was unwound.  Through warnx_, on stderr.
 */
void unwind_dwarf__summary(const struct unwind_dwarf *u);

#endif /* PYMERGE_UNWIND_DWARF_H */
