/* modes.c - events -> values, per mode (see modes.h). */
#include "modes.h"
#include "syscalls.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An event name matches with or without its modifiers ("cycles:u") or
 * terms ("cpu-clock/freq=999/"). */
int event_matches(const char *name, const char *want)
{
    size_t n = strlen(want);
    return strncmp(name, want, n) == 0 && (name[n] == 0 || name[n] == ':' || name[n] == '/');
}

static int is_clock(const char *name)
{
    return event_matches(name, "cpu-clock") || event_matches(name, "task-clock");
}

static int has_event(struct perf_reader *r, const char *want)
{
    for (size_t i = 0; i < perf_reader__n_attrs(r); i++)
        if (event_matches(perf_reader__attr(r, i)->name, want))
            return 1;
    return 0;
}

/* pyperf-record's probes, by their names in its group (pyperf_PID), or
 * pyperfmap's function markers as perf probe names them (sdt_python):
 * "function__entry", "function__return". */
static int is_probe(const char *name, const char *probe)
{
    const char *colon = strchr(name, ':');
    if (!colon || (strncmp(name, "pyperf_", 7) && strncmp(name, "sdt_python:", 11)))
        return 0;
    return event_matches(colon + 1, probe);
}

static int has_probe(struct perf_reader *r, const char *probe)
{
    for (size_t i = 0; i < perf_reader__n_attrs(r); i++)
        if (is_probe(perf_reader__attr(r, i)->name, probe))
            return 1;
    return 0;
}

static enum mode detect(struct perf_reader *r)
{
    if (has_probe(r, "function__entry"))
        return MODE_CALLS;
    if (has_probe(r, "py_alloc") || has_probe(r, "c_alloc"))
        return has_probe(r, "py_free") || has_probe(r, "c_free") ? MODE_LEAKS : MODE_ALLOC;
    if (has_probe(r, "malloc__return") && has_probe(r, "free"))
        return MODE_LEAKS;
    if (has_probe(r, "malloc"))
        return MODE_ALLOC;

    int sw = has_event(r, "sched:sched_switch");
    int clock = has_event(r, "cpu-clock") || has_event(r, "task-clock");
    if (sw && clock)
        return MODE_WALL;
    if (sw)
        return MODE_OFFCPU;
    if (has_event(r, "raw_syscalls:sys_enter") && has_event(r, "raw_syscalls:sys_exit"))
        return MODE_SYSCALLS;
    return MODE_CPU;
}

/* The tracepoint id of an attr: fields are looked up by it. */
static int tracepoint(const struct pd_attr *a, uint64_t *id)
{
    *id = a->attr.config;
    return a->attr.type == PERF_TYPE_TRACEPOINT;
}

/* Finds field name of the event called event in r; 0, or -EINVAL after
 * saying what is missing. */
static int need_field(struct modes *m, struct perf_reader *r, const char *event, const char *name,
                      struct td_field *f, const char *shown)
{
    for (size_t i = 0; i < perf_reader__n_attrs(r); i++) {
        const struct pd_attr *a = perf_reader__attr(r, i);
        uint64_t id;
        if (!event_matches(a->name, event) || !tracepoint(a, &id))
            continue;
        if (m->td && tracedata__field(m->td, id, name, f) == 0)
            return 0;
        break;
    }
    fprintf(stderr, "pymerge: %s: %s has no field %s (no tracing data in the recording?)\n", shown,
            event, name);
    return -EINVAL;
}

/* "pymerge: FILE: no value W; values: a, b; fields of EVENT: x (type), ..." */
static void no_such_weight(const struct modes *m, const struct pd_attr *a, const char *weight,
                           const char *shown)
{
    fprintf(stderr, "pymerge: %s: no value or numeric field %s for %s; values:", shown, weight,
            a ? a->name : "this recording");
    for (size_t i = 0; i < profile__n_types(m->p); i++)
        fprintf(stderr, "%s %s", i ? "," : "", profile__type(m->p, i)->name);
    uint64_t id;
    if (a && m->td && tracepoint(a, &id)) {
        struct td_field_info fi;
        fprintf(stderr, "; numeric fields:");
        int first = 1;
        for (size_t i = 0; tracedata__field_info(m->td, id, i, &fi) == 0; i++) {
            if (!fi.numeric)
                continue;
            fprintf(stderr, "%s %s", first ? "" : ",", fi.name);
            first = 0;
        }
    }
    fputc('\n', stderr);
}

