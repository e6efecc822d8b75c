/* mode_alloc.c - the alloc and leaks modes: the allocator's probes and
 * mmap calls (alloc), paired with their returns and the frees into the
 * blocks still live (leaks, through leaks.c). */
#include "contract.h"
#include "mode_ops.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int sampled_found(struct perf_reader *r)
{
    return modes__has_probe(r, CONTRACT_EVENT_PY_ALLOC) || modes__has_probe(r, CONTRACT_EVENT_C_ALLOC);
}

/* Sampled allocations with their frees, or the C allocator's entries with
 * their returns and frees. */
static int leaks_found(struct perf_reader *r)
{
    if (sampled_found(r))
        return modes__has_probe(r, CONTRACT_EVENT_PY_FREE) ||
               modes__has_probe(r, CONTRACT_EVENT_C_FREE);
    return modes__has_probe(r, "malloc__return") && modes__has_probe(r, "free");
}

static int alloc_found(struct perf_reader *r)
{
    return sampled_found(r) || modes__has_probe(r, "malloc");
}

/* The role of a's events, and in f what allocator function they are of;
 * *size: the field that says how much an entry asks for. */
static enum role probe_role(const struct modes *m, const struct pd_attr *a,
                            struct alloc_fields *f, const char **size)
{
    static const char *const fns[] = {[LEAK_MALLOC] = "malloc", [LEAK_CALLOC] = "calloc",
                                      [LEAK_REALLOC] = "realloc", [LEAK_ALIGNED] = "aligned_alloc"};
    enum role role = ROLE_NONE;
    int leaks = m->mode == MODE_LEAKS;
    char ret[32];
    f->fn = ALLOC_MMAP;
    for (uint8_t k = 0; k < sizeof(fns) / sizeof(*fns); k++) {
        snprintf(ret, sizeof ret, "%s__return", fns[k]);
        if (modes__is_probe(a->name, fns[k]))
            role = ROLE_ALLOC, f->fn = k;
        else if (leaks && modes__is_probe(a->name, ret))
            role = ROLE_ALLOC_RETURN, f->fn = k;
    }
    if (modes__is_probe(a->name, "posix_memalign")) {  /* its pointer comes back in memory */
        role = leaks ? ROLE_NONE : ROLE_ALLOC;
        f->fn = LEAK_ALIGNED;                           /* not the [mmap] default */
    }
    if (leaks && modes__is_probe(a->name, "free"))
        role = ROLE_FREE;
    if (modes__is_probe(a->name, CONTRACT_EVENT_PY_ALLOC) ||
        modes__is_probe(a->name, CONTRACT_EVENT_C_ALLOC))
        role = ROLE_SAMPLED, f->fn = LEAK_MALLOC;
    if (leaks && (modes__is_probe(a->name, CONTRACT_EVENT_PY_FREE) ||
                  modes__is_probe(a->name, CONTRACT_EVENT_C_FREE)))
        role = ROLE_SAMPLED_FREE;
    if (leaks && modes__is_probe(a->name, CONTRACT_EVENT_FINALIZE))
        return ROLE_FINALIZE;
    if (!leaks && event_matches(a->name, "syscalls:sys_enter_mmap"))
        role = ROLE_ALLOC, *size = "len";
    return role;
}

/* The fields a's events are read by, into f; 0, or -EINVAL after saying
 * which is missing. */
static int alloc_fields(struct modes *m, const struct pd_attr *a, enum role role,
                        struct alloc_fields *f, const char *size)
{
    int sampled = role == ROLE_SAMPLED;
    int need_size = role == ROLE_ALLOC || sampled;
    int need_ptr = role != ROLE_ALLOC;
    const char *missing = NULL;
    if (need_size && modes__field(m, a, size, &f->bytes) < 0)
        missing = size;
    else if (need_ptr && modes__field(m, a, CONTRACT_FIELD_PTR, &f->ptr) < 0)
        missing = CONTRACT_FIELD_PTR;
    else if (sampled && modes__field(m, a, CONTRACT_FIELD_WEIGHT, &f->weight) < 0)
        missing = CONTRACT_FIELD_WEIGHT;
    if (missing) {
        modes__no_field(m, a->name, missing);
        return -EINVAL;
    }
    f->has_nmemb = modes__field(m, a, "nmemb", &f->nmemb) == 0;
    f->has_flags = f->fn == ALLOC_MMAP && modes__field(m, a, "flags", &f->flags) == 0;
    f->has_ptr = need_ptr || modes__field(m, a, CONTRACT_FIELD_PTR, &f->ptr) == 0;
    return 0;
}

static int alloc_start(struct modes *m, struct perf_reader *r)
{
    (void)r;
    m->af = xcalloc(m->n_roles + 1, sizeof(*m->af));
    if (m->mode == MODE_LEAKS) {
        m->leaks = leaks__new();
        profile__keep_time(m->p);       /* the growth table */
    }
    return 0;
}

/* The allocator probes pyperf-record sets (by their names in its group),
 * the mmap system call, and what each says: sizes at the entries, the
 * pointer at a return, a free and a realloc's entry. */
static int alloc_role(struct modes *m, const struct pd_attr *a, size_t i)
{
    const char *size = CONTRACT_FIELD_BYTES;
    enum role role = probe_role(m, a, &m->af[i], &size);
    if (role != ROLE_NONE && role != ROLE_FINALIZE &&
        alloc_fields(m, a, role, &m->af[i], size) < 0)
        return -EINVAL;
    return role;
}

