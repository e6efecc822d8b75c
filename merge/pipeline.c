/* pipeline.c - wire the stages together for one input (see pipeline.h). */
#include "pipeline.h"
#include "perfdata.h"
#include "session.h"
#include "symbols.h"
#include "unwind.h"
#include "unwind_dwarf.h"
#include "stitch.h"
#include "elfsyms.h"
#include "fpcheck.h"
#include "live.h"
#include "modes.h"
#include "util.h"
#include "../libpyperfmap/trampoline.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ROOT_MEMO 64
#define KERNEL_DSO "[kernel.kallsyms]"
/* The longest stack: one unwind gives at most UNWIND_MAX_FRAMES, a stitched
 * one more (stitch.h): Python's default recursion limit (1000 calls) at
 * about four native frames per call. */
#define STACK_MAX (4 * UNWIND_MAX_FRAMES)

struct root_memo {
    const char *comm;
    uint32_t pid, tid, thread;
};

struct run {
    const struct pipeline_opts *o;
    uint64_t first_time, last_time;     /* of the samples, perf's clock */
    struct perf_reader *r;
    struct session *s;
    struct symbols *sy;
    struct profile *p;
    u32 *pframe;                /* symbols frame id -> profile frame id + 1 */
    size_t cap_pframe;
    u32 root_first[LIVE_ROOM(STACK_MAX + 2)];   /* room for --format live's views */
    const char *event;          /* the event being folded, once known */
    struct spantab *spantab;    /* pyperfmap.span's spans, or NULL */
    uint64_t samples, frames, unknown;
    uint64_t inner_unlined;     /* --lines: samples with a Python frame (see with_line) */
    uint64_t callers, callers_lined;    /* --lines: caller Python frames, and with a line */
    uint64_t *per_attr;         /* the samples folded, by perf_reader__attr index */
    size_t cap_per_attr;
    struct uframe uf[UNWIND_MAX_FRAMES];
    /* room for the [truncated] root and a marker leaf; late_ids for a
     * sample that waited (stitch.h) while ids holds the current one */
    uint32_t ids[STACK_MAX + 2], kept[LIVE_ROOM(STACK_MAX + 2)];
    uint32_t late_ids[STACK_MAX + 2];
    struct stitch_act acts[UNWIND_MAX_FRAMES];
    size_t n_acts;
    uint64_t eval_pc;           /* what the outermost trampoline called: the interpreter's */
    struct unwind_dwarf *ud;    /* --call-graph dwarf recordings; CFI for fc */
    struct stitch *st;          /* and their truncated stacks completed */
    struct fpcheck fc;          /* -g chains that stop in code without frame pointers */
    struct root_memo roots[ROOT_MEMO];
    const char *shown;          /* the input's name in messages */
    char *data_dir;             /* where the input is (symbols look beside it), or NULL */
    struct modes m;
    uint32_t *execs;            /* pids that began (exec) before the mode was set up */
    size_t n_execs, cap_execs;
    int tty;                    /* stderr is a terminal: show progress */
    uint64_t count;             /* records read */
    uint64_t progress_at;       /* when to show progress next (ns) */
    int progress_shown;
};

/* What the DWARF unwinder (and fpcheck) needs to know of a process: what
 * is mapped at an address, and whether anonymous code there is a
 * trampoline.  ELF files are keyed by their struct dso. */
struct dwarf_ctx {
    struct symbols *sy;
    const struct process *proc;
};

static int dwarf_lookup(void *arg, uint64_t addr, struct unwind_map *um)
{
    const struct dwarf_ctx *c = arg;
    const struct mapping *m = process__find(c->proc, addr);
    uint64_t entry;
    if (!m)
        return -ENOENT;
    *um = (struct unwind_map){.kind = UNWIND_MAP_ELF, .start = m->start, .end = m->end,
                              .pgoff = m->pgoff, .path = m->dso->path, .dso = m->dso};
    switch (m->dso->kind) {
    case DSO_FILE:  /* the file the symbols come from: gone or rebuilt means its cached copy */
        um->path = symbols__elf_file(c->sy, m->dso);
        return um->path ? 0 : -ENOENT;
    case DSO_VDSO:  /* CFI from where the symbols came: the cached copy of the recording's */
        um->path = symbols__elf_file(c->sy, m->dso);
        if (!um->path)
            um->image = elf_own_vdso(&um->image_size);
        return um->path || um->image ? 0 : -ENOENT;
    case DSO_PERFMAP:
        switch (symbols__trampoline(c->sy, c->proc, addr, &entry)) {
        case TRAMPOLINE_PYPERFMAP:
            um->kind = UNWIND_MAP_PYPERFMAP;
            break;
        case TRAMPOLINE_CPYTHON:
            um->kind = UNWIND_MAP_CPYTHON_PERF;
            break;
        default:
            return -ENOENT;
        }
        um->start = entry;
        return 0;
    default:
        return -ENOENT;
    }
}

