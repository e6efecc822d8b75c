/*
 * modes.h - what a recording measures, and how its events become values.
 *
 *   cpu       samples of one event (cpu-clock: cpu-ns; others: period)
 *   offcpu    sched:sched_switch: each switch-out's stack, weighted by how
 *             long the thread stayed off the CPU (until its next switch-in)
 *   wall      cpu-clock samples and off-CPU spans together, per thread:
 *             wall-ns, a function's share of elapsed time
 *   syscalls  raw_syscalls:sys_enter paired with sys_exit: count and
 *             latency-ns per stack, the call's name as the leaf
 *   alloc     uprobes on the C allocator's entries (pyperf_PID:malloc...,
 *             with the size asked for) and mmap calls: count and bytes
 *             per stack (calloc: nmemb * bytes), bytes by default
 *             Sampled (pyperf-record's default): pyperfmap's py_alloc and
 *             its interposer's c_alloc, one per N bytes on average, each
 *             standing for its weight in bytes (count: weight / bytes)
 *   leaks     those entries paired with their returns and the frees
 *             (leaks.c): the blocks still live by allocating stack (count,
 *             live-bytes, bytes, objects), live-bytes by default, at the
 *             end of each process's own code (its finalize probe; the end
 *             of the recording without one), at the peak of live bytes, or
 *             at a time (--at); time order kept for the growth table.
 *             Sampled: py_alloc/c_alloc with py_free/c_free
 *   calls     pyperfmap's function__entry/function__return probes (and
 *             system calls, when recorded), without stacks: calls.c makes
 *             the stacks, each call a span (count, wall-ns, latency-ns)
 *
 * Each mode is one row of modes.c's table (struct mode_ops, mode_ops.h):
 * its value types, default weight, the events it needs, and handlers for
 * start, each event's role, event and finish, in its own mode_*.c.  A new
 * mode is a row and a file.
 *
 * The mode comes from the recording's events (pyperf-record --mode makes
 * the matching set), so a plain `pymerge perf.data` does the right thing;
 * --mode overrides.  --event selects one event and the cpu mode.
 */
#ifndef PYMERGE_MODES_H
#define PYMERGE_MODES_H

#include "calls.h"
#include "idmap.h"
#include "intervals.h"
#include "leaks.h"
#include "pentry.h"
#include "perfdata.h"
#include "profile.h"
#include "pyspans.h"
#include "tracedata.h"

#include <stddef.h>
#include <stdint.h>

enum mode { MODE_AUTO, MODE_CPU, MODE_OFFCPU, MODE_WALL, MODE_SYSCALLS, MODE_CALLS, MODE_ALLOC,
            MODE_LEAKS };

/* What a sample of an event is for. */
enum role { ROLE_NONE, ROLE_SAMPLE, ROLE_SWITCH, ROLE_SYS_ENTER, ROLE_SYS_EXIT, ROLE_CALL_ENTRY,
            ROLE_CALL_RETURN, ROLE_ALLOC, ROLE_ALLOC_RETURN, ROLE_FREE, ROLE_SAMPLED,
            ROLE_SAMPLED_FREE, ROLE_FINALIZE };

/* The moment the leaks mode counts live bytes at (--at). */
enum at_kind { AT_END, AT_PEAK, AT_SECONDS };

/* What an allocator event says, per attr (alloc and leaks modes). */
struct alloc_fields {
    struct td_field bytes, nmemb, ptr, flags, weight;
    uint8_t fn;                 /* enum leak_fn, or ALLOC_MMAP */
    uint8_t has_nmemb, has_ptr, has_flags;
};
#define ALLOC_MMAP 255

struct mode_ops;

