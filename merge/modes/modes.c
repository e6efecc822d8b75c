/* modes.c - the table of modes, and the dispatch to their rows (see
 * modes.h and mode_ops.h). */
#include "contract.h"
#include "mode_ops.h"
#include "syscalls.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* In the order they are told from the recording's events: the calls and
 * allocator probes first, then the tracepoints, the cpu mode last. */
static const struct mode_ops *const modes[] = {
    &mode_calls, &mode_leaks, &mode_alloc, &mode_wall, &mode_offcpu, &mode_syscalls, &mode_cpu,
};
#define N_MODES (sizeof(modes) / sizeof(*modes))

int event_matches(const char *name, const char *want)
{
    size_t n = strlen(want);
    return strncmp(name, want, n) == 0 && (name[n] == 0 || name[n] == ':' || name[n] == '/');
}

int modes__is_clock(const char *name)
{
    return event_matches(name, "cpu-clock") || event_matches(name, "task-clock");
}

int modes__has_event(struct perf_reader *r, const char *want)
{
    for (size_t i = 0; i < perf_reader__n_attrs(r); i++)
        if (event_matches(perf_reader__attr(r, i)->name, want))
            return 1;
    return 0;
}

/* pyperf-record's probes, by their names in its group (pyperf_PID), or
 * pyperfmap's own as perf probe names them (sdt_pyperfmap): "py_alloc",
 * "call__entry"... */
int modes__is_probe(const char *name, const char *probe)
{
    const char *colon = strchr(name, ':');
    static const char group[] = CONTRACT_PROBE_GROUP_PREFIX;
    if (!colon || (strncmp(name, group, sizeof(group) - 1) && strncmp(name, "sdt_pyperfmap:", 14)))
        return 0;
    return event_matches(colon + 1, probe);
}

int modes__has_probe(struct perf_reader *r, const char *probe)
{
    for (size_t i = 0; i < perf_reader__n_attrs(r); i++)
        if (modes__is_probe(perf_reader__attr(r, i)->name, probe))
            return 1;
    return 0;
}

int modes__tracepoint(const struct pd_attr *a, uint64_t *id)
{
    *id = a->attr.config;
    return a->attr.type == PERF_TYPE_TRACEPOINT;
}

void modes__no_field(const struct modes *m, const char *event, const char *name)
{
    warnx_("%s: %s has no field %s (no tracing data in the recording?)", m->shown, event, name);
}

int modes__field(const struct modes *m, const struct pd_attr *a, const char *name,
                 struct td_field *f)
{
    uint64_t id;
    if (!m->td || !modes__tracepoint(a, &id))
        return -ENOENT;
    return tracedata__field(m->td, id, name, f);
}

int modes__need_field(struct modes *m, struct perf_reader *r, const char *event, const char *name,
                      struct td_field *f)
{
    for (size_t i = 0; i < perf_reader__n_attrs(r); i++) {
        const struct pd_attr *a = perf_reader__attr(r, i);
        uint64_t id;
        if (!event_matches(a->name, event) || !modes__tracepoint(a, &id))
            continue;
        if (modes__field(m, a, name, f) == 0)
            return 0;
        break;
    }
    modes__no_field(m, event, name);
    return -EINVAL;
}

int modes__no_weight(const struct modes *m, const struct pd_attr *a, const char *weight)
{
    struct warn_msg w;
    FILE *f = warn_begin(&w);
    fprintf(f, "%s: no value or numeric field %s for %s; values:", m->shown, weight,
            a ? a->name : "this recording");
    for (size_t i = 0; i < profile__n_types(m->p); i++)
        fprintf(f, "%s %s", i ? "," : "", profile__type(m->p, i)->name);
    uint64_t id;
    if (a && m->td && modes__tracepoint(a, &id)) {
        struct td_field_info fi;
        fprintf(f, "; numeric fields:");
        int first = 1;
        for (size_t i = 0; tracedata__field_info(m->td, id, i, &fi) == 0; i++) {
            if (!fi.numeric)
                continue;
            fprintf(f, "%s %s", first ? "" : ",", fi.name);
            first = 0;
        }
    }
    warn_end(&w);
    return -EINVAL;
}

static const struct pd_attr *attr_named(struct perf_reader *r, const char *event)
{
    for (size_t i = 0; event && i < perf_reader__n_attrs(r); i++)
        if (event_matches(perf_reader__attr(r, i)->name, event))
            return perf_reader__attr(r, i);
    return NULL;
}

