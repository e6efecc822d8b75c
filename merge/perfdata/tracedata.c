/*
 * tracedata.c - the TRACING_DATA section, framed as perf writes it
 * (tools/perf/util/trace-event-info.c), each event format handed to
 * libtraceevent:
 *
 *   "\027\010\104tracing"  version string  endianness u8  long size u8
 *   page size u32  "header_page\0" size u64 data  "header_event\0" size u64 data
 *   ftrace formats: count u32, each size u64 data
 *   event formats:  systems u32, each name string, count u32, each size u64 data
 *   kallsyms: size u32 data   printk: size u32 data   [0.6+] cmdlines: size u64 data
 *
 * Only what the fields need is read: everything up to the event formats.
 */
#include "tracedata.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <traceevent/event-parse.h>

struct tracedata {
    struct tep_handle *tep;
    int big_endian;
};

struct cur {
    const u8 *p, *end;
    int big_endian;
};

static int need(struct cur *c, size_t n)
{
    return (size_t)(c->end - c->p) >= n;
}

/* The unsigned integer of size bytes (at most 8) at p, in either byte
 * order, at any alignment. */
static u64 uint_at(const u8 *p, size_t size, int big_endian)
{
    u64 v = 0;
    for (size_t i = 0; i < size; i++)
        v |= (u64)p[big_endian ? i : size - 1 - i] << (8 * (size - 1 - i));
    return v;
}

/* An unsigned integer of size bytes (4 or 8) in the file's byte order. */
static int get_uint(struct cur *c, size_t size, u64 *v)
{
    if (!need(c, size))
        return -EINVAL;
    *v = uint_at(c->p, size, c->big_endian);
    c->p += size;
    return 0;
}

/* A NUL-terminated string at the cursor, or NULL. */
static const char *get_str(struct cur *c)
{
    const u8 *nul = memchr(c->p, 0, (size_t)(c->end - c->p));
    if (!nul)
        return NULL;
    const char *s = (const char *)c->p;
    c->p = nul + 1;
    return s;
}

/* A u64-sized block: *p and *n, or -EINVAL when it overruns. */
static int get_block(struct cur *c, const u8 **p, u64 *n)
{
    if (get_uint(c, 8, n) < 0 || !need(c, 0) || *n > (u64)(c->end - c->p))
        return -EINVAL;
    *p = c->p;
    c->p += *n;
    return 0;
}

/* Skips the literal s at *p: 1, or 0 when *p does not start with it. */
static int lit(const char **p, const char *end, const char *s)
{
    size_t n = strlen(s);
    if ((size_t)(end - *p) < n || memcmp(*p, s, n) != 0)
        return 0;
    *p += n;
    return 1;
}

/* Skips a run of bytes of set at *p, then the terminator t: 1, or 0 when
 * the run is empty or not followed by t. */
static int run(const char **p, const char *end, const char *set, char t)
{
    const char *q = *p;
    while (q < end && *q && strchr(set, *q))
        q++;
    if (q == *p || q == end || *q != t)
        return 0;
    *p = q + 1;
    return 1;
}

#define DIGITS "0123456789"
#define WORD "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_" DIGITS

/*
 * Whether an event format, up to its print format, has the shape the
 * kernel writes:
 *   name: NAME\nID: N\nformat:\n
 *   \tfield:DECL;\toffset:N;\tsize:N;\tsigned:N;\n  (or an empty line), ...
 * libtraceevent 1.7 trusts its input (garbage in an array size made it
 * strcmp NULL), so it only ever sees this.  DECL keeps to the characters
 * of C declarations: words, blanks, '*', '[', ']' and sizeof's '(' ')'.
 */
static int well_formed(const char *p, const char *end)
{
    if (!lit(&p, end, "name: ") || !run(&p, end, WORD "-.", '\n') || !lit(&p, end, "ID: ") ||
        !run(&p, end, DIGITS, '\n') || !lit(&p, end, "format:\n"))
        return 0;
    while (p < end) {
        if (lit(&p, end, "\n"))
            continue;
        if (!lit(&p, end, "\tfield:") || !run(&p, end, WORD " *[]()", ';') ||
            !lit(&p, end, "\toffset:") || !run(&p, end, DIGITS, ';') ||
            !lit(&p, end, "\tsize:") || !run(&p, end, DIGITS, ';') ||
            !lit(&p, end, "\tsigned:") || !run(&p, end, DIGITS, ';') || !lit(&p, end, "\n"))
            return 0;
    }
    return 1;
}

