/* in_pprof.c - pprof's profile.proto -> a profile (see in_pprof.h). */
#include "in_pprof.h"
#include "idmap.h"
#include "profile.pb-c.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* No allocation larger than this for the decompressed message: a gzip
 * bomb is an error, not an out-of-memory. */
#define MAX_MESSAGE ((size_t)1 << 30)

typedef Perftools__Profiles__Profile PProfile;

static void *pb_alloc(void *data, size_t size)
{
    (void)data;
    return xmalloc(size ? size : 1);
}

static void pb_free(void *data, void *ptr)
{
    (void)data;
    free(ptr);
}

int pprof_in__is_gzip(const uint8_t *data, size_t len)
{
    return len >= 2 && data[0] == 0x1f && data[1] == 0x8b;
}

/* Inflates one or more gzip members into *out.  Returns 0, or -EINVAL
 * with why set. */
static int gunzip(const uint8_t *data, size_t len, uint8_t **out, size_t *out_len,
                  const char **why)
{
    z_stream z = {.zalloc = zlib_alloc, .zfree = zlib_free};
    size_t cap = len < MAX_MESSAGE / 4 ? len * 4 + 4096 : MAX_MESSAGE, n = 0, at = 0;
    uint8_t *buf = xmalloc(cap);
    if (inflateInit2(&z, 15 + 32) != Z_OK) {
        free(buf);
        *why = "cannot start zlib";
        return -EINVAL;
    }
    /* avail_in and avail_out are 32 bits: at most 1 GiB at a time */
    for (;;) {
        if (z.avail_in == 0 && at < len) {
            size_t chunk = len - at < (1u << 30) ? len - at : (1u << 30);
            z.next_in = (uint8_t *)data + at;
            z.avail_in = (uInt)chunk;
            at += chunk;
        }
        if (n == cap) {
            if (cap == MAX_MESSAGE) {
                *why = "decompresses to more than 1 GiB";
                goto bad;
            }
            cap = cap > MAX_MESSAGE / 2 ? MAX_MESSAGE : cap * 2;
            buf = xrealloc(buf, cap);
        }
        size_t room = cap - n < (1u << 30) ? cap - n : (1u << 30);
        z.next_out = buf + n;
        z.avail_out = (uInt)room;
        int zr = inflate(&z, Z_NO_FLUSH);
        n += room - z.avail_out;
        if (zr == Z_STREAM_END) {
            if (z.avail_in == 0 && at == len)
                break;
            if (inflateReset(&z) != Z_OK)   /* another member follows, as gzip allows */
                goto corrupt;
        } else if (zr == Z_BUF_ERROR && z.avail_in == 0 && at == len) {
            *why = "gzip data cut short";
            goto bad;
        } else if (zr != Z_OK) {
            goto corrupt;
        }
    }
    inflateEnd(&z);
    *out = buf;
    *out_len = n;
    return 0;
corrupt:
    *why = "corrupt gzip data";
bad:
    inflateEnd(&z);
    free(buf);
    return -EINVAL;
}

struct reader {
    struct profile *p;
    const PProfile *pr;
    struct idmap fn_by_id, loc_by_id, map_by_id;   /* pprof id -> index + 1 */
    const char *why;
    char why_buf[160];
};

/* string_table[i], or NULL when i is out of range. */
static const char *str_at(struct reader *r, int64_t i)
{
    if (i < 0 || (uint64_t)i >= r->pr->n_string_table) {
        snprintf(r->why_buf, sizeof r->why_buf, "string index %lld outside the table of %zu",
                 (long long)i, r->pr->n_string_table);
        r->why = r->why_buf;
        return NULL;
    }
    return r->pr->string_table[i];
}

static int types(struct reader *r)
{
    const PProfile *pr = r->pr;
    struct value_type t[PROFILE_MAX_VALUES];
    char names[PROFILE_MAX_VALUES][256];
    size_t n = pr->n_sample_type < PROFILE_MAX_VALUES ? pr->n_sample_type : PROFILE_MAX_VALUES;
    size_t weight = n ? n - 1 : 0;    /* pprof's default: the last type */
    if (n == 0) {
        r->why = "no sample types";
        return -EINVAL;
    }
    const char *dflt = pr->default_sample_type ? str_at(r, pr->default_sample_type) : NULL;
    if (pr->default_sample_type && !dflt)
        return -EINVAL;
    for (size_t i = 0; i < n; i++) {
        const char *name = str_at(r, pr->sample_type[i]->type);
        const char *unit = str_at(r, pr->sample_type[i]->unit);
        if (!name || !unit)
            return -EINVAL;
        if (dflt && !strcmp(name, dflt))
            weight = i;
        /* pymerge's names for nanosecond types end in -ns (out_pprof.c) */
        size_t len = strlen(name);
        int ns = !strcmp(unit, "nanoseconds") && !(len > 3 && !strcmp(name + len - 3, "-ns"));
        snprintf(names[i], sizeof names[i], "%s%s", name, ns ? "-ns" : "");
        t[i] = (struct value_type){names[i], *unit ? unit : "count"};
    }
    return profile__set_types(r->p, t, n, weight);
}

