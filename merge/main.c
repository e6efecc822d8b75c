/* main.c - pymerge's command line: which input, which writer, and the
 * exit status (decided here only).  Inputs load in input.c, formats are in
 * writer.c's table, comparisons in diff.c, sums of profiles in merge.c. */
#include "diff.h"
#include "events.h"
#include "input.h"
#include "merge.h"
#include "modes.h"
#include "util.h"
#include "writer.h"

#include <errno.h>
#include <getopt.h>
#include <regex.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: pymerge [options] [FILE]\n"
    "       pymerge diff [options] BASE NEW\n"
    "       pymerge merge [options] [--label KEY=VALUE] FILE ... -o OUT\n"
    "\n"
    "Fold a perf.data recording (default ./perf.data; - reads standard input,\n"
    "e.g. perf record -g -o - ... | pymerge -) into one line per distinct stack,\n"
    "root first, with its weight: the format flamegraph.pl, speedscope and\n"
    "inferno read.  Python frames come from perf maps (/tmp/perf-PID.map) written\n"
    "by pyperfmap or python3.12 -X perf.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE     write to FILE instead of standard output\n"
    "                          pymerge -o out.folded perf.data\n"
    "  --view VIEW           mixed (default): Python frames as 'qualname (file.py)',\n"
    "                          interpreter plumbing between them removed, C and\n"
    "                          kernel frames kept where they are called;\n"
    "                        native: every frame as perf names it, the same output\n"
    "                          as perf script | stackcollapse-perf.pl;\n"
    "                        python: Python frames only, innermost native frame as leaf\n"
    "                          pymerge --view python perf.data | flamegraph.pl > py.svg\n"
    "  --no-native-leaf      python view: drop the native leaf frame too\n"
    "                          pymerge --view python --no-native-leaf perf.data\n"
    "  --pid                 root frame comm-PID instead of comm\n"
    "                          pymerge --pid perf.data\n"
    "  --tid                 root frame comm-PID/TID\n"
    "                          pymerge --tid perf.data\n"
    "  --no-kernel           leave out kernel frames\n"
    "                          pymerge --no-kernel perf.data\n"
    "  --no-stitch           leave DWARF stacks that the stack copy cut off\n"
    "                          [truncated]; by default each is completed from another\n"
    "                          sample of its thread in the same call of a pyperfmap\n"
    "                          trampoline, when there is one\n"
    "                          pymerge --no-stitch perf.data\n"
    "  --dwarf-copy BYTES    unwind only the first BYTES of each DWARF sample's stack\n"
    "                          copy: what a recording with a smaller copy (perf's\n"
    "                          --call-graph dwarf,BYTES) would give, on the same samples\n"
    "                          pymerge -v --dwarf-copy 16384 perf.data\n"
    "  --annotate            append _[k] to kernel frames and _[j] to Python/JIT\n"
    "                          frames, which flamegraph.pl colours\n"
    "                          pymerge --annotate perf.data | flamegraph.pl --color=java\n"
    "  --mode M              what the recording measures (default: told by its events,\n"
    "                          as pyperf-record --mode records them):\n"
    "                        cpu: samples of one event (cpu-ns for cpu-clock);\n"
    "                        offcpu: sched:sched_switch, each stack weighted by how\n"
    "                          long its thread then stayed off the CPU (offcpu-ns),\n"
    "                          leaf [off-cpu: S] (sleeping), D (disk), R (preempted);\n"
    "                        wall: cpu-clock samples and off-CPU time together\n"
    "                          (wall-ns; also cpu-ns, offcpu-ns);\n"
    "                        syscalls: raw_syscalls:sys_enter/sys_exit paired, leaf\n"
    "                          [syscall NAME]; count, or --weight latency-ns\n"
    "                        calls: pyperfmap's function__entry/return probes\n"
    "                          (pyperf-record --mode calls): every call a span;\n"
    "                          wall-ns (time at each stack), count, latency-ns\n"
    "                        alloc: allocations sampled by bytes (pyperf-record --mode\n"
    "                          alloc), each weighted by what it stands for, or every\n"
    "                          call of malloc, calloc... and mmap (--exact): bytes\n"
    "                          asked for, or count\n"
    "                        leaks: allocations paired with their frees: what is still\n"
    "                          live at the end of each process's own code (--at;\n"
    "                          live-bytes; count, bytes and objects allocated);\n"
    "                          --format table: live bytes over time, top stacks;\n"
    "                          --format growth: the same as an SVG plot\n"
    "                          pymerge --mode offcpu --tid rec/perf.data\n"
    "  --only REGEX          calls: keep the Python calls whose name or file matches\n"
    "                          (extended regex); the others' time is their caller's\n"
    "                          pymerge --only 'app/|^handle' --format trace rec/perf.data\n"
    "  --inside REGEX        calls: keep only the calls made inside a call that\n"
    "                          matches (that call included)\n"
    "                          pymerge --inside '^clone ' --format trace rec/perf.data\n"
    "  --at end|peak|SECONDS leaks: count live bytes at the end of the program's own\n"
    "                          code, before finalization frees its globals (default;\n"
    "                          the end of the recording for a process that never got\n"
    "                          there), at the peak of live bytes, or SECONDS after the\n"
    "                          first event; the growth table and plot end there too\n"
    "  --event NAME          fold the samples of event NAME, in the cpu mode (default:\n"
    "                          the event of the first sample)\n"
    "                          pymerge --event task-clock perf.data\n"
    "  --weight W            which value weighs the stacks (default: the mode's own;\n"
    "                          period, i.e. cpu-ns for cpu-clock, as\n"
    "                          stackcollapse-perf.pl sums it): samples (or count),\n"
    "                          period, cpu-ns, offcpu-ns, wall-ns, latency-ns, or a\n"
    "                          numeric field of the --event tracepoint\n"
    "                          pymerge --weight samples perf.data\n"
    "                          pymerge --event sched:sched_switch --weight prev_prio perf.data\n"
    "  --kallsyms FILE       kernel symbols from FILE, a copy of /proc/kallsyms\n"
    "                          saved when recording\n"
    "                          pymerge --kallsyms kallsyms.txt perf.data\n"
    "  --map-dir DIR         look for perf-PID.map files in DIR (after the\n"
    "                          directory of FILE, before /tmp)\n"
    "                          pymerge --map-dir saved-maps perf.data\n"
    "  --format F            folded (default): one line per stack;\n"
    "                        svg: an interactive flame graph (hover, click to zoom,\n"
    "                          search), Python green, native red/yellow, kernel orange;\n"
    "                        speedscope: a file for https://www.speedscope.app, one\n"
    "                          profile per thread;\n"
    "                        pprof: gzip'd profile.proto for go tool pprof,\n"
    "                          Pyroscope, Parca, Perfetto;\n"
    "                        trace: Chrome trace-event JSON (Perfetto,\n"
    "                          chrome://tracing): each call, system call or wait\n"
    "                          of a recording as a slice on its thread's track;\n"
    "                        table: functions, biggest total first: count, self\n"
    "                          and total of the weight (--top N rows, default 20)\n"
    "                        growth: a leaks recording's live bytes over time, a\n"
    "                          line per stack (the top 8 at the end), as SVG\n"
    "                          pymerge --format svg -o flame.svg perf.data\n"
    "  --interval S          live: seconds of samples between two snapshots\n"
    "                          (default 1)\n"
    "                          perf record -g -o - ... | pymerge --format live --interval 0.5 -\n"
  "  --input KIND          perf (default): FILE is a perf.data recording;\n"
    "                        folded: FILE holds folded stacks (from pymerge or any\n"
    "                          stackcollapse tool), to draw or convert\n"
    "                          pymerge --input folded --format svg x.folded > x.svg\n"
    "                          (--weight NAME says what its numbers are: wall-ns...)\n"
    "                        pprof: FILE is a pprof profile (gzip'd or not), from\n"
    "                          pymerge, Go's runtime/pprof, Pyroscope...\n"
    "                          pymerge --input pprof --format svg cpu.pb.gz > x.svg\n"
    "  --title TEXT          svg: the title (default \"Flame Graph\")\n"
    "                          pymerge --format svg --title 'checkout service' perf.data\n"
    "  --width PX            svg: the width in pixels (default 1200)\n"
    "                          pymerge --format svg --width 1800 perf.data\n"
    "  --inverted            svg: an icicle graph, root at the top\n"
    "                          pymerge --format svg --inverted perf.data\n"
    "  --events              list the recording's events: samples, lost records, and\n"
    "                          each tracepoint's fields (for --weight)\n"
    "                          pymerge --events rec/perf.data\n"
    "  -v, --verbose         a summary on stderr: samples, lost, % unknown frames,\n"
    "                          processes\n"
    "                          pymerge -v perf.data > /dev/null\n"
    "  -h, --help            this text\n"
    "\n"
    "diff: compare two profiles, each a recording, a pprof file (gzip'd) or a\n"
    "folded file, as shares of\n"
    "their own totals.  Options: --format svg (default: a differential flame\n"
    "graph of NEW, red where a frame's share grew, blue where it shrank) or table\n"
    "(the functions whose self or total share changed most), -o FILE, --top N\n"
    "(table rows, default 20), --fail-above PCT (exit 3 when a function's self or\n"
    "total share grew by more than PCT points: a CI gate), --title, --view,\n"
    "--weight, --no-kernel, --kallsyms, --map-dir as above.\n"
    "    pymerge diff --format table --fail-above 5 base.folded perf.data\n"
    "\n"
    "merge: sum many profiles (recordings, folded files, pprof files) into one.\n"
    "--label KEY=VALUE tags the FILE after it (default input=FILE): pprof\n"
    "output keeps it as a sample label; --label-frames also puts [KEY=VALUE] under\n"
    "each root frame (folded, svg).  The format comes from --format or -o's\n"
    "extension (.folded/.txt, .svg, .pb.gz/.pprof; default folded); the value\n"
    "types are the first input's (--weight W: only W, which every input must have).\n"
    "    pymerge merge --label host=a a/perf.data --label host=b b.pb.gz -o all.pb.gz\n"
    "\n"
    "Exit status: 0 done (also for a truncated file, with a warning), 1 bad usage,\n"
    "2 unreadable or corrupt input, or no stacks to draw (nothing is written, in\n"
    "any format), 3 diff --fail-above exceeded.\n";

