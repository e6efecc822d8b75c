/*
 * profile.h - the profile model: what every writer reads.
 *
 * A profile is what pymerge knows once the input is read, unwound,
 * symbolized and viewed, whatever the input was (a perf.data recording, a
 * folded file):
 *
 *   frames       name, kind (python, native, kernel, jit, unknown), and the
 *                file or DSO it comes from where known; interned;
 *   stacks       interned arrays of frame ids, root first;
 *   threads      pid, tid, comm, and the root label the folded output
 *                prints for them (comm, comm-PID or comm-PID/TID);
 *   value types  name and unit (samples/count, cpu-ns, offcpu-ns, wall-ns,
 *                latency-ns, bytes, or a tracepoint field), at most
 *                PROFILE_MAX_VALUES per profile; one is the weight the
 *                single-valued writers (folded, svg, diff) use;
 *   samples      (thread, stack) -> one value per type, summed.  When a
 *                writer needs time order, each sample is also kept as a
 *                small (time, end, thread, stack, weight) record; end is
 *                later than time for a span (a call, a wait).
 *
 * Memory grows with the distinct (thread, stack) pairs, not with the input,
 * unless time order is asked for.  The model is close to pprof's.
 */
#ifndef PYMERGE_PROFILE_H
#define PYMERGE_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#define PROFILE_MAX_VALUES 4

enum pkind { PK_PYTHON, PK_NATIVE, PK_KERNEL, PK_JIT, PK_UNKNOWN, PK_ROOT };

struct pframe {
    const char *name;
    const char *file;           /* Python file or DSO path; NULL when unknown */
    uint8_t kind;               /* enum pkind; PK_ROOT only for thread labels */
    uint32_t line;              /* a Python frame's line (--lines), or 0 */
    uint32_t function;          /* with a line: the frame id of its function without */
};

struct pthread {
    uint32_t pid, tid;          /* 0 when the input does not say (folded text) */
    const char *comm;
    uint32_t label;             /* frame id (PK_ROOT) of the root label */
    const char *tags;           /* "key=value,..." of the input it came from
                                 * (pymerge merge --label), or NULL */
};

struct value_type {
    const char *name;           /* "samples", "cpu-ns", "offcpu-ns", a field name... */
    const char *unit;           /* "count", "nanoseconds", "bytes" */
};

struct psample {                /* one aggregated (thread, stack) */
    uint32_t thread, stack;
    uint64_t v[PROFILE_MAX_VALUES];
    double var;                 /* a sampled estimate's variance (profile__add_variance) */
};

struct ptimed {                 /* one sample in time order */
    uint64_t time;              /* ns, as recorded */
    uint64_t end;               /* a span's end; time for a sample at one instant */
    uint32_t thread, stack;
    uint64_t weight;            /* the value of the weight type */
};

struct profile;

/* keep_time: also record every sample as a struct ptimed. */
struct profile *profile__new(int keep_time);
void profile__delete(struct profile *p);   /* accepts NULL */

/* Declares the value types (before any sample); weight is the index of the
 * default one.  Returns 0, or -EINVAL for more than PROFILE_MAX_VALUES. */
int profile__set_types(struct profile *p, const struct value_type *types, size_t n, size_t weight);
size_t profile__n_types(const struct profile *p);
const struct value_type *profile__type(const struct profile *p, size_t i);
size_t profile__weight(const struct profile *p);
/* Index of the type named name, or -1. */
int profile__find_type(const struct profile *p, const char *name);
void profile__set_weight(struct profile *p, size_t i);

/* Interned frame (name and file are copied). */
uint32_t profile__frame(struct profile *p, const char *name, size_t len, enum pkind kind,
                        const char *file);
const struct pframe *profile__get_frame(const struct profile *p, uint32_t id);
/* Says that frame id is its function's frame `function` at a line. */
void profile__frame_line(struct profile *p, uint32_t id, uint32_t function, uint32_t line);
uint32_t profile__n_frames(const struct profile *p);

/* Interned thread; label is its root frame's text. */
uint32_t profile__thread(struct profile *p, uint32_t pid, uint32_t tid, const char *comm,
                         const char *label);
/* The same, for the samples of an input tagged "key=value,..." (NULL:
 * none); threads with different tags stay apart. */
uint32_t profile__thread_tagged(struct profile *p, uint32_t pid, uint32_t tid, const char *comm,
                                const char *label, const char *tags);
