/*
 * session.c - threads, processes and their mappings over time.
 *
 * Mirrors perf's machine.c where the output depends on it: a thread seen
 * first in a sample is named ":TID"; a forked child inherits its parent's
 * name only if the parent's was set by a COMM record; a new process gets
 * a copy of its parent's mappings; a FORK for a TID that still exists
 * replaces it (PID reuse).  exec() keeps the old image's mappings until
 * the new image's mappings overwrite them, as in perf: samples taken
 * inside execve() after the COMM record still have the old image's user
 * stack.
 */
#include "session.h"
#include "idmap.h"
#include "intern.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct session {
    struct intern *strs;        /* comms, paths, dso keys */
    struct idmap threads;       /* tid -> thread (the live one) */
    struct idmap procs;         /* pid -> process (the live one) */
    struct idmap dso_by_key;    /* interned key -> dso */
    struct idmap bid_by_path;   /* interned path -> struct bid */
    struct dso **dsos;
    size_t n_dsos, cap_dsos;
    /* Every thread and process ever made, for cleanup: replaced ones may
     * still be referenced by threads that outlive their process. */
    struct thread **all_threads;
    size_t n_threads, cap_threads;
    struct process **all_procs;
    size_t n_procs, cap_procs;
};

struct bid {
    uint8_t id[20];
    uint8_t size;
};

struct session *session__new(void)
{
    struct session *s = xcalloc(1, sizeof(*s));
    s->strs = intern__new();
    return s;
}

void session__delete(struct session *s)
{
    if (!s)
        return;
    size_t i;
    for (i = 0; i < s->n_threads; i++)
        free(s->all_threads[i]);
    for (i = 0; i < s->n_procs; i++) {
        free(s->all_procs[i]->maps);
        free(s->all_procs[i]);
    }
    free(s->all_threads);
    free(s->all_procs);
    for (i = 0; i < s->n_dsos; i++)
        free(s->dsos[i]);
    free(s->dsos);
    idmap__exit(&s->threads);
    idmap__exit(&s->procs);
    idmap__exit(&s->dso_by_key);
    idmap__exit_with(&s->bid_by_path, free);
    intern__delete(s->strs);
    free(s);
}

static const char *str(struct session *s, const char *p)
{
    return intern__str(s->strs, intern__id(s->strs, p, strlen(p)));
}

void session__add_build_id(struct session *s, const char *path, const uint8_t *id, uint8_t size)
{
    struct bid *b = xcalloc(1, sizeof(*b));
    memcpy(b->id, id, size <= 20 ? size : 20);
    b->size = size <= 20 ? size : 20;
    free(idmap__put(&s->bid_by_path, intern__id(s->strs, path, strlen(path)), b));
}

/* A process owns its maps array (a fork copies it). */
static const struct dso *inherited_dso(struct session *s, const struct dso *from, uint32_t pid);

static struct process *process_new(struct session *s, uint32_t pid, const struct process *from)
{
    struct process *p = xcalloc(1, sizeof(*p));
    GROW(s->all_procs, s->cap_procs, s->n_procs + 1);
    s->all_procs[s->n_procs++] = p;
    p->pid = pid;
    if (from && from->n_maps) {
        p->maps = xmalloc(from->n_maps * sizeof(*p->maps));
        memcpy(p->maps, from->maps, from->n_maps * sizeof(*p->maps));
        p->n_maps = p->cap_maps = from->n_maps;
        for (size_t i = 0; i < p->n_maps; i++)
            if (p->maps[i].dso->kind == DSO_PERFMAP)
                p->maps[i].dso = inherited_dso(s, p->maps[i].dso, pid);
    }
    idmap__put(&s->procs, pid, p);
    return p;
}

static struct process *process_findnew(struct session *s, uint32_t pid)
{
    struct process *p = idmap__get(&s->procs, pid);
    return p ? p : process_new(s, pid, NULL);
}

