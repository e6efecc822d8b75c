/*
 * unwind.h - a sample's code addresses, leaf first.
 *
 * Frame-pointer callchains come from the kernel with context markers
 * (PERF_CONTEXT_KERNEL, _USER, _HV) between the parts; each part
 * starts with the exact address where that context was interrupted, and
 * the rest are return addresses.  DWARF unwinding (unwind_dwarf.h) fills
 * the same struct for the user part.
 */
#ifndef PYMERGE_UNWIND_H
#define PYMERGE_UNWIND_H

#include "perfdata.h"

#include <stddef.h>
#include <stdint.h>

/* What a pyperfmap trampoline frame keeps (libpyperfmap/trampoline.h);
 * 0 where it kept nothing. */
struct tramp_ids {
    uint64_t activation;
    uint64_t parent;        /* its caller's path */
};

struct uframe {
    uint64_t addr;
    uint8_t kernel;         /* kernel (or hypervisor) code */
    uint8_t guest;          /* a guest's sample (perf kvm): not resolvable */
    uint8_t is_return;      /* a return address: symbolize addr - 1 */
    struct tramp_ids ids;   /* a pyperfmap trampoline's, from a DWARF stack copy */
};

/* Deepest stack kept; deeper chains keep their leaf end. */
#define UNWIND_MAX_FRAMES 1024

/* The sample's frames from its callchain (or its ip without one), leaf
 * first; misc is the sample record's header.misc.  Returns the count: 0
 * for a corrupt chain (an entry above PERF_CONTEXT_MAX that names no
 * context), which perf discards whole. */
size_t unwind_fp(const struct pd_sample *s, uint16_t misc, struct uframe *out, size_t max);

#endif
