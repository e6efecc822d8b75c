/* main.c - pymerge's command line: which input, which writer, and the
 * exit status (decided here only).  Inputs load in input.c, formats are in
 * writer.c's table, comparisons in diff.c, sums of profiles in merge.c. */
#include "byspan.h"
#include "contract.h"
#include "diff.h"
#include "events.h"
#include "gate.h"
#include "input.h"
#include "merge.h"
#include "modes.h"
#include "out_spandiff.h"
#include "util.h"
#include "spanrows.h"
#include "writer.h"

#include <errno.h>
#include <getopt.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
    "  --lines               name each Python frame that called another with the line\n"
    "                          of that call, qualname (file.py:LINE) (DWARF recordings\n"
    "                          of pyperfmap; the innermost Python frame keeps no line)\n"
    "                          pymerge --lines perf.data\n"
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
    "                        calls: pyperfmap's call__entry/return probes\n"
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
    "  --no-spans            no [span NAME] frames for pyperfmap.span's spans\n"
    "                          (docs/spans.md); they are at the root of every sample\n"
    "                          taken inside a span, outermost first (python, mixed views)\n"
    "  --span REGEX          keep only the samples inside a span whose name matches\n"
    "                          pymerge --span '^GET /checkout' --format svg rec/perf.data\n"
    "  --slowest P           keep only the samples inside spans slower than the P-th\n"
    "                          percentile of their own name: tail-latency profiles\n"
    "                          pymerge --slowest 90 --span '^GET ' rec/perf.data\n"
    "  --by-span DIR         one profile per span name into DIR, in the --format,\n"
    "                          each file named after its span (CI artifacts)\n"
    "                          pymerge --by-span per-test --format svg rec/perf.data\n"
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
    "                        spans: one row per span name: count, total and mean\n"
    "                          wall time, p50, p90, p99, max, CPU and off-CPU time\n"
    "                          inside\n"
    "                        markdown: the spans as a markdown table (with diff\n"
    "                          --runs: a pull request comment, docs/ci.md)\n"
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
    "diff --runs N BASE_1..BASE_N NEW...: recordings of a suite of spans\n"
    "(pytest --pyperfmap: docs/ci.md), N base runs then the new ones (2 or more\n"
    "a side to test), compared span by span: each span's weight per call in\n"
    "each run, Welch's t-test, Holm's correction over the spans; inside each\n"
    "changed span, the functions that grew.  Exit 3 when a span is slower,\n"
    "significantly and by --min-change PCT percent or more (default 5), at\n"
    "--alpha A (default 0.05).  --normalize divides each run by its speed (the\n"
    "median span's ratio to its base): for shared, noisy machines.  --format\n"
    "table (default) or markdown (a pull request comment; with -o, each changed\n"
    "span's differential flame graph is written beside it).\n"
    "    pymerge diff --runs 5 --normalize base/*/ new/*/\n"
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
    "any format), 3 diff --fail-above exceeded, or diff --runs found a slower span.\n";

/* The commands; an option row names the ones that take it. */
enum cmd { CMD_FOLD = 1, CMD_DIFF = 2, CMD_MERGE = 4, CMD_ANY = 7 };

struct cli {
    enum cmd cmd;
    struct pipeline_opts o;
    struct write_opts w;
    const struct writer *writer;    /* NULL for diff's table */
    enum input_kind input;
    const char *output;
    size_t top;
    int top_set;                    /* diff --runs: grown functions shown, default 3 */
    double fail_above;              /* < 0: no gate */
    double interval;                /* live: seconds between snapshots */
    int list_events, label_frames, format_set, help;
    regex_t only, inside;
    struct merge_input *in;         /* merge: inputs in order, each with its --label */
    size_t n_in;
    const char *label;              /* merge: the --label for the next input */
    const char *by_span;            /* --by-span DIR, or NULL */
    size_t runs;                    /* diff --runs: base runs; 0 for two profiles */
    struct spandiff_opts gate;      /* diff --runs's --alpha, --min-change, --normalize */
    int gate_set;                   /* one of those was given */
};

static FILE *open_output(const char *path)
{
    FILE *f = path ? fopen(path, "w") : stdout;
    if (!f)
        warnx_("%s: %s", path, strerror(errno));
    return f;
}

/* Closes the output, standard output too: a full disk or a closed pipe is
 * an error like any other.  ret: the writer's result. */
static int close_output(FILE *f, const char *path, int ret)
{
    int bad = ret == -EIO || ferror(f);
    bad |= fclose(f) != 0;
    if (bad) {
        warnx_("%s: write error: %s", path ? path : "<stdout>", strerror(errno ? errno : EIO));
        return 2;
    }
    return ret < 0 ? 2 : 0;
}

