/* ownview.c - pyperfmap's own frames out of the user's views. */
#include "ownview.h"

#include "ownframes.h"

size_t ownview__apply(const struct symbols *sy, uint32_t *fr, size_t n)
{
    /* The rootmost frame of pyperfmap's own work, and leafward of it up
     * to the next Python frame (what that work called); a mode's marker
     * leaf ([syscall write]) and other named frames (FRAME_ROOT) stay */
    size_t work = n;
    for (size_t i = n; i-- > 0;)
        if (symbols__get(sy, fr[i])->own == OWN_WORK) {
            work = i;
            break;
        }
    size_t from = work;
    while (work < n && from > 0 && symbols__get(sy, fr[from - 1])->kind != FRAME_PYTHON)
        from--;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const struct frame *f = symbols__get(sy, fr[i]);
        if (work < n && i >= from && i <= work && f->kind != FRAME_ROOT) {
            if (i == work)
                fr[m++] = symbols__own_work(sy);
        } else if (f->own != OWN_PASS) {
            fr[m++] = fr[i];
        }
    }
    return m;
}
