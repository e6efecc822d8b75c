/* test_unwind_fp.c - frame-pointer callchains into frames (merge/unwind/unwind.c):
 * context markers set each frame's mode, only the first frame of a context
 * is not a return address, a chain without entries is the sample's ip, and
 * a corrupt chain (a stray word above PERF_CONTEXT_MAX, which the kernel's
 * user stack walk can store) gives no frame at all, as perf discards it. */
#include "check.h"
#include "unwind.h"

#include <linux/perf_event.h>

static size_t unwind(const uint64_t *ips, uint64_t nr, uint64_t ip, uint16_t misc,
                     struct uframe *out, size_t max)
{
    struct pd_sample s = {0};
    s.ip = ip;
    s.ips = ips;
    s.nr = nr;
    return unwind_fp(&s, misc, out, max);
}

int main(void)
{
    struct uframe f[8];
    const uint64_t K = (uint64_t)PERF_CONTEXT_KERNEL, U = (uint64_t)PERF_CONTEXT_USER;

    /* kernel then user: modes follow the markers, each context's first
     * frame is where it was interrupted, the rest are return addresses */
    const uint64_t mixed[] = {K, 0xffffffff81000010u, 0xffffffff81000020u, U, 0x401000, 0x402000};
    CHECK(unwind(mixed, 6, 0, PERF_RECORD_MISC_KERNEL, f, 8) == 4);
    CHECK(f[0].addr == 0xffffffff81000010u && f[0].kernel && !f[0].is_return);
    CHECK(f[1].kernel && f[1].is_return);
    CHECK(f[2].addr == 0x401000 && !f[2].kernel && !f[2].is_return);
    CHECK(f[3].addr == 0x402000 && !f[3].kernel && f[3].is_return);

    /* the deepest frames go when out is short; the leaf end stays */
    CHECK(unwind(mixed, 6, 0, PERF_RECORD_MISC_KERNEL, f, 3) == 3);
    CHECK(f[2].addr == 0x401000);

    /* a corrupt user part: no frame, kernel ones included */
    const uint64_t corrupt[] = {K, 0xffffffff81000010u, U, 0x401000, (uint64_t)-1, 0x402000};
    CHECK(unwind(corrupt, 6, 0, PERF_RECORD_MISC_KERNEL, f, 8) == 0);

    /* no callchain entries, or none recorded: the sample's own ip */
    CHECK(unwind(mixed, 0, 0x403000, PERF_RECORD_MISC_USER, f, 8) == 1);
    CHECK(f[0].addr == 0x403000 && !f[0].kernel);
    CHECK(unwind(NULL, 0, 0xffffffff81000030u, PERF_RECORD_MISC_KERNEL, f, 8) == 1);
    CHECK(f[0].kernel);
    CHECK(unwind(NULL, 0, 0x403000, PERF_RECORD_MISC_USER, f, 0) == 0);

    /* a guest context in a chain is a stray word too (the kernel walks no
     * guest stack, and perf takes it for corruption) */
    const uint64_t guest[] = {U, 0x401000, (uint64_t)PERF_CONTEXT_GUEST_USER, 0x402000};
    CHECK(unwind(guest, 4, 0, PERF_RECORD_MISC_USER, f, 8) == 0);

    /* a guest's sample without a chain is marked, never resolved as host code */
    CHECK(unwind(NULL, 0, 0x401000, PERF_RECORD_MISC_GUEST_USER, f, 8) == 1);
    CHECK(f[0].guest && !f[0].kernel);
    return 0;
}
