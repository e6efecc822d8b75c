/* perfdata_record.c - decode kernel records (see perfdata_record.h). */
#include "perfdata_record.h"

#include <errno.h>

struct pd_layout pd_record__layout_of(const struct perf_event_attr *a)
{
    struct pd_layout l = {a->sample_type, -1, -1, (int)a->sample_id_all};
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

int pd_record__id(const struct pd_layout *l, const struct pd_raw *rec, u64 *id)
{
    size_t body = rec->size - 8u;
    if (rec->type == PERF_RECORD_SAMPLE) {
        if (l->id_pos < 0 || body < 8u * (size_t)(l->id_pos + 1))
            return 0;
        *id = rd64(rec->p + 8 + 8 * l->id_pos);
        return 1;
    }
    if (!l->sample_id_all || l->is_pos < 0 || body < 8u * (size_t)l->is_pos)
        return 0;
    *id = rd64(rec->p + rec->size - 8 * l->is_pos);
    return 1;
}

/* The sample_id trailer of a non-sample record: its size and time.  tid,
 * if not NULL, gets the trailer's pid and tid (or 0, 0). */
static size_t trailer(const struct pd_layout *l, const struct pd_raw *rec, u64 *time, u32 *tid)
{
    u64 t = l->sample_type;
    size_t n = !!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ID) +
               !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU) +
               !!(t & PERF_SAMPLE_IDENTIFIER);
    *time = 0;
    if (tid)
        tid[0] = tid[1] = 0;
    if (!l->sample_id_all || 8 + 8 * n > rec->size)
        return 0;
    if (tid && (t & PERF_SAMPLE_TID)) {
        tid[0] = rd32(rec->p + rec->size - 8 * n);
        tid[1] = rd32(rec->p + rec->size - 8 * n + 4);
    }
    if (t & PERF_SAMPLE_TIME) {
        size_t after = !!(t & PERF_SAMPLE_ID) + !!(t & PERF_SAMPLE_STREAM_ID) +
                       !!(t & PERF_SAMPLE_CPU) + !!(t & PERF_SAMPLE_IDENTIFIER);
        *time = rd64(rec->p + rec->size - 8 * (after + 1));
    }
    return 8 * n;
}

static u64 sample_time(const struct pd_layout *l, const struct pd_raw *rec)
{
    u64 t = l->sample_type;
    size_t i = !!(t & PERF_SAMPLE_IDENTIFIER) + !!(t & PERF_SAMPLE_IP) + !!(t & PERF_SAMPLE_TID);
    if (!(t & PERF_SAMPLE_TIME) || 8 + 8 * (i + 1) > rec->size)
        return 0;
    return rd64(rec->p + 8 + 8 * i);
}