enum { O_EVENTS = 254, O_MODE = 255, O_VIEW = 256, O_NO_LEAF, O_PID, O_TID, O_NO_KERNEL, O_ANNOTATE, O_EVENT,
       O_WEIGHT, O_KALLSYMS, O_MAP_DIR, O_FORMAT, O_INPUT, O_TITLE, O_WIDTH, O_INVERTED,
       O_TOP, O_FAIL_ABOVE, O_ONLY, O_INSIDE, O_NO_STITCH, O_DWARF_COPY,
       O_LABEL, O_LABEL_FRAMES, O_AT, O_INTERVAL };

struct cli {
    struct pipeline_opts o;
    struct write_opts w;
    const struct writer *writer;    /* NULL for diff's table */
    enum input_kind input;
    const char *output;
    size_t top;
    double fail_above;   /* < 0: no gate */
};

static FILE *open_output(const char *path)
{
    FILE *f = path ? fopen(path, "w") : stdout;
    if (!f)
        fprintf(stderr, "pymerge: %s: %s\n", path, strerror(errno));
    return f;
}

/* Closes the output, standard output too: a full disk or a closed pipe is
 * an error like any other.  ret: the writer's result. */
static int close_output(FILE *f, const char *path, int ret)
{
    int bad = ret == -EIO || ferror(f);
    bad |= fclose(f) != 0;
    if (bad) {
        fprintf(stderr, "pymerge: %s: write error: %s\n", path ? path : "<stdout>",
                strerror(errno ? errno : EIO));
        return 2;
    }
    return ret < 0 ? 2 : 0;
}

