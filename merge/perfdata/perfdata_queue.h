/*
 * perfdata_queue.h - perf's ordered_events, for perfdata.c: records are queued
 * with their time, and at each FINISHED_ROUND everything not newer than
 * the newest time seen before the previous round is delivered in time
 * order (ties in input order).
 */
#ifndef PYMERGE_PERFDATA_QUEUE_H
#define PYMERGE_PERFDATA_QUEUE_H

#include "util.h"

struct qent {                   /* one queued record */
    u64 time, seq, offset;
    const u8 *mapped;           /* the record in the mapped input, or NULL: */
    size_t at;                  /* byte position in the queue's own copy */
    u32 size;
};

struct pd_queue {
    u8 *data, *spare;           /* copied record bytes; spare for compaction */
    size_t len, cap, spare_cap;
    struct qent *q, *tmp;       /* tmp: merge sort scratch */
    size_t n, cap_q, cap_tmp;
    size_t next, ready;         /* delivering q[next..ready) */
    u64 seq, max_time, next_flush, last_flush;
};

/* Queue a record.  mapped: p stays valid to the end, so no copy is made. */
void pd_queue__push(struct pd_queue *q, const u8 *p, u32 size, int mapped, u64 time,
                    u64 offset);
/* Sort and mark everything up to limit for delivery. */
void pd_queue__flush(struct pd_queue *q, u64 limit);
/* FINISHED_ROUND: flush up to the previous round's newest time. */
void pd_queue__round(struct pd_queue *q);
/* The next record to deliver (its bytes and input offset), or NULL. */
const u8 *pd_queue__next(struct pd_queue *q, u32 *size, u64 *offset);
/* Drop what was delivered; returns the lowest input offset of a mapped
 * record still queued (or `low` if none is lower). */
u64 pd_queue__compact(struct pd_queue *q, u64 low);
void pd_queue__exit(struct pd_queue *q);

#endif
