/* mode_spans.c - the modes whose events pair into spans of time, per
 * thread: offcpu and wall (a switch-out to its switch-in), syscalls
 * (sys_enter to sys_exit). */
#include "mode_ops.h"

#include <errno.h>

static int offcpu_found(struct perf_reader *r)
{
    return modes__has_event(r, "sched:sched_switch");
}

static int wall_found(struct perf_reader *r)
{
    return offcpu_found(r) && (modes__has_event(r, "cpu-clock") || modes__has_event(r, "task-clock"));
}

static int syscalls_found(struct perf_reader *r)
{
    return modes__has_event(r, "raw_syscalls:sys_enter") &&
           modes__has_event(r, "raw_syscalls:sys_exit");
}

/* The switch's fields, and where the values go (offcpu: count, offcpu-ns;
 * wall: samples, cpu-ns, offcpu-ns, wall-ns). */
static int switch_start(struct modes *m, struct perf_reader *r)
{
    if (modes__need_field(m, r, "sched:sched_switch", "prev_state", &m->f_state) < 0)
        return -EINVAL;
    m->has_next_pid = modes__need_field(m, r, "sched:sched_switch", "next_pid",
                                        &m->f_next_pid) == 0;
    if (m->mode == MODE_WALL)
        m->v_cpu = 1, m->v_off = 2, m->v_wall = 3;
    else
        m->v_cpu = SIZE_MAX, m->v_off = 1, m->v_wall = 1;
    m->spans = intervals__new();
    return 0;
}

/* Switches, and in the wall mode the clock's samples. */
static int switch_role(struct modes *m, const struct pd_attr *a, size_t i)
{
    (void)i;
    return event_matches(a->name, "sched:sched_switch")          ? ROLE_SWITCH
           : m->mode == MODE_WALL && modes__is_clock(a->name) ? ROLE_SAMPLE
                                                                : ROLE_NONE;
}

static int syscalls_start(struct modes *m, struct perf_reader *r)
{
    if (modes__need_field(m, r, "raw_syscalls:sys_enter", "id", &m->f_id) < 0)
        return -EINVAL;
    m->spans = intervals__new();
    return 0;
}

static int syscalls_role(struct modes *m, const struct pd_attr *a, size_t i)
{
    (void)m, (void)i;
    return event_matches(a->name, "raw_syscalls:sys_enter")  ? ROLE_SYS_ENTER
           : event_matches(a->name, "raw_syscalls:sys_exit") ? ROLE_SYS_EXIT
                                                              : ROLE_NONE;
}

/* A span's values: off-CPU time, or one system call and its latency. */
static void close_span(struct modes *m, const struct span *sp, uint64_t end)
{
    uint64_t v[PROFILE_MAX_VALUES] = {0}, d = end > sp->start ? end - sp->start : 0;
    v[0] = 1;
    if (m->mode == MODE_SYSCALLS) {
        v[1] = d;
    } else {
        v[m->v_off] = d;
        v[m->v_wall] = d;
    }
    modes__put(m, &(struct pentry){.thread = sp->thread, .stack = sp->stack, .v = v, .timed = 1,
                                   .begin = sp->start, .end = sp->start + d});
}

/* A switch-out opens the thread's off-CPU span; in a system-wide
 * recording the switch also says who comes in, which ends that one's. */
static void switch_event(struct modes *m, const struct pd_sample *s, uint32_t thread,
                         uint32_t stack)
{
    struct span sp = {s->time, thread, stack}, old;
    uint64_t next;
    if (modes__role(m, s->attr_idx) == ROLE_SAMPLE) {
        modes__plain(m, s, thread, stack);
        return;
    }
    if (m->has_next_pid && td_field__read(&m->f_next_pid, s->raw, s->raw_size, &next) == 0 &&
        next && intervals__close(m->spans, (uint32_t)next, &old))
        close_span(m, &old, s->time);
    if (s->tid == 0)            /* the idle task is not waiting */
        return;
    if (intervals__open(m->spans, s->tid, &sp, &old))
        m->unpaired++;          /* its switch-in was lost */
}

static void switch_in(struct modes *m, uint32_t tid, uint64_t time)
{
    struct span old;
    if (intervals__close(m->spans, tid, &old))
        close_span(m, &old, time);
}

static void syscall_event(struct modes *m, const struct pd_sample *s, uint32_t thread,
                          uint32_t stack)
{
    struct span sp = {s->time, thread, stack}, old;
    if (modes__role(m, s->attr_idx) == ROLE_SYS_EXIT) {
        if (intervals__close(m->spans, s->tid, &old))
            close_span(m, &old, s->time);
    } else if (intervals__open(m->spans, s->tid, &sp, &old)) {
        m->unpaired++;
        close_span(m, &old, old.start);
    }
}

/* Spans still open at the end: off-CPU until the end of the recording; a
 * system call that never returned, with no latency. */
static void spans_finish(struct modes *m)
{
    struct span sp;
    while (intervals__drain(m->spans, &sp)) {
        m->unpaired += m->mode == MODE_SYSCALLS;
        close_span(m, &sp, m->mode == MODE_SYSCALLS ? sp.start : m->last_time);
    }
}

const struct mode_ops mode_offcpu = {
    .mode = MODE_OFFCPU, .found = offcpu_found,
    .types = {{"count", "count"}, {"offcpu-ns", "nanoseconds"}}, .weight = 1,
    .start = switch_start, .role = switch_role, .event = switch_event, .switch_in = switch_in,
    .finish = spans_finish,
};

const struct mode_ops mode_wall = {
    .mode = MODE_WALL, .found = wall_found,
    .types = {{"samples", "count"}, {"cpu-ns", "nanoseconds"}, {"offcpu-ns", "nanoseconds"},
              {"wall-ns", "nanoseconds"}}, .weight = 3,
    .start = switch_start, .role = switch_role, .event = switch_event, .switch_in = switch_in,
    .finish = spans_finish,
};

const struct mode_ops mode_syscalls = {
    .mode = MODE_SYSCALLS, .found = syscalls_found,
    .types = {{"count", "count"}, {"latency-ns", "nanoseconds"}}, .weight = 0,
    .start = syscalls_start, .role = syscalls_role, .event = syscall_event, .finish = spans_finish,
};