/* The profile's thread for t, with its root label: comm, comm-PID or
 * comm-PID/TID, spelled as stackcollapse-perf.pl spells it. */
static uint32_t thread_of(struct run *x, const struct thread *t)
{
    /* Samples come in bursts per thread: remember the last few.  comm
     * strings are interned, so comparing pointers is enough. */
    struct root_memo *m = &x->roots[t->tid % ROOT_MEMO];
    if (m->comm == t->comm && m->tid == t->tid && m->pid == t->pid)
        return m->thread;
    size_t len = strlen(t->comm);
    char *buf = xmalloc(len + 32);
    memcpy(buf, t->comm, len + 1);
    if (x->o->root == ROOT_PID)
        snprintf(buf + len, 32, "-%d", (int)t->pid);
    else if (x->o->root == ROOT_TID)
        snprintf(buf + len, 32, "-%d/%d", (int)t->pid, (int)t->tid);
    for (char *c = buf; *c; c++)    /* as stackcollapse-perf.pl; ';' would split */
        if (*c == ' ')
            *c = '_';
        else if (*c == ';')
            *c = ':';
        else if ((unsigned char)*c < ' ')
            *c = '?';
    *m = (struct root_memo){t->comm, t->pid, t->tid,
                            profile__thread(x->p, t->pid, t->tid, t->comm, buf)};
    free(buf);
    return m->thread;
}

static void set_build_id(struct profile *p, const char *path, const uint8_t *id, size_t size)
{
    char hex[41];
    for (size_t i = 0; i < size && i < 20; i++)
        snprintf(hex + 2 * i, 3, "%02x", id[i]);
    hex[2 * (size < 20 ? size : 20)] = 0;
    profile__set_build_id(p, path, hex);
}

/* The profile's frame for a symbols frame, as the view names it. */
static uint32_t pframe_of(struct run *x, uint32_t id)
{
    GROW_ZEROED(x->pframe, x->cap_pframe, (size_t)id + 1);
    if (x->pframe[id])
        return x->pframe[id] - 1;
    const struct frame *f = symbols__get(x->sy, id);
    const char *name = x->o->view.view == VIEW_NATIVE ? f->name : f->display;
    enum pkind k = f->kind == FRAME_KERNEL ? PK_KERNEL
                   : f->kind == FRAME_PYTHON ? PK_PYTHON
                   : f->kind == FRAME_JIT ? PK_JIT
                   : f->kind == FRAME_USER && !f->unknown ? PK_NATIVE : PK_UNKNOWN;
    /* py::qualname:file names the file after the first colon (of the name
     * before --lines added ":LINE"); native code its DSO, with the build id
     * recorded for it (pprof's mappings) */
    const char *py = f->line ? symbols__get(x->sy, f->unlined)->name : f->name;
    const char *colon = f->kind == FRAME_PYTHON ? strchr(py + 4, ':') : NULL;
    const char *file = colon ? colon + 1
                       : f->kind == FRAME_PYTHON ? NULL
                       : f->dso ? f->dso->path
                       : f->kind == FRAME_KERNEL ? KERNEL_DSO : NULL;
    if (f->kind != FRAME_PYTHON && f->dso && f->dso->build_id_size)
        set_build_id(x->p, f->dso->path, f->dso->build_id, f->dso->build_id_size);
    u32 pf = profile__frame(x->p, name, strlen(name), k, file);
    x->pframe[id] = pf + 1;
    if (f->line)
        profile__frame_line(x->p, pf, pframe_of(x, f->unlined), f->line);
    return pf;
}

/* The profiled program: the executable of the first sampled process that
 * has one mapped (the command pyperf-record ran, or the process attached
 * to). */
static void note_program(struct run *x, const struct thread *t)
{
    const struct dso *d;
    if (profile__program(x->p) || !(d = process__program(t->proc)))
        return;
    profile__set_program(x->p, d->path);
    if (d->build_id_size)
        set_build_id(x->p, d->path, d->build_id, d->build_id_size);
}

