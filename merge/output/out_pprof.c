/* out_pprof.c - a profile -> gzip'd profile.proto, through protobuf-c and zlib. */
#include "out_pprof.h"
#include "idmap.h"
#include "intern.h"
#include "profile.pb-c.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef Perftools__Profiles__Profile PProfile;
typedef Perftools__Profiles__ValueType PValueType;
typedef Perftools__Profiles__Sample PSample;
typedef Perftools__Profiles__Label PLabel;
typedef Perftools__Profiles__Location PLocation;
typedef Perftools__Profiles__Line PLine;
typedef Perftools__Profiles__Function PFunction;
typedef Perftools__Profiles__Mapping PMapping;

const char *out_pprof__type_name(const struct value_type *t, char *buf, size_t size)
{
    size_t n = strlen(t->name);
    if (n > 3 && n < size && !strcmp(t->name + n - 3, "-ns") && !strcmp(t->unit, "nanoseconds")) {
        memcpy(buf, t->name, n - 3);
        buf[n - 3] = 0;
        return buf;
    }
    return t->name;
}

/* Memory profiles take the names Go's heap profiles have, which go tool
 * pprof, Pyroscope and Parca show as memory: a leaks profile's (count,
 * live-bytes, bytes, objects) and an alloc profile's (count, bytes). */
static const char *memory_name(const struct profile *p, const char *name)
{
    static const char *const leaks[][2] = {{"count", "inuse_objects"},
                                           {"live-bytes", "inuse_space"},
                                           {"bytes", "alloc_space"},
                                           {"objects", "alloc_objects"}};
    static const char *const alloc[][2] = {{"count", "alloc_objects"}, {"bytes", "alloc_space"}};
    size_t n = profile__n_types(p);
    const char *const (*names)[2] = NULL;
    if (profile__find_type(p, "live-bytes") >= 0 && n == 4)
        names = leaks;
    else if (n == 2 && !strcmp(profile__type(p, 1)->name, "bytes") &&
             !strcmp(profile__type(p, 1)->unit, "bytes"))
        names = alloc;
    for (size_t i = 0; names && i < n; i++)
        if (!strcmp(names[i][0], name))
            return names[i][1];
    return name;
}

static int64_t str(struct intern *st, const char *s)
{
    return s ? intern__id(st, s, strlen(s)) : 0;
}

/* Compresses buf[0..n) into f as one gzip member. */
static int put_gzip(FILE *f, const uint8_t *buf, size_t n)
{
    z_stream z = {.zalloc = zlib_alloc, .zfree = zlib_free};
    uint8_t out[1 << 16];
    int ret = 0, zr = Z_OK;
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -EINVAL;     /* only bad parameters are left to fail */
    /* avail_in is 32 bits: feed at most 1 GiB at a time */
    size_t at = 0;
    do {
        size_t chunk = n - at < (1u << 30) ? n - at : (1u << 30);
        z.next_in = (uint8_t *)buf + at;
        z.avail_in = (uInt)chunk;
        at += chunk;
        int flush = at == n ? Z_FINISH : Z_NO_FLUSH;
        do {
            z.next_out = out;
            z.avail_out = sizeof out;
            zr = deflate(&z, flush);
            size_t have = sizeof out - z.avail_out;
            if (have && fwrite(out, 1, have, f) != have)
                ret = -EIO;
        } while (ret == 0 && z.avail_out == 0);
    } while (ret == 0 && at < n);
    if (ret == 0 && zr != Z_STREAM_END)
        ret = -EIO;
    deflateEnd(&z);
    return ret;
}

/* The profile.proto message as it is built, and every array it points
 * into: filled one stage at a time, freed in one place (pprof_exit). */
