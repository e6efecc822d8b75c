/*
 * fuzz_stitch.c - stitching (merge/unwind/stitch.c) driven by any bytes: the
 * activations and caller paths it is given come from stack copies, which
 * are outside input.  Each input is a sequence of samples; the emitted and
 * stitched stacks must stay within max_frames, and everything waiting must
 * be emitted exactly once.
 *
 * A sample: thread (1 byte), flags (1: complete, 2: may wait, 4: the
 * thread exits afterwards), n frames (1 byte, at most MAXF), n bytes of
 * frame ids, n_acts (1 byte), then per activation 3 bytes: its position,
 * its identity and its trampoline.  Its caller's path is made consistent
 * with the next trampoline out (or the root) unless the identity byte's
 * top bit says otherwise, so that paths do link up.
 */
#include "stitch.h"
#include "../../libpyperfmap/trampoline.h"

#include <stdlib.h>
#include <string.h>

#define MAXF 48

static size_t emitted, waiting;

static void emit(void *ctx, const void *payload, const uint32_t *ids, size_t n, int complete)
{
    (void)ctx, (void)payload, (void)ids, (void)complete;
    if (n > MAXF || waiting == 0)
        abort();
    emitted++;
    waiting--;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct stitch *st = stitch__new(sizeof(int), MAXF, (uint32_t)'?', emit, NULL);
    size_t at = 0;
    emitted = waiting = 0;
    while (at + 3 <= size) {
        uint64_t thread = data[at] & 7;
        int flags = data[at + 1];
        size_t n = data[at + 2] % (MAXF + 1);
        at += 3;
        if (at + n + 1 > size)
            break;
        uint32_t ids[MAXF];
        for (size_t i = 0; i < n; i++)
            ids[i] = data[at + i];
        at += n;
        size_t n_acts = data[at++] % (MAXF + 1);
        if (at + 3 * n_acts > size || n == 0)
            break;
        struct stitch_act acts[MAXF];
        uint32_t last_pos = 0;
        for (size_t i = 0; i < n_acts; i++, at += 3) {
            /* positions must rise, leaf first, and stay inside the stack */
            uint32_t pos = last_pos + (i ? 1u : 0u) + data[at] % 4;
            if (pos >= n) {
                n_acts = i;
                break;
            }
            last_pos = pos;
            acts[i] = (struct stitch_act){1 + (data[at + 1] & 0x7f),
                                          0x1000u + (uint64_t)data[at + 2] * PYPERFMAP_TRAMPOLINE_SIZE,
                                          pos, data[at + 1] >> 7, data[at + 2]};
        }
        /* callers' paths, root outward in: consistent unless marked */
        uint64_t parent = PYPERFMAP_PATH_ROOT;
        for (size_t i = n_acts; i-- > 0;) {
            if (acts[i].parent)
                acts[i].parent = (parent ^ acts[i].id) | 1;   /* a broken chain */
            else
                acts[i].parent = parent;
            parent = pyperfmap_path__step(acts[i].parent, acts[i].key);
        }
        int payload = 1;
        size_t len = n;
        enum stitch_result r = stitch__sample(st, thread, flags >> 6, ids, &len, acts, n_acts, flags & 1,
                                              (flags & 2) ? &payload : NULL);
        if (len > MAXF || (r != STITCH_STITCHED && len != n))
            abort();
        if (r == STITCH_WAITING)
            waiting++;
        if (flags & 4)
            stitch__thread_exit(st, thread);
    }
    stitch__finish(st);
    if (waiting != 0)
        abort();
    stitch__delete(st);
    return 0;
}
