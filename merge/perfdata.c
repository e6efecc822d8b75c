/*
 * perfdata.c - perf.data bytes -> typed records, in perf's delivery order.
 *
 * Three layers, each feeding the next:
 *   src      the data section mapped (a file), or buffered bytes from a
 *            pipe (read);
 *   raw      whole records, with COMPRESSED records expanded through one
 *            zstd stream (a decompressed chunk may end mid-record, so the
 *            remainder waits for the next chunk);
 *   queue    kernel records reordered by time the way perf's
 *            ordered_events does it: at each FINISHED_ROUND, deliver what is
 *            older than the newest time seen before the previous round.
 * Every length is checked against the record, and every record against the
 * input, before it is used.
 */
#include "perfdata.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

/* perf's own record types (tools/perf/util/event.h), not in the uapi. */
enum {
    REC_HEADER_ATTR = 64,
    REC_TRACING_DATA = 66,
    REC_HEADER_BUILD_ID = 67,
    REC_FINISHED_ROUND = 68,
    REC_EVENT_UPDATE = 78,
    REC_HEADER_FEATURE = 80,
    REC_COMPRESSED = 81,
    REC_COMPRESSED2 = 83,
};
enum { FEAT_BUILD_ID = 2, FEAT_EVENT_DESC = 12, FEAT_BITS = 256 };
enum { EVENT_UPDATE_NAME = 2 };
#define MISC_BUILD_ID_SIZE (1u << 15)     /* build id record carries its size */

#define MAGIC_PERFILE2 0x32454c4946524550ULL  /* "PERFILE2" read little-endian */
#define FILE_HEADER_SIZE 104                  /* 3 u64 + 3 sections + 256 bits */
#define BUF_SIZE (1u << 20)                   /* read buffer; records are < 64 KiB */
#define MAX_SECTION (256u << 20)              /* no feature section is larger */
#define MAX_DECOMPRESSED (256u << 20)         /* bound on one zstd chunk's output */

struct src {
    int fd;
    int seekable;
    u8 *buf;
    size_t pos, len;            /* unread bytes are buf[pos..len) */
    u64 off;                    /* input offset of the next unread byte */
    u64 end;                    /* stop reading here */
    /* A file's data section is mapped instead: records are used in place,
     * and pages already delivered are given back (MADV_DONTNEED). */
    const u8 *map;
    u64 map_off;                /* file offset of map[0] (page aligned) */
    size_t map_len, released;   /* bytes mapped; bytes at the start given back */
};

struct qent {                   /* one queued record */
    u64 time, seq, offset;
    const u8 *mapped;           /* the record in the mapped file, or NULL: */
    size_t at;                  /* byte position in the queue's data */
    u32 size;
};

struct layout {                 /* where ids and times sit, per attr */
    u64 sample_type;
    int id_pos;                 /* u64 index of the id in a sample, -1: none */
    int is_pos;                 /* u64 index from the end in a trailer, -1: none */
    int sample_id_all;
};

struct perf_reader {
    char *path;
    struct src src;
    int pipe_mode;
    int truncated;
    int failed;
    char err[320];
    u64 total;                  /* bytes expected, for progress */
    u64 data_start;

    struct pd_attr *attrs;
    struct layout *layouts;     /* parallel to attrs */
    size_t n_attrs, cap_attrs, cap_layouts;
    struct pd_build_id *bids;
    size_t n_bids, cap_bids;
    u64 lost;

    ZSTD_DStream *zs;
    u8 *z;                      /* decompressed bytes z[zpos..zlen) */
    size_t zpos, zlen, zcap;
    u64 zoff;                   /* offset of the COMPRESSED record they came from */

    u8 *qdata, *qspare;         /* queued record bytes; spare for compaction */
    size_t qlen, qcap, qspare_cap;
    struct qent *q, *qtmp;      /* qtmp: merge sort scratch */
    size_t qn, qcapn, qtmp_cap;
    size_t q_next, q_ready;     /* delivering q[q_next..q_ready) */
    u64 seq, max_time, next_flush, last_flush;
    int at_end;

    u64 scratch[65536 / 8];     /* aligned copy of an unaligned record */
};