/* A writer's result, said in one line when the profile had nothing to
 * draw (name: the input it came from). */
static int no_stacks(int ret, const char *name)
{
    if (ret == -ENODATA)
        warnx_("%s: no stacks to draw", name);
    return ret;
}

/* Whether p is one that no format writes (writer__has_stacks), said in one
 * line before any output is opened. */
static int empty(const struct profile *p, const char *name)
{
    return !writer__has_stacks(p) && no_stacks(-ENODATA, name);
}

/* The --fail-above gate: 3 when a function's self or total share grew by
 * more than the limit (the first such function, by change, named), else 0. */
static int gate(const struct diff_row *rows, size_t n, double limit)
{
    for (size_t i = 0; limit >= 0 && i < n; i++) {
        double grew_self = rows[i].self[1] - rows[i].self[0];
        double grew_total = rows[i].total[1] - rows[i].total[0];
        double grew = grew_self > grew_total ? grew_self : grew_total;
        if (grew > limit) {
            warnx_("diff: %s grew by %.2f points of the total (limit %.2f)", rows[i].name, grew,
                   limit);
            return 3;
        }
    }
    return 0;
}

/* Writes the table or the differential graph of base -> cur. */
static int write_diff(struct cli *c, const struct diff_row *rows, size_t n,
                      const struct profile *base, const struct profile *cur, const char *new_path)
{
    FILE *out = open_output(c->output);
    if (!out)
        return 2;
    errno = 0;
    int ret;
    if (!c->writer) {
        ret = diff__write_table(out, rows, n, c->top);
    } else {
        c->w.svg.base = base;
        if (!c->w.svg.title)
            c->w.svg.title = "Differential Flame Graph";
        ret = no_stacks(out_svg__write(out, cur, &c->w.svg), new_path);
    }
    return close_output(out, c->output, ret);
}

/* Loads both profiles, writes the table or the differential graph, and
 * applies the --fail-above gate. */
static int run_diff(struct cli *c, const char *base_path, const char *new_path)
{
    struct profile *base = NULL, *cur = NULL;
    int ret = 2;
    if (input__load(&base, base_path, c->input, &c->o) < 0 ||
        input__load(&cur, new_path, c->input, &c->o) < 0 ||
        empty(base, base_path) || empty(cur, new_path))
        goto out;
    size_t n;
    struct diff_row *rows = diff__rows(base, cur, &n);
    ret = write_diff(c, rows, n, base, cur, new_path);
    if (ret == 0)
        ret = gate(rows, n, c->fail_above);
    diff__free_rows(rows, n);
out:
    profile__delete(base);
    profile__delete(cur);
    return ret;
}

/* The folder a file goes in: "." for a bare name. */
static char *folder_of(const char *path)
{
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return strcpy(dir, ".");
    slash[slash == dir] = '\0';
    return dir;
}

/* The differential flame graph of one changed span, the runs of each
 * side summed, into path. */
static int span_graph(struct cli *c, const struct gate_in *g, const char *name, const char *path)
{
    struct pipeline_opts o = c->o;
    struct merge_input *in = xcalloc(g->runs[0] + g->runs[1], sizeof(*in));
    struct profile *side[2] = {NULL, NULL};
    char title[300];
    int ret = 2;
    o.spans.pattern = byspan__pattern(name);
    for (size_t r = 0; r < g->runs[0] + g->runs[1]; r++)
        in[r].path = g->paths[r];
    struct merge_opts mo = {g->kind, &o, 0};
    if (merge__run(&side[0], in, g->runs[0], &mo) == 0 &&
        merge__run(&side[1], in + g->runs[0], g->runs[1], &mo) == 0) {
        FILE *out = open_output(path);
        struct svg_opts svg = c->w.svg;
        snprintf(title, sizeof title, "%s: base -> new", name);
        svg.title = title;
        svg.base = side[0];
        errno = 0;
        ret = out ? close_output(out, path, out_svg__write(out, side[1], &svg)) : 2;
    }
    profile__delete(side[0]);
    profile__delete(side[1]);
    free((char *)o.spans.pattern);
    free(in);
    return ret;
}

/* diff --runs --format markdown -o REPORT: each changed span's flame
 * graph beside the report, named in the model for its link.  A graph
 * that cannot be drawn (a span without stacks on one side) is left out
 * with one warning: the report and the gate's verdict matter more. */
