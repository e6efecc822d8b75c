/*
 * perfdata.c - perf.data bytes -> typed records, in perf's delivery order.
 *
 * This file reads the header, the attrs and the feature sections, and
 * drives three layers, each feeding the next:
 *   perfdata_source.c    the data section mapped (a file), or buffered bytes from a
 *              pipe;
 *   raw        (here) whole records, COMPRESSED records expanded through
 *              one zstd stream (a decompressed chunk may end mid-record, so
 *              the remainder waits for the next chunk), perf's own records
 *              (attrs, features, build ids, rounds) handled on the spot;
 *   perfdata_queue.c  kernel records reordered by time as perf's ordered_events
 *              does it, then decoded by perfdata_record.c.
 * Every length is checked against the record, and every record against the
 * input, before it is used.
 */
#include "perfdata.h"
#include "perfdata_queue.h"
#include "perfdata_record.h"
#include "perfdata_source.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

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
enum { FEAT_TRACING_DATA = 1, FEAT_BUILD_ID = 2, FEAT_EVENT_DESC = 12, FEAT_BITS = 256 };
enum { EVENT_UPDATE_NAME = 2 };
#define MISC_BUILD_ID_SIZE (1u << 15)     /* build id record carries its size */
#define LOST_SAMPLES_BPF (1u << 15)       /* LOST_SAMPLES of samples a BPF filter dropped */

#define MAGIC_PERFILE2 0x32454c4946524550ULL  /* "PERFILE2" read little-endian */
#define FILE_HEADER_SIZE 104                  /* 3 u64 + 3 sections + 256 bits */
#define MAX_SECTION (256u << 20)              /* no feature section is larger */
#define MAX_DECOMPRESSED (256u << 20)         /* bound on one zstd chunk's output */

struct perf_reader {
    char *path;
    struct src src;
    const char *shown;          /* path as messages name it: "<stdin>" for "-" */
    int pipe_mode;
    int truncated;
    int failed;                 /* 0, or the negative errno every call now returns */
    u64 total;                  /* bytes expected, for progress */
    u64 data_start;

    struct pd_attr *attrs;
    struct pd_layout *layouts;     /* parallel to attrs */
    size_t n_attrs, cap_attrs, cap_layouts;
    struct pd_build_id *bids;
    size_t n_bids, cap_bids;
    u64 lost[2];                /* by LOST records, by LOST_SAMPLES records */
    u8 *tdata;                  /* TRACING_DATA, as recorded */
    size_t tdata_size;

    ZSTD_DStream *zs;
    u8 *z;                      /* decompressed bytes z[zpos..zlen) */
    size_t zpos, zlen, zcap;
    u64 zoff;                   /* offset of the COMPRESSED record they came from */

    struct pd_queue queue;
    int at_end;

    u64 scratch[65536 / 8];     /* aligned copy of an unaligned record */
};

/* The reader's one error printer: "pymerge: FILE: offset N: what is
 * wrong", once.  Returns -EINVAL, which every later call returns too. */
