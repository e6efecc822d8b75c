/*
 * perfdata_record.h - the fields of one kernel record, for perfdata.c: where a
 * record's event id and time sit, and its decoding into a pd_event.  Every
 * field is checked against the record's size before it is read.
 */
#ifndef PYMERGE_PERFDATA_RECORD_H
#define PYMERGE_PERFDATA_RECORD_H

#include "perfdata.h"
#include "util.h"

#include <string.h>

struct pd_layout {                 /* where ids and times sit, per attr */
    u64 sample_type;
    int id_pos;                 /* u64 index of the id in a sample, -1: none */
    int is_pos;                 /* u64 index from the end in a trailer, -1: none */
    int sample_id_all;
};

/* A record as it sits in the input. */
struct pd_raw {
    u32 type;
    u16 misc, size;
    const u8 *p;        /* the whole record, header included */
    u64 off;
    int mapped;         /* p points into the mapped file: valid to the end */
};

static inline u64 rd64(const u8 *p)
{
    u64 v;
    memcpy(&v, p, 8);
    return v;
}

static inline u32 rd32(const u8 *p)
{
    u32 v;
    memcpy(&v, p, 4);
    return v;
}

/* A NUL-terminated string in [p, end); NULL if unterminated. */
static inline const char *str_in(const u8 *p, const u8 *end)
{
    return p < end && memchr(p, 0, (size_t)(end - p)) ? (const char *)p : NULL;
}

struct pd_layout pd_record__layout_of(const struct perf_event_attr *a);
/* The event id a record carries: 1 and *id, 0 if it carries none. */
int pd_record__id(const struct pd_layout *l, const struct pd_raw *rec, u64 *id);
/* The record's time, 0 if it carries none. */
u64 pd_record__time(const struct pd_layout *l, const struct pd_raw *rec);
/* SAMPLE, MMAP, MMAP2, COMM, FORK, EXIT, SWITCH: the records that are ordered. */
int pd_record__is_queued(u32 type);
/*
 * Decode rec (8-byte aligned) of event a into ev: 1, 0 for a type that is
 * not decoded, -EINVAL if malformed.  For a malformed SAMPLE, *part names
 * the part that does not fit ("callchain", "user stack"...): a constant.
 */
int pd_record__parse(const struct pd_attr *a, const struct pd_layout *l, const struct pd_raw *rec,
                 struct pd_event *ev, const char **part);

#endif