/* A writer's result, said in one line when the profile had nothing to
 * draw (name: the input it came from). */
static int no_stacks(int ret, const char *name)
{
    if (ret == -ENODATA)
        fprintf(stderr, "pymerge: %s: no stacks to draw\n", name);
    return ret;
}

/* Whether p is one that no format writes (writer__has_stacks), said in one
 * line before any output is opened. */
static int empty(const struct profile *p, const char *name)
{
    return !writer__has_stacks(p) && no_stacks(-ENODATA, name);
}

/* Loads both profiles, writes the table or the differential graph, and
 * applies the --fail-above gate. */
static int run_diff(struct cli *c, const char *base_path, const char *new_path)
{
    struct profile *base, *cur;
    if (input__load(&base, base_path, c->input, &c->o) < 0)
        return 2;
    if (input__load(&cur, new_path, c->input, &c->o) < 0) {
        profile__delete(base);
        return 2;
    }
    if (empty(base, base_path) || empty(cur, new_path)) {
        profile__delete(base);
        profile__delete(cur);
        return 2;
    }
    size_t n;
    struct diff_row *rows = diff__rows(base, cur, &n);
    FILE *out = open_output(c->output);
    int ret = 2;
    if (out) {
        errno = 0;
        if (!c->writer) {
            ret = diff__write_table(out, rows, n, c->top);
        } else {
            c->w.svg.base = base;
            if (!c->w.svg.title)
                c->w.svg.title = "Differential Flame Graph";
            ret = no_stacks(out_svg__write(out, cur, &c->w.svg), new_path);
        }
        ret = close_output(out, c->output, ret);
    }
    for (size_t i = 0; ret == 0 && c->fail_above >= 0 && i < n; i++) {
        double grew_self = rows[i].self[1] - rows[i].self[0];
        double grew_total = rows[i].total[1] - rows[i].total[0];
        double grew = grew_self > grew_total ? grew_self : grew_total;
        if (grew > c->fail_above) {
            fprintf(stderr, "pymerge: diff: %s grew by %.2f points of the total (limit %.2f)\n",
                    rows[i].name, grew, c->fail_above);
            ret = 3;
        }
    }
    diff__free_rows(rows, n);
    profile__delete(base);
    profile__delete(cur);
    return ret;
}

