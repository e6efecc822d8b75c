/*
 * perfdata.h - perf.data bytes in, typed records out, in time order.
 *
 * The reader understands file mode and pipe mode, the attr and feature
 * sections (event names, build ids), sample_id_all, compressed records and
 * the FINISHED_ROUND protocol.  It hands out one event at a time in the
 * order perf itself would deliver them; everything pointed to by an event
 * stays valid until the next call to perf_reader__next().
 *
 * Record layouts come from <linux/perf_event.h>; the file framing follows
 * tools/perf/Documentation/perf.data-file-format.txt.
 */
#ifndef PYMERGE_PERFDATA_H
#define PYMERGE_PERFDATA_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

struct pd_attr {
    struct perf_event_attr attr;    /* zero-extended copy */
    char *name;                     /* "cpu-clock", from EVENT_DESC or derived */
    uint64_t *ids;
    size_t n_ids;
    uint64_t lost;                  /* its records lost while recording, as perf
                                     * report counts them */
    uint64_t lost_by[2];            /* by LOST records, by LOST_SAMPLES records */
};

/*
 * One sample.  REGS_USER and STACK_USER are carried for DWARF unwinding:
 * regs[i] is the register whose bit is the i-th set bit of regs_mask;
 * stack[0..stack_dyn_size) are the valid bytes copied from the user stack
 * pointer upwards.
 */
struct pd_sample {
    const struct pd_attr *attr;     /* valid while the event is */
    unsigned attr_idx;              /* stable: index for perf_reader__attr */
    uint64_t ip, time, period, id;
    uint32_t pid, tid, cpu;
    uint64_t nr;                    /* callchain entries, incl. context markers */
    const uint64_t *ips;
    uint64_t regs_abi;              /* PERF_SAMPLE_REGS_ABI_*; 0: no regs */
    uint64_t regs_mask;
    const uint64_t *regs;
    unsigned n_regs;
    const uint8_t *stack;
    uint64_t stack_size, stack_dyn_size;
    const void *raw;                /* PERF_SAMPLE_RAW: a tracepoint's fields */
    uint32_t raw_size;
};

struct pd_mmap {
    uint32_t pid, tid;
    uint64_t start, len, pgoff;
    uint32_t prot, flags;           /* MMAP2 only; MMAP reports PROT_EXEC */
    const char *filename;
    uint8_t build_id[20];
    uint8_t build_id_size;          /* 0: the record carried none */
};

struct pd_comm {
    uint32_t pid, tid;
    const char *comm;
    int exec;                       /* the comm change came from exec() */
};

struct pd_task {                    /* FORK and EXIT */
    uint32_t pid, ppid, tid, ptid;
};

struct pd_switch {                  /* SWITCH and SWITCH_CPU_WIDE (--switch-events) */
    uint32_t pid, tid;              /* the task going out (out) or coming in */
    int out;
};

enum pd_type { PD_SAMPLE = 1, PD_MMAP, PD_COMM, PD_FORK, PD_EXIT, PD_SWITCH };

struct pd_event {
    enum pd_type type;
    uint16_t misc;                  /* header.misc: cpumode and flags */
    uint64_t time;                  /* 0 if the record carries none */
    uint64_t offset;                /* where the record starts in the input */
    union {
        struct pd_sample sample;
        struct pd_mmap mmap;
        struct pd_comm comm;
        struct pd_task task;
        struct pd_switch sw;
    } u;
};

/* One BUILD_ID entry: the build id perf saw for a file at record time. */
struct pd_build_id {
    char *filename;
    uint8_t id[20];
    uint8_t size;
};

struct perf_reader;

/*
 * Open PATH ("-" = standard input) and read its header, attrs and feature
 * sections.  On failure returns NULL with errno set, after printing what is
 * wrong in one line: "pymerge: PATH: offset N: what is wrong" for bad input
 * ("<stdin>" names standard input), "pymerge: PATH: " and the system's
 * error when it cannot be read.
 */
struct perf_reader *perf_reader__open(const char *path);
void perf_reader__delete(struct perf_reader *r);   /* accepts NULL */

/*
 * The next event in delivery order: 1 and *ev filled, 0 at the end of the
 * input, a negative errno on bad input (said as perf_reader__open says it,
 * once; every later call returns the same).  A missing tail is not an
 * error: it returns 0, after a warning, and perf_reader__truncated() says
 * so.
 */
int perf_reader__next(struct perf_reader *r, struct pd_event *ev);
int perf_reader__truncated(const struct perf_reader *r);
/* Pipe mode: perf may still be recording, and its processes running. */
int perf_reader__pipe_mode(const struct perf_reader *r);

size_t perf_reader__n_attrs(const struct perf_reader *r);
const struct pd_attr *perf_reader__attr(const struct perf_reader *r, size_t i);
size_t perf_reader__n_build_ids(const struct perf_reader *r);
const struct pd_build_id *perf_reader__build_id(const struct perf_reader *r, size_t i);

/* Counts for the -v summary. */
uint64_t perf_reader__lost(const struct perf_reader *r);        /* lost records, as perf counts them */
/* The TRACING_DATA section (tracepoint formats, see tracedata.h), or NULL;
 * in a pipe it arrives before the first sample. */
const void *perf_reader__tracing_data(const struct perf_reader *r, size_t *size);
/* Progress: bytes consumed so far and in total (0 when unknown, e.g. a pipe). */
void perf_reader__progress(const struct perf_reader *r, uint64_t *done, uint64_t *total);

#endif