static void set_err(struct perf_reader *r, u64 off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(struct perf_reader *r, u64 off, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(r->err, sizeof(r->err), "offset %" PRIu64 ": ", off);
    va_start(ap, fmt);
    vsnprintf(r->err + n, sizeof(r->err) - (size_t)n, fmt, ap);
    va_end(ap);
    r->failed = 1;
}

static u64 rd64(const u8 *p)
{
    u64 v;
    memcpy(&v, p, 8);
    return v;
}

static u32 rd32(const u8 *p)
{
    u32 v;
    memcpy(&v, p, 4);
    return v;
}

/* ---- src: buffered input ------------------------------------------------ */

/* Make n bytes readable at src_ptr() if the input has them; returns how
 * many are (fewer only at the end of the input).  -1 on a read error. */
static ssize_t src_want(struct src *s, size_t n)
{
    if (s->map)
        return (ssize_t)(s->end - s->off < n ? s->end - s->off : n);
    if (s->len - s->pos >= n)
        return (ssize_t)n;
    memmove(s->buf, s->buf + s->pos, s->len - s->pos);
    s->len -= s->pos;
    s->pos = 0;
    while (s->len < n) {
        u64 fill_off = s->off + s->len;
        size_t room = BUF_SIZE - s->len;
        if (fill_off >= s->end)
            break;
        if (room > s->end - fill_off)
            room = (size_t)(s->end - fill_off);
        ssize_t got = s->seekable ? pread(s->fd, s->buf + s->len, room, (off_t)fill_off)
                                  : read(s->fd, s->buf + s->len, room);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -1;
        if (got == 0)
            break;
        s->len += (size_t)got;
    }
    return (ssize_t)(s->len - s->pos < n ? s->len - s->pos : n);
}

static const u8 *src_ptr(const struct src *s)
{
    return s->map ? s->map + (s->off - s->map_off) : s->buf + s->pos;
}

static void src_take(struct src *s, size_t n)
{
    s->pos += n;
    s->off += n;
}

/* A mapped file that another process truncates under us raises SIGBUS
 * on the next page touched: end with the usual one-line error instead. */
static const char *mapped_path;

static void on_sigbus(int sig)
{
    static const char a[] = "pymerge: ", b[] = ": the file shrank while being read\n";
    (void)sig;
    if (write(2, a, sizeof(a) - 1) < 0 || write(2, mapped_path, strlen(mapped_path)) < 0 ||
        write(2, b, sizeof(b) - 1) < 0)
        _exit(2);
    _exit(2);
}

/* Map [off, s->end) of the file; on failure the buffered reads remain. */
static void src_map(struct src *s, const char *path)
{
    long page = sysconf(_SC_PAGESIZE);
    u64 start = s->off & ~(u64)(page - 1);
    if (s->end <= start || s->end - start > SIZE_MAX)
        return;
    void *m = mmap(NULL, (size_t)(s->end - start), PROT_READ, MAP_PRIVATE, s->fd, (off_t)start);
    if (m == MAP_FAILED)
        return;
    s->map = m;
    s->map_off = start;
    s->map_len = (size_t)(s->end - start);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sigbus;
    mapped_path = path;
    sigaction(SIGBUS, &sa, NULL);
}

/* Give back the mapped pages before file offset low: everything there has
 * been delivered, so peak memory stays one round, not the file. */
static void src_release(struct src *s, u64 low)
{
    long page = sysconf(_SC_PAGESIZE);
    if (!s->map || low <= s->map_off)
        return;
    size_t upto = (size_t)(low - s->map_off) & ~(size_t)(page - 1);
    if (upto < s->released + (1u << 20))     /* in steps of 1 MiB */
        return;
    madvise((void *)(s->map + s->released), upto - s->released, MADV_DONTNEED);
    s->released = upto;
}

/* ---- attrs and features ------------------------------------------------- */

static const char *const hw_names[] = {
    "cycles", "instructions", "cache-references", "cache-misses",
    "branches", "branch-misses", "bus-cycles", "stalled-cycles-frontend",
    "stalled-cycles-backend", "ref-cycles",
};
static const char *const sw_names[] = {
    "cpu-clock", "task-clock", "page-faults", "context-switches",
    "cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
    "emulation-faults", "dummy", "bpf-output", "cgroup-switches",
};

/* The name perf would print when the file names no event (pipe mode). */
static char *derived_name(const struct perf_event_attr *a)
{
    char buf[64];
    if (a->type == PERF_TYPE_HARDWARE && a->config < sizeof(hw_names) / sizeof(*hw_names))
        return xstrdup(hw_names[a->config]);
    if (a->type == PERF_TYPE_SOFTWARE && a->config < sizeof(sw_names) / sizeof(*sw_names))
        return xstrdup(sw_names[a->config]);
    snprintf(buf, sizeof(buf), "type%u/config0x%llx", a->type, (unsigned long long)a->config);
    return xstrdup(buf);
}

static struct layout layout_of(const struct perf_event_attr *a)
{
    struct layout l = {a->sample_type, -1, -1, (int)a->sample_id_all};
    u64 t = a->sample_type;
    if (t & PERF_SAMPLE_IDENTIFIER) {
        l.id_pos = 0;
        l.is_pos = 1;
    } else if (t & PERF_SAMPLE_ID) {
        l.id_pos = !!(t & PERF_SAMPLE_IP) + !!(t & PERF_SAMPLE_TID) +
                   !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ADDR);
        l.is_pos = 1 + !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU);
    }
    return l;
}

/* Add an attr from `p` (attr.size bytes, at most `room`) with its ids. */
static int add_attr(struct perf_reader *r, u64 off, const u8 *p, size_t room,
                    const u8 *ids, size_t n_ids)
{
    u32 asz = room >= 8 ? rd32(p + 4) : 0;
    if (asz == 0)
        asz = PERF_ATTR_SIZE_VER0;
    if (asz < PERF_ATTR_SIZE_VER0 || asz > room) {
        set_err(r, off, "event attr of %u bytes does not fit in %zu", asz, room);
        return -1;
    }
    GROW(r->attrs, r->cap_attrs, r->n_attrs + 1);
    GROW(r->layouts, r->cap_layouts, r->n_attrs + 1);
    struct pd_attr *a = &r->attrs[r->n_attrs];
    memset(a, 0, sizeof(*a));
    memcpy(&a->attr, p, asz < sizeof(a->attr) ? asz : sizeof(a->attr));
    a->attr.size = sizeof(a->attr);
    a->ids = xmalloc(n_ids * sizeof(u64));
    for (size_t i = 0; i < n_ids; i++)
        a->ids[i] = rd64(ids + 8 * i);
    a->n_ids = n_ids;
    a->name = derived_name(&a->attr);   /* until EVENT_DESC names it */
    r->layouts[r->n_attrs] = layout_of(&a->attr);
    r->n_attrs++;
    /* perf refuses files whose events disagree on where the id sits,
     * because records could then not be attributed; so do we. */
    const struct layout *l0 = &r->layouts[0], *ln = &r->layouts[r->n_attrs - 1];
    if (r->n_attrs > 1 && (l0->id_pos != ln->id_pos || l0->is_pos != ln->is_pos ||
                           l0->id_pos < 0 || l0->sample_id_all != ln->sample_id_all)) {
        set_err(r, off, "events with different sample layouts and no sample id");
        return -1;
    }
    return 0;
}