static const struct pd_attr *attr_named(struct perf_reader *r, const char *event)
{
    for (size_t i = 0; event && i < perf_reader__n_attrs(r); i++)
        if (event_matches(perf_reader__attr(r, i)->name, event))
            return perf_reader__attr(r, i);
    return NULL;
}

/* The calls mode's roles, and the field that says what each entry or
 * return is of: the trampoline (tramp as pyperf-record names it, the
 * fourth argument arg4 as perf probe does), a system call's id. */
static int calls_init(struct modes *m, struct perf_reader *r, const char *shown)
{
    m->f_key = xcalloc(m->n_roles + 1, sizeof(*m->f_key));
    for (size_t i = 0; i < m->n_roles; i++) {
        const struct pd_attr *a = perf_reader__attr(r, i);
        int sys = event_matches(a->name, "raw_syscalls:sys_enter") ||
                  event_matches(a->name, "raw_syscalls:sys_exit");
        uint64_t id;
        m->role[i] = is_probe(a->name, "function__entry") ? ROLE_CALL_ENTRY
                     : is_probe(a->name, "function__return") ? ROLE_CALL_RETURN
                     : event_matches(a->name, "raw_syscalls:sys_enter") ? ROLE_SYS_ENTER
                     : event_matches(a->name, "raw_syscalls:sys_exit") ? ROLE_SYS_EXIT : ROLE_NONE;
        if (m->role[i] == ROLE_NONE)
            continue;
        if (!m->td || !tracepoint(a, &id) ||
            (tracedata__field(m->td, id, sys ? "id" : "tramp", &m->f_key[i]) < 0 &&
             (sys || tracedata__field(m->td, id, "arg4", &m->f_key[i]) < 0))) {
            fprintf(stderr, "pymerge: %s: %s has no field %s (no tracing data in the recording?)\n",
                    shown, a->name, sys ? "id" : "tramp");
            return -EINVAL;
        }
        if (m->role[i] == ROLE_SYS_ENTER)
            m->f_id = m->f_key[i];
    }
    m->calls = calls__new(m->p);
    return 0;
}

/* The allocator probes pyperf-record sets (by their names in its group),
 * the mmap system call, and what each says: sizes at the entries, the
 * pointer at a return, a free and a realloc's entry. */