struct pprof {
    PProfile pr;
    struct intern *st;
    PValueType *types, **type_ptrs;
    PMapping *maps, **map_ptrs;
    struct idmap map_by_file;           /* interned file -> mapping id */
    PFunction *fns, **fn_ptrs;
    PLocation *locs, **loc_ptrs;
    PLine *lines, **line_ptrs;
    size_t *first_label, *n_labels;     /* per thread: where its labels start, how many */
    PLabel *labels, **label_ptrs;
    PSample *samples, **sample_ptrs;
    uint64_t *ids;
    int64_t *values;
    char **strs;
};

static void pprof_exit(struct pprof *b)
{
    free(b->strs);
    free(b->values);
    free(b->ids);
    free(b->sample_ptrs);
    free(b->samples);
    free(b->n_labels);
    free(b->first_label);
    free(b->label_ptrs);
    free(b->labels);
    idmap__exit(&b->map_by_file);
    free(b->map_ptrs);
    free(b->maps);
    free(b->loc_ptrs);
    free(b->fn_ptrs);
    free(b->line_ptrs);
    free(b->lines);
    free(b->locs);
    free(b->fns);
    free(b->type_ptrs);
    free(b->types);
    intern__delete(b->st);
}

/* The value types, and the weight's as the period and default type. */
static void add_types(struct pprof *b, const struct profile *p)
{
    size_t nt = profile__n_types(p);
    char tname[256];
    b->types = xcalloc(nt + 1, sizeof(*b->types));
    b->type_ptrs = xcalloc(nt, sizeof(*b->type_ptrs));
    for (size_t i = 0; i <= nt; i++) {
        const struct value_type *t = profile__type(p, i < nt ? i : profile__weight(p));
        perftools__profiles__value_type__init(&b->types[i]);
        b->types[i].type = str(b->st, memory_name(p, out_pprof__type_name(t, tname, sizeof tname)));
        b->types[i].unit = str(b->st, t->unit);
        if (i < nt)
            b->type_ptrs[i] = &b->types[i];
    }
    b->pr.n_sample_type = nt;
    b->pr.sample_type = b->type_ptrs;
    b->pr.period_type = &b->types[nt];  /* the weight type */
    b->pr.default_sample_type = b->types[nt].type;
}

/* The id of file's mapping, made on first use: one mapping per DSO that
 * native frames come from, with its build id, which go tool pprof, Parca
 * and Pyroscope use to find debug info. */
static u64 mapping_of(struct pprof *b, const struct profile *p, const char *file)
{
    uintptr_t m = (uintptr_t)idmap__get(&b->map_by_file, (u64)(uintptr_t)file);
    if (m)
        return m;
    PMapping *map = &b->maps[b->pr.n_mapping];
    perftools__profiles__mapping__init(map);
    m = ++b->pr.n_mapping;
    map->id = m;
    map->filename = str(b->st, file);
    map->build_id = str(b->st, profile__build_id(p, file));
    map->has_functions = 1;
    b->map_ptrs[m - 1] = map;
    idmap__put(&b->map_by_file, (u64)(uintptr_t)file, (void *)m);
    return m;
}

/* One function and one location per frame, both with the frame's id + 1
 * (pprof's ids start at 1); thread labels are samples' labels instead. */
