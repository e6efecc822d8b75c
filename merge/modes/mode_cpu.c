/* mode_cpu.c - the cpu mode: the samples of one event, each its period
 * (cpu-clock: cpu-ns), or a numeric field of it (--weight). */
#include "mode_ops.h"

#include <errno.h>
#include <string.h>

/* --weight names a field of the selected event rather than a value: it
 * becomes the third value.  0, or -EINVAL after listing what there is. */
static int weight_field(struct modes *m, const struct pd_attr *sel, const char *weight,
                        struct value_type *t)
{
    uint64_t id;
    if (!sel || !m->td || !modes__tracepoint(sel, &id) ||
        tracedata__field(m->td, id, weight, &m->f_weight) < 0)
        return -EINVAL;
    t[2].name = weight;
    profile__set_types(m->p, t, 3, 2);
    m->field = 2;
    return 0;
}

static int cpu_start(struct modes *m, struct perf_reader *r, const struct pd_attr *sel,
                     const char *weight)
{
    int clock = sel ? modes__is_clock(sel->name) : 0;
    struct value_type t[] = {{"samples", "count"},
                             {clock ? "cpu-ns" : "period", clock ? "nanoseconds" : "count"},
                             {"", "count"}};
    if (clock)
        profile__set_types(m->p, t, 2, 1);
    for (size_t i = 0; i < m->n_roles; i++)
        if (sel && !strcmp(perf_reader__attr(r, i)->name, sel->name))
            m->role[i] = ROLE_SAMPLE;
    if (weight && strcmp(weight, "period") && strcmp(weight, "count") &&
        profile__find_type(m->p, weight) < 0)
        return weight_field(m, sel, weight, t) == 0 ? 0 : modes__no_weight(m, sel, weight);
    return 0;
}

void modes__plain(struct modes *m, const struct pd_sample *s, uint32_t thread, uint32_t stack)
{
    uint64_t v[PROFILE_MAX_VALUES];
    modes__values(m, s, v);
    modes__put_at(m, thread, stack, s->time, v);
}

const struct mode_ops mode_cpu = {
    .name = "cpu",
    .mode = MODE_CPU,
    .types = {{"samples", "count"}, {"period", "count"}},
    .n_types = 2,
    .weight = 1,
    .start = cpu_start,
    .event = modes__plain,
};