/* One more sample of attr i folded (now, or once stitching settles it). */
static void count_event(struct run *x, unsigned i)
{
    GROW_ZEROED(x->per_attr, x->cap_per_attr, (size_t)i + 1);
    x->per_attr[i]++;
}

/* -v's first line: the samples folded, per event where there are several
 * (a tracing mode's probes and tracepoints). */
static void summary(const struct run *x)
{
    struct warn_msg w;
    FILE *f = warn_begin(&w);
    size_t events = 0, n = perf_reader__n_attrs(x->r);
    for (size_t i = 0; i < n && i < x->cap_per_attr; i++)
        events += x->per_attr[i] != 0;
    fprintf(f, "%" PRIu64 " samples (", x->samples);
    if (events < 2)
        fputs(x->event ? x->event : "-", f);
    for (size_t i = 0, k = 0; events >= 2 && i < n && i < x->cap_per_attr; i++)
        if (x->per_attr[i])
            fprintf(f, "%s%s %" PRIu64, k++ ? ", " : "", perf_reader__attr(x->r, i)->name,
                    x->per_attr[i]);
    fprintf(f, "), %" PRIu64 " lost, %.1f%% of frames unknown, %zu processes, %zu stacks%s",
            perf_reader__lost(x->r), x->frames ? 100.0 * x->unknown / x->frames : 0.0,
            session__n_processes(x->s), profile__n_samples(x->p),
            perf_reader__truncated(x->r) ? ", input truncated" : "");
    warn_end(&w);
}

/* calls mode: an entry comes without a stack (calls.c makes them); its
 * function is named by its trampoline's address, or it is a system call,
 * named as the syscalls mode names it. */
static void call(struct run *x, const struct pd_sample *s)
{
    uint64_t key;
    char marker[64];
    if (modes__call_key(&x->m, s, &key) < 0)
        return;
    struct thread *t = session__thread(x->s, s->pid, s->tid);
    note_program(x, t);
    uint32_t id = modes__marker(&x->m, s, marker, sizeof marker)
                      ? symbols__named(x->sy, marker, FRAME_ROOT)
                      : symbols__frame(x->sy, t->proc, key, 0, 0);
    x->samples++;
    count_event(x, s->attr_idx);
    /* The frame before the thread's root label: the order numbers them, and
     * C leaves the order of a call's arguments to the compiler. */
    uint32_t frame = pframe_of(x, id);
    modes__event(&x->m, s, thread_of(x, t), frame);
}

/* The profile's stack for a sample's frames ids[0..n) (leaf first, room
 * for two more): under a [truncated] root when they do not reach the
 * root, below the mode's marker leaf if any, through the view. */
static uint32_t profile_stack(struct run *x, uint32_t *ids, size_t n, int truncated,
                              const char *marker)
{
    for (size_t i = 0; i < n; i++)
        x->unknown += symbols__get(x->sy, ids[i])->unknown;
    if (truncated)
        ids[n++] = symbols__named(x->sy, "[truncated]", FRAME_ROOT);
    if (marker) {
        memmove(ids + 1, ids, n * sizeof(*ids));
        ids[0] = symbols__named(x->sy, marker, FRAME_ROOT);
        n++;
    }
    x->frames += n;
    x->samples++;
    size_t m = x->o->live ? live__views(x->sy, &x->o->view, ids, n, x->kept)
                          : view__apply(&x->o->view, x->sy, ids, n, x->kept);
    for (size_t i = 0; i < m; i++)
        x->root_first[i] = pframe_of(x, x->kept[m - 1 - i]);
    return profile__stack(x->p, x->root_first, m);
}

/* What a plain sample that waits for its stack to be completed needs
 * afterwards (stitch.h's payload). */
struct late {
    uint32_t thread;
    uint64_t time;
    uint64_t v[PROFILE_MAX_VALUES];
};

/* stitch_emit_fn: a sample that waited, with its final frames. */
static void emit_late(void *arg, const void *payload, const uint32_t *ids, size_t n, int complete)
{
    struct run *x = arg;
    struct late l;
    memcpy(&l, payload, sizeof(l));
    memcpy(x->late_ids, ids, n * sizeof(*ids));
    uint32_t stack = profile_stack(x, x->late_ids, n, !complete, NULL);
    modes__put(&x->m, &(struct pentry){.thread = l.thread, .stack = stack, .v = l.v, .timed = 1,
                                       .begin = l.time, .end = l.time});
}