static void span_graphs(struct cli *c, const struct gate_in *g, struct spandiff *d)
{
    size_t n = 0, failed = 0;
    while (n < d->n && (d->spans[n].verdict == SD_SLOWER || d->spans[n].verdict == SD_FASTER))
        n++;
    const char **names = xcalloc(n + 1, sizeof(*names));
    char *dir = folder_of(c->output);
    const char *first = NULL;
    for (size_t i = 0; i < n; i++)
        names[i] = d->spans[i].name;
    for (size_t i = 0; i < n; i++) {
        char *path = byspan__path(dir, names, i, "svg");
        if (span_graph(c, g, names[i], path) == 0) {
            d->spans[i].graph = xstrdup(path_basename(path));
        } else {
            first = first ? first : names[i];
            failed++;
        }
        free(path);
    }
    if (failed)
        warnx_("%s: no flame graph for %zu changed span(s), %s the first: left out of the report",
               c->output, failed, first);
    free(dir);
    free(names);
}

/* diff --runs N: the report of the span-by-span comparison, then the
 * gate: 3 when a span got slower. */
static int run_runs(struct cli *c, char **paths, int n)
{
    struct gate_in g = {(const char *const *)paths, {c->runs, (size_t)n - c->runs}, c->input, &c->o};
    struct spandiff *d;
    c->w.top = c->top_set ? c->top : 3;
    if (gate__compare(&d, &g, &c->gate) < 0)
        return 2;
    if (!d->n) {
        warnx_("%s: no spans to compare (pyperfmap.span, pytest --pyperfmap: docs/ci.md)", paths[0]);
        spandiff__delete(d);
        return 2;
    }
    if (c->writer && c->output)
        span_graphs(c, &g, d);
    FILE *out = open_output(c->output);
    int ret = 2;
    if (out) {
        errno = 0;
        c->w.spandiff = d;
        ret = close_output(out, c->output, c->writer ? c->writer->write(out, NULL, &c->w)
                                                      : out_spandiff__table(out, d, c->w.top));
    }
    if (ret == 0 && gate__slower(d))
        ret = 3;
    spandiff__delete(d);
    return ret;
}

/* p (from name) through the chosen writer; p is deleted. */
static int write_profile(struct cli *c, struct profile *p, const char *name, const char *shown)
{
    FILE *out = empty(p, name) ? NULL : open_output(c->output);
    if (!out) {
        profile__delete(p);
        return 2;
    }
    c->w.name = shown;
    errno = 0;
    int ret = no_stacks(c->writer->write(out, p, &c->w), name);
    profile__delete(p);
    return close_output(out, c->output, ret);
}

/* One input, one writer. */
static int run_convert(struct cli *c, const char *path)
{
    struct profile *p;
    c->o.keep_time = c->writer->keep_time;
    if (input__load(&p, path, c->input, &c->o) < 0)
        return 2;
    return write_profile(c, p, path, path);
}

/* The names of the spans in path, from one reading: how many (0 after
 * saying there are none, or that path could not be read). */
static size_t span_names(struct cli *c, const char *path, char ***names)
{
    struct profile *p;
    if (input__load(&p, path, c->input, &c->o) < 0)
        return 0;
    const struct span_rows *r = profile__span_rows(p);
    size_t n = r ? r->n : 0;
    *names = xcalloc(n + 1, sizeof(**names));
    for (size_t i = 0; i < n; i++)
        (*names)[i] = xstrdup(r->rows[i].name);
    if (!n)
        warnx_("%s: no spans to write a profile of (pyperfmap.span: docs/spans.md)", path);
    profile__delete(p);
    return n;
}

/* --by-span DIR: one profile per span name, each its own reading; a span
 * with no samples inside has no file. */