static int alloc_init(struct modes *m, struct perf_reader *r, const char *shown)
{
    static const char *const fns[] = {[LEAK_MALLOC] = "malloc", [LEAK_CALLOC] = "calloc",
                                      [LEAK_REALLOC] = "realloc", [LEAK_ALIGNED] = "aligned_alloc"};
    m->af = xcalloc(m->n_roles + 1, sizeof(*m->af));
    for (size_t i = 0; i < m->n_roles; i++) {
        const struct pd_attr *a = perf_reader__attr(r, i);
        struct alloc_fields *f = &m->af[i];
        const char *size = "bytes";
        char ret[32];
        f->fn = ALLOC_MMAP;
        for (uint8_t k = 0; k < sizeof(fns) / sizeof(*fns); k++) {
            snprintf(ret, sizeof ret, "%s__return", fns[k]);
            if (is_probe(a->name, fns[k]))
                m->role[i] = ROLE_ALLOC, f->fn = k;
            else if (m->mode == MODE_LEAKS && is_probe(a->name, ret))
                m->role[i] = ROLE_ALLOC_RETURN, f->fn = k;
        }
        if (is_probe(a->name, "posix_memalign")) {    /* its pointer comes back in memory */
            m->role[i] = m->mode == MODE_ALLOC ? ROLE_ALLOC : ROLE_NONE;
            f->fn = LEAK_ALIGNED;                       /* not the [mmap] default */
        }
        if (m->mode == MODE_LEAKS && is_probe(a->name, "free"))
            m->role[i] = ROLE_FREE;
        if (is_probe(a->name, "py_alloc") || is_probe(a->name, "c_alloc"))
            m->role[i] = ROLE_SAMPLED, f->fn = LEAK_MALLOC;
        if (m->mode == MODE_LEAKS && (is_probe(a->name, "py_free") || is_probe(a->name, "c_free")))
            m->role[i] = ROLE_SAMPLED_FREE;
        if (m->mode == MODE_LEAKS && is_probe(a->name, "finalize")) {
            m->role[i] = ROLE_FINALIZE;
            continue;
        }
        if (m->mode == MODE_ALLOC && event_matches(a->name, "syscalls:sys_enter_mmap"))
            m->role[i] = ROLE_ALLOC, size = "len";
        if (m->role[i] == ROLE_NONE)
            continue;
        uint64_t id;
        int sampled = m->role[i] == ROLE_SAMPLED;
        int need_size = m->role[i] == ROLE_ALLOC || sampled;
        int need_ptr = m->role[i] != ROLE_ALLOC;
        const char *missing = NULL;
        if (!m->td || !tracepoint(a, &id))
            missing = need_size ? size : "ptr";
        else if (need_size && tracedata__field(m->td, id, size, &f->bytes) < 0)
            missing = size;
        else if (need_ptr && tracedata__field(m->td, id, "ptr", &f->ptr) < 0)
            missing = "ptr";
        else if (sampled && tracedata__field(m->td, id, "weight", &f->weight) < 0)
            missing = "weight";
        if (missing) {
            fprintf(stderr, "pymerge: %s: %s has no field %s (no tracing data in the recording?)\n",
                    shown, a->name, missing);
            return -EINVAL;
        }
        f->has_nmemb = tracedata__field(m->td, id, "nmemb", &f->nmemb) == 0;
        f->has_flags = f->fn == ALLOC_MMAP && tracedata__field(m->td, id, "flags", &f->flags) == 0;
        f->has_ptr = need_ptr || tracedata__field(m->td, id, "ptr", &f->ptr) == 0;
    }
    if (m->mode == MODE_LEAKS) {
        m->leaks = leaks__new();
        idmap__init(&m->finalized);
        profile__keep_time(m->p);       /* the growth table */
    }
    return 0;
}