static struct pd_attr *attr_by_id(struct perf_reader *r, u64 id, size_t *idx)
{
    for (size_t i = 0; i < r->n_attrs; i++)
        for (size_t j = 0; j < r->attrs[i].n_ids; j++)
            if (r->attrs[i].ids[j] == id) {
                *idx = i;
                return &r->attrs[i];
            }
    return NULL;
}

/* Read a {u32 len; char str[len]} string; NULL if it does not fit. */
static const char *rd_string(const u8 **p, const u8 *end)
{
    if (end - *p < 4)
        return NULL;
    u32 len = rd32(*p);
    if (len == 0 || len > (size_t)(end - *p) - 4 || memchr(*p + 4, 0, len) == NULL)
        return NULL;
    const char *s = (const char *)*p + 4;
    *p += 4 + len;
    return s;
}

static int parse_event_desc(struct perf_reader *r, u64 off, const u8 *p, size_t size)
{
    const u8 *end = p + size;
    if (size < 8)
        goto bad;
    u32 nr = rd32(p), asz = rd32(p + 4);
    p += 8;
    for (u32 i = 0; i < nr; i++) {
        if ((size_t)(end - p) < (size_t)asz + 4)
            goto bad;
        p += asz;
        u32 n_ids = rd32(p);
        p += 4;
        const char *name = rd_string(&p, end);
        if (!name || (size_t)(end - p) / 8 < n_ids)
            goto bad;
        /* Name the attr that owns these ids, or the i-th when none match. */
        size_t idx;
        struct pd_attr *a = n_ids ? attr_by_id(r, rd64(p), &idx) : NULL;
        if (!a && i < r->n_attrs)
            a = &r->attrs[i];
        if (a) {
            free(a->name);
            a->name = xstrdup(name);
        }
        p += 8 * (size_t)n_ids;
    }
    return 0;
bad:
    set_err(r, off, "EVENT_DESC feature section is malformed");
    return -1;
}

/* One build-id record: {header; s32 pid; u8 id[24]; char filename[]}. */
static int parse_build_id(struct perf_reader *r, u64 off, const u8 *p, size_t size)
{
    if (size < 36 || !memchr(p + 36, 0, size - 36)) {
        set_err(r, off, "BUILD_ID record is malformed");
        return -1;
    }
    u16 misc;
    memcpy(&misc, p + 4, 2);
    GROW(r->bids, r->cap_bids, r->n_bids + 1);
    struct pd_build_id *b = &r->bids[r->n_bids++];
    memcpy(b->id, p + 12, 20);
    b->size = (misc & MISC_BUILD_ID_SIZE) && p[32] <= 20 ? p[32] : 20;
    b->filename = xstrdup((const char *)p + 36);
    return 0;
}

static int parse_build_ids(struct perf_reader *r, u64 off, const u8 *p, size_t size)
{
    while (size >= 8) {
        u16 rsz;
        memcpy(&rsz, p + 6, 2);
        if (rsz < 8 || rsz > size) {
            set_err(r, off, "BUILD_ID feature: record size %u in %zu bytes", rsz, size);
            return -1;
        }
        if (parse_build_id(r, off, p, rsz) < 0)
            return -1;
        p += rsz;
        off += rsz;
        size -= rsz;
    }
    return 0;
}

static int parse_feature(struct perf_reader *r, int feat, u64 off, const u8 *p, size_t size)
{
    if (feat == FEAT_EVENT_DESC)
        return parse_event_desc(r, off, p, size);
    if (feat == FEAT_BUILD_ID)
        return parse_build_ids(r, off, p, size);
    return 0;
}

