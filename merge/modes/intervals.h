/*
 * intervals.h - events that pair into spans of time, per thread: a
 * switch-out and the next switch-in of the same thread (off-CPU time), a
 * system call's enter and its exit (latency).
 *
 * A span opens with what the profile needs to account for it later (the
 * thread and stack at the start) and is closed by the thread id alone,
 * because the closing event (a switch-in seen from another task, a
 * sys_exit without a useful stack) carries nothing else.  One open span
 * per thread: opening another closes nothing, it replaces (the closing
 * event was lost), and the replaced span is handed back.
 */
#ifndef PYMERGE_INTERVALS_H
#define PYMERGE_INTERVALS_H

#include <stddef.h>
#include <stdint.h>

struct span {
    uint64_t start;             /* ns */
    uint32_t thread, stack;     /* profile ids */
};

struct intervals;

struct intervals *intervals__new(void);
void intervals__delete(struct intervals *iv);   /* accepts NULL */

/* Opens tid's span.  Returns 1 and the span it replaced in *old, else 0. */
int intervals__open(struct intervals *iv, uint32_t tid, const struct span *s, struct span *old);

/* Closes tid's span: 1 and the span in *s, 0 when none was open. */
int intervals__close(struct intervals *iv, uint32_t tid, struct span *s);

/* Closes every open span, one at a time: 1 and the span, 0 when done. */
int intervals__drain(struct intervals *iv, struct span *s);

#endif
