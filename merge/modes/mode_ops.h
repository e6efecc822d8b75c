/*
 * mode_ops.h - a mode as one row of modes.c's table, and what the rows'
 * handler files (mode_*.c) share.  modes.c chooses the row, sets the
 * profile's value types from it and calls its handlers; a handler knows
 * only its own mode.
 */
#ifndef PYMERGE_MODE_OPS_H
#define PYMERGE_MODE_OPS_H

#include "modes.h"

#define MODE_MAX_TYPES 4

struct mode_ops {
    enum mode mode;
    /* Whether r's events are this mode's; rows are asked in table order
     * (NULL: yes, the last row). */
    int (*found)(struct perf_reader *r);
    struct value_type types[MODE_MAX_TYPES];    /* up to the first unnamed */
    size_t weight;              /* the default weight: an index into types */
    int stackless;              /* its events come without stacks (TAKE_CALL, TAKE_BARE) */
    /* After the types are set, before the roles: what the mode reads of
     * every event, and its state.  0, or -EINVAL after saying what is
     * missing. */
    int (*start)(struct modes *m, struct perf_reader *r);
    /* The role of a's events (attr index i), and the fields they are read
     * by: a role, or -EINVAL after saying which field is missing. */
    int (*role)(struct modes *m, const struct pd_attr *a, size_t i);
    /* A sample of one of its roles (modes__event). */
    void (*event)(struct modes *m, const struct pd_sample *s, uint32_t thread, uint32_t stack);
    void (*switch_in)(struct modes *m, uint32_t tid, uint64_t time);   /* NULL: ignored */
    void (*thread_exit)(struct modes *m, uint32_t tid, uint64_t time); /* NULL: ignored */
    void (*finish)(struct modes *m);                                    /* NULL: nothing */
};

/* The rows, one per handler file. */
extern const struct mode_ops mode_cpu, mode_offcpu, mode_wall, mode_syscalls, mode_alloc,
    mode_leaks, mode_calls;

/* Whether r has an event called want, or a probe of pyperf-record's group
 * (pyperf_PID:probe) or one of pyperfmap's as perf probe names it
 * (sdt_pyperfmap:probe). */
int modes__has_event(struct perf_reader *r, const char *want);
int modes__is_probe(const char *name, const char *probe);
int modes__has_probe(struct perf_reader *r, const char *probe);
int modes__is_clock(const char *name);

/* The tracepoint id of a (fields are looked up by it): 1, or 0 when a is
 * no tracepoint. */
int modes__tracepoint(const struct pd_attr *a, uint64_t *id);

/* Field name of a's events, from m's tracing data, into *f: 0, or a
 * negative errno when a is no tracepoint or has no such field (or the
 * recording no tracing data). */
int modes__field(const struct modes *m, const struct pd_attr *a, const char *name,
                 struct td_field *f);

/* Field name of event, found in m's tracing data into *f: 0, or -EINVAL
 * after printing that event has no such field. */
int modes__need_field(struct modes *m, struct perf_reader *r, const char *event, const char *name,
                      struct td_field *f);
/* "pymerge: SHOWN: EVENT has no field NAME (no tracing data...)". */
void modes__no_field(const struct modes *m, const char *event, const char *name);

/* "pymerge: SHOWN: no value or numeric field W for EVENT; values: ...;
 * numeric fields: ..." (a: the event, or NULL).  Returns -EINVAL. */
int modes__no_weight(const struct modes *m, const struct pd_attr *a, const char *weight);

/* A plain sample (ROLE_SAMPLE): its values (modes__values) at its stack. */
void modes__plain(struct modes *m, const struct pd_sample *s, uint32_t thread, uint32_t stack);

/* Hands values v at (thread, stack), at one instant, to modes__put. */
void modes__put_at(struct modes *m, uint32_t thread, uint32_t stack, uint64_t time,
                   const uint64_t *v);

#endif