static int run_by_span(struct cli *c, const char *path)
{
    char **names = NULL;
    c->o.keep_time = c->writer->keep_time;
    size_t n = span_names(c, path, &names);
    int ret = n ? 0 : 2;
    if (n && mkdir(c->by_span, 0777) < 0 && errno != EEXIST) {
        warnx_("%s: %s", c->by_span, strerror(errno));
        ret = 2;
    }
    for (size_t i = 0; i < n && !ret; i++) {
        struct profile *p;
        char *pattern = byspan__pattern(names[i]);
        c->o.spans.pattern = pattern;
        if (input__load(&p, path, c->input, &c->o) < 0)
            ret = 2;
        else if (!writer__has_stacks(p))
            profile__delete(p);
        else {
            c->output = byspan__path(c->by_span, (const char *const *)names, i, c->writer->name);
            ret = write_profile(c, p, path, names[i]);
            free((char *)c->output);
            c->output = NULL;
        }
        free(pattern);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return ret;
}

/* Many inputs summed, one writer. */
static int run_merge(struct cli *c)
{
    struct merge_opts mo = {c->input, &c->o, c->label_frames};
    struct profile *p;
    if (merge__run(&p, c->in, c->n_in, &mo) < 0)
        return 2;
    return write_profile(c, p, "merge", "merged");
}

/* --format live: snapshots to standard output as the input is read. */
static int run_live(struct cli *c, const char *path)
{
    /* every thread apart, every view of each stack (live.h) */
    c->o.root = ROOT_TID;
    c->o.view.view = VIEW_MIXED;
    c->o.live = c->w.live = live__new(stdout, (uint64_t)(c->interval * 1e9));
    int ret = run_convert(c, path);
    live__delete(c->o.live);
    return ret;
}

/* --events: the recording's events and their fields. */
static int run_events(struct cli *c, const char *path)
{
    FILE *out = open_output(c->output);
    if (!out)
        return 2;
    errno = 0;
    int ret = events__list(path, out);
    if (ret == -EINVAL) {       /* the input's fault, said already: nothing written */
        fclose(out);
        return 2;
    }
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

/* ---- options ------------------------------------------------------------ */

/*
 * One row per option: the commands that take it, what its value may be
 * (NULL: it takes none; for a choice, the choices say it), and what it
 * sets.  set returns 0, or -EINVAL for a value outside what arg says;
 * choice is the value's index in choices (-1 without choices).
 */
struct opt {
    const char *name;
    char letter;                    /* its one-letter form, or 0 */
    unsigned cmds;
    const char *arg;
    const char *const *choices;     /* NULL-terminated */
    int (*set)(struct cli *c, const char *arg, int choice);
};

/* Values parsed whole: *end is the first character not read. */
static int whole(const char *arg, const char *end)
{
    return *arg && !*end;
}

static int set_output(struct cli *c, const char *arg, int k) { (void)k; c->output = arg; return 0; }
static int set_verbose(struct cli *c, const char *arg, int k) { (void)arg, (void)k; c->o.verbose = 1; return 0; }
static int set_help(struct cli *c, const char *arg, int k) { (void)arg, (void)k; c->help = 1; return 0; }
static int set_events(struct cli *c, const char *arg, int k) { (void)arg, (void)k; c->list_events = 1; return 0; }
static int set_no_leaf(struct cli *c, const char *arg, int k) { (void)arg, (void)k; c->o.view.native_leaf = 0; return 0; }
static int set_tid(struct cli *c, const char *arg, int k) { (void)arg, (void)k; c->o.root = ROOT_TID; return 0; }
static int set_no_kernel(struct cli *c, const char *arg, int k) { (void)arg, (void)k; c->o.no_kernel = 1; return 0; }
static int set_no_stitch(struct cli *c, const char *arg, int k) { (void)arg, (void)k; c->o.no_stitch = 1; return 0; }
static int set_lines(struct cli *c, const char *arg, int k) { (void)arg, (void)k; c->o.lines = 1; return 0; }
static int set_annotate(struct cli *c, const char *arg, int k) { (void)arg, (void)k; c->w.annotate = 1; return 0; }
static int set_inverted(struct cli *c, const char *arg, int k) { (void)arg, (void)k; c->w.svg.inverted = 1; return 0; }
static int set_label_frames(struct cli *c, const char *arg, int k) { (void)arg, (void)k; c->label_frames = 1; return 0; }
static int set_event(struct cli *c, const char *arg, int k) { (void)k; c->o.event = arg; return 0; }
static int set_weight(struct cli *c, const char *arg, int k) { (void)k; c->o.weight = arg; return 0; }
static int set_kallsyms(struct cli *c, const char *arg, int k) { (void)k; c->o.kallsyms = arg; return 0; }
static int set_map_dir(struct cli *c, const char *arg, int k) { (void)k; c->o.map_dir = arg; return 0; }
static int set_title(struct cli *c, const char *arg, int k) { (void)k; c->w.svg.title = arg; return 0; }
static int set_no_spans(struct cli *c, const char *arg, int k) { (void)arg, (void)k; c->o.spans.off = 1; return 0; }
static int set_normalize(struct cli *c, const char *arg, int k) { (void)arg, (void)k; c->gate.normalize = c->gate_set = 1; return 0; }
static int set_by_span(struct cli *c, const char *arg, int k) { (void)k; c->by_span = arg; return 0; }

/* --span: checked here, compiled where the spans are read (pyspans.c). */
static int set_span(struct cli *c, const char *arg, int k)
{
    regex_t re;
    (void)k;
    if (c->o.spans.pattern || regcomp(&re, arg, REG_EXTENDED | REG_NOSUB) != 0)
        return -EINVAL;
    regfree(&re);
    c->o.spans.pattern = arg;
    return 0;
}

static int set_slowest(struct cli *c, const char *arg, int k)
{
    char *end;
    (void)k;
    c->o.spans.slowest = strtod(arg, &end);
    return whole(arg, end) && c->o.spans.slowest >= 0 && c->o.spans.slowest < 100 ? 0 : -EINVAL;
}

static int set_pid(struct cli *c, const char *arg, int k)
{
    (void)arg, (void)k;
    if (c->o.root != ROOT_TID)      /* --tid says more, in either order */
        c->o.root = ROOT_PID;
    return 0;
}

static const char *const views[] = {"native", "mixed", "python", NULL};
static int set_view(struct cli *c, const char *arg, int k)
{
    static const enum view v[] = {VIEW_NATIVE, VIEW_MIXED, VIEW_PYTHON};
    (void)arg;
    c->o.view.view = v[k];
    return 0;
}

static const char *const modes[] = {"cpu", "offcpu", "wall", "syscalls", "calls", "alloc", "leaks",
                                    NULL};
static int set_mode(struct cli *c, const char *arg, int k)
{
    static const enum mode m[] = {MODE_CPU, MODE_OFFCPU, MODE_WALL, MODE_SYSCALLS, MODE_CALLS,
                                  MODE_ALLOC, MODE_LEAKS};
    (void)arg;
    c->o.mode = m[k];
    return 0;
}

static const char *const inputs[] = {"perf", "folded", "pprof", NULL};
static int set_input(struct cli *c, const char *arg, int k)
{
    static const enum input_kind v[] = {INPUT_PERF, INPUT_FOLDED, INPUT_PPROF};
    (void)arg;
    c->input = v[k];
    return 0;
}

/* --format: diff has its own two; merge keeps no time order, so it takes
 * no format that needs one (trace, speedscope). */
static const char *formats[16], *merge_formats[16];
static const char *const diff_formats[] = {"svg", "table", "markdown", NULL};
static void list_formats(void)
{
    const struct writer *w;
    for (size_t i = 0, m = 0; i + 1 < 16 && (w = writer__at(i)); i++) {
        formats[i] = w->name;
        if (!w->keep_time)
            merge_formats[m++] = w->name;
    }
}

static int set_format(struct cli *c, const char *arg, int k)
{
    (void)k;
    c->format_set = 1;
    c->writer = c->cmd == CMD_DIFF && !strcmp(arg, "table") ? NULL : writer__find(arg);
    return 0;
}

/* --at end|peak|SECONDS (leaks): when live bytes are counted. */
static int set_at(struct cli *c, const char *arg, int k)
{
    char *end;
    (void)k;
    if (!strcmp(arg, "end") || !strcmp(arg, "peak")) {
        c->o.at = *arg == 'e' ? AT_END : AT_PEAK;
        return 0;
    }
    errno = 0;
    double sec = strtod(arg, &end);
    if (!whole(arg, end) || errno || !(sec >= 0) || sec > 1e9)
        return -EINVAL;
    c->o.at = AT_SECONDS;
    c->o.at_ns = (uint64_t)(sec * 1e9);
    return 0;
}

static int set_width(struct cli *c, const char *arg, int k)
{
    char *end;
    (void)k;
    c->w.svg.width = (int)strtol(arg, &end, 10);
    return *end || c->w.svg.width < 100 || c->w.svg.width > 100000 ? -EINVAL : 0;
}

static int set_dwarf_copy(struct cli *c, const char *arg, int k)
{
    char *end;
    (void)k;
    c->o.dwarf_copy = strtoull(arg, &end, 10);
    return *end || *arg == '-' || c->o.dwarf_copy == 0 ? -EINVAL : 0;
}

static int set_top(struct cli *c, const char *arg, int k)
{
    char *end;
    (void)k;
    c->top = (size_t)strtoul(arg, &end, 10);
    c->top_set = 1;
    return whole(arg, end) ? 0 : -EINVAL;
}

static int set_interval(struct cli *c, const char *arg, int k)
{
    char *end;
    (void)k;
    c->interval = strtod(arg, &end);
    return whole(arg, end) && c->interval >= 0.01 && c->interval <= 3600 ? 0 : -EINVAL;
}

static int set_fail_above(struct cli *c, const char *arg, int k)
{
    char *end;
    (void)k;
    c->fail_above = strtod(arg, &end);
    return whole(arg, end) && !(c->fail_above < 0) ? 0 : -EINVAL;
}

static int set_runs(struct cli *c, const char *arg, int k)
{
    char *end;
    (void)k;
    c->runs = (size_t)strtoul(arg, &end, 10);
    return whole(arg, end) && *arg != '-' && c->runs >= 2 && c->runs <= 100000 ? 0 : -EINVAL;
}

static int set_alpha(struct cli *c, const char *arg, int k)
{
    char *end;
    (void)k;
    c->gate_set = 1;
    c->gate.alpha = strtod(arg, &end);
    return whole(arg, end) && c->gate.alpha > 0 && c->gate.alpha < 1 ? 0 : -EINVAL;
}

static int set_min_change(struct cli *c, const char *arg, int k)
{
    char *end;
    (void)k;
    c->gate_set = 1;
    c->gate.min_change = strtod(arg, &end);
    return whole(arg, end) && c->gate.min_change >= 0 && c->gate.min_change < 1e6 ? 0 : -EINVAL;
}

/* --only and --inside, each once. */
static int set_regex(regex_t *re, const regex_t **slot, const char *arg)
{
    if (*slot || regcomp(re, arg, REG_EXTENDED | REG_NOSUB) != 0)
        return -EINVAL;
    *slot = re;
    return 0;
}

static int set_only(struct cli *c, const char *arg, int k)
{
    (void)k;
    return set_regex(&c->only, &c->o.filter.only, arg);
}

static int set_inside(struct cli *c, const char *arg, int k)
{
    (void)k;
    return set_regex(&c->inside, &c->o.filter.inside, arg);
}

/* --label KEY=VALUE: a key and a value, neither with ',' (the tag list's
 * separator), ';' (folded's, for --label-frames) nor a second '=', and one
 * per input. */
static int set_label(struct cli *c, const char *arg, int k)
{
    const char *eq = strchr(arg, '=');
    (void)k;
    if (c->label || !eq || eq == arg || !eq[1] || strchr(eq + 1, '=') || strchr(arg, ',') ||
        strchr(arg, ';'))
        return -EINVAL;
    c->label = arg;
    return 0;
}

#define REGEX "an extended regular expression, given once"
static const struct opt opts[] = {
    {"output", 'o', CMD_ANY, "a file to write", NULL, set_output},
    {"view", 0, CMD_ANY, "", views, set_view},
    {"mode", 0, CMD_ANY, "", modes, set_mode},
    {"at", 0, CMD_ANY, "end, peak or a number of seconds from the start of the recording"
                       " (0 or more)", NULL, set_at},
    {"events", 0, CMD_ANY, NULL, NULL, set_events},
    {"no-native-leaf", 0, CMD_ANY, NULL, NULL, set_no_leaf},
    {"pid", 0, CMD_ANY, NULL, NULL, set_pid},
    {"tid", 0, CMD_ANY, NULL, NULL, set_tid},
    {"no-kernel", 0, CMD_ANY, NULL, NULL, set_no_kernel},
    {"no-stitch", 0, CMD_ANY, NULL, NULL, set_no_stitch},
    {"dwarf-copy", 0, CMD_ANY, "a number of bytes, 1 or more", NULL, set_dwarf_copy},
    {"lines", 0, CMD_ANY, NULL, NULL, set_lines},
    {"annotate", 0, CMD_ANY, NULL, NULL, set_annotate},
    {"event", 0, CMD_ANY, "an event's name (pymerge --events lists them)", NULL, set_event},
    {"weight", 0, CMD_ANY, "a value's name", NULL, set_weight},
    {"kallsyms", 0, CMD_ANY, "a copy of /proc/kallsyms", NULL, set_kallsyms},
    {"map-dir", 0, CMD_ANY, "a folder of perf-PID.map files", NULL, set_map_dir},
    {"format", 0, CMD_FOLD, "", formats, set_format},
    {"format", 0, CMD_DIFF, "", diff_formats, set_format},
    {"format", 0, CMD_MERGE, "", merge_formats, set_format},
    {"input", 0, CMD_ANY, "", inputs, set_input},
    {"title", 0, CMD_ANY, "a title", NULL, set_title},
    {"width", 0, CMD_ANY, "a width in pixels from 100 to 100000", NULL, set_width},
    {"inverted", 0, CMD_ANY, NULL, NULL, set_inverted},
    {"top", 0, CMD_ANY, "a number of rows", NULL, set_top},
    {"fail-above", 0, CMD_ANY, "a number of points, 0 or more", NULL, set_fail_above},
    {"runs", 0, CMD_DIFF, "a number of base runs, 2 or more", NULL, set_runs},
    {"alpha", 0, CMD_DIFF, "a significance level, above 0 and below 1", NULL, set_alpha},
    {"min-change", 0, CMD_DIFF, "a percentage, 0 or more", NULL, set_min_change},
    {"normalize", 0, CMD_DIFF, NULL, NULL, set_normalize},
    {"only", 0, CMD_ANY, REGEX, NULL, set_only},
    {"inside", 0, CMD_ANY, REGEX, NULL, set_inside},
    {"no-spans", 0, CMD_ANY, NULL, NULL, set_no_spans},
    {"span", 0, CMD_ANY, REGEX, NULL, set_span},
    {"slowest", 0, CMD_ANY, "a percentile, 0 or more and under 100", NULL, set_slowest},
    {"by-span", 0, CMD_FOLD, "a folder", NULL, set_by_span},
    {"label", 0, CMD_MERGE, "KEY=VALUE, without ',' ';' or a second '=', once before each input",
     NULL, set_label},
    {"label-frames", 0, CMD_MERGE, NULL, NULL, set_label_frames},
    {"interval", 0, CMD_ANY, "a number of seconds from 0.01 to 3600", NULL, set_interval},
    {"verbose", 'v', CMD_ANY, NULL, NULL, set_verbose},
    {"help", 'h', CMD_ANY, NULL, NULL, set_help},
};
#define N_OPTS (sizeof(opts) / sizeof(*opts))
#define OPT_KEY 256                 /* getopt's value for row i: OPT_KEY + i */

/* The one printer of usage errors: "pymerge: what is wrong; see pymerge
 * --help".  Returns 1, the status of bad usage. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    warnx_("%s; see pymerge --help", msg);
    return 1;
}

/* What op's value may be, in words: "a, b or c" for choices. */
static const char *allowed(const struct opt *op, char *buf, size_t size)
{
    if (!op->choices)
        return op->arg;
    size_t n = 0, at = 0;
    while (op->choices[n])
        n++;
    buf[0] = 0;
    for (size_t i = 0; i < n && at < size; i++)
        at += (size_t)snprintf(buf + at, size - at, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ",
                               op->choices[i]);
    return buf;
}

/* The row of op's name that the command takes, or NULL. */
static const struct opt *row_for(const struct opt *op, enum cmd cmd)
{
    for (size_t i = 0; i < N_OPTS; i++)
        if (!strcmp(opts[i].name, op->name) && (opts[i].cmds & cmd))
            return &opts[i];
    return NULL;
}

/* The index of arg among op's choices, or -1. */
static int choice_of(const struct opt *op, const char *arg)
{
    for (int i = 0; op->choices && op->choices[i]; i++)
        if (!strcmp(op->choices[i], arg))
            return i;
    return -1;
}

/* Applies option row `first` (getopt's match, the first row of its name)
 * with arg.  Returns 0, or 1 after saying what is wrong. */
static int apply(struct cli *c, const struct opt *first, const char *arg)
{
    char buf[200];
    const struct opt *op = row_for(first, c->cmd);
    if (!op)
        return usage_error("--%s: only for pymerge merge", first->name);
    int k = choice_of(op, arg ? arg : "");
    if ((op->choices && k < 0) || op->set(c, arg, k) < 0)
        return usage_error("--%s %s: give %s", op->name, arg, allowed(op, buf, sizeof buf));
    return 0;
}

/* What getopt could not match (ret '?' or ':'), said in one line. */
static int getopt_error(struct cli *c, int ret, const char *text)
{
    char buf[200];
    const struct opt *op = optopt >= OPT_KEY ? &opts[optopt - OPT_KEY] : NULL;
    for (size_t i = 0; !op && optopt && i < N_OPTS; i++)
        if (opts[i].letter == optopt)
            op = &opts[i];
    if (!op && optopt)              /* an unknown letter: argv holds its cluster */
        return usage_error("-%c: no such option", optopt);
    if (ret == ':' && op) {
        const struct opt *row = row_for(op, c->cmd);
        return usage_error("%s: needs a value: %s", text, allowed(row ? row : op, buf, sizeof buf));
    }
    if (op)
        return usage_error("%s: takes no value", text);
    return usage_error("%s: no such option (nor the start of just one)", text);
}

/* Parses argv into c, merge's inputs included.  Returns 0, or 1 after
 * saying what is wrong. */
static int parse_options(struct cli *c, int argc, char **argv)
{
    struct option longs[N_OPTS + 1];
    char shorts[3 + 2 * N_OPTS];
    size_t n = 0, s = 0;
    if (c->cmd == CMD_MERGE)
        shorts[s++] = '-';          /* merge: inputs in order, as key 1 */
    shorts[s++] = ':';              /* a missing value: ':', not '?' */
    for (size_t i = 0; i < N_OPTS; i++) {
        if (opts[i].letter) {
            shorts[s++] = opts[i].letter;
            if (opts[i].arg)
                shorts[s++] = ':';
        }
        if (row_for(&opts[i], CMD_ANY) == &opts[i])         /* one entry per name */
            longs[n++] = (struct option){opts[i].name, opts[i].arg ? required_argument : no_argument,
                                         NULL, OPT_KEY + (int)i};
    }
    shorts[s] = 0;
    longs[n] = (struct option){NULL, 0, NULL, 0};
    opterr = 0;
    for (int k; !c->help && (k = getopt_long(argc, argv, shorts, longs, NULL)) != -1;) {
        const struct opt *op = NULL;
        for (size_t i = 0; !op && k < OPT_KEY && i < N_OPTS; i++)
            if (opts[i].letter == k)
                op = &opts[i];
        if (k == 1) {
            c->in[c->n_in++] = (struct merge_input){optarg, c->label};
            c->label = NULL;
        } else if (k == '?' || k == ':') {
            return getopt_error(c, k, argv[optind - 1]);
        } else if (apply(c, op ? op : &opts[k - OPT_KEY], optarg)) {
            return 1;
        }
    }
    return 0;
}

/* One of the two exceptions to "exit statuses are decided in main.c"
 * (util.h names both): running out of memory ends the process where it
 * happens. */
static void out_of_memory(void)
{
    warnx_("out of memory");
    exit(2);
}

/* Runs the parsed command line (its files from argv[optind]): the exit
 * status. */
static int run(struct cli *c, int argc, char **argv)
{
    int rest = argc - optind;
    c->w.top = c->top;
    /* A closed pipe is a write error to report, not a silent death. */
    signal(SIGPIPE, SIG_IGN);
    if (c->cmd == CMD_MERGE) {
        if (!c->format_set)
            c->writer = writer_for(c->output);
        if (c->label)
            return usage_error("--label %s: no input follows it", c->label);
        if (c->n_in == 0)
            return usage_error("merge: no input to sum");
        return run_merge(c);
    }
    if (c->cmd == CMD_DIFF && c->runs) {
        if (!c->format_set)
            c->writer = NULL;
        if (c->writer && c->writer != writer__find("markdown"))
            return usage_error("diff --runs: --format table or markdown");
        if ((size_t)rest < c->runs + 2)
            return usage_error("diff --runs %zu: give the %zu base runs, then 2 new ones or more (%d given)",
                               c->runs, c->runs, rest);
        if (c->o.view.view == VIEW_NATIVE || c->o.spans.off || c->fail_above >= 0)
            return usage_error("diff --runs: compares spans: not with --view native, --no-spans "
                               "or --fail-above (--min-change)");
        return run_runs(c, argv + optind, rest);
    }
    if (c->cmd == CMD_DIFF) {
        if (c->writer == writer__find("markdown"))
            return usage_error("diff --format markdown: with --runs");
        if (c->gate_set)
            return usage_error("diff: --alpha, --min-change and --normalize go with --runs");
        if (rest != 2)
            return usage_error("diff: give two inputs, BASE and NEW (%d given)", rest);
        return run_diff(c, argv[optind], argv[optind + 1]);
    }
    if (rest > 1)
        return usage_error("give one input at most (%d given)", rest);
    const char *path = rest ? argv[optind] : CONTRACT_FILE_DATA;
    if (c->writer == writer__find("live")) {
        if (c->output || c->list_events)    /* its snapshots go to standard output as they come */
            return usage_error("--format live: writes to standard output, without -o or --events");
        return run_live(c, path);
    }
    if (c->list_events)
        return run_events(c, path);
    if (c->by_span) {
        if (c->output || c->o.spans.pattern)
            return usage_error("--by-span: writes a file per span into its folder, without -o or --span");
        return run_by_span(c, path);
    }
    return run_convert(c, path);
}

int main(int argc, char **argv)
{
    util__on_oom(out_of_memory);
    enum cmd cmd = argc < 2                    ? CMD_FOLD
                   : !strcmp(argv[1], "diff")  ? CMD_DIFF
                   : !strcmp(argv[1], "merge") ? CMD_MERGE
                                               : CMD_FOLD;
    if (cmd != CMD_FOLD)
        argc--, argv++;
    struct cli c = {
        .cmd = cmd,
        .o = {.view = {VIEW_MIXED, 1}, .root = ROOT_COMM, .spans = {.slowest = -1}},
        .writer = writer__find(cmd == CMD_DIFF ? "svg" : "folded"),
        .input = INPUT_AUTO,
        .top = 20,
        .fail_above = -1,
        .gate = {.alpha = 0.05, .min_change = 5},
        .interval = 1,
        .w = {.svg = {.minwidth = 0.1}},
    };
    list_formats();
    c.in = cmd == CMD_MERGE ? xcalloc((size_t)argc, sizeof(*c.in)) : NULL;
    int ret = parse_options(&c, argc, argv);
    if (ret == 0 && c.help)
        fputs(usage, stdout);
    else if (ret == 0)
        ret = run(&c, argc, argv);
    free(c.in);
    if (c.o.filter.only)
        regfree(&c.only);
    if (c.o.filter.inside)
        regfree(&c.inside);
    return ret;
}