/* Unwinds s's stack into x->uf: the frames, leaf first; *stop says
 * whether they reach the root. */
static size_t unwind(struct run *x, const struct pd_event *ev, const struct thread *t,
                     enum unwind_stop *stop)
{
    const struct pd_sample *s = &ev->u.sample;
    struct dwarf_ctx c = {x->sy, t->proc};
    *stop = UNWIND_COMPLETE;
    if (unwind_dwarf__wanted(&s->attr->attr)) {
        struct pd_sample cut = *s;  /* --dwarf-copy: what a smaller copy had held */
        if (x->o->dwarf_copy && cut.stack_dyn_size > x->o->dwarf_copy)
            cut.stack_dyn_size = x->o->dwarf_copy;
        if (!x->ud)
            x->ud = unwind_dwarf__new();
        /* one slot left for the [truncated] root */
        return unwind_dwarf__sample(x->ud, &cut, ev->misc, dwarf_lookup, &c, x->uf,
                                    UNWIND_MAX_FRAMES - 1, stop);
    }
    size_t n = unwind_fp(s, ev->misc, x->uf, UNWIND_MAX_FRAMES);
    if (s->ips) {
        if (!x->ud)
            x->ud = unwind_dwarf__new();
        fpcheck__sample(&x->fc, x->ud, dwarf_lookup, &c, x->uf, n);
    }
    return n;
}

/* The frames x->ids[0..kept) cut after the innermost that starts a stack
 * of its own (a greenlet's): what the walk found above it belongs to
 * another stack.  Returns how many are left, and sets *rooted when cut. */
static size_t cut_at_stack_root(struct run *x, size_t kept, int *rooted)
{
    for (size_t i = 0; i < kept; i++) {
        if (!symbols__get(x->sy, x->ids[i])->stack_root)
            continue;
        while (x->n_acts && x->acts[x->n_acts - 1].pos > i)
            x->n_acts--;
        *rooted = 1;
        return i + 1;
    }
    return kept;
}

/* --lines: Python frame id of trampoline frame u, named with the line of
 * the call it made, which the next trampoline in kept in its activation
 * identity, *caller; *caller becomes u's own.  *inner: a trampoline was seen before in
 * this sample; the innermost Python frame, whose position no call kept, is
 * counted without a line. */
static uint32_t with_line(struct run *x, const struct thread *t, const struct uframe *u,
                          uint32_t id, uint64_t *caller, int *inner)
{
    int line = 0;
    if (!*inner) {
        *inner = 1;
        x->inner_unlined++;
    } else {
        x->callers++;
        if (*caller)
            line = symbols__line(x->sy, t->proc, u->addr, PYPERFMAP_CALLER_POS(*caller));
        x->callers_lined += line > 0;
    }
    *caller = u->ids.activation;
    return line > 0 ? symbols__with_line(x->sy, id, line) : id;
}

/* Names the unwound frames x->uf[0..n) into x->ids (the kept ones) and
 * notes the interpreter activations among them for stitching (x->acts,
 * x->eval_pc).  Returns how many were kept; *rooted: they end at the start
 * of a stack of their own (cut_at_stack_root). */
static size_t symbolize(struct run *x, const struct thread *t, size_t n, int *rooted)
{
    size_t kept = 0;
    uint64_t caller = 0;
    int inner = 0;
    x->n_acts = 0;
    x->eval_pc = 0;
    for (size_t i = 0; i < n; i++) {
        const struct uframe *u = &x->uf[i];
        if (u->kernel && x->o->no_kernel)
            continue;                   /* not worth symbolizing */
        /* The native view names return addresses as perf does, at the
         * address itself; the others look up the call at pc - 1, which
         * differs when a call is the last instruction of a function. */
        int at_call = u->is_return && x->o->view.view != VIEW_NATIVE;
        x->ids[kept] = u->guest ? symbols__named(x->sy, "[guest]", FRAME_USER)
                                : symbols__frame(x->sy, t->proc, u->addr, u->kernel, at_call);
        if (x->o->lines && u->ids.activation)
            x->ids[kept] = with_line(x, t, u, x->ids[kept], &caller, &inner);
        /* With kernel addresses hidden, one [kernel] frame says it all. */
        if (kept && x->ids[kept] == x->ids[kept - 1] && u->kernel && symbols__kernel_hidden(x->sy))
            continue;
        if (u->ids.activation) {
            x->acts[x->n_acts++] = (struct stitch_act){u->ids.activation, u->addr, (uint32_t)kept,
                                                       u->ids.parent,
                                                       symbols__get(x->sy, x->ids[kept])->path_key};
            x->eval_pc = i ? x->uf[i - 1].addr : 0;
        }
        kept++;
    }
    return cut_at_stack_root(x, kept, rooted);
}

