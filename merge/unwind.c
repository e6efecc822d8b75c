/* unwind.c - frame-pointer callchains into frames (see unwind.h). */
#include "unwind.h"

static int is_kernel_mode(uint16_t cpumode)
{
    return cpumode == PERF_RECORD_MISC_KERNEL || cpumode == PERF_RECORD_MISC_HYPERVISOR;
}

size_t unwind_fp(const struct pd_sample *s, uint16_t misc, struct uframe *out, size_t max)
{
    uint16_t mode = misc & PERF_RECORD_MISC_CPUMODE_MASK;
    size_t n = 0;
    int first = 1;

    if (!s->ips || s->nr == 0) {
        if (max == 0)
            return 0;
        out[0] = (struct uframe){s->ip, (uint8_t)is_kernel_mode(mode),
                                 mode == PERF_RECORD_MISC_GUEST_KERNEL ||
                                     mode == PERF_RECORD_MISC_GUEST_USER, 0};
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
            case (uint64_t)PERF_CONTEXT_GUEST:
            case (uint64_t)PERF_CONTEXT_GUEST_KERNEL:
                mode = PERF_RECORD_MISC_GUEST_KERNEL;
                break;
            case (uint64_t)PERF_CONTEXT_GUEST_USER:
                mode = PERF_RECORD_MISC_GUEST_USER;
                break;
            default:
                return n;               /* a corrupt chain: keep what came before */
            }
            first = 1;
            continue;
        }
        out[n++] = (struct uframe){ip, (uint8_t)is_kernel_mode(mode),
                                   mode == PERF_RECORD_MISC_GUEST_KERNEL ||
                                       mode == PERF_RECORD_MISC_GUEST_USER,
                                   (uint8_t)!first};
        first = 0;
    }
    return n;
}