/* A thread named as perf names one it has not seen a COMM for. */
static struct thread *thread_new(struct session *s, uint32_t pid, uint32_t tid)
{
    char buf[32];
    struct thread *t = xcalloc(1, sizeof(*t));
    GROW(s->all_threads, s->cap_threads, s->n_threads + 1);
    s->all_threads[s->n_threads++] = t;
    t->pid = pid;
    t->tid = tid;
    /* pids are signed to perf: a dying task's samples say -1 */
    snprintf(buf, sizeof(buf), tid == 0 ? "swapper" : ":%d", (int)tid);
    t->comm = str(s, buf);
    t->comm_set = tid == 0;         /* perf names the idle task "swapper" */
    t->proc = process_findnew(s, pid);
    idmap__put(&s->threads, tid, t);   /* replaces a reused TID */
    return t;
}

struct thread *session__thread(struct session *s, uint32_t pid, uint32_t tid)
{
    struct thread *t = idmap__get(&s->threads, tid);
    if (!t)
        return thread_new(s, pid, tid);
    if (t->pid != pid && pid != (uint32_t)-1) {
        t->pid = pid;               /* first seen without its process */
        t->proc = process_findnew(s, pid);
    }
    return t;
}

/* perf's is_anon_memory() || is_no_dso_memory(): memory perf names through
 * the process's perf map when it is executable.  (Not otherwise: a bad
 * return address into the stack or heap must not read, too early, the map
 * of a process that has not written it yet.) */
static int is_jit_memory(const char *f)
{
    return !strcmp(f, "//anon") || !strncmp(f, "/dev/zero", 9) ||
           !strncmp(f, "/anon_hugepage", 14) || !strncmp(f, "[stack", 6) ||
           !strncmp(f, "/SYSV", 5) || !strcmp(f, "[heap]");
}

/* The dso registered under key, or a new one (*fresh set) that the caller
 * fills in. */
static struct dso *dso_intern(struct session *s, const char *key, const char *path,
                              enum dso_kind kind, int *fresh)
{
    uint32_t kid = intern__id(s->strs, key, strlen(key));
    struct dso *d = idmap__get(&s->dso_by_key, kid);
    *fresh = d == NULL;
    if (d)
        return d;
    d = xcalloc(1, sizeof(*d));
    d->path = str(s, path);
    d->id = (unsigned)s->n_dsos;
    d->kind = kind;
    GROW(s->dsos, s->cap_dsos, s->n_dsos + 1);
    s->dsos[s->n_dsos++] = d;
    idmap__put(&s->dso_by_key, kid, d);
    return d;
}

static const struct dso *dso_for(struct session *s, const struct pd_mmap *m)
{
    char key[4200];
    enum dso_kind kind = DSO_FILE;
    const char *path = m->filename;
    uint32_t pid = 0;

    if (is_jit_memory(path) && (m->prot & PROT_EXEC)) {
        kind = DSO_PERFMAP;
        pid = m->pid;
        snprintf(key, sizeof(key), "/tmp/perf-%u.map", pid);
        path = key;
    } else if (!strcmp(path, "[vdso]")) {
        kind = DSO_VDSO;
    } else if (path[0] != '/' || is_jit_memory(path)) {
        kind = DSO_OTHER;
    }
    /* A file rebuilt during the recording maps with another build id: keep
     * the two apart so each is checked against its own.  A perf map's key
     * starts with a newline, which no mapped file's does: libpyperfmap maps
     * its map file too, and that mapping is not the JIT code. */
    char k2[4300];
    int n = snprintf(k2, sizeof(k2), "%s%s", kind == DSO_PERFMAP ? "\n" : "", path);
    for (int i = 0; i < m->build_id_size && n < (int)sizeof(k2) - 3; i++)
        n += snprintf(k2 + n, sizeof(k2) - (size_t)n, "%s%02x", i ? "" : "\n", m->build_id[i]);
    int fresh;
    struct dso *d = dso_intern(s, k2, path, kind, &fresh);
    if (!fresh)
        return d;
    d->perfmap_pid = pid;
    if (m->build_id_size) {
        memcpy(d->build_id, m->build_id, m->build_id_size);
        d->build_id_size = m->build_id_size;
    } else {
        struct bid *b = idmap__get(&s->bid_by_path, intern__id(s->strs, path, strlen(path)));
        if (b) {
            memcpy(d->build_id, b->id, b->size);
            d->build_id_size = b->size;
        }
    }
    return d;
}

