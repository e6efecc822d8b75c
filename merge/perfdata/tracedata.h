/*
 * tracedata.h - tracepoint formats from a recording's TRACING_DATA, and
 * their fields read out of PERF_SAMPLE_RAW.
 *
 * perf saves /sys/kernel/tracing's format files with the recording (the
 * TRACING_DATA feature, or a pipe record): the section is framed here and
 * each event format is parsed once by libtraceevent.  Fields are read
 * through a small handle, bounds-checked against the sample's raw size,
 * never by fixed offsets: layouts differ between kernels.  uprobe events
 * (perf probe -x LIB 'func arg=%di:u64') are tracepoints like any other.
 */
#ifndef PYMERGE_TRACEDATA_H
#define PYMERGE_TRACEDATA_H

#include <stddef.h>
#include <stdint.h>

struct tracedata;

/* A numeric field of one event. */
struct td_field {
    uint32_t offset, size;      /* in the raw data */
    int is_signed;
    int big_endian;             /* of the recording */
};

/* What --events lists of a field. */
struct td_field_info {
    const char *name, *type;
    int numeric;
};

/* Parses the section buf[0..size) (copied as needed).  NULL with errno
 * EINVAL when it is malformed, ENOMEM. */
struct tracedata *tracedata__new(const void *buf, size_t size);
void tracedata__delete(struct tracedata *td);   /* accepts NULL */

/* "system:name" of tracepoint id (an attr's config), or NULL. */
const char *tracedata__event_name(struct tracedata *td, uint64_t id);

/* The numeric field name of event id: 0, -ENOENT (no such event or field),
 * or -EINVAL (not a number: an array, a string). */
int tracedata__field(struct tracedata *td, uint64_t id, const char *name, struct td_field *f);

/* The string field name of event id (__data_loc char[], as a uprobe's
 * ":string" fetch makes): 0, -ENOENT, or -EINVAL (not such a string). */
int tracedata__string_field(struct tracedata *td, uint64_t id, const char *name,
                            struct td_field *f);

/* The string f locates in raw[0..size), without its terminator, into
 * *s, *len (not NUL-terminated): 0, or -EINVAL when it lies outside. */
int td_field__read_string(const struct td_field *f, const void *raw, size_t size,
                          const char **s, size_t *len);

/* The i-th field of event id: 0, or -ENOENT past the last. */
int tracedata__field_info(struct tracedata *td, uint64_t id, size_t i, struct td_field_info *fi);

/* Reads f from raw[0..size), sign-extended: 0, or -EINVAL when the field
 * lies outside the data. */
int td_field__read(const struct td_field *f, const void *raw, size_t size, uint64_t *val);

#endif