/* pread exactly n bytes at off into a fresh buffer; NULL on short read. */
static u8 *read_at(struct perf_reader *r, u64 off, u64 n, const char *what)
{
    if (n > MAX_SECTION) {
        set_err(r, off, "%s of %" PRIu64 " bytes is impossibly large", what, n);
        return NULL;
    }
    u8 *buf = xmalloc((size_t)n);
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(r->src.fd, buf + got, (size_t)n - got, (off_t)(off + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    if (got < n) {
        set_err(r, off, "%s of %" PRIu64 " bytes runs past the end of the file", what, n);
        free(buf);
        return NULL;
    }
    return buf;
}

static int open_file_mode(struct perf_reader *r, u64 file_size)
{
    u8 *h = read_at(r, 0, FILE_HEADER_SIZE, "file header");
    int ret = -1;
    u8 *attrs = NULL, *table = NULL;
    if (!h)
        return -1;
    u64 hsize = rd64(h + 8), attr_size = rd64(h + 16);
    u64 a_off = rd64(h + 24), a_size = rd64(h + 32);
    u64 d_off = rd64(h + 40), d_size = rd64(h + 48);
    if (hsize < FILE_HEADER_SIZE || hsize > file_size) {
        set_err(r, 8, "header size %" PRIu64 " is impossible", hsize);
        goto out;
    }
    if (attr_size < PERF_ATTR_SIZE_VER0 + 16 || attr_size > 4096) {
        set_err(r, 16, "attr size %" PRIu64 " is impossible", attr_size);
        goto out;
    }
    if (a_off > file_size || a_size > file_size - a_off || a_size % attr_size || !a_size) {
        set_err(r, 24, "attr section (offset %" PRIu64 ", %" PRIu64 " bytes) is impossible",
                a_off, a_size);
        goto out;
    }
    if (d_off < hsize || d_off > file_size) {
        set_err(r, 40, "data offset %" PRIu64 " is outside the file", d_off);
        goto out;
    }
    if (!(attrs = read_at(r, a_off, a_size, "attr section")))
        goto out;
    for (u64 i = 0; i < a_size / attr_size; i++) {
        const u8 *e = attrs + i * attr_size;
        u64 ids_off = rd64(e + attr_size - 16), ids_size = rd64(e + attr_size - 8);
        u64 eoff = a_off + i * attr_size;
        if (ids_off > file_size || ids_size > file_size - ids_off || ids_size % 8) {
            set_err(r, eoff, "event ids (offset %" PRIu64 ", %" PRIu64 " bytes) are impossible",
                    ids_off, ids_size);
            goto out;
        }
        u8 *ids = ids_size ? read_at(r, ids_off, ids_size, "event ids") : NULL;
        if (ids_size && !ids)
            goto out;
        int bad = add_attr(r, eoff, e, (size_t)attr_size - 16, ids, (size_t)(ids_size / 8));
        free(ids);
        if (bad)
            goto out;
    }
    /* A header with no data size, or data past the end, means perf did not
     * finish writing: read what is there. */
    if (d_size == 0 || d_size > file_size - d_off) {
        r->truncated = 1;
        warnx_("%s: the file is incomplete (perf did not finish writing it); "
               "reading the %" PRIu64 " bytes present", r->path, file_size - d_off);
        r->src.end = file_size;
    } else {
        r->src.end = d_off + d_size;
        /* Feature sections follow the data, one {offset,size} per set bit. */
        int n_feat = 0;
        for (int b = 0; b < FEAT_BITS; b++)
            n_feat += (rd64(h + 72 + 8 * (b / 64)) >> (b % 64)) & 1;
        u64 t_off = d_off + d_size;
        if (n_feat && file_size - t_off < 16ull * n_feat) {
            warnx_("%s: feature sections missing; event names are derived", r->path);
        } else if (n_feat) {
            if (!(table = read_at(r, t_off, 16ull * n_feat, "feature table")))
                goto out;
            int k = 0;
            for (int b = 0; b < FEAT_BITS; b++) {
                if (!((rd64(h + 72 + 8 * (b / 64)) >> (b % 64)) & 1))
                    continue;
                u64 f_off = rd64(table + 16 * k), f_size = rd64(table + 16 * k + 8);
                k++;
                if (b != FEAT_EVENT_DESC && b != FEAT_BUILD_ID)
                    continue;
                if (f_off > file_size || f_size > file_size - f_off) {
                    set_err(r, t_off + 16 * (k - 1), "feature %d section is outside the file", b);
                    goto out;
                }
                u8 *f = read_at(r, f_off, f_size, "feature section");
                int bad = !f || parse_feature(r, b, f_off, f, (size_t)f_size) < 0;
                free(f);
                if (bad)
                    goto out;
            }
        }
    }
    r->src.off = d_off;
    r->data_start = d_off;
    r->total = r->src.end - d_off;
    src_map(&r->src, r->path);
    ret = 0;
out:
    free(h);
    free(attrs);
    free(table);
    return ret;
}

struct perf_reader *perf_reader__open(const char *path, char *err, size_t errlen)
{
    struct perf_reader *r = xcalloc(1, sizeof(*r));
    struct stat st;
    r->path = xstrdup(path);
    r->src.fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC);
    if (r->src.fd < 0 || fstat(r->src.fd, &st) < 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        goto fail;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "is a directory (perf record --dir is not supported)");
        goto fail;
    }
    r->src.seekable = S_ISREG(st.st_mode);
    r->src.buf = xmalloc(BUF_SIZE);
    r->src.end = UINT64_MAX;
    ssize_t n = src_want(&r->src, 16);
    if (n < 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        goto fail;
    }
    u64 magic = n >= 8 ? rd64(r->src.buf) : 0;
    if (n < 16 || (magic != MAGIC_PERFILE2 && magic != __builtin_bswap64(MAGIC_PERFILE2))) {
        if (n >= 8 && memcmp(r->src.buf, "PERFFILE", 8) == 0)
            snprintf(err, errlen, "offset 0: perf.data version 1 is not supported");
        else
            snprintf(err, errlen, "offset 0: not a perf.data file (no PERFILE2 magic)");
        goto fail;
    }
    if (magic != MAGIC_PERFILE2) {
        snprintf(err, errlen, "offset 0: perf.data of the other endianness is not supported");
        goto fail;
    }
    u64 hsize = rd64(r->src.buf + 8);
    if (hsize == 16) {                       /* pipe mode: records follow */
        r->pipe_mode = 1;
        src_take(&r->src, 16);
        r->total = r->src.seekable ? (u64)st.st_size : 0;
    } else if (!r->src.seekable) {
        snprintf(err, errlen, "offset 8: a file-mode perf.data cannot be read from a pipe; "
                 "name the file instead");
        goto fail;
    } else {
        r->src.len = r->src.pos = 0;         /* file mode reads by offset */
        if (open_file_mode(r, (u64)st.st_size) < 0) {
            snprintf(err, errlen, "%s", r->err);
            goto fail;
        }
    }
    r->zs = ZSTD_createDStream();
    if (!r->zs || ZSTD_isError(ZSTD_initDStream(r->zs))) {
        snprintf(err, errlen, "cannot initialise zstd");
        goto fail;
    }
    return r;
fail:
    perf_reader__delete(r);
    return NULL;
}

void perf_reader__delete(struct perf_reader *r)
{
    if (!r)
        return;
    if (r->src.map)
        munmap((void *)r->src.map, r->src.map_len);
    if (r->src.fd > 0)
        close(r->src.fd);
    for (size_t i = 0; i < r->n_attrs; i++) {
        free(r->attrs[i].name);
        free(r->attrs[i].ids);
    }
    for (size_t i = 0; i < r->n_bids; i++)
        free(r->bids[i].filename);
    free(r->attrs);
    free(r->layouts);
    free(r->bids);
    ZSTD_freeDStream(r->zs);
    free(r->z);
    free(r->qdata);
    free(r->qspare);
    free(r->q);
    free(r->qtmp);
    free(r->src.buf);
    free(r->path);
    free(r);
}

/* ---- raw records ---------------------------------------------------------- */

