/*
 * session.h - per-process state rebuilt from COMM, FORK, EXIT and MMAP
 * records: which threads exist, what they are called, and what is mapped
 * where.
 *
 * Events reach the session in time order (perfdata.c restores it), so when
 * a sample is handled the session holds exactly the state at the sample's
 * time.  THIS IS THE LOOKUP AN UNWINDER USES: for a sample of thread T,
 *
 *     const struct mapping *m = process__find(T->proc, addr);
 *
 * answers "which mapping (m->dso->path, m->start, m->end, m->pgoff,
 * m->dso->build_id) holds addr in T's process at this time".  The file
 * offset of addr is addr - m->start + m->pgoff.  Whether addr is a
 * pyperfmap or CPython trampoline is a question for the perf map:
 * see symbols__trampoline() in symbols.h.
 */
#ifndef PYMERGE_SESSION_H
#define PYMERGE_SESSION_H

#include "perfdata.h"

#include <stddef.h>
#include <stdint.h>

enum dso_kind {
    DSO_FILE,           /* an ELF file on disk */
    DSO_VDSO,           /* [vdso] */
    DSO_PERFMAP,        /* anonymous executable memory: named by perf-PID.map */
    DSO_OTHER,          /* [vsyscall], [uprobes], ... */
};

/* Something code is mapped from; one per path (and recorded build id). */
struct dso {
    const char *path;           /* as recorded; perf-PID.map path for JIT memory */
    unsigned id;                /* dense 0..n-1, for per-dso tables downstream */
    enum dso_kind kind;
    uint32_t perfmap_pid;       /* DSO_PERFMAP: whose map names it */
    uint32_t perfmap_fallback;  /* DSO_PERFMAP inherited by a fork: the creator's
                                 * pid, whose map serves when perfmap_pid has none */
    uint8_t build_id[20];       /* as recorded (MMAP2 or BUILD_ID feature) */
    uint8_t build_id_size;      /* 0: unknown */
};

struct mapping {
    uint64_t start, end, pgoff;
    uint32_t prot;
    const struct dso *dso;
};

struct process {
    uint32_t pid;
    struct mapping *maps;       /* sorted by start, non-overlapping */
    size_t n_maps, cap_maps;
};

struct thread {
    uint32_t pid, tid;
    const char *comm;           /* current name; ":TID" until a COMM names it */
    int comm_set;
    int dead;
    struct process *proc;
};

struct session;

struct session *session__new(void);
void session__delete(struct session *s);   /* accepts NULL */

/* Record a build id seen at record time (BUILD_ID feature) for a path. */
void session__add_build_id(struct session *s, const char *path, const uint8_t *id, uint8_t size);

/* Apply a MMAP/COMM/FORK/EXIT event; samples are ignored. */
void session__apply(struct session *s, const struct pd_event *ev);

/* The thread a sample belongs to, created (as perf does) if unseen. */
struct thread *session__thread(struct session *s, uint32_t pid, uint32_t tid);

/* The mapping holding addr, or NULL.  Binary search; no allocation. */
const struct mapping *process__find(const struct process *p, uint64_t addr);

/* The program the process runs: its lowest mapped ELF file (the kernel
 * maps an executable, PIE or not, below ld.so and the libraries), or
 * NULL when none is mapped. */
const struct dso *process__program(const struct process *p);

size_t session__n_processes(const struct session *s);

#endif
