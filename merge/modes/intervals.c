/* intervals.c - open spans per thread (see intervals.h). */
#include "intervals.h"
#include "idmap.h"
#include "util.h"

#include <stdlib.h>

struct slot {
    struct span s;
    int open;
};

struct intervals {
    struct idmap by_tid;        /* tid -> slot index + 1 */
    struct slot *slots;
    size_t n, cap, drained;
};

struct intervals *intervals__new(void)
{
    return xcalloc(1, sizeof(struct intervals));
}

void intervals__delete(struct intervals *iv)
{
    if (!iv)
        return;
    idmap__exit(&iv->by_tid);
    free(iv->slots);
    free(iv);
}

static struct slot *slot_of(struct intervals *iv, u32 tid, int create)
{
    uintptr_t at = (uintptr_t)idmap__get(&iv->by_tid, tid);
    if (at)
        return &iv->slots[at - 1];
    if (!create)
        return NULL;
    GROW(iv->slots, iv->cap, iv->n + 1);
    iv->slots[iv->n] = (struct slot){{0, 0, 0}, 0};
    idmap__put(&iv->by_tid, tid, (void *)(uintptr_t)(iv->n + 1));
    return &iv->slots[iv->n++];
}

int intervals__open(struct intervals *iv, uint32_t tid, const struct span *s, struct span *old)
{
    struct slot *sl = slot_of(iv, tid, 1);
    int replaced = sl->open;
    if (replaced)
        *old = sl->s;
    sl->s = *s;
    sl->open = 1;
    return replaced;
}

int intervals__close(struct intervals *iv, uint32_t tid, struct span *s)
{
    struct slot *sl = slot_of(iv, tid, 0);
    if (!sl || !sl->open)
        return 0;
    *s = sl->s;
    sl->open = 0;
    return 1;
}

int intervals__drain(struct intervals *iv, struct span *s)
{
    while (iv->drained < iv->n) {
        struct slot *sl = &iv->slots[iv->drained++];
        if (sl->open) {
            sl->open = 0;
            *s = sl->s;
            return 1;
        }
    }
    return 0;
}