/* Completes a DWARF stack x->ids[0..*n) from earlier ones (stitch.h), or
 * lets a plain sample (may_wait) wait for a later one.  Returns 1 when it
 * waits (emit_late takes it on), else 0, with *truncated updated. */
static int stitch_or_wait(struct run *x, const struct pd_sample *s, const struct thread *t,
                          int may_wait, size_t *n, int *truncated)
{
    struct late l = {0, s->time, {0}};
    if (!x->st)
        x->st = stitch__new(sizeof(l), STACK_MAX,
                            symbols__named(x->sy, "[unknown native frames]", FRAME_USER),
                            emit_late, x);
    if (may_wait) {
        l.thread = thread_of(x, t);
        modes__values(&x->m, s, l.v);
    }
    /* Call paths are shared by the processes of one interpreter build,
     * told by the file its evaluator runs from. */
    const struct mapping *ev_map = x->eval_pc ? process__find(t->proc, x->eval_pc) : NULL;
    uint64_t program = ev_map ? ev_map->dso->id + 1u : 0;
    switch (stitch__sample(x->st, (uint64_t)s->pid << 32 | s->tid, program, x->ids, n, x->acts,
                           x->n_acts, !*truncated, may_wait ? &l : NULL)) {
    case STITCH_STITCHED:
        *truncated = 0;
        return 0;
    case STITCH_WAITING:
        return 1;
    case STITCH_COMPLETE:
    case STITCH_TRUNCATED:
        break;
    }
    return 0;
}

/* A sample with a stack: unwind, symbolize, stitch or wait, then the
 * mode's event at its profile stack. */
static void stacked(struct run *x, const struct pd_event *ev, enum take take)
{
    const struct pd_sample *s = &ev->u.sample;
    enum unwind_stop stop;
    count_event(x, s->attr_idx);
    struct thread *t = session__thread(x->s, s->pid, s->tid);
    note_program(x, t);
    int rooted = 0;
    size_t n = symbolize(x, t, unwind(x, ev, t, &stop), &rooted);
    if (rooted)
        stop = UNWIND_COMPLETE;
    int truncated = stop != UNWIND_COMPLETE;
    /* Complete and truncated DWARF stacks go through stitching: a plain
     * sample may wait for a later one to complete it; the others (they
     * open spans now) are only completed from earlier ones. */
    if (unwind_dwarf__wanted(&s->attr->attr) && !x->o->no_stitch &&
        (stop == UNWIND_COMPLETE || stop == UNWIND_TRUNCATED) &&
        stitch_or_wait(x, s, t, take == TAKE_PLAIN, &n, &truncated))
        return;
    char marker[64];
    int marked = modes__marker(&x->m, s, marker, sizeof marker);
    /* The stack's frames before the thread's root label, as in call(). */
    uint32_t stack = profile_stack(x, x->ids, n, truncated, marked ? marker : NULL);
    modes__event(&x->m, s, thread_of(x, t), stack);
}

static void sample(struct run *x, const struct pd_event *ev)
{
    const struct pd_sample *s = &ev->u.sample;
    enum take take = modes__take(&x->m, s);
    switch (take) {
    case TAKE_NONE:
        break;
    case TAKE_BARE:
        modes__event(&x->m, s, 0, 0);
        break;
    case TAKE_CALL:
        call(x, s);
        break;
    case TAKE_STACK:
    case TAKE_PLAIN:
        stacked(x, ev, take);
        break;
    }
}
static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A progress line on a terminal, for inputs that take more than a
 * moment; done erases it. */
static void progress(struct run *x, int done)
{
    uint64_t at, total, now = now_ns();
    if (done) {
        if (x->progress_shown)
            fputs("\r\033[K", stderr);
        return;
    }
    if (now < x->progress_at)
        return;
    x->progress_at = now + 250000000u;
    x->progress_shown = 1;
    perf_reader__progress(x->r, &at, &total);
    if (total)
        fprintf(stderr, "\rpymerge: %3d%% (%" PRIu64 " samples)", (int)(100.0 * at / total),
                x->samples);
    else
        fprintf(stderr, "\rpymerge: %" PRIu64 " MB read, %" PRIu64 " samples", at >> 20,
                x->samples);
}