/* One input, one writer. */
static int run_convert(struct cli *c, const char *path)
{
    struct profile *p;
    c->o.keep_time = c->writer->keep_time;
    if (input__load(&p, path, c->input, &c->o) < 0)
        return 2;
    FILE *out = empty(p, path) ? NULL : open_output(c->output);
    if (!out) {
        profile__delete(p);
        return 2;
    }
    c->w.name = path;
    errno = 0;
    int ret = no_stacks(c->writer->write(out, p, &c->w), path);
    profile__delete(p);
    return close_output(out, c->output, ret);
}

/* Many inputs summed, one writer. */
static int run_merge(struct cli *c, const struct merge_input *in, size_t n, int label_frames)
{
    struct merge_opts mo = {c->input, &c->o, label_frames};
    struct profile *p;
    if (merge__run(&p, in, n, &mo) < 0)
        return 2;
    FILE *out = empty(p, "merge") ? NULL : open_output(c->output);
    if (!out) {
        profile__delete(p);
        return 2;
    }
    c->w.name = "merged";
    errno = 0;
    int ret = no_stacks(c->writer->write(out, p, &c->w), "merge");
    profile__delete(p);
    return close_output(out, c->output, ret);
}

/* The writer -o's name asks for: merge's default when no --format is given. */
static const struct writer *writer_for(const char *path)
{
    static const char *const ext[][2] = {
        {".pb.gz", "pprof"}, {".pprof", "pprof"}, {".pb", "pprof"}, {".svg", "svg"},
        {".folded", "folded"}, {".txt", "folded"},
    };
    size_t n = path ? strlen(path) : 0;
    for (size_t i = 0; i < sizeof(ext) / sizeof(*ext); i++) {
        size_t e = strlen(ext[i][0]);
        if (n > e && !strcmp(path + n - e, ext[i][0]))
            return writer__find(ext[i][1]);
    }
    return writer__find("folded");
}

/* --label KEY=VALUE: a key and a value, neither with ',' (the tag list's
 * separator), ';' (folded's, for --label-frames) nor a second '='. */
static int good_label(const char *s)
{
    const char *eq = strchr(s, '=');
    return eq && eq > s && eq[1] && !strchr(eq + 1, '=') && !strchr(s, ',') && !strchr(s, ';');
}

/* --at end|peak|SECONDS (leaks): when live bytes are counted. */
static int parse_at(const char *s, struct pipeline_opts *o)
{
    char *end;
    if (!strcmp(s, "end") || !strcmp(s, "peak")) {
        o->at = *s == 'e' ? AT_END : AT_PEAK;
        return 0;
    }
    errno = 0;
    double sec = strtod(s, &end);
    if (end == s || *end || errno || !(sec >= 0) || sec > 1e9) {
        fprintf(stderr, "pymerge: --at %s: give end, peak or a number of seconds from the"
                " start of the recording (0 or more)\n", s);
        return -EINVAL;
    }
    o->at = AT_SECONDS;
    o->at_ns = (uint64_t)(sec * 1e9);
    return 0;
}