static void add_functions(struct pprof *b, const struct profile *p)
{
    u32 nf = profile__n_frames(p);
    size_t n = (size_t)nf + 1, k = 0;   /* room for the program's mapping */
    b->maps = xcalloc(n, sizeof(*b->maps));
    b->map_ptrs = xcalloc(n, sizeof(*b->map_ptrs));
    b->fns = xcalloc(n, sizeof(*b->fns));
    b->locs = xcalloc(n, sizeof(*b->locs));
    b->lines = xcalloc(n, sizeof(*b->lines));
    b->line_ptrs = xcalloc(n, sizeof(*b->line_ptrs));
    b->fn_ptrs = xcalloc(n, sizeof(*b->fn_ptrs));
    b->loc_ptrs = xcalloc(n, sizeof(*b->loc_ptrs));
    /* pprof takes the first mapping for the program's (go tool pprof's
     * "File:"), whether or not a frame of the view is in it */
    if (profile__program(p))
        mapping_of(b, p, profile__program(p));
    for (u32 i = 0; i < nf; i++) {
        const struct pframe *fm = profile__get_frame(p, i);
        if (fm->kind == PK_ROOT)
            continue;
        int source = fm->kind == PK_PYTHON || fm->kind == PK_JIT;
        perftools__profiles__function__init(&b->fns[k]);
        b->fns[k].id = (u64)i + 1;
        /* No system_name: the names are demangled already, and go tool pprof
         * would "demangle" any name with <>[] in it again (<module> -> "") */
        b->fns[k].name = str(b->st, fm->name);
        b->fns[k].filename = source ? str(b->st, fm->file) : 0;
        perftools__profiles__line__init(&b->lines[k]);
        /* a frame at a line (--lines) is a location of its function */
        b->lines[k].function_id = (u64)(fm->line ? fm->function : i) + 1;
        b->lines[k].line = fm->line;
        b->line_ptrs[k] = &b->lines[k];
        perftools__profiles__location__init(&b->locs[k]);
        b->locs[k].id = (u64)i + 1;
        b->locs[k].n_line = 1;
        b->locs[k].line = &b->line_ptrs[k];
        if (!source && fm->file)
            b->locs[k].mapping_id = mapping_of(b, p, fm->file);
        b->fn_ptrs[k] = &b->fns[k];
        b->loc_ptrs[k] = &b->locs[k];
        k++;
    }
    b->pr.n_function = b->pr.n_location = k;
    b->pr.function = b->fn_ptrs;
    b->pr.location = b->loc_ptrs;
    b->pr.mapping = b->map_ptrs;
}

/* Fills l (room for all) with thread t's labels: pid, tid, thread_name and
 * its tags ("key=value,...").  Returns how many. */
static size_t thread_labels(struct intern *st, const struct pthread *t, PLabel *l)
{
    size_t k = 0;
    if (t->pid || t->tid) {             /* folded text does not say */
        l[k].key = str(st, "pid");
        l[k++].num = t->pid;
        l[k].key = str(st, "tid");
        l[k++].num = t->tid;
    }
    if (t->comm && *t->comm) {
        l[k].key = str(st, "thread_name");
        l[k++].str = str(st, t->comm);
    }
    for (const char *c = t->tags; c && *c;) {
        const char *end = strchr(c, ','), *eq;
        size_t len = end ? (size_t)(end - c) : strlen(c);
        if ((eq = memchr(c, '=', len))) {
            l[k].key = intern__id(st, c, (size_t)(eq - c));
            l[k++].str = intern__id(st, eq + 1, len - (size_t)(eq - c) - 1);
        }
        c += len + (end != NULL);
    }
    return k;
}

/* Labels are shared by every sample of a thread: one run of them per
 * thread, room counted first. */
static void add_labels(struct pprof *b, const struct profile *p)
{
    u32 nth = profile__n_threads(p);
    b->first_label = xcalloc((size_t)nth + 1, sizeof(*b->first_label));
    for (u32 i = 0; i < nth; i++) {
        const char *tg = profile__get_thread(p, i)->tags;
        size_t k = 3;
        for (const char *c = tg; c && *c; c++)
            k += *c == ',';
        b->first_label[i + 1] = b->first_label[i] + k + (tg != NULL);
    }
    b->labels = xcalloc(b->first_label[nth] + 1, sizeof(*b->labels));
    b->label_ptrs = xcalloc(b->first_label[nth] + 1, sizeof(*b->label_ptrs));
    b->n_labels = xcalloc((size_t)nth + 1, sizeof(*b->n_labels));
    for (u32 i = 0; i < nth; i++) {
        PLabel *l = &b->labels[b->first_label[i]];
        for (size_t j = 0; j < b->first_label[i + 1] - b->first_label[i]; j++)
            perftools__profiles__label__init(&l[j]);
        size_t k = thread_labels(b->st, profile__get_thread(p, i), l);
        for (size_t j = 0; j < k; j++)
            b->label_ptrs[b->first_label[i] + j] = &l[j];
        b->n_labels[i] = k;
    }
}