int modes__init(struct modes *m, enum mode want, struct profile *p, struct perf_reader *r,
                const char *event, const char *first, const char *weight, const char *shown)
{
    memset(m, 0, sizeof(*m));
    m->p = p;
    m->shown = shown;
    m->field = -1;
    m->mode = want != MODE_AUTO ? want : event ? MODE_CPU : detect(r);
    if (!event)
        event = first;
    size_t tsize;
    const void *tdata = perf_reader__tracing_data(r, &tsize);
    if (tdata && !(m->td = tracedata__new(tdata, tsize)))
        fprintf(stderr, "pymerge: %s: tracing data unreadable (%s): event fields are unknown\n",
                shown, strerror(errno));
    m->n_roles = perf_reader__n_attrs(r);
    m->role = xcalloc(m->n_roles + 1, 1);
    const struct pd_attr *sel = attr_named(r, event);
    int clock = sel ? is_clock(sel->name) : 0;

    switch (m->mode) {
    case MODE_AUTO:
    case MODE_CPU: {
        struct value_type t[] = {{"samples", "count"},
                                 {clock ? "cpu-ns" : "period", clock ? "nanoseconds" : "count"},
                                 {"", "count"}};
        profile__set_types(p, t, 2, 1);
        for (size_t i = 0; i < m->n_roles; i++)
            if (sel && !strcmp(perf_reader__attr(r, i)->name, sel->name))
                m->role[i] = ROLE_SAMPLE;
        if (weight && strcmp(weight, "period") && strcmp(weight, "count") &&
            profile__find_type(p, weight) < 0) {
            uint64_t id;
            if (!sel || !m->td || !tracepoint(sel, &id) ||
                tracedata__field(m->td, id, weight, &m->f_weight) < 0) {
                no_such_weight(m, sel, weight, shown);
                return -EINVAL;
            }
            t[2].name = weight;
            profile__set_types(p, t, 3, 2);
            m->field = 2;
            return 0;
        }
        break;
    }
    case MODE_OFFCPU: {
        struct value_type t[] = {{"count", "count"}, {"offcpu-ns", "nanoseconds"}};
        profile__set_types(p, t, 2, 1);
        m->v_off = 1;
        m->v_wall = 1;
        m->v_cpu = SIZE_MAX;
        break;
    }
    case MODE_WALL: {
        struct value_type t[] = {{"samples", "count"}, {"cpu-ns", "nanoseconds"},
                                 {"offcpu-ns", "nanoseconds"}, {"wall-ns", "nanoseconds"}};
        profile__set_types(p, t, 4, 3);
        m->v_cpu = 1, m->v_off = 2, m->v_wall = 3;
        break;
    }
    case MODE_SYSCALLS: {
        struct value_type t[] = {{"count", "count"}, {"latency-ns", "nanoseconds"}};
        profile__set_types(p, t, 2, 0);
        break;
    }
    case MODE_CALLS: {
        struct value_type t[CALLS_N_VALUES] = {[CALLS_COUNT] = {"count", "count"},
                                               [CALLS_WALL] = {"wall-ns", "nanoseconds"},
                                               [CALLS_LATENCY] = {"latency-ns", "nanoseconds"}};
        profile__set_types(p, t, CALLS_N_VALUES, CALLS_WALL);
        if (calls_init(m, r, shown) < 0)
            return -EINVAL;
        break;
    }
    case MODE_ALLOC: {
        struct value_type t[] = {{"count", "count"}, {"bytes", "bytes"}};
        profile__set_types(p, t, 2, 1);
        if (alloc_init(m, r, shown) < 0)
            return -EINVAL;
        break;
    }
    case MODE_LEAKS: {
        struct value_type t[] = {{"count", "count"}, {"live-bytes", "bytes"}, {"bytes", "bytes"},
                                 {"objects", "count"}};
        profile__set_types(p, t, 4, 1);
        if (alloc_init(m, r, shown) < 0)
            return -EINVAL;
        break;
    }
    }
    if (m->mode == MODE_OFFCPU || m->mode == MODE_WALL) {
        if (need_field(m, r, "sched:sched_switch", "prev_state", &m->f_state, shown) < 0)
            return -EINVAL;
        m->has_next_pid = need_field(m, r, "sched:sched_switch", "next_pid", &m->f_next_pid,
                                     shown) == 0;
        for (size_t i = 0; i < m->n_roles; i++) {
            const char *n = perf_reader__attr(r, i)->name;
            m->role[i] = event_matches(n, "sched:sched_switch") ? ROLE_SWITCH
                         : m->mode == MODE_WALL && is_clock(n) ? ROLE_SAMPLE : ROLE_NONE;
        }
    } else if (m->mode == MODE_SYSCALLS) {
        if (need_field(m, r, "raw_syscalls:sys_enter", "id", &m->f_id, shown) < 0)
            return -EINVAL;
        for (size_t i = 0; i < m->n_roles; i++) {
            const char *n = perf_reader__attr(r, i)->name;
            m->role[i] = event_matches(n, "raw_syscalls:sys_enter") ? ROLE_SYS_ENTER
                         : event_matches(n, "raw_syscalls:sys_exit") ? ROLE_SYS_EXIT : ROLE_NONE;
        }
    }
    if (m->mode != MODE_CPU) {
        m->spans = intervals__new();
        /* Pairing needs every event: a sampled tracepoint (perf record -F
         * applied to it) drops most of them. */
        for (size_t i = 0; i < m->n_roles; i++) {
            const struct pd_attr *a = perf_reader__attr(r, i);
            if (m->role[i] > ROLE_SAMPLE && (a->attr.freq || a->attr.sample_period != 1))
                fprintf(stderr, "pymerge: %s: %s was sampled, not recorded at every event "
                        "(perf record -F or -c applied to it): its spans are incomplete; "
                        "record it without -F or -c\n", shown, a->name);
        }
    }
    if (weight) {
        int i = profile__find_type(p, weight);
        if (i < 0 && (!strcmp(weight, "count") || !strcmp(weight, "samples")))
            i = 0;      /* every mode's first value counts events */
        if (i < 0 && !strcmp(weight, "period") && m->mode == MODE_CPU)
            i = 1;
        if (i < 0) {
            no_such_weight(m, m->mode == MODE_CPU ? sel : NULL, weight, shown);
            return -EINVAL;
        }
        profile__set_weight(p, (size_t)i);
    }
    return 0;
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
    if (m->leaks)
        idmap__exit(&m->finalized);
    leaks__delete(m->leaks);
    free(m->af);
    free(m->f_key);
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
    profile__add_span(m->p, sp->thread, sp->stack, sp->start, sp->start + d, v);
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

/* mmap's flag for memory that is no file's, on the recording's kernel (x86-64) */
#define LINUX_MAP_ANONYMOUS 0x20

/* An allocator's entry (alloc: its bytes; leaks: waits for its return),
 * return or free.  A field outside the event reads as 0: nothing asked,
 * NULL given. */
static void alloc_event(struct modes *m, const struct pd_sample *s, uint32_t thread, uint32_t stack)
{
    const struct alloc_fields *f = &m->af[s->attr_idx];
    uint64_t bytes = 0, nmemb = 1, ptr = 0;
    enum role role = modes__role(m, s->attr_idx);
    if (role == ROLE_ALLOC && td_field__read(&f->bytes, s->raw, s->raw_size, &bytes) < 0)
        bytes = 0;
    if (f->has_nmemb && td_field__read(&f->nmemb, s->raw, s->raw_size, &nmemb) < 0)
        nmemb = 0;
    if (f->has_ptr && td_field__read(&f->ptr, s->raw, s->raw_size, &ptr) < 0)
        ptr = 0;
    bytes = nmemb && bytes > UINT64_MAX / nmemb ? 0 : bytes * nmemb;  /* calloc fails those */
    uint64_t flags;
    /* Memory, not a file (the loader maps every library) */
    if (f->has_flags && td_field__read(&f->flags, s->raw, s->raw_size, &flags) == 0 &&
        !(flags & LINUX_MAP_ANONYMOUS))
        return;
    if (m->mode == MODE_ALLOC) {
        uint64_t v[PROFILE_MAX_VALUES] = {1, bytes};
        profile__add(m->p, thread, stack, s->time, v);
    } else if (role == ROLE_SAMPLED_FREE) {
        leaks__free(m->leaks, s->pid, ptr, s->time);
    } else if (role == ROLE_ALLOC) {
        leaks__enter(m->leaks, s->tid, (enum leak_fn)f->fn, bytes, ptr, thread, stack, s->time);
    } else if (role == ROLE_ALLOC_RETURN) {
        leaks__return(m->leaks, s->pid, s->tid, (enum leak_fn)f->fn, ptr, s->time);
    } else {
        leaks__free(m->leaks, s->pid, ptr, s->time);
    }
}

/* A sampled allocation: it stands for weight bytes, in weight / bytes
 * allocations of its size (Go's scaling, done in the process). */
static void sampled_alloc(struct modes *m, const struct pd_sample *s, uint32_t thread,
                          uint32_t stack)
{
    const struct alloc_fields *f = &m->af[s->attr_idx];
    uint64_t bytes, weight, ptr;
    if (td_field__read(&f->bytes, s->raw, s->raw_size, &bytes) < 0 ||
        td_field__read(&f->weight, s->raw, s->raw_size, &weight) < 0 ||
        td_field__read(&f->ptr, s->raw, s->raw_size, &ptr) < 0)
        return;
    uint64_t objects = bytes ? (weight + bytes / 2) / bytes : 1;
    m->sampled++;
    if (m->mode == MODE_ALLOC) {
        uint64_t v[PROFILE_MAX_VALUES] = {objects, weight};
        profile__add(m->p, thread, stack, s->time, v);
    } else {
        leaks__sampled(m->leaks, s->pid, ptr, weight, objects, thread, stack, s->time);
    }
}

void modes__sample(struct modes *m, const struct pd_sample *s, uint32_t thread, uint32_t stack)
{
    uint64_t v[PROFILE_MAX_VALUES];
    struct span sp = {s->time, thread, stack}, old;
    if (s->time > m->last_time)
        m->last_time = s->time;
    if (!m->first_time || s->time < m->first_time)
        m->first_time = s->time;
    switch (modes__role(m, s->attr_idx)) {
    case ROLE_SAMPLE:
        modes__values(m, s, v);
        profile__add(m->p, thread, stack, s->time, v);
        break;
    case ROLE_SWITCH: {
        uint64_t next;
        /* In a system-wide recording the switch also says who comes in. */
        if (m->has_next_pid && td_field__read(&m->f_next_pid, s->raw, s->raw_size, &next) == 0
            && next && intervals__close(m->spans, (uint32_t)next, &old))
            close_span(m, &old, s->time);
        if (s->tid == 0)            /* the idle task is not waiting */
            break;
        if (intervals__open(m->spans, s->tid, &sp, &old))
            m->unpaired++;          /* its switch-in was lost */
        break;
    }
    case ROLE_SYS_ENTER:
        if (intervals__open(m->spans, s->tid, &sp, &old)) {
            m->unpaired++;
            close_span(m, &old, old.start);
        }
        break;
    case ROLE_SYS_EXIT:
        if (intervals__close(m->spans, s->tid, &old))
            close_span(m, &old, s->time);
        break;
    case ROLE_ALLOC:
    case ROLE_ALLOC_RETURN:
    case ROLE_FREE:
    case ROLE_SAMPLED_FREE:
        alloc_event(m, s, thread, stack);
        break;
    case ROLE_SAMPLED:
        sampled_alloc(m, s, thread, stack);
        break;
    case ROLE_FINALIZE:         /* the first, should a process fire it twice */
        if (!idmap__get(&m->finalized, s->pid))
            idmap__put(&m->finalized, s->pid, (void *)(uintptr_t)(s->time + 1));
        break;
    case ROLE_CALL_ENTRY:       /* modes__call's */
    case ROLE_CALL_RETURN:
    case ROLE_NONE:
        break;
    }
}

void modes__switch(struct modes *m, const struct pd_switch *sw, uint64_t time)
{
    struct span old;
    if (time > m->last_time)
        m->last_time = time;
    if (!sw->out && m->spans && (m->mode == MODE_OFFCPU || m->mode == MODE_WALL) &&
        intervals__close(m->spans, sw->tid, &old))
        close_span(m, &old, time);
}

int modes__call_key(const struct modes *m, const struct pd_sample *s, uint64_t *key)
{
    enum role role = modes__role(m, s->attr_idx);
    if (td_field__read(&m->f_key[s->attr_idx], s->raw, s->raw_size, key) < 0)
        return -EINVAL;
    if (role == ROLE_SYS_ENTER || role == ROLE_SYS_EXIT)
        *key |= UINT64_C(1) << 63;
    return 0;
}

void modes__call(struct modes *m, const struct pd_sample *s, uint64_t key, uint32_t thread,
                 uint32_t frame)
{
    enum role role = modes__role(m, s->attr_idx);
    if (s->time > m->last_time)
        m->last_time = s->time;
    if (role == ROLE_CALL_ENTRY || role == ROLE_SYS_ENTER)
        calls__enter(m->calls, s->tid, thread, s->time, key, frame, role == ROLE_SYS_ENTER);
    else
        calls__return(m->calls, s->tid, s->time, key);
}

void modes__call_exit(struct modes *m, uint32_t tid, uint64_t time)
{
    if (time > m->last_time)
        m->last_time = time;
    calls__exit(m->calls, tid, time);
}

struct change {                 /* live bytes go up or down at a time */
    uint64_t time;
    int64_t bytes;
};

static int by_time(const void *a, const void *b)
{
    const struct change *x = a, *y = b;
    return x->time != y->time ? (x->time < y->time ? -1 : 1) : (x->bytes < y->bytes ? -1 : 1);
}

/* When the live bytes of all processes together were at their highest. */
static uint64_t peak_time(const struct leak_block *b, size_t n)
{
    struct change *c = xmalloc((2 * n + 1) * sizeof(*c));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        c[k++] = (struct change){b[i].time, (int64_t)b[i].bytes};
        if (b[i].end)
            c[k++] = (struct change){b[i].end, -(int64_t)b[i].bytes};
    }
    qsort(c, k, sizeof(*c), by_time);   /* frees first at a tie: no false peak */
    int64_t live = 0, best = -1;
    uint64_t at = 0;
    for (size_t i = 0; i < k; i++) {
        live += c[i].bytes;
        if (live > best)
            best = live, at = c[i].time;
    }
    free(c);
    return at;
}

