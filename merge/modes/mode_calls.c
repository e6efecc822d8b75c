/* mode_calls.c - the calls mode: pyperfmap's call__entry and call__return
 * probes, which pyperf-record names function__entry and function__return
 * in its group (and system calls, when recorded), without stacks; calls.c
 * makes the stacks, each call a span. */
#include "contract.h"
#include "mode_ops.h"
#include "util.h"

#include <errno.h>

static int calls_found(struct perf_reader *r)
{
    return modes__has_probe(r, "function__entry") || modes__has_probe(r, "call__entry");
}

static enum role call_role(const char *name)
{
    return modes__is_probe(name, "function__entry") || modes__is_probe(name, "call__entry")
               ? ROLE_CALL_ENTRY
           : modes__is_probe(name, "function__return") || modes__is_probe(name, "call__return")
               ? ROLE_CALL_RETURN
           : event_matches(name, "raw_syscalls:sys_enter") ? ROLE_SYS_ENTER
           : event_matches(name, "raw_syscalls:sys_exit") ? ROLE_SYS_EXIT : ROLE_NONE;
}

static int calls_start(struct modes *m, struct perf_reader *r)
{
    (void)r;
    m->f_key = xcalloc(m->n_roles + 1, sizeof(*m->f_key));
    m->f_kind = xcalloc(m->n_roles + 1, sizeof(*m->f_kind));
    m->calls = calls__new(m->p, modes__put, m);
    return 0;
}

/* The role, and the field that says what each entry or return is of: the
 * trampoline (tramp as pyperf-record names it, arg1 as perf probe does), a
 * system call's id; and at a Python entry, whether it is a call or a
 * resumption (kind, or arg2).  An entry without it (a recording of an
 * older pyperfmap) is a call: its zeroed field reads 0, MARKERS_CALL. */
static int calls_role(struct modes *m, const struct pd_attr *a, size_t i)
{
    enum role role = call_role(a->name);
    if (role == ROLE_NONE)
        return role;
    int sys = role == ROLE_SYS_ENTER || role == ROLE_SYS_EXIT;
    const char *key = sys ? "id" : CONTRACT_FIELD_TRAMP;
    if (modes__field(m, a, key, &m->f_key[i]) < 0 &&
        (sys || modes__field(m, a, "arg1", &m->f_key[i]) < 0)) {
        modes__no_field(m, a->name, key);
        return -EINVAL;
    }
    if (role == ROLE_SYS_ENTER)
        m->f_id = m->f_key[i];
    if (role == ROLE_CALL_ENTRY && modes__field(m, a, "kind", &m->f_kind[i]) < 0)
        (void)modes__field(m, a, "arg2", &m->f_kind[i]);
    return role;
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

/* An entry (frame: the profile frame it calls, thread the profile's
 * thread) or a return (both 0). */
static void call_event(struct modes *m, const struct pd_sample *s, uint32_t thread,
                       uint32_t frame)
{
    enum role role = modes__role(m, s->attr_idx);
    uint64_t key, kind = CALLS_CALL;
    if (modes__call_key(m, s, &key) < 0)
        return;
    if (role == ROLE_CALL_ENTRY
        && (td_field__read(&m->f_kind[s->attr_idx], s->raw, s->raw_size, &kind) < 0
            || kind > CALLS_NO_CALL))
        kind = CALLS_CALL;
    if (role == ROLE_CALL_ENTRY || role == ROLE_SYS_ENTER)
        calls__enter(m->calls, s->tid, thread, s->time, key, frame,
                     role == ROLE_SYS_ENTER ? CALLS_SYSCALL : (enum calls_kind)kind);
    else
        calls__return(m->calls, s->tid, s->time, key);
}

static void call_thread_exit(struct modes *m, uint32_t tid, uint64_t time)
{
    if (time > m->last_time)
        m->last_time = time;
    calls__exit(m->calls, tid, time);
}

static void calls_finish(struct modes *m)
{
    calls__finish(m->calls, m->last_time);
}

const struct mode_ops mode_calls = {
    .mode = MODE_CALLS, .found = calls_found,
    .types = {[CALLS_COUNT] = {"count", "count"}, [CALLS_WALL] = {"wall-ns", "nanoseconds"},
              [CALLS_LATENCY] = {"latency-ns", "nanoseconds"},
              [CALLS_RESUMES] = {"resumes", "count"}}, .weight = CALLS_WALL,
    .stackless = 1, .start = calls_start, .role = calls_role, .event = call_event,
    .thread_exit = call_thread_exit, .finish = calls_finish,
};