/* The row for want, or the first whose events r has. */
static const struct mode_ops *choose(enum mode want, struct perf_reader *r)
{
    for (size_t i = 0; i < N_MODES; i++)
        if (want != MODE_AUTO ? modes[i]->mode == want : !modes[i]->found || modes[i]->found(r))
            return modes[i];
    return &mode_cpu;
}

/* Pairing needs every event (the roles past ROLE_SAMPLE pair): a sampled
 * tracepoint (perf record -F applied to it) drops most of them. */
static void warn_sampled(const struct modes *m, struct perf_reader *r)
{
    for (size_t i = 0; i < m->n_roles; i++) {
        const struct pd_attr *a = perf_reader__attr(r, i);
        if (m->role[i] > ROLE_SAMPLE && (a->attr.freq || a->attr.sample_period != 1))
            warnx_("%s: %s was sampled, not recorded at every event (perf record -F or -c applied"
                   " to it): its spans are incomplete; record it without -F or -c", m->shown,
                   a->name);
    }
}

/* Each attr's role, as the mode's row says; 0, or -EINVAL after saying
 * what is missing. */
static int set_roles(struct modes *m, struct perf_reader *r)
{
    for (size_t i = 0; i < m->n_roles; i++) {
        int role = m->ops->role(m, perf_reader__attr(r, i), i);
        if (role < 0)
            return role;
        m->role[i] = (uint8_t)role;
    }
    return 0;
}

static size_t n_types(const struct mode_ops *ops)
{
    size_t n = 0;
    while (n < MODE_MAX_TYPES && ops->types[n].name)
        n++;
    return n;
}

/* --weight: a value type by name; 0, or -EINVAL after listing them. */
static int set_weight(struct modes *m, const struct pd_attr *sel, const char *weight)
{
    int i = profile__find_type(m->p, weight);
    if (i < 0 && (!strcmp(weight, "count") || !strcmp(weight, "samples")))
        i = 0;      /* every mode's first value counts events */
    if (i < 0 && !strcmp(weight, "period") && m->mode == MODE_CPU)
        i = 1;
    if (i < 0)
        return modes__no_weight(m, m->mode == MODE_CPU ? sel : NULL, weight);
    profile__set_weight(m->p, (size_t)i);
    return 0;
}

int modes__init(struct modes *m, enum mode want, struct profile *p, struct perf_reader *r,
                const char *event, const char *first, const char *weight, const char *shown)
{
    memset(m, 0, sizeof(*m));
    m->p = p;
    m->shown = shown;
    m->r = r;
    m->field = -1;
    m->ops = event && want == MODE_AUTO ? &mode_cpu : choose(want, r);
    m->mode = m->ops->mode;
    size_t tsize;
    const void *tdata = perf_reader__tracing_data(r, &tsize);
    if (tdata && !(m->td = tracedata__new(tdata, tsize)))
        warnx_("%s: tracing data unreadable (%s): event fields are unknown", shown,
               strerror(errno));
    m->n_roles = perf_reader__n_attrs(r);
    m->role = xcalloc(m->n_roles + 1, 1);
    m->sel = attr_named(r, event ? event : first);
    m->weight = weight;
    profile__set_types(p, m->ops->types, n_types(m->ops), m->ops->weight);
    int err = m->ops->start(m, r);
    if (err < 0 || (err = set_roles(m, r)) < 0)
        return err;
    warn_sampled(m, r);
    return weight ? set_weight(m, m->sel, weight) : 0;
}

void modes__set_at(struct modes *m, enum at_kind at, uint64_t ns)
{
    m->at = at;
    m->at_ns = ns;
}

void modes__exit(struct modes *m)
{
    tracedata__delete(m->td);
    intervals__delete(m->spans);
    calls__delete(m->calls);
    idmap__exit(&m->finalized);
    leaks__delete(m->leaks);
    span_put__delete(m->span_put);
    free(m->af);
    free(m->f_key);
    free(m->f_kind);
    free(m->role);
    memset(m, 0, sizeof(*m));
}

/* prev_state as ps prints it: S sleeping, D disk (uninterruptible), R
 * preempted while runnable, and the rarer stopped/traced/dead/parked/idle. */
static char state_letter(uint64_t state)
{
    static const char letters[] = "SDTtXZPI";
    for (int b = 0; b < 8; b++)
        if (state & (1u << b))
            return letters[b];
    return 'R';
}