struct modes {
    const struct mode_ops *ops; /* the mode's row */
    enum mode mode;
    struct profile *p;
    struct tracedata *td;       /* the recording's event formats, or NULL */
    uint8_t *role;              /* per attr index */
    size_t n_roles;
    size_t v_cpu, v_off, v_wall;   /* value indexes (wall and offcpu) */
    int field;                  /* the value index of a --weight field, or -1 */
    struct td_field f_weight, f_state, f_next_pid, f_id;
    int has_next_pid;
    struct intervals *spans;
    uint64_t last_time;
    uint64_t unpaired;          /* spans that never closed, or lost their close */
    struct calls *calls;        /* calls mode */
    struct td_field *f_key;     /* calls mode, per attr: what an entry or return is of */
    struct td_field *f_kind;    /* calls mode, per attr: call or resumption (calls.h) */
    struct alloc_fields *af;    /* alloc and leaks modes, per attr */
    struct leaks *leaks;        /* leaks mode */
    struct idmap finalized;     /* leaks mode: pid -> when its code finished (+1) */
    enum at_kind at;
    uint64_t at_ns;             /* AT_SECONDS: after the first event */
    uint64_t first_time;
    uint64_t sampled;           /* sampled allocations seen */
    const char *shown;
    const struct perf_reader *r;    /* the input: what it lost */
    const struct pd_attr *sel;  /* the selected (or first) event, or NULL */
    const char *weight;         /* --weight, or NULL */
    struct span_put *span_put;  /* pyperfmap.span's spans, or NULL (pyspans.h) */
};

/*
 * Chooses the mode (want, or from r's events), sets p's value types and the
 * weight (NULL: the mode's own), and each event's role.  event: the one
 * --event selected, or NULL; the cpu mode then takes first, the first
 * sample's event, as stackcollapse-perf.pl does.  Returns 0, or -EINVAL
 * after printing "pymerge: SHOWN: what is wrong".
 */
int modes__init(struct modes *m, enum mode want, struct profile *p, struct perf_reader *r,
                const char *event, const char *first, const char *weight, const char *shown);
void modes__exit(struct modes *m);

/* The leaks mode's moment (--at): the end, the peak, or ns after the
 * first event. */
void modes__set_at(struct modes *m, enum at_kind at, uint64_t ns);

/* An event name matches with or without its modifiers ("cycles:u") or
 * terms ("cpu-clock/freq=999/"). */
int event_matches(const char *name, const char *want);

static inline enum role modes__role(const struct modes *m, unsigned attr_idx)
{
    return attr_idx < m->n_roles ? (enum role)m->role[attr_idx] : ROLE_NONE;
}

/* What the pipeline does with a sample, as its mode says. */
enum take {
    TAKE_NONE,                  /* nothing: not one of the mode's events */
    TAKE_BARE,                  /* modes__event without a stack: it ends a span or a call */
    TAKE_CALL,                  /* modes__event with the frame it calls (calls mode) */
    TAKE_STACK,                 /* modes__event with its stack */
    TAKE_PLAIN,                 /* the same, and it may wait for stitching (modes__values) */
};
enum take modes__take(const struct modes *m, const struct pd_sample *s);

/* The leaf frame that names what a sample waits in ("[off-cpu: S]",
 * "[syscall write]"), written to buf; 0 when the sample has none. */
int modes__marker(const struct modes *m, const struct pd_sample *s, char *buf, size_t len);

/* A sample, as modes__take said: at (thread, stack), or for TAKE_CALL at
 * thread calling the profile frame `stack`; 0, 0 for TAKE_BARE. */
void modes__event(struct modes *m, const struct pd_sample *s, uint32_t thread, uint32_t stack);

/* The values a plain sample (TAKE_PLAIN) adds to its stack, for one whose
 * stack is known only later (stitch.h): modes__put them then.  Plain
 * samples pair with nothing, so adding them late changes nothing else. */
void modes__values(struct modes *m, const struct pd_sample *s, uint64_t *v);

/* The one way into the profile (pentry.h).  A pentry_fn, ctx the modes. */
void modes__put(void *modes, const struct pentry *e);

/* A switch record (--switch-events): a switch-in ends the thread's
 * off-CPU span. */
void modes__switch(struct modes *m, const struct pd_switch *sw, uint64_t time);

/* calls mode: what an entry or a return is of (a trampoline's address, or
 * a system call's number with bit 63 set), into *key; 0, or -EINVAL when
 * the sample does not say. */
int modes__call_key(const struct modes *m, const struct pd_sample *s, uint64_t *key);

/* A thread exits (an EXIT record): the calls mode ends its calls. */
void modes__thread_exit(struct modes *m, uint32_t tid, uint64_t time);
/* Process pid began (exec) during the recording. */
void modes__exec(struct modes *m, uint32_t pid);

/* At the end: spans still open are accounted (off-CPU until the end of the
 * recording; a system call that never returned, with no latency). */
void modes__finish(struct modes *m);

#endif
