/* mode_cpu.c - the cpu mode: the samples of one event, each its period
 * (cpu-clock: cpu-ns), or a numeric field of it (--weight). */
#include "mode_ops.h"

#include <errno.h>
#include <string.h>

/* --weight names a field of the selected event rather than a value: it
 * becomes the third value.  0, or -EINVAL after listing what there is. */
static int weight_field(struct modes *m, struct value_type *t)
{
    if (!m->sel || modes__field(m, m->sel, m->weight, &m->f_weight) < 0)
        return -EINVAL;
    t[2].name = m->weight;
    profile__set_types(m->p, t, 3, 2);
    m->field = 2;
    return 0;
}

static int cpu_start(struct modes *m, struct perf_reader *r)
{
    (void)r;
    int clock = m->sel ? modes__is_clock(m->sel->name) : 0;
    struct value_type t[] = {{"samples", "count"},
                             {clock ? "cpu-ns" : "period", clock ? "nanoseconds" : "count"},
                             {"", "count"}};
    if (clock)
        profile__set_types(m->p, t, 2, 1);
    const char *w = m->weight;
    if (w && strcmp(w, "period") && strcmp(w, "count") && profile__find_type(m->p, w) < 0)
        return weight_field(m, t) == 0 ? 0 : modes__no_weight(m, m->sel, w);
    return 0;
}

/* The selected event's samples; the others are not the profile's. */
static int cpu_role(struct modes *m, const struct pd_attr *a, size_t i)
{
    (void)i;
    return m->sel && !strcmp(a->name, m->sel->name) ? ROLE_SAMPLE : ROLE_NONE;
}

void modes__plain(struct modes *m, const struct pd_sample *s, uint32_t thread, uint32_t stack)
{
    uint64_t v[PROFILE_MAX_VALUES];
    modes__values(m, s, v);
    modes__put_at(m, thread, stack, s->time, v);
}

const struct mode_ops mode_cpu = {
    .mode = MODE_CPU, .types = {{"samples", "count"}, {"period", "count"}}, .weight = 1,
    .start = cpu_start, .role = cpu_role, .event = modes__plain,
};