/*
 * JIT code a forked child inherited.  pyperfmap gives the child a map of its
 * own (the parent's entries and the child's new ones, which may reuse
 * addresses the parent later fills differently), so the child's map names
 * it, and the creator's serves when the child wrote none (CPython's -X perf).
 * perf always uses the creator's: a deliberate difference.
 */
static const struct dso *inherited_dso(struct session *s, const struct dso *from, uint32_t pid)
{
    uint32_t creator = from->perfmap_fallback ? from->perfmap_fallback : from->perfmap_pid;
    char path[64], key[96];
    snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
    snprintf(key, sizeof(key), "%s\n<%u", path, creator);
    int fresh;
    struct dso *d = dso_intern(s, key, path, DSO_PERFMAP, &fresh);
    if (fresh) {
        d->perfmap_pid = pid;
        d->perfmap_fallback = creator;
    }
    return d;
}

/* Insert m into p's sorted maps, cutting away whatever it overlaps. */
static void insert_mapping(struct process *p, struct mapping m)
{
    size_t n = 0, cap = p->n_maps + 2;
    struct mapping *out = xmalloc(cap * sizeof(*out));
    int placed = 0;
    for (size_t i = 0; i < p->n_maps; i++) {
        struct mapping o = p->maps[i];
        if (o.end <= m.start || o.start >= m.end) {
            if (!placed && o.start >= m.end) {
                out[n++] = m;
                placed = 1;
            }
            out[n++] = o;
            continue;
        }
        if (o.start < m.start) {        /* left piece survives */
            struct mapping l = o;
            l.end = m.start;
            out[n++] = l;
        }
        if (!placed) {
            out[n++] = m;
            placed = 1;
        }
        if (o.end > m.end) {            /* right piece survives */
            struct mapping r = o;
            r.pgoff += m.end - o.start;
            r.start = m.end;
            out[n++] = r;
        }
    }
    if (!placed)
        out[n++] = m;
    free(p->maps);                      /* maps are rare next to samples */
    p->maps = out;
    p->n_maps = n;
    p->cap_maps = cap;
}

void session__apply(struct session *s, const struct pd_event *ev)
{
    switch (ev->type) {
    case PD_MMAP: {
        const struct pd_mmap *m = &ev->u.mmap;
        if (m->pid == (uint32_t)-1 || m->len == 0 || m->start + m->len < m->start)
            return;                     /* kernel maps: symbols use kallsyms */
        struct mapping map = {m->start, m->start + m->len, m->pgoff, m->prot, dso_for(s, m)};
        insert_mapping(process_findnew(s, m->pid), map);
        return;
    }
    case PD_COMM: {
        const struct pd_comm *c = &ev->u.comm;
        struct thread *t = session__thread(s, c->pid, c->tid);
        t->comm = str(s, c->comm);
        t->comm_set = 1;
        return;
    }
    case PD_FORK: {
        const struct pd_task *f = &ev->u.task;
        struct thread *parent = session__thread(s, f->ppid, f->ptid);
        if (f->pid != f->ppid)          /* a new process, maybe a reused PID */
            process_new(s, f->pid, parent->proc);
        struct thread *t = thread_new(s, f->pid, f->tid);
        if (parent->comm_set) {
            t->comm = parent->comm;
            t->comm_set = 1;
        }
        return;
    }
    case PD_EXIT: {
        struct thread *t = idmap__get(&s->threads, ev->u.task.tid);
        if (t)
            t->dead = 1;
        return;
    }
    case PD_SAMPLE:
    case PD_SWITCH:     /* for the interval stage, not the session */
        return;
    }
}

const struct mapping *process__find(const struct process *p, uint64_t addr)
{
    size_t lo = 0, hi = p->n_maps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->maps[mid].end <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < p->n_maps && p->maps[lo].start <= addr)
        return &p->maps[lo];
    return NULL;
}

const struct dso *process__program(const struct process *p)
{
    for (size_t i = 0; i < p->n_maps; i++)
        if (p->maps[i].dso->kind == DSO_FILE)
            return p->maps[i].dso;
    return NULL;
}

size_t session__n_processes(const struct session *s)
{
    return s->procs.n;
}