static int bad(struct perf_reader *r, u64 off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int bad(struct perf_reader *r, u64 off, const char *fmt, ...)
{
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    warnx_("%s: offset %" PRIu64 ": %s", r->shown, off, msg);
    r->failed = -EINVAL;
    return -EINVAL;
}

/* A failed read of the input at off (err: its errno), said as bad() says. */
static int read_failed(struct perf_reader *r, u64 off, int err)
{
    warnx_("%s: offset %" PRIu64 ": read error: %s", r->shown, off, strerror(err));
    r->failed = -err;
    return -err;
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

/* Add an attr from `p` (attr.size bytes, at most `room`) with its ids. */
static int add_attr(struct perf_reader *r, u64 off, const u8 *p, size_t room,
                    const u8 *ids, size_t n_ids)
{
    u32 asz = room >= 8 ? rd32(p + 4) : 0;
    if (asz == 0)
        asz = PERF_ATTR_SIZE_VER0;
    if (asz < PERF_ATTR_SIZE_VER0 || asz > room)
        return bad(r, off, "event attr of %u bytes does not fit in %zu", asz, room);
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
    r->layouts[r->n_attrs] = pd_record__layout_of(&a->attr);
    r->n_attrs++;
    /* perf refuses files whose events disagree on where the id sits,
     * because records could then not be attributed; so do we. */
    const struct pd_layout *l0 = &r->layouts[0], *ln = &r->layouts[r->n_attrs - 1];
    if (r->n_attrs > 1 && (l0->id_pos != ln->id_pos || l0->is_pos != ln->is_pos ||
                           l0->id_pos < 0 || l0->sample_id_all != ln->sample_id_all))
        return bad(r, off, "events with different sample layouts and no sample id");
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
    return bad(r, off, "EVENT_DESC feature section is malformed");
}

/* One build-id record: {header; s32 pid; u8 id[24]; char filename[]}. */
static int parse_build_id(struct perf_reader *r, u64 off, const u8 *p, size_t size)
{
    if (size < 36 || !memchr(p + 36, 0, size - 36))
        return bad(r, off, "BUILD_ID record is malformed");
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
        if (rsz < 8 || rsz > size)
            return bad(r, off, "BUILD_ID feature: record size %u in %zu bytes", rsz, size);
        int err = parse_build_id(r, off, p, rsz);
        if (err)
            return err;
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

/* perf's struct perf_file_header (tools/perf/util/header.h), as the file
 * holds it: where each section is, and one bit per feature section that
 * follows the data. */
struct file_section {
    u64 offset, size;
};

struct file_header {
    u64 magic;
    u64 size;                       /* of this header */
    u64 attr_size;                  /* of one attrs entry: an attr, then its ids' section */
    struct file_section attrs, data, event_types;
    u64 features[FEAT_BITS / 64];
};
_Static_assert(sizeof(struct file_header) == FILE_HEADER_SIZE, "perf's file header layout");
/* Where a header field sits: the offset an error about it names. */
#define FIELD(f) offsetof(struct file_header, f)

static int has_feature(const struct file_header *h, int bit)
{
    return (h->features[bit / 64] >> (bit % 64)) & 1;
}

/* pread exactly n bytes at off into a fresh buffer; NULL with errno set
 * (after saying why, as bad() does) on a short read. */
static u8 *read_at(struct perf_reader *r, u64 off, u64 n, const char *what)
{
    if (n > MAX_SECTION) {
        errno = -bad(r, off, "%s of %" PRIu64 " bytes is impossibly large", what, n);
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
        free(buf);
        errno = -bad(r, off, "truncated: the file ends at %" PRIu64 " bytes, inside the %s"
                     " (offset %" PRIu64 ", %" PRIu64 " bytes)", off + got, what, off, n);
        return NULL;
    }
    return buf;
}

/* 0 unless the section [off, off + size) that the header field at `field`
 * gives runs past the end of the file: said as the truncation it is (perf
 * writes the header with every section's place, the sections after). */
static int past_end(struct perf_reader *r, u64 field, const char *what, u64 off, u64 size,
                    u64 file_size)
{
    if (off <= file_size && size <= file_size - off)
        return 0;
    return bad(r, field, "truncated: the file ends at %" PRIu64 " bytes, but its header puts the %s"
               " at offset %" PRIu64 " (%" PRIu64 " bytes)", file_size, what, off, size);
}

/* The file header into h, checked: every section it places is inside the
 * file. */
static int read_header(struct perf_reader *r, u64 file_size, struct file_header *h)
{
    u8 *buf = read_at(r, 0, FILE_HEADER_SIZE, "file header");
    int err;
    if (!buf)
        return -errno;
    memcpy(h, buf, sizeof(*h));
    free(buf);
    if (h->size < FILE_HEADER_SIZE)
        return bad(r, FIELD(size), "header size %" PRIu64 " is impossible", h->size);
    if ((err = past_end(r, FIELD(size), "file header", 0, h->size, file_size)))
        return err;
    if (h->attr_size < PERF_ATTR_SIZE_VER0 + sizeof(struct file_section) || h->attr_size > 4096)
        return bad(r, FIELD(attr_size), "attr size %" PRIu64 " is impossible", h->attr_size);
    if (h->attrs.size % h->attr_size || !h->attrs.size)
        return bad(r, FIELD(attrs), "attr section (offset %" PRIu64 ", %" PRIu64 " bytes) is"
                   " impossible", h->attrs.offset, h->attrs.size);
    if ((err = past_end(r, FIELD(attrs), "attr section", h->attrs.offset, h->attrs.size, file_size)))
        return err;
    if (h->data.offset < h->size)
        return bad(r, FIELD(data), "data offset %" PRIu64 " is inside the file header",
                   h->data.offset);
    return past_end(r, FIELD(data), "data section", h->data.offset, 0, file_size);
}

/* One attrs entry e (at file offset off, size bytes): the attr, and the
 * section of its ids. */
static int read_attr(struct perf_reader *r, const u8 *e, u64 off, u64 size, u64 file_size)
{
    struct file_section ids;
    memcpy(&ids, e + size - sizeof(ids), sizeof(ids));
    if (ids.size % 8)
        return bad(r, off, "event ids (offset %" PRIu64 ", %" PRIu64 " bytes) are impossible",
                   ids.offset, ids.size);
    int err = past_end(r, off, "event ids", ids.offset, ids.size, file_size);
    if (err)
        return err;
    u8 *buf = ids.size ? read_at(r, ids.offset, ids.size, "event ids") : NULL;
    if (ids.size && !buf)
        return -errno;
    err = add_attr(r, off, e, (size_t)(size - sizeof(ids)), buf, (size_t)(ids.size / 8));
    free(buf);
    return err;
}

static int read_attrs(struct perf_reader *r, const struct file_header *h, u64 file_size)
{
    u8 *attrs = read_at(r, h->attrs.offset, h->attrs.size, "attr section");
    int err = attrs ? 0 : -errno;
    for (u64 i = 0; !err && i < h->attrs.size / h->attr_size; i++)
        err = read_attr(r, attrs + i * h->attr_size, h->attrs.offset + i * h->attr_size,
                        h->attr_size, file_size);
    free(attrs);
    return err;
}

/* Feature section `bit`, placed by the table entry at file offset field. */
static int read_feature(struct perf_reader *r, int bit, u64 field, const struct file_section *sec,
                        u64 file_size)
{
    char what[32];
    snprintf(what, sizeof(what), "feature %d section", bit);
    int err = past_end(r, field, what, sec->offset, sec->size, file_size);
    if (err)
        return err;
    u8 *f = read_at(r, sec->offset, sec->size, "feature section");
    if (!f)
        return -errno;
    err = parse_feature(r, bit, sec->offset, f, (size_t)sec->size);
    if (bit == FEAT_TRACING_DATA && !r->tdata) {    /* kept, not copied */
        r->tdata = f;
        r->tdata_size = (size_t)sec->size;
        f = NULL;
    }
    free(f);
    return err;
}

/* The feature sections pymerge uses (event names, build ids, tracepoint
 * formats), through the table after the data: one {offset, size} per set
 * bit of the header's. */
static int read_features(struct perf_reader *r, const struct file_header *h, u64 file_size)
{
    u64 t_off = h->data.offset + h->data.size;
    int n_feat = 0, err = 0;
    for (int b = 0; b < FEAT_BITS; b++)
        n_feat += has_feature(h, b);
    if (!n_feat)
        return 0;
    if (file_size - t_off < sizeof(struct file_section) * n_feat) {
        warnx_("%s: feature sections missing; event names are derived", r->shown);
        return 0;
    }
    u8 *table = read_at(r, t_off, sizeof(struct file_section) * n_feat, "feature table");
    if (!table)
        return -errno;
    for (int b = 0, k = 0; !err && b < FEAT_BITS; b++) {
        if (!has_feature(h, b))
            continue;
        struct file_section sec;
        u64 field = t_off + sizeof(sec) * (u64)k;
        memcpy(&sec, table + sizeof(sec) * (size_t)k++, sizeof(sec));
        if (b == FEAT_EVENT_DESC || b == FEAT_BUILD_ID || b == FEAT_TRACING_DATA)
            err = read_feature(r, b, field, &sec, file_size);
    }
    free(table);
    return err;
}

static int open_file_mode(struct perf_reader *r, u64 file_size)
{
    struct file_header h;
    int err = read_header(r, file_size, &h);
    if (!err)
        err = read_attrs(r, &h, file_size);
    if (err)
        return err;
    u64 d_off = h.data.offset;
    /* A header with no data size, or data past the end, means perf did not
     * finish writing: read what is there. */
    if (h.data.size == 0 || h.data.size > file_size - d_off) {
        r->truncated = 1;
        warnx_("%s: the file is incomplete (perf did not finish writing it); "
               "reading the %" PRIu64 " bytes present", r->shown, file_size - d_off);
        r->src.end = file_size;
    } else {
        r->src.end = d_off + h.data.size;
        if ((err = read_features(r, &h, file_size)))
            return err;
    }
    r->src.off = d_off;
    r->data_start = d_off;
    r->total = r->src.end - d_off;
    pd_source__map(&r->src, r->shown);
    return 0;
}

/* A system call on the input failed with err: said, and returned negated. */
static int sys_failed(struct perf_reader *r, int err)
{
    warnx_("%s: %s", r->shown, strerror(err));
    return -err;
}

/* The first 16 bytes: perf.data's magic, in this machine's byte order. */
static int check_magic(struct perf_reader *r, ssize_t n)
{
    u64 magic = n >= 8 ? rd64(r->src.buf) : 0;
    if (n < 16 || (magic != MAGIC_PERFILE2 && magic != __builtin_bswap64(MAGIC_PERFILE2))) {
        if (n >= 8 && memcmp(r->src.buf, "PERFFILE", 8) == 0)
            return bad(r, 0, "perf.data version 1 is not supported");
        return bad(r, 0, "not a perf.data file (no PERFILE2 magic)");
    }
    if (magic != MAGIC_PERFILE2)
        return bad(r, 0, "perf.data of the other endianness is not supported");
    return 0;
}

/* Opens the input and reads what comes before the records. */
static int open_input(struct perf_reader *r)
{
    struct stat st;
    r->src.fd = strcmp(r->path, "-") == 0 ? 0 : open(r->path, O_RDONLY | O_CLOEXEC);
    if (r->src.fd < 0 || fstat(r->src.fd, &st) < 0)
        return sys_failed(r, errno);
    if (S_ISDIR(st.st_mode)) {
        warnx_("%s: is a directory (perf record --dir is not supported)", r->shown);
        return -EISDIR;
    }
    r->src.seekable = S_ISREG(st.st_mode);
    r->src.buf = xmalloc(SRC_BUF_SIZE);
    r->src.end = UINT64_MAX;
    ssize_t n = pd_source__want(&r->src, 16);
    int err = n < 0 ? sys_failed(r, (int)-n) : check_magic(r, n);
    if (err)
        return err;
    if (rd64(r->src.buf + 8) == 16) {       /* pipe mode: records follow */
        r->pipe_mode = 1;
        pd_source__take(&r->src, 16);
        r->total = r->src.seekable ? (u64)st.st_size : 0;
        return 0;
    }
    if (!r->src.seekable)
        return bad(r, FIELD(size), "a file-mode perf.data cannot be read from a pipe; "
                   "name the file instead");
    r->src.len = r->src.pos = 0;            /* file mode reads by offset */
    return open_file_mode(r, (u64)st.st_size);
}

struct perf_reader *perf_reader__open(const char *path)
{
    struct perf_reader *r = xcalloc(1, sizeof(*r));
    r->path = xstrdup(path);
    r->shown = strcmp(path, "-") ? r->path : "<stdin>";
    int err = open_input(r);
    if (!err) {
        r->zs = ZSTD_createDStream();
        if (!r->zs)
            util__out_of_memory();  /* zstd's own malloc failed: one message, as for ours */
        if (ZSTD_isError(ZSTD_initDStream(r->zs))) {
            warnx_("%s: cannot initialise zstd", r->shown);
            err = -ENOMEM;
        }
    }
    if (err) {
        perf_reader__delete(r);
        errno = -err;
        return NULL;
    }
    return r;
}

void perf_reader__delete(struct perf_reader *r)
{
    if (!r)
        return;
    pd_source__exit(&r->src);
    for (size_t i = 0; i < r->n_attrs; i++) {
        free(r->attrs[i].name);
        free(r->attrs[i].ids);
    }
    for (size_t i = 0; i < r->n_bids; i++)
        free(r->bids[i].filename);
    free(r->attrs);
    free(r->layouts);
    free(r->tdata);
    free(r->bids);
    ZSTD_freeDStream(r->zs);
    free(r->z);
    pd_queue__exit(&r->queue);
    free(r->path);
    free(r);
}

/* ---- raw records ---------------------------------------------------------- */

static int decompress(struct perf_reader *r, const struct pd_raw *rec)
{
    size_t hdr = rec->type == REC_COMPRESSED2 ? 16 : 8;
    if (rec->size < hdr)
        return bad(r, rec->off, "compressed record of %u bytes is too short", rec->size);
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
            if (r->zcap >= MAX_DECOMPRESSED)
                return bad(r, rec->off, "compressed record expands beyond %u bytes",
                        MAX_DECOMPRESSED);
            GROW(r->z, r->zcap, r->zlen + 65536);
        }
        ZSTD_outBuffer out = {r->z + r->zlen, r->zcap - r->zlen, 0};
        size_t before = in.pos;
        size_t ret = ZSTD_decompressStream(r->zs, &out, &in);
        if (ZSTD_isError(ret)) {
            /* under a memory limit zstd's own malloc fails: not the file's fault */
            if (ZSTD_getErrorCode(ret) == ZSTD_error_memory_allocation)
                util__out_of_memory();
            return bad(r, rec->off, "compressed record: %s", ZSTD_getErrorName(ret));
        }
        r->zlen += out.pos;
        if (out.pos < out.size && (in.pos == in.size || in.pos == before))
            break;
    }
    return 0;
}

static int record_header(struct perf_reader *r, const u8 *p, u64 off, struct pd_raw *rec)
{
    rec->type = rd32(p);
    memcpy(&rec->misc, p + 4, 2);
    memcpy(&rec->size, p + 6, 2);
    rec->p = p;
    rec->off = off;
    if (rec->size < 8)
        return bad(r, off, "record size %u is smaller than a record header", rec->size);
    return 0;
}

/* At the end of the input: 0, after saying so once when the compressed
 * data stopped inside a record.  perf 6.1's -z sometimes writes a last
 * compressed record cut short, with no LOST record: its last samples are
 * gone, and only this can tell. */
static int compressed_tail(struct perf_reader *r)
{
    if (r->zlen > r->zpos && !r->truncated)
        warnx_("%s: the compressed data ends inside a record (%zu bytes of it): perf"
               " lost the last records it wrote", r->shown, r->zlen - r->zpos);
    if (r->zlen > r->zpos)
        r->truncated = 1;
    return 0;
}

/* In a pipe the tracepoint formats (size bytes, padded to 8) follow their
 * record; the first copy is kept for tracedata.c.  Returns 0, or -ENODATA
 * when the input ends inside them. */
static int pipe_tracing_data(struct perf_reader *r, u64 size)
{
    u64 skip = (size + 7) & ~7ull, at = 0;
    int keep = !r->tdata && size <= MAX_SECTION;
    if (keep)
        r->tdata = xmalloc(size ? size : 1);
    while (skip) {
        ssize_t k = pd_source__want(&r->src, skip < SRC_BUF_SIZE ? (size_t)skip : SRC_BUF_SIZE);
        if (k <= 0)
            return -ENODATA;
        if (keep && at < size)
            memcpy(r->tdata + at, pd_source__ptr(&r->src),
                   (size_t)(size - at < (u64)k ? size - at : (u64)k));
        at += (u64)k;
        pd_source__take(&r->src, (size_t)k);
        skip -= (u64)k;
    }
    if (keep)
        r->tdata_size = (size_t)size;
    return 0;
}

/* The next whole record: 1, 0 at the end of the input, a negative errno
 * on bad input. */
static int next_raw(struct perf_reader *r, struct pd_raw *rec)
{
    for (;;) {
        /* Records already decompressed come first. */
        if (r->zlen - r->zpos >= 8) {
            int err = record_header(r, r->z + r->zpos, r->zoff, rec);
            if (err)
                return err;
            if (r->zlen - r->zpos >= rec->size) {
                r->zpos += rec->size;
                rec->mapped = 0;
                if (rec->type == REC_COMPRESSED || rec->type == REC_COMPRESSED2)
                    return bad(r, rec->off, "compressed record inside compressed data");
                return 1;
            }
        }
        ssize_t n = pd_source__want(&r->src, 8);
        if (n < 0)
            return read_failed(r, r->src.off, (int)-n);
        if (n == 0)
            return compressed_tail(r);
        if (n < 8)
            goto tail;
        int err = record_header(r, pd_source__ptr(&r->src), r->src.off, rec);
        if (err)
            return err;
        n = pd_source__want(&r->src, rec->size);
        if (n < 0)
            return read_failed(r, r->src.off, (int)-n);
        if ((size_t)n < rec->size)
            goto tail;
        rec->p = pd_source__ptr(&r->src);
        rec->mapped = r->src.map != NULL;
        pd_source__take(&r->src, rec->size);
        if (rec->type == REC_COMPRESSED || rec->type == REC_COMPRESSED2) {
            if ((err = decompress(r, rec)))
                return err;
            continue;
        }
        if (rec->type == REC_TRACING_DATA && r->pipe_mode && rec->size >= 12 &&
            pipe_tracing_data(r, rd32(rec->p + 8)) < 0)
            goto tail;
        return 1;
    }
tail:
    if (!r->truncated)
        warnx_("%s: the input ends inside the record at offset %" PRIu64
               "; using the records before it", r->shown, r->src.off);
    r->truncated = 1;
    return 0;
}

/* The attr describing a record's layout; NULL if its id is unknown. */
static const struct pd_attr *attr_of(struct perf_reader *r, const struct pd_raw *rec, size_t *idx)
{
    u64 id;
    *idx = 0;
    if (r->n_attrs == 0)
        return NULL;
    if (r->n_attrs == 1)
        return &r->attrs[0];
    if (!pd_record__id(&r->layouts[0], rec, &id))
        /* no id: records without a trailer share one layout; a sample
         * without its id cannot be attributed */
        return rec->type != PERF_RECORD_SAMPLE && !r->layouts[0].sample_id_all ? &r->attrs[0]
                                                                               : NULL;
    if (id == 0)        /* what perf synthesizes from /proc carries id 0 */
        return &r->attrs[0];
    return attr_by_id(r, id, idx);
}

/* Decode a queued-type record into ev: 1 done, 0 skip, a negative errno
 * on bad input. */
static int parse(struct perf_reader *r, const struct pd_raw *raw, struct pd_event *ev)
{
    struct pd_raw rec = *raw;
    const char *part;
    size_t idx;
    if ((uintptr_t)rec.p & 7) {         /* keep u64 arrays aligned */
        memcpy(r->scratch, rec.p, rec.size);
        rec.p = (const u8 *)r->scratch;
    }
    const struct pd_attr *a = attr_of(r, &rec, &idx);
    if (!a)
        return 0;                       /* perf skips records of unknown events */
    int k = pd_record__parse(a, &r->layouts[idx], &rec, ev, &part);
    if (k < 0 && rec.type == PERF_RECORD_SAMPLE)
        return bad(r, rec.off, "SAMPLE record of %u bytes: %s do not fit", rec.size, part);
    if (k < 0)
        return bad(r, rec.off, "record of type %u and %u bytes is malformed", rec.type, rec.size);
    if (k > 0 && ev->type == PD_SAMPLE)
        ev->u.sample.attr_idx = (unsigned)idx;
    return k;
}

/* perf's own records: attrs, features, build ids, rounds. */
static int user_record(struct perf_reader *r, const struct pd_raw *rec)
{
    const u8 *b = rec->p + 8;
    size_t body = rec->size - 8u;
    switch (rec->type) {
    case REC_HEADER_ATTR: {
        u32 asz = body >= 8 ? rd32(b + 4) : 0;
        if (asz == 0)
            asz = PERF_ATTR_SIZE_VER0;
        if (asz > body)
            return bad(r, rec->off, "HEADER_ATTR: attr of %u bytes in %zu", asz, body);
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

/* Adds n lost records to the total and to a (NULL: no event named),
 * counted apart by the record that said so. */
static void add_lost(struct perf_reader *r, struct pd_attr *a, int by_samples, u64 n)
{
    r->lost[by_samples] += n;
    if (a)
        a->lost_by[by_samples] += n;
    /* Both records count the same losses: the kernel's LOST when it drops
     * a record, and perf's LOST_SAMPLES at the end, from each event's own
     * count (PERF_FORMAT_LOST).  perf report shows the latter; kernels
     * without PERF_FORMAT_LOST have only the former. */
    int use = r->lost[1] != 0;
    for (size_t i = 0; i < r->n_attrs; i++)
        r->attrs[i].lost = r->attrs[i].lost_by[use];
}

/* Whether rec is a LOST or LOST_SAMPLES record: then counted, in total
 * and for its event. */
static int count_lost(struct perf_reader *r, const struct pd_raw *rec)
{
    if (rec->type == PERF_RECORD_LOST && rec->size >= 24) {
        /* the record names the event whose buffer overflowed */
        add_lost(r, attr_by_id(r, rd64(rec->p + 8), &(size_t){0}), 0, rd64(rec->p + 16));
        return 1;
    }
    if (rec->type == PERF_RECORD_LOST_SAMPLES && rec->size >= 16) {
        size_t idx;
        /* samples a BPF filter dropped (perf record --filter) were not lost */
        if (!(rec->misc & LOST_SAMPLES_BPF))
            add_lost(r, attr_of(r, rec, &idx) ? &r->attrs[idx] : NULL, 1, rd64(rec->p + 8));
        return 1;
    }
    return 0;
}

int perf_reader__next(struct perf_reader *r, struct pd_event *ev)
{
    struct pd_raw rec;
    for (;;) {
        if (r->failed)
            return r->failed;
        u32 size;
        while ((rec.p = pd_queue__next(&r->queue, &size, &rec.off))) {
            rec.size = (u16)size;
            rec.type = rd32(rec.p);
            memcpy(&rec.misc, rec.p + 4, 2);
            int k = parse(r, &rec, ev);
            if (k)
                return k;
        }
        if (r->queue.ready)             /* the last batch is done with */
            pd_source__release(&r->src, pd_queue__compact(&r->queue, r->src.off));
        if (r->at_end) {
            if (!r->queue.n)
                return 0;
            pd_queue__flush(&r->queue, UINT64_MAX);
            continue;
        }
        int k = next_raw(r, &rec);
        if (k < 0)
            return k;
        if (k == 0) {
            r->at_end = 1;
            continue;
        }
        if (rec.type >= 64) {
            k = user_record(r, &rec);
            if (k < 0)
                return k;
            if (k == 1)                 /* FINISHED_ROUND */
                pd_queue__round(&r->queue);
            continue;
        }
        if (count_lost(r, &rec) || !pd_record__is_queued(rec.type))
            continue;
        size_t idx;
        const struct pd_attr *a = attr_of(r, &rec, &idx);
        if (!a) {
            if (r->n_attrs == 0)
                return bad(r, rec.off, "record of type %u before any event attr", rec.type);
            continue;
        }
        u64 time = pd_record__time(&r->layouts[idx], &rec);
        /* perf delivers untimed records, and records older than what was
         * already delivered, at once instead of queueing them. */
        if (time == 0 || time < r->queue.last_flush) {
            k = parse(r, &rec, ev);
            if (k)
                return k;
            continue;
        }
        pd_queue__push(&r->queue, rec.p, rec.size, rec.mapped, time, rec.off);
    }
}

int perf_reader__truncated(const struct perf_reader *r)
{
    return r->truncated;
}

int perf_reader__pipe_mode(const struct perf_reader *r)
{
    return r->pipe_mode;
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

const void *perf_reader__tracing_data(const struct perf_reader *r, size_t *size)
{
    *size = r->tdata_size;
    return r->tdata_size ? r->tdata : NULL;
}

uint64_t perf_reader__lost(const struct perf_reader *r)
{
    return r->lost[r->lost[1] != 0];
}

void perf_reader__progress(const struct perf_reader *r, uint64_t *done, uint64_t *total)
{
    *done = r->src.off - r->data_start;
    *total = r->total;
}