struct raw {
    u32 type;
    u16 misc, size;
    const u8 *p;        /* the whole record, header included */
    u64 off;
    int mapped;         /* p points into the mapped file: valid to the end */
};

static int decompress(struct perf_reader *r, const struct raw *rec)
{
    size_t hdr = rec->type == REC_COMPRESSED2 ? 16 : 8;
    if (rec->size < hdr) {
        set_err(r, rec->off, "compressed record of %u bytes is too short", rec->size);
        return -1;
    }
    size_t n = rec->size - hdr;
    if (rec->type == REC_COMPRESSED2 && rd64(rec->p + 8) < n)
        n = (size_t)rd64(rec->p + 8);
    if (r->zpos) {                      /* keep the unfinished record, if any */
        memmove(r->z, r->z + r->zpos, r->zlen - r->zpos);
        r->zlen -= r->zpos;
        r->zpos = 0;
    }
    r->zoff = rec->off;
    ZSTD_inBuffer in = {rec->p + hdr, n, 0};
    /* Until the input is used up and zstd has flushed all it holds: a
     * call that fills the output may keep decompressed bytes back. */
    for (;;) {
        if (r->zcap - r->zlen < 65536) {
            if (r->zcap >= MAX_DECOMPRESSED) {
                set_err(r, rec->off, "compressed record expands beyond %u bytes",
                        MAX_DECOMPRESSED);
                return -1;
            }
            GROW(r->z, r->zcap, r->zlen + 65536);
        }
        ZSTD_outBuffer out = {r->z + r->zlen, r->zcap - r->zlen, 0};
        size_t before = in.pos;
        size_t ret = ZSTD_decompressStream(r->zs, &out, &in);
        if (ZSTD_isError(ret)) {
            set_err(r, rec->off, "compressed record: %s", ZSTD_getErrorName(ret));
            return -1;
        }
        r->zlen += out.pos;
        if (out.pos < out.size && (in.pos == in.size || in.pos == before))
            break;
    }
    return 0;
}

static int record_header(struct perf_reader *r, const u8 *p, u64 off, struct raw *rec)
{
    rec->type = rd32(p);
    memcpy(&rec->misc, p + 4, 2);
    memcpy(&rec->size, p + 6, 2);
    rec->p = p;
    rec->off = off;
    if (rec->size < 8) {
        set_err(r, off, "record size %u is smaller than a record header", rec->size);
        return -1;
    }
    return 0;
}

/* The next whole record: 1, 0 at the end of the input, -1 on error. */
static int next_raw(struct perf_reader *r, struct raw *rec)
{
    for (;;) {
        /* Records already decompressed come first. */
        if (r->zlen - r->zpos >= 8) {
            if (record_header(r, r->z + r->zpos, r->zoff, rec) < 0)
                return -1;
            if (r->zlen - r->zpos >= rec->size) {
                r->zpos += rec->size;
                rec->mapped = 0;
                if (rec->type == REC_COMPRESSED || rec->type == REC_COMPRESSED2) {
                    set_err(r, rec->off, "compressed record inside compressed data");
                    return -1;
                }
                return 1;
            }
        }
        ssize_t n = src_want(&r->src, 8);
        if (n < 0) {
            set_err(r, r->src.off, "read error: %s", strerror(errno));
            return -1;
        }
        if (n == 0)
            return 0;
        if (n < 8)
            goto tail;
        if (record_header(r, src_ptr(&r->src), r->src.off, rec) < 0)
            return -1;
        n = src_want(&r->src, rec->size);
        if (n < 0) {
            set_err(r, r->src.off, "read error: %s", strerror(errno));
            return -1;
        }
        if ((size_t)n < rec->size)
            goto tail;
        rec->p = src_ptr(&r->src);
        rec->mapped = r->src.map != NULL;
        src_take(&r->src, rec->size);
        if (rec->type == REC_COMPRESSED || rec->type == REC_COMPRESSED2) {
            if (decompress(r, rec) < 0)
                return -1;
            continue;
        }
        if (rec->type == REC_TRACING_DATA && r->pipe_mode && rec->size >= 12) {
            /* In a pipe the tracepoint formats follow the record, padded. */
            u64 skip = ((u64)rd32(rec->p + 8) + 7) & ~7ull;
            while (skip) {
                ssize_t k = src_want(&r->src, skip < BUF_SIZE ? (size_t)skip : BUF_SIZE);
                if (k <= 0)
                    goto tail;
                src_take(&r->src, (size_t)k);
                skip -= (u64)k;
            }
        }
        return 1;
    }
tail:
    if (!r->truncated)
        warnx_("%s: the input ends inside the record at offset %" PRIu64
               "; using the records before it", r->path, r->src.off);
    r->truncated = 1;
    return 0;
}

/* ---- record fields -------------------------------------------------------- */

/* The attr describing a record's layout; NULL if its id is unknown. */
static const struct pd_attr *attr_of(struct perf_reader *r, const struct raw *rec, size_t *idx)
{
    *idx = 0;
    if (r->n_attrs == 0)
        return NULL;
    if (r->n_attrs == 1)
        return &r->attrs[0];
    const struct layout *l = &r->layouts[0];
    size_t body = rec->size - 8u;
    u64 id;
    if (rec->type == PERF_RECORD_SAMPLE) {
        if (l->id_pos < 0 || body < 8u * (size_t)(l->id_pos + 1))
            return NULL;
        id = rd64(rec->p + 8 + 8 * l->id_pos);
    } else {
        if (!l->sample_id_all)          /* no trailer: one layout for all */
            return &r->attrs[0];
        if (l->is_pos < 0 || body < 8u * (size_t)l->is_pos)
            return NULL;
        id = rd64(rec->p + rec->size - 8 * l->is_pos);
    }
    return attr_by_id(r, id, idx);
}