static int parse(struct tracedata *td, const u8 *buf, size_t size)
{
    static const char magic[] = "\027\010\104tracing";
    struct cur c = {buf, buf + size, 0};
    const u8 *p;
    u64 n;
    u64 count, page_size;

    if (!need(&c, 10) || memcmp(c.p, magic, 10) != 0)
        return -EINVAL;
    c.p += 10;
    if (!get_str(&c) || !need(&c, 2))       /* version */
        return -EINVAL;
    td->big_endian = c.big_endian = c.p[0] != 0;
    int long_size = c.p[1];
    c.p += 2;
    if ((long_size != 4 && long_size != 8) || get_uint(&c, 4, &page_size) < 0)
        return -EINVAL;
    tep_set_file_bigendian(td->tep, c.big_endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
    tep_set_long_size(td->tep, long_size);
    tep_set_page_size(td->tep, (int)page_size);
    if (!need(&c, 12) || memcmp(c.p, "header_page", 12) != 0)
        return -EINVAL;
    c.p += 12;
    if (get_block(&c, &p, &n) < 0)
        return -EINVAL;
    if (!need(&c, 13) || memcmp(c.p, "header_event", 13) != 0)
        return -EINVAL;
    c.p += 13;
    if (get_block(&c, &p, &n) < 0 || get_uint(&c, 4, &count) < 0)
        return -EINVAL;
    for (u64 i = 0; i < count; i++)         /* ftrace's own events: not sampled */
        if (get_block(&c, &p, &n) < 0)
            return -EINVAL;
    u64 systems;
    if (get_uint(&c, 4, &systems) < 0)
        return -EINVAL;
    for (u64 s = 0; s < systems; s++) {
        const char *sys = get_str(&c);
        if (!sys || get_uint(&c, 4, &count) < 0)
            return -EINVAL;
        for (u64 i = 0; i < count; i++) {
            if (get_block(&c, &p, &n) < 0)
                return -EINVAL;
            /* Only the fields are needed: the print format, the richest
             * grammar and where libtraceevent 1.7 dereferences NULL on a
             * corrupt one (REC->prev_st!te), is cut off.  The event then
             * counts as failed in libtraceevent, its fields intact.  A
             * malformed format leaves that one event without fields; the
             * others still work. */
            const u8 *print = memmem(p, (size_t)n, "\nprint fmt:", 11);
            size_t len = print ? (size_t)(print - p) + 1 : (size_t)n;
            if (well_formed((const char *)p, (const char *)p + len))
                tep_parse_event(td->tep, (const char *)p, len, sys);
        }
    }
    return 0;
}

struct tracedata *tracedata__new(const void *buf, size_t size)
{
    struct tracedata *td = xcalloc(1, sizeof(*td));
    if (!(td->tep = tep_alloc())) {
        free(td);
        errno = ENOMEM;
        return NULL;
    }
    if (parse(td, buf, size) < 0) {
        tracedata__delete(td);
        errno = EINVAL;
        return NULL;
    }
    /* Each event's "system:name", in its context pointer: no handler is
     * ever registered, which is what that pointer is otherwise for. */
    for (int i = 0; i < tep_get_events_count(td->tep); i++) {
        struct tep_event *ev = tep_get_event(td->tep, i);
        size_t n = strlen(ev->system) + strlen(ev->name) + 2;
        ev->context = xmalloc(n);
        snprintf(ev->context, n, "%s:%s", ev->system, ev->name);
    }
    return td;
}

void tracedata__delete(struct tracedata *td)
{
    if (!td)
        return;
    for (int i = 0; i < tep_get_events_count(td->tep); i++)
        free(tep_get_event(td->tep, i)->context);
    tep_free(td->tep);
    free(td);
}

static struct tep_event *event_of(struct tracedata *td, uint64_t id)
{
    return id <= INT32_MAX ? tep_find_event(td->tep, (int)id) : NULL;
}

const char *tracedata__event_name(struct tracedata *td, uint64_t id)
{
    struct tep_event *ev = event_of(td, id);
    return ev ? ev->context : NULL;
}

static int is_numeric(const struct tep_format_field *f)
{
    return !(f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_STRING | TEP_FIELD_IS_DYNAMIC)) &&
           (f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8);
}

int tracedata__field(struct tracedata *td, uint64_t id, const char *name, struct td_field *out)
{
    struct tep_event *ev = event_of(td, id);
    struct tep_format_field *f = ev ? tep_find_field(ev, name) : NULL;
    if (!f)
        return -ENOENT;
    if (!is_numeric(f) || f->offset < 0)
        return -EINVAL;
    *out = (struct td_field){(u32)f->offset, (u32)f->size, !!(f->flags & TEP_FIELD_IS_SIGNED),
                             td->big_endian};
    return 0;
}

int tracedata__string_field(struct tracedata *td, uint64_t id, const char *name,
                            struct td_field *out)
{
    struct tep_event *ev = event_of(td, id);
    struct tep_format_field *f = ev ? tep_find_field(ev, name) : NULL;
    if (!f)
        return -ENOENT;
    if (!(f->flags & TEP_FIELD_IS_DYNAMIC) || f->size != 4 || f->offset < 0)
        return -EINVAL;
    *out = (struct td_field){(u32)f->offset, 4, 0, td->big_endian};
    return 0;
}

int td_field__read_string(const struct td_field *f, const void *raw, size_t size,
                          const char **s, size_t *len)
{
    u64 loc;
    if (td_field__read(f, raw, size, &loc) < 0)
        return -EINVAL;
    size_t at = loc & 0xffff, n = (loc >> 16) & 0xffff;
    if (at > size || n > size - at)
        return -EINVAL;
    *s = (const char *)raw + at;
    while (n && (*s)[n - 1] == '\0')      /* the kernel counts the terminator */
        n--;
    *len = n;
    return 0;
}

int tracedata__field_info(struct tracedata *td, uint64_t id, size_t i, struct td_field_info *fi)
{
    struct tep_event *ev = event_of(td, id);
    if (!ev)
        return -ENOENT;
    struct tep_format_field *f = ev->format.fields;
    while (f && i--)
        f = f->next;
    if (!f)
        return -ENOENT;
    *fi = (struct td_field_info){f->name, f->type, is_numeric(f)};
    return 0;
}

int td_field__read(const struct td_field *f, const void *raw, size_t size, uint64_t *val)
{
    if (!raw || f->offset > size || f->size > size - f->offset)
        return -EINVAL;
    const u8 *p = (const u8 *)raw + f->offset;
    u64 v = uint_at(p, f->size, f->big_endian);
    if (f->is_signed && f->size < 8 && (v >> (8 * f->size - 1)) & 1)
        v |= ~0ull << (8 * f->size);
    *val = v;
    return 0;
}