/* Interns the frames of pprof location id, leaf first, after *n in *fr. */
static int location_frames(struct reader *r, uint64_t id, u32 **fr, size_t *cap, size_t *n)
{
    void *v = idmap__get(&r->loc_by_id, id);
    if (!v) {
        snprintf(r->why_buf, sizeof r->why_buf, "sample names location %llu, which is not there",
                 (unsigned long long)id);
        r->why = r->why_buf;
        return -EINVAL;
    }
    const Perftools__Profiles__Location *l = r->pr->location[(uintptr_t)v - 1];
    if (l->n_line == 0) {       /* not symbolized: its address */
        char name[32];
        snprintf(name, sizeof name, "0x%llx", (unsigned long long)l->address);
        GROW(*fr, *cap, *n + 1);
        (*fr)[(*n)++] = profile__frame(r->p, name, strlen(name), PK_UNKNOWN, NULL);
        return 0;
    }
    /* native code: its file is the mapping's (out_pprof.c) */
    const char *dso = NULL;
    if (l->mapping_id) {
        void *m = idmap__get(&r->map_by_id, l->mapping_id);
        const Perftools__Profiles__Mapping *mp = m ? r->pr->mapping[(uintptr_t)m - 1] : NULL;
        if (mp && (!(dso = str_at(r, mp->filename)) || !str_at(r, mp->build_id)))
            return -EINVAL;
        if (dso && *dso && *str_at(r, mp->build_id))
            profile__set_build_id(r->p, dso, str_at(r, mp->build_id));
    }
    for (size_t i = 0; i < l->n_line; i++) {    /* inlined first, caller last */
        void *f = idmap__get(&r->fn_by_id, l->line[i]->function_id);
        if (!f) {
            snprintf(r->why_buf, sizeof r->why_buf, "location %llu names function %llu, which "
                     "is not there", (unsigned long long)id,
                     (unsigned long long)l->line[i]->function_id);
            r->why = r->why_buf;
            return -EINVAL;
        }
        const Perftools__Profiles__Function *fn = r->pr->function[(uintptr_t)f - 1];
        const char *name = str_at(r, fn->name), *file = str_at(r, fn->filename);
        if (!name || !file)
            return -EINVAL;
        if (!*name && !(name = str_at(r, fn->system_name)))
            return -EINVAL;
        size_t fl = strlen(file);
        enum pkind k = fl > 3 && !strcmp(file + fl - 3, ".py") ? PK_PYTHON : PK_NATIVE;
        if (!*file && dso && *dso) {
            file = dso;
            k = !strcmp(dso, "[kernel.kallsyms]") ? PK_KERNEL : PK_NATIVE;
        }
        GROW(*fr, *cap, *n + 1);
        (*fr)[(*n)++] = profile__frame(r->p, *name ? name : "[unknown]",
                                       *name ? strlen(name) : 9, k, *file ? file : NULL);
    }
    return 0;
}

/* Appends ",key=value" (no comma first) to *tags, with ',' and '=' in
 * them, which would split the list, as '_'. */
static void add_tag(char **tags, size_t *len, size_t *cap, const char *key, const char *val)
{
    size_t kl = strlen(key), vl = strlen(val);
    GROW(*tags, *cap, *len + kl + vl + 3);
    char *t = *tags + *len;
    if (*len)
        *t++ = ',';
    for (size_t i = 0; i < kl + 1 + vl; i++) {
        char c = i < kl ? key[i] : i == kl ? '=' : val[i - kl - 1];
        *t++ = i != kl && (c == ',' || c == '=') ? '_' : c;
    }
    *t = 0;
    *len = (size_t)(t - *tags);
}

/* The thread of a sample, from its labels; def when it has none. */
static int thread_of(struct reader *r, const Perftools__Profiles__Sample *s, const char *def,
                     u32 *out)
{
    int64_t pid = 0, tid = 0;
    const char *comm = NULL, *val;
    char *tags = NULL;
    size_t tlen = 0, tcap = 0;
    for (size_t i = 0; i < s->n_label; i++) {
        const char *key = str_at(r, s->label[i]->key);
        if (!key || !(val = str_at(r, s->label[i]->str))) {
            free(tags);
            return -EINVAL;
        }
        if (!strcmp(key, "pid"))
            pid = s->label[i]->num;
        else if (!strcmp(key, "tid"))
            tid = s->label[i]->num;
        else if (!strcmp(key, "thread_name"))
            comm = val;
        else if (*key && *val)      /* any other string label: a tag, "key=value,..." */
            add_tag(&tags, &tlen, &tcap, key, val);
    }
    if (!comm || !*comm)
        comm = def;
    /* the root label as pymerge's folded output writes it, ' ' and ';' kept out */
    size_t len = strlen(comm);
    char *label = xmalloc(len + 1);
    for (size_t i = 0; i <= len; i++)
        label[i] = comm[i] == ' ' ? '_' : comm[i] == ';' ? ':' : comm[i];
    *out = profile__thread_tagged(r->p, (uint32_t)pid, (uint32_t)tid, comm, label, tags);
    free(label);
    free(tags);
    return 0;
}