static void out_of_memory(void)
{
    fputs("pymerge: out of memory\n", stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    util__on_oom(out_of_memory);
    int is_diff = argc > 1 && !strcmp(argv[1], "diff");
    int is_merge = argc > 1 && !strcmp(argv[1], "merge");
    if (is_diff || is_merge)
        argc--, argv++;
    static const struct option longs[] = {
        {"output", required_argument, NULL, 'o'},
        {"view", required_argument, NULL, O_VIEW},
        {"mode", required_argument, NULL, O_MODE},
        {"at", required_argument, NULL, O_AT},
        {"events", no_argument, NULL, O_EVENTS},
        {"no-native-leaf", no_argument, NULL, O_NO_LEAF},
        {"pid", no_argument, NULL, O_PID},
        {"tid", no_argument, NULL, O_TID},
        {"no-kernel", no_argument, NULL, O_NO_KERNEL},
        {"no-stitch", no_argument, NULL, O_NO_STITCH},
        {"dwarf-copy", required_argument, NULL, O_DWARF_COPY},
        {"annotate", no_argument, NULL, O_ANNOTATE},
        {"event", required_argument, NULL, O_EVENT},
        {"weight", required_argument, NULL, O_WEIGHT},
        {"kallsyms", required_argument, NULL, O_KALLSYMS},
        {"map-dir", required_argument, NULL, O_MAP_DIR},
        {"format", required_argument, NULL, O_FORMAT},
        {"input", required_argument, NULL, O_INPUT},
        {"title", required_argument, NULL, O_TITLE},
        {"width", required_argument, NULL, O_WIDTH},
        {"inverted", no_argument, NULL, O_INVERTED},
        {"top", required_argument, NULL, O_TOP},
        {"fail-above", required_argument, NULL, O_FAIL_ABOVE},
        {"only", required_argument, NULL, O_ONLY},
        {"inside", required_argument, NULL, O_INSIDE},
        {"label", required_argument, NULL, O_LABEL},
        {"label-frames", no_argument, NULL, O_LABEL_FRAMES},
        {"interval", required_argument, NULL, O_INTERVAL},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct cli cli = {
        .o = {.view = {VIEW_MIXED, 1}, .root = ROOT_COMM},
        .writer = writer__find(is_diff ? "svg" : "folded"),
        .input = is_diff || is_merge ? INPUT_AUTO : INPUT_PERF,
        .top = 20,
        .fail_above = -1,
        .w = {.svg = {.minwidth = 0.1}},
    };
    struct pipeline_opts *o = &cli.o;   /* the options shared with the pipeline */
    char *end;
    int c, list_events = 0, label_frames = 0, format_set = 0;
    double interval = 1;
    regex_t only, inside;
    /* merge: inputs in order, each with the --label before it */
    struct merge_input *in = is_merge ? xcalloc((size_t)argc, sizeof(*in)) : NULL;
    size_t n_in = 0;
    const char *label = NULL;

    /* "-" first: merge's inputs come back in order, as option 1 */
    while ((c = getopt_long(argc, argv, is_merge ? "-o:vh" : "o:vh", longs, NULL)) != -1) {
        switch (c) {
        case 1:
            in[n_in++] = (struct merge_input){optarg, label};
            label = NULL;
            break;
        case O_LABEL:
            if (!is_merge || label || !good_label(optarg)) goto bad;
            label = optarg;
            break;
        case O_LABEL_FRAMES:
            if (!is_merge) goto bad;
            label_frames = 1;
            break;
        case 'o': cli.output = optarg; break;
        case 'v': o->verbose = 1; break;
        case 'h': fputs(usage, stdout); free(in); return 0;
        case O_VIEW:
            if (!strcmp(optarg, "native")) o->view.view = VIEW_NATIVE;
            else if (!strcmp(optarg, "mixed")) o->view.view = VIEW_MIXED;
            else if (!strcmp(optarg, "python")) o->view.view = VIEW_PYTHON;
            else goto bad;
            break;
        case O_EVENTS: list_events = 1; break;
        case O_MODE:
            if (!strcmp(optarg, "cpu")) o->mode = MODE_CPU;
            else if (!strcmp(optarg, "offcpu")) o->mode = MODE_OFFCPU;
            else if (!strcmp(optarg, "wall")) o->mode = MODE_WALL;
            else if (!strcmp(optarg, "syscalls")) o->mode = MODE_SYSCALLS;
            else if (!strcmp(optarg, "calls")) o->mode = MODE_CALLS;
            else if (!strcmp(optarg, "alloc")) o->mode = MODE_ALLOC;
            else if (!strcmp(optarg, "leaks")) o->mode = MODE_LEAKS;
            else goto bad;
            break;
        case O_NO_LEAF: o->view.native_leaf = 0; break;
        case O_PID: if (o->root != ROOT_TID) o->root = ROOT_PID; break;
        case O_TID: o->root = ROOT_TID; break;
        case O_NO_KERNEL: o->no_kernel = 1; break;
        case O_NO_STITCH: o->no_stitch = 1; break;
        case O_ANNOTATE: cli.w.annotate = 1; break;
        case O_EVENT: o->event = optarg; break;
        case O_WEIGHT: o->weight = optarg; break;
        case O_AT:
            if (parse_at(optarg, o) < 0)
                goto bad;
            break;
        case O_KALLSYMS: o->kallsyms = optarg; break;
        case O_MAP_DIR: o->map_dir = optarg; break;
        case O_FORMAT:
            format_set = 1;
            if (is_diff && !strcmp(optarg, "table")) cli.writer = NULL;
            else if (is_diff && strcmp(optarg, "svg")) goto bad;
            else if (!(cli.writer = writer__find(optarg))) goto bad;
            break;
        case O_INPUT:
            if (!strcmp(optarg, "perf")) cli.input = INPUT_PERF;
            else if (!strcmp(optarg, "folded")) cli.input = INPUT_FOLDED;
            else if (!strcmp(optarg, "pprof")) cli.input = INPUT_PPROF;
            else goto bad;
            break;
        case O_TITLE: cli.w.svg.title = optarg; break;
        case O_WIDTH:
            cli.w.svg.width = (int)strtol(optarg, &end, 10);
            if (*end || cli.w.svg.width < 100 || cli.w.svg.width > 100000)
                goto bad;
            break;
        case O_INVERTED: cli.w.svg.inverted = 1; break;
        case O_DWARF_COPY:
            o->dwarf_copy = strtoull(optarg, &end, 10);
            if (*end || *optarg == '-' || o->dwarf_copy == 0)
                goto bad;
            break;
        case O_TOP:
            cli.top = (size_t)strtoul(optarg, &end, 10);
            if (*end || !*optarg)
                goto bad;
            break;
        case O_INTERVAL:
            interval = strtod(optarg, &end);
            if (*end || !*optarg || !(interval >= 0.01 && interval <= 3600))
                goto bad;
            break;
        case O_FAIL_ABOVE:
            cli.fail_above = strtod(optarg, &end);
            if (*end || !*optarg || cli.fail_above < 0)
                goto bad;
            break;
        case O_ONLY:
        case O_INSIDE: {
            regex_t *re = c == O_ONLY ? &only : &inside;
            const regex_t **slot = c == O_ONLY ? &o->filter.only : &o->filter.inside;
            if (*slot || regcomp(re, optarg, REG_EXTENDED | REG_NOSUB) != 0) {
                fprintf(stderr, "pymerge: %s: not an extended regular expression (or given twice)\n",
                        optarg);
                free(in);
                return 1;
            }
            *slot = re;
            break;
        }
        default: goto bad;
        }
    }
    cli.w.top = cli.top;
    /* A closed pipe is a write error to report, not a silent death. */
    signal(SIGPIPE, SIG_IGN);
    if (is_merge) {
        if (!format_set)
            cli.writer = writer_for(cli.output);
        if (n_in == 0 || label || !cli.writer || cli.writer->keep_time)
            goto bad;       /* merge keeps no time order: no trace, no speedscope */
        int ret = run_merge(&cli, in, n_in, label_frames);
        free(in);
        return ret;
    }
    free(in);
    in = NULL;
    if (is_diff) {
        if (argc - optind != 2)
            goto bad;
        return run_diff(&cli, argv[optind], argv[optind + 1]);
    }
    if (argc - optind > 1)
        goto bad;
    const char *path = optind < argc ? argv[optind] : "perf.data";
    if (cli.writer == writer__find("live")) {
        if (cli.output || list_events)
            goto bad;       /* its snapshots go to standard output as they come */
        /* every thread apart, every view of each stack (live.h) */
        o->root = ROOT_TID;
        o->view.view = VIEW_MIXED;
        o->live = cli.w.live = live__new(stdout, (uint64_t)(interval * 1e9));
        int ret = run_convert(&cli, path);
        live__delete(o->live);
        return ret;
    }
    if (list_events) {
        FILE *out = open_output(cli.output);
        if (!out)
            return 2;
        errno = 0;
        int ret = events__list(path, out);
        return ret == -EINVAL ? (fclose(out), 2) : close_output(out, cli.output, ret);
    }
    return run_convert(&cli, path);
bad:
    free(in);
    fputs("pymerge: bad usage; see pymerge --help\n", stderr);
    return 1;
}