/* The sample_id trailer of a non-sample record: its size and time. */
static size_t trailer(const struct layout *l, const struct raw *rec, u64 *time)
{
    u64 t = l->sample_type;
    size_t n = !!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ID) +
               !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU) +
               !!(t & PERF_SAMPLE_IDENTIFIER);
    *time = 0;
    if (!l->sample_id_all || 8 + 8 * n > rec->size)
        return 0;
    if (t & PERF_SAMPLE_TIME) {
        size_t after = !!(t & PERF_SAMPLE_ID) + !!(t & PERF_SAMPLE_STREAM_ID) +
                       !!(t & PERF_SAMPLE_CPU) + !!(t & PERF_SAMPLE_IDENTIFIER);
        *time = rd64(rec->p + rec->size - 8 * (after + 1));
    }
    return 8 * n;
}

static u64 sample_time(const struct layout *l, const struct raw *rec)
{
    u64 t = l->sample_type;
    size_t i = !!(t & PERF_SAMPLE_IDENTIFIER) + !!(t & PERF_SAMPLE_IP) + !!(t & PERF_SAMPLE_TID);
    if (!(t & PERF_SAMPLE_TIME) || 8 + 8 * (i + 1) > rec->size)
        return 0;
    return rd64(rec->p + 8 + 8 * i);
}

static int is_queued_type(u32 type)
{
    return type == PERF_RECORD_SAMPLE || type == PERF_RECORD_MMAP ||
           type == PERF_RECORD_MMAP2 || type == PERF_RECORD_COMM ||
           type == PERF_RECORD_FORK || type == PERF_RECORD_EXIT;
}

/* Bounds-checked cursor over one record's body. */
struct cur {
    const u8 *p, *end;
    int bad;
};

static const u8 *take(struct cur *c, u64 n)
{
    if (c->bad || (u64)(c->end - c->p) < n) {
        c->bad = 1;
        return NULL;
    }
    const u8 *q = c->p;
    c->p += n;
    return q;
}

static u64 take64(struct cur *c)
{
    const u8 *q = take(c, 8);
    return q ? rd64(q) : 0;
}

static int parse_sample(struct perf_reader *r, const struct pd_attr *a, const struct raw *rec,
                        struct pd_sample *s)
{
    const struct perf_event_attr *at = &a->attr;
    u64 t = at->sample_type;
    struct cur c = {rec->p + 8, rec->p + rec->size, 0};
    const char *what = "fixed fields";

