/*
 * views.c - the merge rules.
 *
 * Mixed view: a run of plumbing frames (eval loop, call helpers, the
 * trampoline's evaluator, pyperfmap's hook) that touches a Python frame on
 * either side is dropped.  So "f (a.py)" -> _PyEval_EvalFrameDefault ->
 * _PyFunction_Vectorcall -> "g (a.py)" becomes f -> g, and a sample taken
 * inside the eval loop of g ends at g.  Plumbing between two native frames
 * (no Python frame next to it) is kept: there it is the best name known.
 * Before that, an unnamed frame of the interpreter's own binary (a stripped
 * python3.11's "[python3.11]") goes when it lies anywhere between two
 * Python frames: there it is call machinery or work done for the frame
 * rootward of it, and says nothing.  Leafward of every Python frame it
 * stays: there it may be the work itself (a dict lookup, the GC).
 */
#include "views.h"
#include "ownview.h"

#include "waits.h"

#include <string.h>

/* A thread waiting for the GIL: everything from take_gil leafward (the
 * condition variable, the futex, the scheduler) becomes one [GIL wait]
 * frame, and the calls that lead into take_gil go with it, so the wait
 * sits right under the code that wanted to run.  take_gil that does not
 * block (an uncontended GIL) is just code.  Copies in to out. */
static size_t gil_wait(const struct symbols *sy, const uint32_t *in, size_t n, uint32_t *out)
{
    size_t take = n;
    for (size_t i = n; i-- > 0;)    /* the rootmost take_gil */
        if (symbols__get(sy, in[i])->gil == GIL_TAKE) {
            take = i;
            break;
        }
    int blocks = 0;
    for (size_t i = 0; i < take && take < n && !blocks; i++)
        blocks = symbols__get(sy, in[i])->gil == GIL_BLOCK;
    if (!blocks) {
        memcpy(out, in, n * sizeof(*in));
        return n;
    }
    size_t m = 0, i = take + 1;
    out[m++] = symbols__gil_wait(sy);
    while (i < n && symbols__get(sy, in[i])->gil == GIL_ENTRY)
        i++;
    while (i < n)
        out[m++] = in[i++];
    return m;
}

/* In place (the views' convention for these passes). */
static size_t drop_interp_unnamed(const struct symbols *sy, uint32_t *fr, size_t n)
{
    size_t leafmost = n, rootmost = 0;
    for (size_t i = 0; i < n; i++)
        if (symbols__get(sy, fr[i])->kind == FRAME_PYTHON) {
            if (leafmost == n)
                leafmost = i;
            rootmost = i;
        }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!(i > leafmost && i < rootmost && symbols__get(sy, fr[i])->interp_unnamed))
            fr[m++] = fr[i];
    return m;
}

/* In place is allowed: out may be in (it never overtakes the reading). */
static size_t mixed(const struct symbols *sy, const uint32_t *in, size_t n, uint32_t *out)
{
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        if (!symbols__get(sy, in[i])->plumbing) {
            out[m++] = in[i++];
            continue;
        }
        size_t j = i;
        while (j < n && symbols__get(sy, in[j])->plumbing)
            j++;
        int py_leafward = m > 0 && symbols__get(sy, out[m - 1])->kind == FRAME_PYTHON;
        int py_rootward = j < n && symbols__get(sy, in[j])->kind == FRAME_PYTHON;
        if (!py_leafward && !py_rootward)
            while (i < j)
                out[m++] = in[i++];
        i = j;
    }
    return m;
}

/* Drops the launcher (python -m pyperfmap, runpy) from stacks that reach the
 * program's own Python frames: from its rootmost frame through whatever
 * lies between its leafmost frame and the program's first frame (exec,
 * the code-object call), so the program starts at its <module>.  Stacks
 * still inside the launcher keep it. */
static size_t strip_launcher(const struct symbols *sy, uint32_t *fr, size_t n)
{
    size_t leafmost = n, rootmost = 0;
    for (size_t i = 0; i < n; i++)
        if (symbols__get(sy, fr[i])->launcher) {
            if (leafmost == n)
                leafmost = i;
            rootmost = i;
        }
    size_t program = leafmost;   /* the program's frame nearest the launcher */
    while (program-- > 0)
        if (symbols__get(sy, fr[program])->kind == FRAME_PYTHON)
            break;
    if (leafmost == n || program >= leafmost)
        return n;
    memmove(fr + program + 1, fr + rootmost + 1, (n - rootmost - 1) * sizeof(*fr));
    return n - (rootmost - program);
}

size_t view__apply(const struct view_opts *o, const struct symbols *sy, const uint32_t *in,
                   size_t n, uint32_t *out)
{
    if (o->view == VIEW_NATIVE) {
        memcpy(out, in, n * sizeof(*in));
        return n;
    }
    size_t m = gil_wait(sy, in, n, out);
    m = ownview__apply(sy, out, m);
    m = drop_interp_unnamed(sy, out, m);
    m = strip_launcher(sy, out, mixed(sy, out, m, out));
    if (o->view == VIEW_MIXED)
        return m;
    /* Python view: Python frames, and the leaf if it is native code (and
     * the [truncated] root of an incomplete DWARF stack); a wait's leaf
     * names what the native frames wait on; [pyperfmap] is a leaf only
     * where no Python frame called it, else the time is the caller's. */
    waits__name_leaf(sy, out, m);
    size_t k = 0, py = 0;
    for (size_t i = 0; i < m; i++)
        py += symbols__get(sy, out[i])->kind == FRAME_PYTHON;
    for (size_t i = 0; i < m; i++) {
        const struct frame *f = symbols__get(sy, out[i]);
        if (f->kind == FRAME_PYTHON || f->kind == FRAME_ROOT ||
            (i == 0 && o->native_leaf && (!f->own || !py)))
            out[k++] = out[i];
    }
    return k;
}
