/* unwind.c - frame-pointer callchains into frames (see unwind.h). */
#include "unwind.h"

/* A frame at ip, interrupted or called in the given cpumode. */
static struct uframe frame(uint64_t ip, uint16_t mode, int is_return)
{
    return (struct uframe){ip,
                           mode == PERF_RECORD_MISC_KERNEL || mode == PERF_RECORD_MISC_HYPERVISOR,
                           mode == PERF_RECORD_MISC_GUEST_KERNEL ||
                               mode == PERF_RECORD_MISC_GUEST_USER,
                           (uint8_t)is_return, {0, 0}};
}

size_t unwind_fp(const struct pd_sample *s, uint16_t misc, struct uframe *out, size_t max)
{
    uint16_t mode = misc & PERF_RECORD_MISC_CPUMODE_MASK;
    size_t n = 0;
    int first = 1;

    if (!s->ips || s->nr == 0) {
        if (max == 0)
            return 0;
        out[0] = frame(s->ip, mode, 0);
        return 1;
    }
    for (uint64_t i = 0; i < s->nr && n < max; i++) {
        uint64_t ip = s->ips[i];
        if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
            switch (ip) {
            case (uint64_t)PERF_CONTEXT_HV:
                mode = PERF_RECORD_MISC_HYPERVISOR;
                break;
            case (uint64_t)PERF_CONTEXT_KERNEL:
                mode = PERF_RECORD_MISC_KERNEL;
                break;
            case (uint64_t)PERF_CONTEXT_USER:
                mode = PERF_RECORD_MISC_USER;
                break;
            default:
                /* Not a context the kernel puts in a chain (guest ones are
                 * never there: it does not walk a guest's stack): a
                 * corrupt chain, as the kernel's walk of a user stack
                 * stores stray words such as -1 or -2048. perf discards
                 * the whole chain, kernel part too, and so do we: keeping
                 * the frames before it made `pymerge` and `perf script`
                 * disagree on such samples. */
                return 0;
            }
            first = 1;
            continue;
        }
        out[n++] = frame(ip, mode, !first);
        first = 0;
    }
    return n;
}