    memset(s, 0, sizeof(*s));
    s->attr = a;
    s->attr_idx = (unsigned)(a - r->attrs);
    /* Without PERF_SAMPLE_PERIOD every sample weighs the fixed period. */
    s->period = at->freq ? 0 : at->sample_period;
    if (t & PERF_SAMPLE_IDENTIFIER)
        s->id = take64(&c);
    if (t & PERF_SAMPLE_IP)
        s->ip = take64(&c);
    if (t & PERF_SAMPLE_TID) {
        const u8 *q = take(&c, 8);
        if (q) {
            s->pid = rd32(q);
            s->tid = rd32(q + 4);
        }
    }
    if (t & PERF_SAMPLE_TIME)
        s->time = take64(&c);
    if (t & PERF_SAMPLE_ADDR)
        take(&c, 8);
    if (t & PERF_SAMPLE_ID)
        s->id = take64(&c);
    if (t & PERF_SAMPLE_STREAM_ID)
        take(&c, 8);
    if (t & PERF_SAMPLE_CPU) {
        const u8 *q = take(&c, 8);
        s->cpu = q ? rd32(q) : 0;
    }
    if (t & PERF_SAMPLE_PERIOD)
        s->period = take64(&c);
    if (t & PERF_SAMPLE_READ) {
        what = "read values";
        u64 rf = at->read_format;
        u64 per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
        u64 times = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
        u64 nr = 1;
        if (rf & PERF_FORMAT_GROUP)
            nr = take64(&c);
        if (nr > 65536)
            c.bad = 1;
        take(&c, 8 * (times + nr * per));
    }
    if (t & PERF_SAMPLE_CALLCHAIN) {
        what = "callchain";
        s->nr = take64(&c);
        if (s->nr > 65536 / 8)
            c.bad = 1;
        s->ips = (const u64 *)take(&c, 8 * s->nr);
    }
    if (t & PERF_SAMPLE_RAW) {
        what = "raw data";
        const u8 *q = take(&c, 4);
        if (q)
            take(&c, rd32(q));
    }
    if (t & PERF_SAMPLE_BRANCH_STACK) {
        what = "branch stack";
        u64 nr = take64(&c);
        if (at->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
            take(&c, 8);
        if (nr > 65536 / 24)
            c.bad = 1;
        take(&c, 24 * nr);
    }
    if (t & PERF_SAMPLE_REGS_USER) {
        what = "user registers";
        s->regs_abi = take64(&c);
        if (s->regs_abi) {
            s->regs_mask = at->sample_regs_user;
            s->n_regs = (unsigned)__builtin_popcountll(s->regs_mask);
            s->regs = (const u64 *)take(&c, 8ull * s->n_regs);
        }
    }
    if (t & PERF_SAMPLE_STACK_USER) {
        what = "user stack";
        s->stack_size = take64(&c);
        if (s->stack_size) {
            s->stack = take(&c, s->stack_size);
            s->stack_dyn_size = take64(&c);
            if (s->stack_dyn_size > s->stack_size)
                c.bad = 1;
        }
    }
    if (c.bad) {
        set_err(r, rec->off, "SAMPLE record of %u bytes: %s do not fit", rec->size, what);
        return -1;
    }
    return 0;
}

/* A NUL-terminated string in [p, end); NULL if unterminated. */
static const char *str_in(const u8 *p, const u8 *end)
{
    return p < end && memchr(p, 0, (size_t)(end - p)) ? (const char *)p : NULL;
}

/* Parse a queued-type record into ev: 1 done, 0 skip, -1 error. */
static int parse(struct perf_reader *r, const struct raw *raw, struct pd_event *ev)
{
    struct raw rec = *raw;
    size_t idx;
    if ((uintptr_t)rec.p & 7) {         /* keep u64 arrays aligned */
        memcpy(r->scratch, rec.p, rec.size);
        rec.p = (const u8 *)r->scratch;
    }
    const struct pd_attr *a = attr_of(r, &rec, &idx);
    if (!a)
        return 0;                       /* perf skips records of unknown events */
    const struct layout *l = &r->layouts[idx];
    memset(ev, 0, sizeof(*ev));
    ev->misc = rec.misc;
    ev->offset = rec.off;
    if (rec.type == PERF_RECORD_SAMPLE) {
        if (parse_sample(r, a, &rec, &ev->u.sample) < 0)
            return -1;
        ev->type = PD_SAMPLE;
        ev->time = ev->u.sample.time;
        return 1;
    }
    size_t tsz = trailer(l, &rec, &ev->time);
    const u8 *b = rec.p + 8, *end = rec.p + rec.size - tsz;
    size_t body = (size_t)(end - b);
    switch (rec.type) {
    case PERF_RECORD_MMAP:
    case PERF_RECORD_MMAP2: {
        struct pd_mmap *m = &ev->u.mmap;
        size_t fixed = rec.type == PERF_RECORD_MMAP ? 32 : 64;
        if (body < fixed || !(m->filename = str_in(b + fixed, end)))
            goto bad;
        m->pid = rd32(b);
        m->tid = rd32(b + 4);
        m->start = rd64(b + 8);
        m->len = rd64(b + 16);
        m->pgoff = rd64(b + 24);
        m->prot = 4;                    /* PROT_EXEC: MMAP only reports code */
        if (rec.type == PERF_RECORD_MMAP2) {
            if (rec.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
                m->build_id_size = b[32] <= 20 ? b[32] : 20;
                memcpy(m->build_id, b + 36, 20);
            }
            m->prot = rd32(b + 56);
            m->flags = rd32(b + 60);
        }
        ev->type = PD_MMAP;
        return 1;
    }
    case PERF_RECORD_COMM:
        if (body < 8 || !(ev->u.comm.comm = str_in(b + 8, end)))
            goto bad;
        ev->u.comm.pid = rd32(b);
        ev->u.comm.tid = rd32(b + 4);
        ev->u.comm.exec = !!(rec.misc & PERF_RECORD_MISC_COMM_EXEC);
        ev->type = PD_COMM;
        return 1;
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT:
        if (body < 24)
            goto bad;
        ev->u.task = (struct pd_task){rd32(b), rd32(b + 4), rd32(b + 8), rd32(b + 12)};
        if (!ev->time)
            ev->time = rd64(b + 16);
        ev->type = rec.type == PERF_RECORD_FORK ? PD_FORK : PD_EXIT;
        return 1;
    }
    return 0;
bad:
    set_err(r, rec.off, "record of type %u and %u bytes is malformed", rec.type, rec.size);
    return -1;
}

/* perf's own records: attrs, features, build ids, rounds. */
static int user_record(struct perf_reader *r, const struct raw *rec)
{
    const u8 *b = rec->p + 8;
    size_t body = rec->size - 8u;
    switch (rec->type) {
    case REC_HEADER_ATTR: {
        u32 asz = body >= 8 ? rd32(b + 4) : 0;
        if (asz == 0)
            asz = PERF_ATTR_SIZE_VER0;
        if (asz > body) {
            set_err(r, rec->off, "HEADER_ATTR: attr of %u bytes in %zu", asz, body);
            return -1;
        }
        return add_attr(r, rec->off, b, body, b + asz, (body - asz) / 8);
    }
    case REC_HEADER_BUILD_ID:
        return parse_build_id(r, rec->off, rec->p, rec->size);
    case REC_HEADER_FEATURE:
        if (body < 8)
            return 0;
        return parse_feature(r, (int)rd64(b), rec->off, b + 8, body - 8);
    case REC_EVENT_UPDATE:
        if (body >= 16 && rd64(b) == EVENT_UPDATE_NAME) {
            const char *name = str_in(b + 16, b + body);
            struct pd_attr *a = attr_by_id(r, rd64(b + 8), &(size_t){0});
            if (name && a) {
                free(a->name);
                a->name = xstrdup(name);
            }
        }
        return 0;
    case REC_FINISHED_ROUND:
        return 1;
    }
    return 0;
}

/* ---- the time-ordering queue ---------------------------------------------- */

static int qent_cmp(const void *pa, const void *pb)
{
    const struct qent *a = pa, *b = pb;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void enqueue(struct perf_reader *r, const struct raw *rec, u64 time)
{
    size_t at = r->qlen;
    if (!rec->mapped) {                 /* pipe or zstd bytes: keep a copy */
        GROW(r->qdata, r->qcap, at + ((rec->size + 7u) & ~7u));
        memcpy(r->qdata + at, rec->p, rec->size);
        r->qlen = at + ((rec->size + 7u) & ~7u);
    }
    GROW(r->q, r->qcapn, r->qn + 1);
    r->q[r->qn++] = (struct qent){time, r->seq++, rec->off, rec->mapped ? rec->p : NULL, at,
                                  rec->size};
    if (time > r->max_time)
        r->max_time = time;
}

/*
 * Stable natural merge sort.  A round holds one time-ordered run per CPU
 * buffer plus the sorted leftovers of the last round, so merging runs is
 * close to linear where qsort would pay n log n.
 */
static void sort_queue(struct perf_reader *r)
{
    size_t n = r->qn;
    if (n < 2)
        return;
    GROW(r->qtmp, r->qtmp_cap, n);
    struct qent *a = r->q, *b = r->qtmp;
    for (;;) {
        size_t runs = 0, i = 0;
        while (i < n) {
            size_t mid = i + 1;
            while (mid < n && qent_cmp(&a[mid - 1], &a[mid]) <= 0)
                mid++;
            size_t end = mid;
            if (end < n) {
                end++;
                while (end < n && qent_cmp(&a[end - 1], &a[end]) <= 0)
                    end++;
            }
            size_t x = i, y = mid, k = i;   /* merge a[i..mid) and a[mid..end) */
            while (x < mid && y < end)
                b[k++] = qent_cmp(&a[y], &a[x]) < 0 ? a[y++] : a[x++];
            while (x < mid)
                b[k++] = a[x++];
            while (y < end)
                b[k++] = a[y++];
            runs++;
            i = end;
        }
        struct qent *t = a;
        a = b;
        b = t;
        if (runs == 1)
            break;
    }
    if (a != r->q) {                    /* the result must end up in r->q */
        r->qtmp = r->q;
        r->q = a;
        size_t c = r->qcapn;
        r->qcapn = r->qtmp_cap;
        r->qtmp_cap = c;
    }
}

/* Sort what is queued and mark everything up to `limit` for delivery. */
static void flush(struct perf_reader *r, u64 limit)
{
    sort_queue(r);
    size_t n = 0;
    while (n < r->qn && r->q[n].time <= limit)
        n++;
    r->q_next = 0;
    r->q_ready = n;
    if (n)
        r->last_flush = r->q[n - 1].time;
}

/* Drop the delivered records, keeping the rest in a compact buffer. */
static void compact(struct perf_reader *r)
{
    size_t len = 0;
    u64 low = r->src.off;               /* the oldest mapped byte still needed */
    for (size_t i = r->q_ready; i < r->qn; i++)
        len += r->q[i].mapped ? 0 : (r->q[i].size + 7u) & ~7u;
    GROW(r->qspare, r->qspare_cap, len);
    len = 0;
    for (size_t i = r->q_ready; i < r->qn; i++) {
        struct qent e = r->q[i];
        if (e.mapped) {
            if (e.offset < low)
                low = e.offset;
        } else {
            memcpy(r->qspare + len, r->qdata + e.at, e.size);
            e.at = len;
            len += (e.size + 7u) & ~7u;
        }
        r->q[i - r->q_ready] = e;
    }
    src_release(&r->src, low);
    r->qn -= r->q_ready;
    r->q_next = r->q_ready = 0;
    u8 *t = r->qdata;
    size_t tc = r->qcap;
    r->qdata = r->qspare;
    r->qcap = r->qspare_cap;
    r->qspare = t;
    r->qspare_cap = tc;
    r->qlen = len;
}

int perf_reader__next(struct perf_reader *r, struct pd_event *ev)
{
    struct raw rec;
    for (;;) {
        if (r->failed)
            return -1;
        while (r->q_next < r->q_ready) {
            const struct qent *e = &r->q[r->q_next++];
            rec.p = e->mapped ? e->mapped : r->qdata + e->at;
            rec.off = e->offset;
            rec.size = (u16)e->size;
            rec.type = rd32(rec.p);
            memcpy(&rec.misc, rec.p + 4, 2);
            int k = parse(r, &rec, ev);
            if (k)
                return k;
        }
        if (r->q_ready)
            compact(r);
        if (r->at_end) {
            if (!r->qn)
                return 0;
            flush(r, UINT64_MAX);
            continue;
        }
        int k = next_raw(r, &rec);
        if (k < 0)
            return -1;
        if (k == 0) {
            r->at_end = 1;
            continue;
        }
        if (rec.type >= 64) {
            k = user_record(r, &rec);
            if (k < 0)
                return -1;
            if (k == 1) {               /* FINISHED_ROUND */
                flush(r, r->next_flush);
                r->next_flush = r->max_time;
            }
            continue;
        }
        if (rec.type == PERF_RECORD_LOST && rec.size >= 24) {
            r->lost += rd64(rec.p + 16);
            continue;
        }
        if (rec.type == PERF_RECORD_LOST_SAMPLES && rec.size >= 16) {
            r->lost += rd64(rec.p + 8);
            continue;
        }
        if (!is_queued_type(rec.type))
            continue;
        size_t idx;
        const struct pd_attr *a = attr_of(r, &rec, &idx);
        if (!a) {
            if (r->n_attrs == 0) {
                set_err(r, rec.off, "record of type %u before any event attr", rec.type);
                return -1;
            }
            continue;
        }
        u64 time;
        if (rec.type == PERF_RECORD_SAMPLE)
            time = sample_time(&r->layouts[idx], &rec);
        else
            trailer(&r->layouts[idx], &rec, &time);
        /* perf delivers untimed records, and records older than what was
         * already delivered, at once instead of queueing them. */
        if (time == 0 || time < r->last_flush) {
            k = parse(r, &rec, ev);
            if (k)
                return k;
            continue;
        }
        enqueue(r, &rec, time);
    }
}

const char *perf_reader__error(const struct perf_reader *r)
{
    return r->err;
}

int perf_reader__truncated(const struct perf_reader *r)
{
    return r->truncated;
}

size_t perf_reader__n_attrs(const struct perf_reader *r)
{
    return r->n_attrs;
}

const struct pd_attr *perf_reader__attr(const struct perf_reader *r, size_t i)
{
    return &r->attrs[i];
}

size_t perf_reader__n_build_ids(const struct perf_reader *r)
{
    return r->n_bids;
}

const struct pd_build_id *perf_reader__build_id(const struct perf_reader *r, size_t i)
{
    return &r->bids[i];
}

uint64_t perf_reader__lost(const struct perf_reader *r)
{
    return r->lost;
}

void perf_reader__progress(const struct perf_reader *r, uint64_t *done, uint64_t *total)
{
    *done = r->src.off - r->data_start;
    *total = r->total;
}