int modes__marker(const struct modes *m, const struct pd_sample *s, char *buf, size_t len)
{
    uint64_t v;
    switch (modes__role(m, s->attr_idx)) {
    case ROLE_SWITCH:
        if (td_field__read(&m->f_state, s->raw, s->raw_size, &v) < 0)
            return 0;
        snprintf(buf, len, "[off-cpu: %c]", state_letter(v));
        return 1;
    case ROLE_SYS_ENTER: {
        if (td_field__read(&m->f_id, s->raw, s->raw_size, &v) < 0)
            return 0;
        const char *name = syscall_name((long)v);
        if (name)
            snprintf(buf, len, "[syscall %s]", name);
        else
            snprintf(buf, len, "[syscall %" PRId64 "]", (int64_t)v);
        return 1;
    }
    case ROLE_ALLOC:
        if (m->af[s->attr_idx].fn != ALLOC_MMAP)
            return 0;
        snprintf(buf, len, "[mmap]");
        return 1;
    default:
        return 0;
    }
}

enum take modes__take(const struct modes *m, const struct pd_sample *s)
{
    enum role role = modes__role(m, s->attr_idx);
    if (role == ROLE_NONE)
        return TAKE_NONE;
    if (m->ops->stackless)
        return role == ROLE_CALL_RETURN || role == ROLE_SYS_EXIT ? TAKE_BARE : TAKE_CALL;
    /* they end spans, or pair with an allocation: their stacks say nothing */
    if (role == ROLE_SYS_EXIT || role == ROLE_ALLOC_RETURN || role == ROLE_FREE ||
        (role == ROLE_SWITCH && s->tid == 0))
        return TAKE_BARE;
    return role == ROLE_SAMPLE ? TAKE_PLAIN : TAKE_STACK;
}

void modes__event(struct modes *m, const struct pd_sample *s, uint32_t thread, uint32_t stack)
{
    if (s->time > m->last_time)
        m->last_time = s->time;
    if (!m->first_time || s->time < m->first_time)
        m->first_time = s->time;
    m->ops->event(m, s, thread, stack);
}

void modes__values(struct modes *m, const struct pd_sample *s, uint64_t *v)
{
    memset(v, 0, PROFILE_MAX_VALUES * sizeof(*v));
    v[0] = 1;
    v[1] = s->period ? s->period : 1;
    if (s->time > m->last_time)
        m->last_time = s->time;
    if (m->mode == MODE_WALL)      /* on the CPU: its period is elapsed time too */
        v[m->v_wall] = v[m->v_cpu];
    if (m->field >= 0 && td_field__read(&m->f_weight, s->raw, s->raw_size, &v[m->field]) < 0)
        v[m->field] = 0;
}

void modes__put(void *modes, const struct pentry *e)
{
    struct modes *m = modes;
    struct pentry in;
    if (m->span_put) {
        if (!span_put__entry(m->span_put, m->p, e, &in))
            return;
        e = &in;
    }
    profile__add_values(m->p, e->thread, e->stack, e->v);
    if (e->timed)
        profile__add_timed(m->p, e->thread, e->stack, e->begin, e->end,
                           e->own_weight ? e->weight : e->v[profile__weight(m->p)]);
}

void modes__put_at(struct modes *m, uint32_t thread, uint32_t stack, uint64_t time,
                   const uint64_t *v)
{
    modes__put(m, &(struct pentry){.thread = thread, .stack = stack, .v = v, .timed = 1,
                                   .begin = time, .end = time});
}

void modes__switch(struct modes *m, const struct pd_switch *sw, uint64_t time)
{
    if (time > m->last_time)
        m->last_time = time;
    if (!sw->out && m->ops->switch_in)
        m->ops->switch_in(m, sw->tid, time);
}

void modes__thread_exit(struct modes *m, uint32_t tid, uint64_t time)
{
    if (m->ops->thread_exit)
        m->ops->thread_exit(m, tid, time);
}

void modes__exec(struct modes *m, uint32_t pid)
{
    if (m->leaks)
        leaks__exec(m->leaks, pid);
}

void modes__finish(struct modes *m)
{
    if (m->ops && m->ops->finish)     /* NULL: no sample came, no mode was set up */
        m->ops->finish(m);
    if (m->span_put)
        span_put__finish(m->span_put, m->p);
}