int pd_record__is_queued(u32 type)
{
    return type == PERF_RECORD_SAMPLE || type == PERF_RECORD_MMAP ||
           type == PERF_RECORD_MMAP2 || type == PERF_RECORD_COMM ||
           type == PERF_RECORD_FORK || type == PERF_RECORD_EXIT ||
           type == PERF_RECORD_SWITCH || type == PERF_RECORD_SWITCH_CPU_WIDE;
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

/* The fixed-size fields, in the order sample_type's bits give them.
 * Without PERF_SAMPLE_PERIOD every sample weighs the fixed period. */
static void take_fixed(struct cur *c, const struct perf_event_attr *at, struct pd_sample *s)
{
    u64 t = at->sample_type;
    s->period = at->freq ? 0 : at->sample_period;
    if (t & PERF_SAMPLE_IDENTIFIER)
        s->id = take64(c);
    if (t & PERF_SAMPLE_IP)
        s->ip = take64(c);
    if (t & PERF_SAMPLE_TID) {
        const u8 *q = take(c, 8);
        if (q) {
            s->pid = rd32(q);
            s->tid = rd32(q + 4);
        }
    }
    if (t & PERF_SAMPLE_TIME)
        s->time = take64(c);
    if (t & PERF_SAMPLE_ADDR)
        take(c, 8);
    if (t & PERF_SAMPLE_ID)
        s->id = take64(c);
    if (t & PERF_SAMPLE_STREAM_ID)
        take(c, 8);
    if (t & PERF_SAMPLE_CPU) {
        const u8 *q = take(c, 8);
        s->cpu = q ? rd32(q) : 0;
    }
    if (t & PERF_SAMPLE_PERIOD)
        s->period = take64(c);
}

/* The part of a sample the cursor is in, while nothing failed: the one
 * that does not fit, when one does not. */
static void enter(const struct cur *c, const char **part, const char *name)
{
    if (!c->bad)
        *part = name;
}

/* The counted lists: read values, callchain, raw data, branch stack. */
static void take_lists(struct cur *c, const struct perf_event_attr *at, struct pd_sample *s,
                       const char **part)
{
    u64 t = at->sample_type;
    if (t & PERF_SAMPLE_READ) {
        enter(c, part, "read values");
        u64 rf = at->read_format;
        u64 per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
        u64 times = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
        u64 nr = 1;
        if (rf & PERF_FORMAT_GROUP)
            nr = take64(c);
        if (nr > 65536)
            c->bad = 1;
        take(c, 8 * (times + nr * per));
    }
    if (t & PERF_SAMPLE_CALLCHAIN) {
        enter(c, part, "callchain");
        s->nr = take64(c);
        if (s->nr > 65536 / 8)
            c->bad = 1;
        s->ips = (const u64 *)take(c, 8 * s->nr);
    }
    if (t & PERF_SAMPLE_RAW) {
        enter(c, part, "raw data");
        const u8 *q = take(c, 4);
        if (q) {
            s->raw_size = rd32(q);
            s->raw = take(c, s->raw_size);
        }
    }
    if (t & PERF_SAMPLE_BRANCH_STACK) {
        enter(c, part, "branch stack");
        u64 nr = take64(c);
        if (at->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
            take(c, 8);
        if (nr > 65536 / 24)
            c->bad = 1;
        take(c, 24 * nr);
    }
}

/* What DWARF unwinding needs: the user registers and stack copy. */
static void take_user(struct cur *c, const struct perf_event_attr *at, struct pd_sample *s,
                      const char **part)
{
    if (at->sample_type & PERF_SAMPLE_REGS_USER) {
        enter(c, part, "user registers");
        s->regs_abi = take64(c);
        if (s->regs_abi) {
            s->regs_mask = at->sample_regs_user;
            s->n_regs = (unsigned)__builtin_popcountll(s->regs_mask);
            s->regs = (const u64 *)take(c, 8ull * s->n_regs);
        }
    }
    if (at->sample_type & PERF_SAMPLE_STACK_USER) {
        enter(c, part, "user stack");
        s->stack_size = take64(c);
        if (s->stack_size) {
            s->stack = take(c, s->stack_size);
            s->stack_dyn_size = take64(c);
            if (s->stack_dyn_size > s->stack_size)
                c->bad = 1;
        }
    }
}

static int parse_sample(const struct pd_attr *a, const struct pd_raw *rec, struct pd_sample *s,
                        const char **part)
{
    struct cur c = {rec->p + 8, rec->p + rec->size, 0};
    memset(s, 0, sizeof(*s));
    s->attr = a;
    *part = "fixed fields";
    take_fixed(&c, &a->attr, s);
    take_lists(&c, &a->attr, s, part);
    take_user(&c, &a->attr, s, part);
    return c.bad ? -EINVAL : 0;
}

u64 pd_record__time(const struct pd_layout *l, const struct pd_raw *rec)
{
    u64 time;
    if (rec->type == PERF_RECORD_SAMPLE)
        return sample_time(l, rec);
    trailer(l, rec, &time, NULL);
    return time;
}

/* Decode a record of one of the queued types (see perfdata_record.h). */
int pd_record__parse(const struct pd_attr *a, const struct pd_layout *l, const struct pd_raw *raw,
                 struct pd_event *ev, const char **part)
{
    struct pd_raw rec = *raw;
    memset(ev, 0, sizeof(*ev));
    ev->misc = rec.misc;
    ev->offset = rec.off;
    if (rec.type == PERF_RECORD_SAMPLE) {
        if (parse_sample(a, &rec, &ev->u.sample, part) < 0)
            return -EINVAL;
        ev->type = PD_SAMPLE;
        ev->time = ev->u.sample.time;
        return 1;
    }
    u32 tid[2];
    size_t tsz = trailer(l, &rec, &ev->time, tid);
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
        /* MMAP reports code, and with perf record -d data too */
        m->prot = rec.misc & PERF_RECORD_MISC_MMAP_DATA ? 1 : 4;   /* PROT_READ, PROT_EXEC */
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
    case PERF_RECORD_SWITCH:
    case PERF_RECORD_SWITCH_CPU_WIDE:
        /* Whose switch it is comes from the sample_id trailer, in both
         * kinds: the task going out, or the one coming in. */
        if (!(l->sample_type & PERF_SAMPLE_TID) || !tsz)
            return 0;
        ev->u.sw = (struct pd_switch){tid[0], tid[1],
                                      !!(rec.misc & PERF_RECORD_MISC_SWITCH_OUT)};
        ev->type = PD_SWITCH;
        return 1;
    }
    return 0;
bad:
    return -EINVAL;
}