const struct pthread *profile__get_thread(const struct profile *p, uint32_t id);
uint32_t profile__n_threads(const struct profile *p);

/* Interned stack of frame ids, root first. */
uint32_t profile__stack(struct profile *p, const uint32_t *root_first, size_t n);
const uint32_t *profile__get_stack(const struct profile *p, uint32_t id, size_t *n);

/* Adds values v[0..n_types) to (thread, stack); time is used only when
 * time order is kept. */
void profile__add(struct profile *p, uint32_t thread, uint32_t stack, uint64_t time,
                  const uint64_t *v);
/* The same for a span of time [begin, end) (a call, a wait): the timed
 * record keeps both ends, for the writers that draw spans (trace). */
void profile__add_span(struct profile *p, uint32_t thread, uint32_t stack, uint64_t begin,
                       uint64_t end, const uint64_t *v);
/* The two halves of profile__add_span, for values that are not one span's
 * (the leaks mode: a block's bytes over its lifetime, live bytes at the end):
 * values summed into (thread, stack), and a timed record alone, kept only
 * when time order is. */
void profile__add_values(struct profile *p, uint32_t thread, uint32_t stack, const uint64_t *v);
void profile__add_timed(struct profile *p, uint32_t thread, uint32_t stack, uint64_t begin,
                        uint64_t end, uint64_t weight);
/* Keeps time order from now on (before any sample): for a mode whose
 * writers need it whatever the format. */
void profile__keep_time(struct profile *p);

/* The aggregated samples, in first-seen order. */
size_t profile__n_samples(const struct profile *p);
const struct psample *profile__sample(const struct profile *p, size_t i);
/* Sum of the weight type over every sample. */
uint64_t profile__total(const struct profile *p);

/* Ends adding: sorts the timed samples by time, a longer span before a
 * shorter one that starts with it (its callee), otherwise stable. */
void profile__finish(struct profile *p);
/* The timed samples in time order (after profile__finish), or NULL (*n = 0)
 * when time order was not kept. */
const struct ptimed *profile__timed(const struct profile *p, size_t *n);
int profile__has_time(const struct profile *p);

/* When the recording ran: start in ns since the Unix epoch and its length
 * in ns (both 0 when the input does not say, as folded text). */
void profile__set_span(struct profile *p, uint64_t start_ns, uint64_t duration_ns);
uint64_t profile__start_ns(const struct profile *p);
uint64_t profile__duration_ns(const struct profile *p);

/* The build id (lowercase hex) of the DSO at path, the file of native
 * frames; the first one set for a path stays.  profile__build_id takes a
 * frame's file and returns NULL when no build id is known. */
/* The spans' summary (spanrows.h), owned by the profile from now on;
 * NULL until a recording with spans sets it. */
struct span_rows;
void profile__set_span_rows(struct profile *p, struct span_rows *rows);
const struct span_rows *profile__span_rows(const struct profile *p);

void profile__set_build_id(struct profile *p, const char *path, const char *hex);
const char *profile__build_id(const struct profile *p, const char *file);

/* The executable of the profiled program (pprof's main mapping): the
 * first one set stays.  profile__program returns it interned as frames'
 * files are, or NULL when the input does not say. */
void profile__set_program(struct profile *p, const char *path);
const char *profile__program(const struct profile *p);

/* Sampled estimates (the sampled alloc and leaks modes): the variance of
 * (thread, stack)'s value of type i, the one set with
 * profile__set_variance_type, grows by var for each sample behind it.  A
 * sample of b bytes standing for w (sampled with probability b / w) adds
 * w * (w - b), as Horvitz and Thompson estimate it: n samples of small
 * objects give a relative standard error of 1 / sqrt(n), a block bigger
 * than the sampling period (always sampled) none. */
void profile__set_variance_type(struct profile *p, size_t i);
/* The type the variances are of, or -1 when the values are exact. */
int profile__variance_type(const struct profile *p);
void profile__add_variance(struct profile *p, uint32_t thread, uint32_t stack, double var);

/* The records the recording lost (perf's count), with what they would
 * have weighed, estimated (v, one value per type): set once, after the
 * other samples.  The profile holds them as one more sample, a
 * "[lost N records]" frame under a "[lost]" root (an instant at the end
 * of the recording where time order is kept), so that every writer shows
 * them in its own form; records 0 adds nothing. */
void profile__set_lost(struct profile *p, uint64_t records, const uint64_t *v);
uint64_t profile__lost(const struct profile *p);

#endif