/* The moment a block of process pid is counted at (--at). */
static uint64_t moment(const struct modes *m, uint32_t pid, uint64_t peak)
{
    if (m->at == AT_PEAK)
        return peak;
    if (m->at == AT_SECONDS)
        return m->first_time + m->at_ns;
    uintptr_t fin = (uintptr_t)idmap__get(&m->finalized, pid);
    return fin ? fin - 1 : m->last_time;
}

/* The leaks mode's end: every block's bytes until the moment (a block live
 * then lasts past it), what is live then by stack, and one line on what
 * could not be blamed. */
static void leaks_finish(struct modes *m)
{
    size_t n;
    const struct leak_block *b = leaks__blocks(m->leaks, &n);
    uint64_t live = 0, live_bytes = 0, peak = m->at == AT_PEAK ? peak_time(b, n) : 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t t = moment(m, b[i].pid, peak);
        int alive = b[i].time <= t && (!b[i].end || b[i].end > t);
        uint64_t v[PROFILE_MAX_VALUES] = {alive ? b[i].objects : 0, alive ? b[i].bytes : 0,
                                          b[i].bytes, b[i].objects};
        profile__add_values(m->p, b[i].thread, b[i].stack, v);
        if (b[i].time <= t)
            profile__add_timed(m->p, b[i].thread, b[i].stack, b[i].time,
                               b[i].end && b[i].end <= t ? b[i].end : t + 1, b[i].bytes);
        live += v[0];
        live_bytes += v[1];
    }
    static const char *const when[] = {[AT_END] = "at the end of the program's code",
                                       [AT_PEAK] = "at the peak", [AT_SECONDS] = "at --at"};
    struct leak_counts c = leaks__counts(m->leaks);
    fprintf(stderr, "pymerge: %s: %" PRIu64 " %s (%" PRIu64 " bytes) still live %s of %zu %s;"
            " %" PRIu64 " frees of blocks allocated before the recording (not counted), %" PRIu64
            " allocator events unpaired, %" PRIu64 " failed\n", m->shown, live,
            m->sampled ? "allocations" : "blocks", live_bytes, when[m->at], n,
            m->sampled ? "sampled (estimates, weighted by their samples)" : "allocated",
            c.unknown_frees, c.unpaired, c.failed);
}

void modes__finish(struct modes *m)
{
    if (m->leaks)
        leaks_finish(m);
    else if (m->sampled)
        fprintf(stderr, "pymerge: %s: %" PRIu64 " sampled allocations: counts and bytes are"
                " estimates, each sample weighted by what it stands for\n", m->shown, m->sampled);
    if (m->calls)
        calls__finish(m->calls, m->last_time);
    struct span sp;
    while (m->spans && intervals__drain(m->spans, &sp)) {
        m->unpaired += m->mode == MODE_SYSCALLS;
        close_span(m, &sp, m->mode == MODE_SYSCALLS ? sp.start : m->last_time);
    }
}