/* When the recording ran, in wall-clock time.  perf's sample times are on
 * its own (monotonic) clock, so the span is anchored at the file's last
 * write, which perf makes when the recording ends; a pipe ends now. */
static void set_span(struct run *x, const char *path)
{
    struct stat st;
    struct timespec now;
    uint64_t end, dur = x->last_time - x->first_time;
    if (x->first_time > x->last_time)
        return;                 /* no sample carried a time */
    if (strcmp(path, "-") && stat(path, &st) == 0 && S_ISREG(st.st_mode))
        end = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
    else if (clock_gettime(CLOCK_REALTIME, &now) == 0)
        end = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
    else
        return;
    profile__set_span(x->p, end > dur ? end - dur : 0, dur);
}

/* The directory holding path, or NULL for standard input. */
static char *dir_of(const char *path)
{
    if (strcmp(path, "-") == 0)
        return NULL;
    const char *slash = strrchr(path, '/');
    if (!slash)
        return xstrdup(".");
    char *d = xstrdup(path);
    d[slash == path ? 1 : slash - path] = 0;
    return d;
}

/* --event: the attr it names, whose samples the cpu mode folds; 0, or
 * -EINVAL after listing the events there are. */
static int select_event(struct run *x, const char *want)
{
    size_t i, n = perf_reader__n_attrs(x->r);
    for (i = 0; i < n; i++)
        if (event_matches(perf_reader__attr(x->r, i)->name, want))
            break;
    if (i == n) {
        struct warn_msg w;
        FILE *f = warn_begin(&w);
        fprintf(f, "%s: no event named %s; the file has:", x->shown, want);
        for (i = 0; i < n; i++)
            fprintf(f, " %s", perf_reader__attr(x->r, i)->name);
        warn_end(&w);
        return -EINVAL;
    }
    x->event = xstrdup(perf_reader__attr(x->r, i)->name);
    return 0;
}

/* Opens path and sets up what reads it: the reader, the processes, the
 * symbols and the profile, the last two given perf's build-id header
 * (perf record and pyperf-record write it).  0, or -EINVAL after saying
 * what is wrong. */
static int open_input(struct run *x, const char *path)
{
    const struct pipeline_opts *o = x->o;
    x->r = perf_reader__open(path);         /* says why it fails */
    if (!x->r)
        return -EINVAL;
    if (o->event && select_event(x, o->event) < 0)
        return -EINVAL;
    x->s = session__new();
    x->p = profile__new(o->keep_time);
    struct symbols_opts so = {o->kallsyms, x->data_dir, o->map_dir, !o->no_kernel, NULL, 0,
                              perf_reader__pipe_mode(x->r)};
    for (size_t i = 0; i < perf_reader__n_build_ids(x->r); i++) {
        const struct pd_build_id *b = perf_reader__build_id(x->r, i);
        session__add_build_id(x->s, b->filename, b->id, b->size);
        set_build_id(x->p, b->filename, b->id, b->size);
        if (strcmp(b->filename, KERNEL_DSO) == 0) {
            so.kernel_build_id = b->id;
            so.kernel_build_id_size = b->size;
        }
    }
    x->sy = symbols__new(&so);
    return 0;
}

/* The mode, set up at the first sample: the attrs and tracing data it is
 * chosen from come before it (in a pipe, as records of their own), and
 * the cpu mode folds that sample's event unless --event said another. */
static int start_mode(struct run *x, const char *first)
{
    const struct pipeline_opts *o = x->o;
    int err = modes__init(&x->m, o->mode, x->p, x->r, x->event, first, o->weight, x->shown);
    if (err < 0)
        return err;
    modes__set_at(&x->m, (enum at_kind)o->at, o->at_ns);
    for (size_t i = 0; i < x->n_execs; i++)
        modes__exec(&x->m, x->execs[i]);
    if (x->spantab) {
        struct span_opts so = o->spans;
        so.off |= o->view.view == VIEW_NATIVE;     /* [span] frames are Python's */
        x->m.span_put = span_put__new(x->spantab, &so, x->p);
    }
    if (!x->event)
        x->event = xstrdup(first);
    if (x->m.calls) {
        calls__set_filter(x->m.calls, &o->filter);
    } else if (o->filter.only || o->filter.inside) {
        warnx_("%s: --only and --inside filter calls recordings (pyperf-record --mode calls)",
               x->shown);
        return -EINVAL;
    }
    return 0;
}

