/* out_pprof.c - a profile -> gzip'd profile.proto, through protobuf-c and zlib. */
#include "out_pprof.h"
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
        types[i].type = str(st, out_pprof__type_name(t, tname, sizeof tname));
        types[i].unit = str(st, t->unit);
        if (i < nt)
            type_ptrs[i] = &types[i];
    }
    pr.n_sample_type = nt;
    pr.sample_type = type_ptrs;
    pr.period_type = &types[nt];        /* the weight type */
    pr.default_sample_type = types[nt].type;

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
        perftools__profiles__function__init(&fns[nfn]);
        fns[nfn].id = (u64)i + 1;
        /* No system_name: the names are demangled already, and go tool pprof
         * would "demangle" any name with <>[] in it again (<module> -> "") */
        fns[nfn].name = str(st, fm->name);
        fns[nfn].filename = str(st, fm->file);
        perftools__profiles__line__init(&lines[nfn]);
        lines[nfn].function_id = (u64)i + 1;
        line_ptrs[nfn] = &lines[nfn];
        perftools__profiles__location__init(&locs[nfn]);
        locs[nfn].id = (u64)i + 1;
        locs[nfn].n_line = 1;
        locs[nfn].line = &line_ptrs[nfn];
        fn_ptrs[nfn] = &fns[nfn];
        loc_ptrs[nfn] = &locs[nfn];
        nfn++;
    }
    pr.n_function = pr.n_location = nfn;
    pr.function = fn_ptrs;
    pr.location = loc_ptrs;

    /* Labels are shared by every sample of a thread: 3 per thread. */
    PLabel *labels = xcalloc((size_t)nth * 3 + 1, sizeof(*labels));
    PLabel **label_ptrs = xcalloc((size_t)nth * 3 + 1, sizeof(*label_ptrs));
    size_t *n_labels = xcalloc((size_t)nth + 1, sizeof(*n_labels));
    for (u32 i = 0; i < nth; i++) {
        const struct pthread *t = profile__get_thread(p, i);
        PLabel *l = &labels[(size_t)i * 3];
        size_t k = 0;
        for (int j = 0; j < 3; j++)
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
        for (size_t j = 0; j < k; j++)
            label_ptrs[(size_t)i * 3 + j] = &l[j];
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
        samples[i].label = label_ptrs + (size_t)s->thread * 3;
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