/* Every (thread, stack) as one sample, leaf first, with its thread's labels. */
static void add_samples(struct pprof *b, const struct profile *p)
{
    size_t nt = profile__n_types(p), ns = profile__n_samples(p), nids = 0, at = 0;
    for (size_t i = 0; i < ns; i++) {
        size_t depth;
        profile__get_stack(p, profile__sample(p, i)->stack, &depth);
        nids += depth;
    }
    b->samples = xcalloc(ns ? ns : 1, sizeof(*b->samples));
    b->sample_ptrs = xcalloc(ns ? ns : 1, sizeof(*b->sample_ptrs));
    b->ids = xcalloc(nids ? nids : 1, sizeof(*b->ids));
    b->values = xcalloc(ns * nt + 1, sizeof(*b->values));
    for (size_t i = 0; i < ns; i++) {
        const struct psample *s = profile__sample(p, i);
        PSample *ps = &b->samples[i];
        size_t depth;
        const u32 *fr = profile__get_stack(p, s->stack, &depth);
        perftools__profiles__sample__init(ps);
        ps->n_location_id = depth;
        ps->location_id = b->ids + at;
        for (size_t k = 0; k < depth; k++)      /* pprof's stacks are leaf first */
            b->ids[at++] = (u64)fr[depth - 1 - k] + 1;
        ps->n_value = nt;
        ps->value = b->values + i * nt;
        for (size_t k = 0; k < nt; k++)
            ps->value[k] = (int64_t)s->v[k];
        ps->n_label = b->n_labels[s->thread];
        ps->label = b->label_ptrs + b->first_label[s->thread];
        b->sample_ptrs[i] = ps;
    }
    b->pr.n_sample = ns;
    b->pr.sample = b->sample_ptrs;
}

/* The string table, last: every string is interned by now. */
static void add_strings(struct pprof *b)
{
    u32 nstr = intern__count(b->st);
    b->strs = xcalloc(nstr, sizeof(*b->strs));
    for (u32 i = 0; i < nstr; i++)
        b->strs[i] = (char *)intern__str(b->st, i);
    b->pr.n_string_table = nstr;
    b->pr.string_table = b->strs;
}

int out_pprof__write(FILE *f, const struct profile *p)
{
    struct pprof b = {.pr = PERFTOOLS__PROFILES__PROFILE__INIT, .st = intern__new()};
    idmap__init(&b.map_by_file);
    str(b.st, "");                      /* string_table[0] is "" */
    add_types(&b, p);
    add_functions(&b, p);
    add_labels(&b, p);
    add_samples(&b, p);
    b.pr.time_nanos = (int64_t)profile__start_ns(p);
    b.pr.duration_nanos = (int64_t)profile__duration_ns(p);
    char lost[96];
    int64_t comment;
    if (profile__lost(p)) {     /* go tool pprof -comments; the sample is [lost N records] */
        snprintf(lost, sizeof lost, "%" PRIu64 " records were lost while recording",
                 profile__lost(p));
        comment = str(b.st, lost);
        b.pr.n_comment = 1;
        b.pr.comment = &comment;
    }
    add_strings(&b);

    size_t len = perftools__profiles__profile__get_packed_size(&b.pr);
    uint8_t *buf = xmalloc(len ? len : 1);
    perftools__profiles__profile__pack(&b.pr, buf);
    int ret = put_gzip(f, buf, len);
    if (ret == 0 && (fflush(f) != 0 || ferror(f)))
        ret = -EIO;
    free(buf);
    pprof_exit(&b);
    return ret;
}