/* What a record does to the state every sample is read against: the
 * processes and their maps, and where the kernel's text is. */
static void state_event(struct run *x, struct pd_event *ev)
{
    if (ev->type == PD_COMM && ev->u.comm.exec && x->m.ops) {
        modes__exec(&x->m, ev->u.comm.pid);
    } else if (ev->type == PD_COMM && ev->u.comm.exec) {
        GROW(x->execs, x->cap_execs, x->n_execs + 1);
        x->execs[x->n_execs++] = ev->u.comm.pid;
    }
    if (ev->type != PD_SAMPLE && ev->type != PD_SWITCH)
        session__apply(x->s, ev);
    if (ev->type == PD_MMAP && ev->u.mmap.pid == (uint32_t)-1 &&
        strncmp(ev->u.mmap.filename, KERNEL_DSO, 17) == 0)
        symbols__kernel_text(x->sy, ev->u.mmap.pgoff);
}

/* A record once the mode is set up: 0, or a negative errno after saying
 * what is wrong. */
static int event(struct run *x, struct pd_event *ev)
{
    int err;
    switch (ev->type) {
    case PD_SAMPLE:
        if (ev->time && ev->time < x->first_time)
            x->first_time = ev->time;
        if (ev->time > x->last_time)
            x->last_time = ev->time;
        sample(x, ev);
        if (x->o->live && (err = live__tick(x->o->live, x->p, ev->time)) < 0) {
            warnx_("<stdout>: write error: %s", strerror(errno ? errno : EIO));
            return err;
        }
        break;
    case PD_SWITCH:
        modes__switch(&x->m, &ev->u.sw, ev->time);
        break;
    case PD_EXIT:
        modes__thread_exit(&x->m, ev->u.task.tid, ev->time);
        if (x->st)
            stitch__thread_exit(x->st, (uint64_t)ev->u.task.pid << 32 | ev->u.task.tid);
        break;
    default:
        break;
    }
    state_event(x, ev);
    return 0;
}

/* The next record, keeping a terminal's progress line: 1, 0 at the end,
 * or a negative errno on bad input, said by the reader. */
static int next(struct run *x, struct pd_event *ev)
{
    if (x->tty && x->count && (x->count & 0xff) == 0)
        progress(x, 0);
    x->count++;
    return perf_reader__next(x->r, ev);
}

/* Every record of the input, in delivery order.  0, or a negative errno
 * after saying what is wrong. */
static int read_all(struct run *x)
{
    struct pd_event ev;
    int k, err;
    /* a span probe is no sample of the profile's: it does not choose the event */
    while ((k = next(x, &ev)) > 0 &&
           (ev.type != PD_SAMPLE || spantab__is_probe(ev.u.sample.attr->name)))
        state_event(x, &ev);
    if (k > 0 && (err = start_mode(x, ev.u.sample.attr->name)) < 0)
        return err;
    for (; k > 0; k = next(x, &ev))
        if ((err = event(x, &ev)) < 0)
            return err;
    if (x->tty)
        progress(x, 1);
    return k < 0 ? -EINVAL : 0;                 /* said by the reader */
}

/* "N records were lost while recording": per event, and without -v what
 * to do about it. */
static void report_lost(const struct run *x)
{
    struct warn_msg w;
    FILE *f = warn_begin(&w);
    /* -v's summary has the total: there, only the events it came from */
    if (x->o->verbose)
        fputs("lost per event:", f);
    else
        fprintf(f, "%s: %" PRIu64 " records were lost while recording:", x->shown,
                perf_reader__lost(x->r));
    for (size_t i = 0; i < perf_reader__n_attrs(x->r); i++)
        if (perf_reader__attr(x->r, i)->lost)
            fprintf(f, " %s %" PRIu64, perf_reader__attr(x->r, i)->name,
                    perf_reader__attr(x->r, i)->lost);
    if (!x->o->verbose)
        fputs(" (a bigger buffer: pyperf-record -m 256M or perf record -m 256M; fewer events: a"
              " lower -F, or perf record -c)", f);
    warn_end(&w);
}

/* What the reading saw, on stderr: with -v the counts of every stage;
 * without, what makes the profile wrong or short. */