static int load(struct reader *r)
{
    const PProfile *pr = r->pr;
    int ret = types(r);
    if (ret < 0)
        return ret;
    for (size_t i = 0; i < pr->n_function; i++)
        idmap__put(&r->fn_by_id, pr->function[i]->id, (void *)(uintptr_t)(i + 1));
    for (size_t i = 0; i < pr->n_location; i++)
        idmap__put(&r->loc_by_id, pr->location[i]->id, (void *)(uintptr_t)(i + 1));
    for (size_t i = 0; i < pr->n_mapping; i++)
        idmap__put(&r->map_by_id, pr->mapping[i]->id, (void *)(uintptr_t)(i + 1));
    const char *def = "pprof";
    if (pr->n_mapping) {        /* pprof's main binary is the first mapping */
        const char *m = str_at(r, pr->mapping[0]->filename);
        if (!m)
            return -EINVAL;
        if (*path_basename(m))
            def = path_basename(m);
        if (*m)
            profile__set_program(r->p, m);
    }
    size_t nt = profile__n_types(r->p), cap = 0;
    u32 *fr = NULL, *root_first = NULL;
    size_t rcap = 0;
    for (size_t i = 0; i < pr->n_sample && ret == 0; i++) {
        const Perftools__Profiles__Sample *s = pr->sample[i];
        uint64_t v[PROFILE_MAX_VALUES] = {0};
        size_t n = 0;
        u32 thread;
        if (s->n_value != pr->n_sample_type) {
            snprintf(r->why_buf, sizeof r->why_buf, "sample %zu has %zu values for %zu sample "
                     "types", i, s->n_value, pr->n_sample_type);
            r->why = r->why_buf;
            ret = -EINVAL;
            break;
        }
        for (size_t k = 0; k < nt; k++) {
            if (s->value[k] < 0) {
                snprintf(r->why_buf, sizeof r->why_buf, "sample %zu has a negative value "
                         "(a difference of profiles?)", i);
                r->why = r->why_buf;
                ret = -EINVAL;
                break;
            }
            v[k] = (uint64_t)s->value[k];
        }
        for (size_t k = 0; k < s->n_location_id && ret == 0; k++)
            ret = location_frames(r, s->location_id[k], &fr, &cap, &n);
        if (ret == 0)
            ret = thread_of(r, s, def, &thread);
        if (ret < 0)
            break;
        GROW(root_first, rcap, n + 1);
        for (size_t k = 0; k < n; k++)
            root_first[k] = fr[n - 1 - k];
        profile__add(r->p, thread, profile__stack(r->p, root_first, n), 0, v);
    }
    free(fr);
    free(root_first);
    if (ret == 0 && pr->time_nanos > 0 && pr->duration_nanos >= 0)
        profile__set_span(r->p, (uint64_t)pr->time_nanos, (uint64_t)pr->duration_nanos);
    return ret;
}

int pprof_in__parse(struct profile *p, const uint8_t *data, size_t len, const char *name)
{
    ProtobufCAllocator alloc = {pb_alloc, pb_free, NULL};
    struct reader r = {.p = p};
    uint8_t *raw = NULL;
    size_t raw_len = len;
    int ret = -EINVAL;
    if (pprof_in__is_gzip(data, len)) {
        if (gunzip(data, len, &raw, &raw_len, &r.why) < 0)
            goto out;
        data = raw;
    }
    r.pr = perftools__profiles__profile__unpack(&alloc, raw_len, data);
    if (!r.pr) {
        r.why = "not a pprof profile (no valid profile.proto message)";
        goto out;
    }
    idmap__init(&r.fn_by_id);
    idmap__init(&r.loc_by_id);
    idmap__init(&r.map_by_id);
    ret = load(&r);
    idmap__exit(&r.fn_by_id);
    idmap__exit(&r.loc_by_id);
    idmap__exit(&r.map_by_id);
    perftools__profiles__profile__free_unpacked((PProfile *)r.pr, &alloc);
    if (ret == 0)
        profile__finish(p);
out:
    free(raw);
    if (ret < 0)
        warnx_("%s: %s", name, r.why ? r.why : "bad pprof profile");
    return ret;
}
