/* out_pprof.c - a profile -> gzip'd profile.proto, through protobuf-c and zlib. */
#include "out_pprof.h"
#include "idmap.h"
#include "intern.h"
#include "profile.pb-c.h"
#include "util.h"

#include <errno.h>
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

int out_pprof__write(FILE *f, const struct profile *p)
{
    PProfile pr = PERFTOOLS__PROFILES__PROFILE__INIT;
    struct intern *st = intern__new();
    size_t nt = profile__n_types(p), ns = profile__n_samples(p);
    u32 nf = profile__n_frames(p), nth = profile__n_threads(p);
    char tname[256];
    int ret;

    str(st, "");                /* string_table[0] is "" */
    PValueType *types = xcalloc(nt + 1, sizeof(*types));
    PValueType **type_ptrs = xcalloc(nt, sizeof(*type_ptrs));
    for (size_t i = 0; i <= nt; i++) {
        const struct value_type *t = profile__type(p, i < nt ? i : profile__weight(p));
        perftools__profiles__value_type__init(&types[i]);
        types[i].type = str(st, memory_name(p, out_pprof__type_name(t, tname, sizeof tname)));
        types[i].unit = str(st, t->unit);
        if (i < nt)
            type_ptrs[i] = &types[i];
    }
    pr.n_sample_type = nt;
    pr.sample_type = type_ptrs;
    pr.period_type = &types[nt];        /* the weight type */
    pr.default_sample_type = types[nt].type;

    /* One mapping per DSO that native frames come from, with its build id:
     * what go tool pprof, Parca and Pyroscope use to find debug info. */
    PMapping *maps = xcalloc(nf ? nf : 1, sizeof(*maps));
    PMapping **map_ptrs = xcalloc(nf ? nf : 1, sizeof(*map_ptrs));
    struct idmap map_by_file;           /* interned file -> mapping id */
    idmap__init(&map_by_file);
    size_t nmap = 0;

    /* One function and one location per frame, both with the frame's id + 1
     * (pprof's ids start at 1); thread labels are samples' labels instead. */
    PFunction *fns = xcalloc(nf ? nf : 1, sizeof(*fns));
    PLocation *locs = xcalloc(nf ? nf : 1, sizeof(*locs));
    PLine *lines = xcalloc(nf ? nf : 1, sizeof(*lines));
    PLine **line_ptrs = xcalloc(nf ? nf : 1, sizeof(*line_ptrs));
    PFunction **fn_ptrs = xcalloc(nf ? nf : 1, sizeof(*fn_ptrs));
    PLocation **loc_ptrs = xcalloc(nf ? nf : 1, sizeof(*loc_ptrs));
    size_t nfn = 0;
    for (u32 i = 0; i < nf; i++) {
        const struct pframe *fm = profile__get_frame(p, i);
        if (fm->kind == PK_ROOT)
            continue;
        int source = fm->kind == PK_PYTHON || fm->kind == PK_JIT;
        perftools__profiles__function__init(&fns[nfn]);
        fns[nfn].id = (u64)i + 1;
        /* No system_name: the names are demangled already, and go tool pprof
         * would "demangle" any name with <>[] in it again (<module> -> "") */
        fns[nfn].name = str(st, fm->name);
        fns[nfn].filename = source ? str(st, fm->file) : 0;
        perftools__profiles__line__init(&lines[nfn]);
        lines[nfn].function_id = (u64)i + 1;
        line_ptrs[nfn] = &lines[nfn];
        perftools__profiles__location__init(&locs[nfn]);
        locs[nfn].id = (u64)i + 1;
        locs[nfn].n_line = 1;
        locs[nfn].line = &line_ptrs[nfn];
        if (!source && fm->file) {
            uintptr_t m = (uintptr_t)idmap__get(&map_by_file, (u64)(uintptr_t)fm->file);
            if (!m) {
                const char *bid = profile__build_id(p, fm->file);
                perftools__profiles__mapping__init(&maps[nmap]);
                m = ++nmap;
                maps[m - 1].id = m;
                maps[m - 1].filename = str(st, fm->file);
                maps[m - 1].build_id = str(st, bid);
                maps[m - 1].has_functions = 1;
                map_ptrs[m - 1] = &maps[m - 1];
                idmap__put(&map_by_file, (u64)(uintptr_t)fm->file, (void *)m);
            }
            locs[nfn].mapping_id = m;
        }
        fn_ptrs[nfn] = &fns[nfn];
        loc_ptrs[nfn] = &locs[nfn];
        nfn++;
    }
    pr.n_function = pr.n_location = nfn;
    pr.function = fn_ptrs;
    pr.location = loc_ptrs;
    pr.n_mapping = nmap;
    pr.mapping = map_ptrs;

    /* Labels are shared by every sample of a thread: pid, tid, thread_name
     * and the input's tags ("key=value,..."). */
    size_t *first_label = xcalloc((size_t)nth + 1, sizeof(*first_label));
    for (u32 i = 0; i < nth; i++) {
        const char *tg = profile__get_thread(p, i)->tags;
        size_t k = 3;
        for (const char *c = tg; c && *c; c++)
            k += *c == ',';
        first_label[i + 1] = first_label[i] + k + (tg != NULL);
    }
    PLabel *labels = xcalloc(first_label[nth] + 1, sizeof(*labels));
    PLabel **label_ptrs = xcalloc(first_label[nth] + 1, sizeof(*label_ptrs));
    size_t *n_labels = xcalloc((size_t)nth + 1, sizeof(*n_labels));
    for (u32 i = 0; i < nth; i++) {
        const struct pthread *t = profile__get_thread(p, i);
        PLabel *l = &labels[first_label[i]];
        size_t k = 0;
        for (size_t j = 0; j < first_label[i + 1] - first_label[i]; j++)
            perftools__profiles__label__init(&l[j]);
        if (t->pid || t->tid) {         /* folded text does not say */
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
        for (size_t j = 0; j < k; j++)
            label_ptrs[first_label[i] + j] = &l[j];
        n_labels[i] = k;
    }

    size_t nids = 0;
    for (size_t i = 0; i < ns; i++) {
        size_t depth;
        profile__get_stack(p, profile__sample(p, i)->stack, &depth);
        nids += depth;
    }
    PSample *samples = xcalloc(ns ? ns : 1, sizeof(*samples));
    PSample **sample_ptrs = xcalloc(ns ? ns : 1, sizeof(*sample_ptrs));
    uint64_t *ids = xcalloc(nids ? nids : 1, sizeof(*ids));
    int64_t *values = xcalloc(ns * nt + 1, sizeof(*values));
    size_t at = 0;
    for (size_t i = 0; i < ns; i++) {
        const struct psample *s = profile__sample(p, i);
        size_t depth;
        const u32 *fr = profile__get_stack(p, s->stack, &depth);
        perftools__profiles__sample__init(&samples[i]);
        samples[i].n_location_id = depth;
        samples[i].location_id = ids + at;
        for (size_t k = 0; k < depth; k++)      /* pprof's stacks are leaf first */
            ids[at++] = (u64)fr[depth - 1 - k] + 1;
        samples[i].n_value = nt;
        samples[i].value = values + i * nt;
        for (size_t k = 0; k < nt; k++)
            values[i * nt + k] = (int64_t)s->v[k];
        samples[i].n_label = n_labels[s->thread];
        samples[i].label = label_ptrs + first_label[s->thread];
        sample_ptrs[i] = &samples[i];
    }
    pr.n_sample = ns;
    pr.sample = sample_ptrs;
    pr.time_nanos = (int64_t)profile__start_ns(p);
    pr.duration_nanos = (int64_t)profile__duration_ns(p);

    /* The table last: every string is interned by now. */
    u32 nstr = intern__count(st);
    char **strs = xcalloc(nstr, sizeof(*strs));
    for (u32 i = 0; i < nstr; i++)
        strs[i] = (char *)intern__str(st, i);
    pr.n_string_table = nstr;
    pr.string_table = strs;

    size_t len = perftools__profiles__profile__get_packed_size(&pr);
    uint8_t *buf = xmalloc(len ? len : 1);
    perftools__profiles__profile__pack(&pr, buf);
    ret = put_gzip(f, buf, len);
    if (ret == 0 && (fflush(f) != 0 || ferror(f)))
        ret = -EIO;

    free(buf);
    free(strs);
    free(values);
    free(ids);
    free(sample_ptrs);
    free(samples);
    free(n_labels);
    free(first_label);
    idmap__exit(&map_by_file);
    free(map_ptrs);
    free(maps);
    free(label_ptrs);
    free(labels);
    free(loc_ptrs);
    free(fn_ptrs);
    free(line_ptrs);
    free(lines);
    free(locs);
    free(fns);
    free(type_ptrs);
    free(types);
    intern__delete(st);
    return ret;
}