static void report(const struct run *x)
{
    const struct pipeline_opts *o = x->o;
    if (o->verbose)
        summary(x);
    if (o->verbose && x->ud)
        unwind_dwarf__summary(x->ud);
    if (o->verbose && x->st)
        stitch__summary(x->st);
    if (o->verbose && o->lines)
        warnx_("lines: %" PRIu64 " of %" PRIu64 " calling Python frames named with their line;"
               " %" PRIu64 " samples' innermost Python frame has no line: its position is kept"
               " only when it calls (docs/lines.md)", x->callers_lined, x->callers,
               x->inner_unlined);
    /* Said without -v: such a profile is wrong, not just a little short. */
    double share;
    const struct dso *nofp = fpcheck__culprit(&x->fc, &share);
    if (nofp)
        warnx_("%s: %.0f%% of the frame-pointer callchains stop inside %s, built without frame"
               " pointers: record with --call-graph dwarf, or use pyperf-record", x->shown,
               100.0 * share, nofp->path);
    if (perf_reader__lost(x->r))
        report_lost(x);
    if (o->verbose && x->m.calls) {
        const struct calls_stats *cs = calls__stats(x->m.calls);
        warnx_("calls: %" PRIu64 " returns of calls that began before the recording, %" PRIu64
               " calls whose return was lost, %" PRIu64 " still open when their thread or the"
               " recording ended", cs->unmatched, cs->lost, cs->unfinished);
    }
    if (x->spantab)
        spantab__report(x->spantab, x->shown);
    if (o->verbose && x->m.unpaired)
        warnx_("%" PRIu64 " spans without their closing event (lost, or still open at the end)",
               x->m.unpaired);
}

/* The lost records into the profile, each weighed as the mean sample of
 * the events whose samples it folded (a lost free or return weighs
 * nothing); with none folded, each counts one. */
static void add_lost(struct run *x)
{
    uint64_t lost = perf_reader__lost(x->r), folded_lost = 0;
    uint64_t v[PROFILE_MAX_VALUES] = {0}, total[PROFILE_MAX_VALUES] = {0};
    for (size_t i = 0; i < perf_reader__n_attrs(x->r) && i < x->cap_per_attr; i++)
        if (x->per_attr[i])
            folded_lost += perf_reader__attr(x->r, i)->lost;
    for (size_t i = 0; i < profile__n_samples(x->p); i++)
        for (size_t k = 0; k < profile__n_types(x->p); k++)
            total[k] += profile__sample(x->p, i)->v[k];
    for (size_t k = 0; k < profile__n_types(x->p); k++) {
        double est = x->samples ? (double)total[k] * folded_lost / x->samples + 0.5 : lost;
        v[k] = est < 0x1p64 ? (uint64_t)est : UINT64_MAX;
    }
    /* at least 1, or the writers that skip what weighs nothing would not show it */
    if (!v[profile__weight(x->p)])
        v[profile__weight(x->p)] = 1;
    profile__set_lost(x->p, lost, v);
}

static void run_delete(struct run *x)
{
    stitch__delete(x->st);
    unwind_dwarf__delete(x->ud);
    fpcheck__exit(&x->fc);
    modes__exit(&x->m);
    spantab__delete(x->spantab);
    profile__delete(x->p);
    free(x->pframe);
    free(x->per_attr);
    free(x->execs);
    symbols__delete(x->sy);
    session__delete(x->s);
    perf_reader__delete(x->r);
    free((char *)x->event);
    free(x->data_dir);
    free(x);
}

int pipeline__run(const char *path, const struct pipeline_opts *o, struct profile **out)
{
    struct run *x = xcalloc(1, sizeof(*x));
    x->o = o;
    x->shown = strcmp(path, "-") == 0 ? "<stdin>" : path;
    x->data_dir = dir_of(path);
    x->tty = isatty(2);
    x->progress_at = now_ns() + 500000000u;     /* quiet for short inputs */
    x->first_time = UINT64_MAX;
    fpcheck__init(&x->fc);
    int ret = open_input(x, path);
    if (ret == 0 && (ret = spantab__read(path, x->shown, &x->spantab)) == 0 && x->spantab)
        ret = spantab__select(x->spantab, &o->spans, x->shown);
    if (ret == 0)
        ret = read_all(x);
    if (ret == 0) {
        if (x->st)
            stitch__finish(x->st);
        modes__finish(&x->m);
        add_lost(x);
        profile__finish(x->p);
        set_span(x, path);
        report(x);
        *out = x->p;
        x->p = NULL;
    }
    run_delete(x);
    return ret;
}
