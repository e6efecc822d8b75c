/* main.c - pymerge's command line; the work is in pipeline.c. */
#include "pipeline.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: pymerge [options] [FILE]\n"
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
    "  --annotate            append _[k] to kernel frames and _[j] to Python/JIT\n"
    "                          frames, which flamegraph.pl colours\n"
    "                          pymerge --annotate perf.data | flamegraph.pl --color=java\n"
    "  --event NAME          fold the samples of event NAME (default: the event of\n"
    "                          the first sample)\n"
    "                          pymerge --event task-clock perf.data\n"
    "  --weight W            period (default): sum the sample periods, as\n"
    "                          stackcollapse-perf.pl does; samples: count samples\n"
    "                          pymerge --weight samples perf.data\n"
    "  --kallsyms FILE       kernel symbols from FILE, a copy of /proc/kallsyms\n"
    "                          saved when recording\n"
    "                          pymerge --kallsyms kallsyms.txt perf.data\n"
    "  --map-dir DIR         look for perf-PID.map files in DIR (after the\n"
    "                          directory of FILE, before /tmp)\n"
    "                          pymerge --map-dir saved-maps perf.data\n"
    "  -v, --verbose         a summary on stderr: samples, lost, % unknown frames,\n"
    "                          processes\n"
    "                          pymerge -v perf.data > /dev/null\n"
    "  -h, --help            this text\n"
    "\n"
    "Exit status: 0 done (also for a truncated file, with a warning), 1 bad usage,\n"
    "2 unreadable or corrupt input.\n";

enum { O_VIEW = 256, O_NO_LEAF, O_PID, O_TID, O_NO_KERNEL, O_ANNOTATE, O_EVENT,
       O_WEIGHT, O_KALLSYMS, O_MAP_DIR };

int main(int argc, char **argv)
{
    static const struct option longs[] = {
        {"output", required_argument, NULL, 'o'},
        {"view", required_argument, NULL, O_VIEW},
        {"no-native-leaf", no_argument, NULL, O_NO_LEAF},
        {"pid", no_argument, NULL, O_PID},
        {"tid", no_argument, NULL, O_TID},
        {"no-kernel", no_argument, NULL, O_NO_KERNEL},
        {"annotate", no_argument, NULL, O_ANNOTATE},
        {"event", required_argument, NULL, O_EVENT},
        {"weight", required_argument, NULL, O_WEIGHT},
        {"kallsyms", required_argument, NULL, O_KALLSYMS},
        {"map-dir", required_argument, NULL, O_MAP_DIR},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct pipeline_opts o = {.view = {VIEW_MIXED, 1}, .root = ROOT_COMM};
    const char *output = NULL;
    int c;

    while ((c = getopt_long(argc, argv, "o:vh", longs, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'v': o.verbose = 1; break;
        case 'h': fputs(usage, stdout); return 0;
        case O_VIEW:
            if (!strcmp(optarg, "native")) o.view.view = VIEW_NATIVE;
            else if (!strcmp(optarg, "mixed")) o.view.view = VIEW_MIXED;
            else if (!strcmp(optarg, "python")) o.view.view = VIEW_PYTHON;
            else goto bad;
            break;
        case O_NO_LEAF: o.view.native_leaf = 0; break;
        case O_PID: if (o.root != ROOT_TID) o.root = ROOT_PID; break;
        case O_TID: o.root = ROOT_TID; break;
        case O_NO_KERNEL: o.no_kernel = 1; break;
        case O_ANNOTATE: o.annotate = 1; break;
        case O_EVENT: o.event = optarg; break;
        case O_WEIGHT:
            if (!strcmp(optarg, "samples")) o.weight_samples = 1;
            else if (!strcmp(optarg, "period")) o.weight_samples = 0;
            else goto bad;
            break;
        case O_KALLSYMS: o.kallsyms = optarg; break;
        case O_MAP_DIR: o.map_dir = optarg; break;
        default: goto bad;
        }
    }
    if (argc - optind > 1)
        goto bad;
    const char *path = optind < argc ? argv[optind] : "perf.data";
    FILE *out = stdout;
    if (output && !(out = fopen(output, "w"))) {
        perror(output);
        return 2;
    }
    int ret = pipeline__run(path, &o, out);
    if (out != stdout && fclose(out) != 0 && ret == 0) {
        perror(output);
        ret = 2;
    }
    return ret;
bad:
    fputs("pymerge: bad usage; see pymerge --help\n", stderr);
    return 1;
}