/* mmap's flag for memory that is no file's, on the recording's kernel (x86-64) */
#define LINUX_MAP_ANONYMOUS 0x20

/* An allocator's entry (alloc: its bytes; leaks: waits for its return),
 * return or free.  A field outside the event reads as 0: nothing asked,
 * NULL given. */
static void alloc_event(struct modes *m, const struct pd_sample *s, enum role role,
                        uint32_t thread, uint32_t stack)
{
    const struct alloc_fields *f = &m->af[s->attr_idx];
    uint64_t bytes = 0, nmemb = 1, ptr = 0;
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
        modes__put_at(m, thread, stack, s->time, v);
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
    profile__set_variance_type(m->p, 1);        /* bytes, live-bytes */
    if (m->mode == MODE_ALLOC) {
        uint64_t v[PROFILE_MAX_VALUES] = {objects, weight};
        modes__put_at(m, thread, stack, s->time, v);
        if (weight > bytes)
            profile__add_variance(m->p, thread, stack, (double)weight * (double)(weight - bytes));
    } else {
        leaks__sampled(m->leaks, s->pid, ptr, weight, objects, thread, stack, s->time);
    }
}

static void alloc_sample(struct modes *m, const struct pd_sample *s, uint32_t thread,
                         uint32_t stack)
{
    enum role role = modes__role(m, s->attr_idx);
    if (role == ROLE_SAMPLED)
        sampled_alloc(m, s, thread, stack);
    else if (role != ROLE_FINALIZE)
        alloc_event(m, s, role, thread, stack);
    else if (!idmap__get(&m->finalized, s->pid))   /* the first, should a process fire it twice */
        idmap__put(&m->finalized, s->pid, (void *)(uintptr_t)(s->time + 1));
}

/* The expected relative error (one standard error) of the sampled
 * estimate total, in percent. */
static double error_pct(const struct profile *p, uint64_t total)
{
    double var = 0;
    for (size_t i = 0; i < profile__n_samples(p); i++)
        var += profile__sample(p, i)->var;
    return total ? 100 * sqrt(var) / (double)total : 0;
}

static void alloc_finish(struct modes *m)
{
    uint64_t bytes = 0;
    for (size_t i = 0; i < profile__n_samples(m->p); i++)
        bytes += profile__sample(m->p, i)->v[1];
    if (m->sampled)
        warnx_("%s: %" PRIu64 " sampled allocations: counts and bytes are estimates, each sample"
               " weighted by what it stands for; %" PRIu64 " bytes +/-%.1f%% (one standard"
               " error; --format table: each function's)", m->shown, m->sampled, bytes,
               error_pct(m->p, bytes));
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
        modes__put(m, &(struct pentry){.thread = b[i].thread, .stack = b[i].stack, .v = v,
                                       .timed = b[i].time <= t, .own_weight = 1,
                                       .begin = b[i].time,
                                       .end = b[i].end && b[i].end <= t ? b[i].end : t + 1,
                                       .weight = b[i].bytes});
        if (m->sampled && alive && b[i].objects > 1)    /* w = objects * b bytes */
            profile__add_variance(m->p, b[i].thread, b[i].stack,
                                  (double)b[i].bytes * b[i].bytes * (1 - 1.0 / b[i].objects));
        live += v[0];
        live_bytes += v[1];
    }
    static const char *const when[] = {[AT_END] = "at the end of the program's code",
                                       [AT_PEAK] = "at the peak", [AT_SECONDS] = "at --at"};
    struct leak_counts c = leaks__counts(m->leaks);
    char err[64] = "", lost[96] = "";
    if (c.lost_allocs)
        snprintf(lost, sizeof lost, ", %" PRIu64 " frees whose allocation was lost", c.lost_allocs);
    if (m->sampled)
        snprintf(err, sizeof err, " +/-%.1f%%", error_pct(m->p, live_bytes));
    warnx_("%s: %" PRIu64 " %s (%" PRIu64 " bytes%s) still live %s of %zu %s; %" PRIu64 " frees of"
           " blocks allocated before the recording%s (not counted)%s, %" PRIu64 " allocator"
           " events unpaired, %" PRIu64 " failed",
           m->shown, live, m->sampled ? "allocations" : "blocks", live_bytes, err, when[m->at], n,
           m->sampled ? "sampled (estimates, weighted by their samples)" : "allocated",
           c.unknown_frees, perf_reader__lost(m->r) ? " or lost" : "", lost, c.unpaired, c.failed);
}

const struct mode_ops mode_alloc = {
    .mode = MODE_ALLOC, .found = alloc_found, .types = {{"count", "count"}, {"bytes", "bytes"}},
    .weight = 1, .start = alloc_start, .role = alloc_role, .event = alloc_sample,
    .finish = alloc_finish,
};

const struct mode_ops mode_leaks = {
    .mode = MODE_LEAKS, .found = leaks_found,
    .types = {{"count", "count"}, {"live-bytes", "bytes"}, {"bytes", "bytes"},
              {"objects", "count"}},
    .weight = 1, .start = alloc_start, .role = alloc_role, .event = alloc_sample,
    .finish = leaks_finish,
};
