/* gate.c - several runs a side compared, and the slower spans said
 * (gate.h). */
#include "gate.h"
#include "util.h"

#include <errno.h>
#include <math.h>

int gate__compare(struct spandiff **out, const struct gate_in *g, const struct spandiff_opts *so)
{
    struct spandiff_acc *a = spandiff__new(g->runs[0], g->runs[1]);
    for (size_t r = 0; r < g->runs[0] + g->runs[1]; r++) {
        struct profile *p;
        int ret = input__load(&p, g->paths[r], g->kind, g->o);
        if (ret == 0 && spandiff__add(a, r, p) < 0) {
            warnx_("%s: weighs its stacks in %s, not as the first run does", g->paths[r],
                   profile__type(p, profile__weight(p))->name);
            ret = -EINVAL;
        }
        profile__delete(p);
        if (ret < 0) {
            spandiff__delete(spandiff__finish(a, so));
            return ret;
        }
    }
    *out = spandiff__finish(a, so);
    return 0;
}

static void say(const struct spandiff *d, const struct sd_span *s)
{
    const char *u;
    double base = spandiff__shown(d, s->s.mean[0], &u), cur = spandiff__shown(d, s->s.mean[1], &u);
    char grown[512] = "no function's own time grew";
    if (s->n_grown && s->grown[0].absent >= 0) {
        const struct sd_function *f = &s->grown[0];
        snprintf(grown, sizeof grown, "%s %s: %+.3g %s per call", f->absent ? "gone" : "new", f->name,
                 spandiff__shown(d, f->per_call[1] - f->per_call[0], &u), u);
    } else if (s->n_grown) {
        const struct sd_function *f = &s->grown[0];
        snprintf(grown, sizeof grown, "%s %s: %+.3g %s per call, %+.1f%% against the rest of the "
                 "span (Holm p %.2g)", f->significant ? "grown" : "grown most, not significantly",
                 f->name, spandiff__shown(d, f->per_call[1] - f->per_call[0], &u), u,
                 spandiff__change(&f->s), f->s.p_adj);
    }
    warnx_("diff: %s is %.1f%% slower: %.4g -> %.4g %s per call (means of %zu and %zu runs; "
           "Welch p %.2g, Holm p %.2g); %s",
           s->name, spandiff__change(&s->s), base, cur, u, d->runs[0], d->runs[1], s->s.p,
           s->s.p_adj, grown);
}

size_t gate__slower(const struct spandiff *d)
{
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
        if (d->spans[i].verdict == SD_SLOWER) {
            say(d, &d->spans[i]);
            n++;
        }
    return n;
}
