#!/usr/bin/env python3
"""pymerge's outputs over a fixed set of recordings, and their comparison.

A change that keeps pymerge's behaviour must leave every output, for the same
inputs, byte for byte the same.  This script proves it: run it with the
pymerge before the change and with the one after, over the same recordings,
and compare the two folders.

    tests/golden.py outputs PYMERGE RECDIR OUTDIR
    tests/golden.py compare DIR_A DIR_B
    tests/golden.py record BUILDDIR PYTHON RECDIR     (as root)

outputs runs PYMERGE once per case (every --format where it applies, the
three views, --pid/--tid/--no-kernel/--annotate, the --weight of each mode,
--only/--inside, --at, the folded and pprof inputs, standard input, diff and
merge, and bad input) and writes, per case, OUTDIR/CASE.out (standard output,
or the -o file for the cases that write one, as bytes) and OUTDIR/CASE.meta
(the command, its exit status and standard error).  compare prints every
file that is only in one folder or differs, with a short diff (or the first
differing byte of a binary file), and exits 1 if any does.  Error messages
may legitimately change (get better): compare shows them like any other
difference, for the reader to judge.

record makes a set of recordings once (they differ from run to run, so a
comparison uses one set throughout): the small programs below, recorded by
this tree's pyperf-record with BUILDDIR's pyperfmap and PYTHON (a CPython
3.12 was used), a C program compiled with gcc, and the inputs/ files
written by BUILDDIR's pymerge.  About 36 MB; the kallsyms copies are hard
links of one file.

RECDIR holds one folder per recording, each a pyperf-record folder (perf.data,
its perf maps, kallsyms) or a plain perf record (cprog, pipe: a C program,
the second in pipe mode), and inputs/ (folded and pprof files that pymerge
wrote).  Each case names what it needs; a missing recording fails the run
rather than leaving cases out silently.

What would vary from run to run is kept out, not filtered afterwards:
  - pymerge runs in RECDIR with relative paths, so no absolute path of the
    recordings reaches an output;
  - kernel symbols come from each folder's kallsyms (--kallsyms), not from
    /proc/kallsyms, which changes with each boot;
  - perf maps come from each folder, also for a recording read from
    standard input (--map-dir): not from /tmp, where a map may go or come;
  - a case that writes with -o writes into a temporary folder, whose name
    stderr may carry: it is replaced by <TMP>;
  - the environment is fixed: LC_ALL=C, TZ=UTC, and pymerge's argv[0] is
    "pymerge" (getopt's messages name it), wherever the binary is.
No output of pymerge holds the time it ran, so nothing else needs
normalising: running outputs twice with one build gives identical folders
(compare says so).
"""
import difflib
import os
import shutil
import subprocess
import sys
import tempfile

from harness import spin

FORMATS = ["folded", "svg", "speedscope", "trace", "pprof", "table", "live"]
# Each recording: its folder under RECDIR and the --weight values its mode has.
PERF_RECORDINGS = {
    "cpu": ["samples", "period", "cpu-ns"],           # DWARF call graphs
    "cpu-fp": ["samples", "period"],                  # frame pointers (-g)
    "wall": ["wall-ns", "cpu-ns", "offcpu-ns", "samples"],
    "offcpu": ["offcpu-ns", "samples"],
    "syscalls": ["count", "latency-ns"],
    "alloc": ["count", "bytes"],                      # sampled by bytes
    "alloc-exact": ["count", "bytes"],                # every allocator call
    "leaks": ["live-bytes", "count", "bytes", "objects"],
    "calls": ["wall-ns", "count", "latency-ns"],      # with system calls
    "fork": ["samples"],                              # two processes
    "cprog": ["samples"],                             # perf record -g of C
    "pipe": ["samples"],                              # the same, perf record -o -
}
DWARF = ["cpu", "wall", "offcpu", "syscalls", "alloc", "alloc-exact", "leaks", "fork"]


def data(rec):
    return rec + "/perf.data"


def ks(rec):
    return ["--kallsyms", rec + "/kallsyms"]


def cases():
    """[(name, argv, stdin_file or None, output_file_name or None)]: argv
    without pymerge, paths relative to RECDIR; an output_file_name is given
    to -o in a temporary folder and read back as the case's output."""
    out = []

    def add(name, argv, stdin=None, ofile=None):
        out.append((name, argv, stdin, ofile))

    for rec, weights in PERF_RECORDINGS.items():
        base = ks(rec)
        for fmt in FORMATS:
            add("%s.format-%s" % (rec, fmt), base + ["--format", fmt, data(rec)])
        for view in ["mixed", "native", "python"]:
            add("%s.view-%s" % (rec, view), base + ["--view", view, data(rec)])
            add("%s.view-%s.table" % (rec, view),
                base + ["--view", view, "--format", "table", data(rec)])
        add("%s.view-python-no-native-leaf" % rec,
            base + ["--view", "python", "--no-native-leaf", data(rec)])
        for flag in ["--pid", "--tid", "--no-kernel", "--annotate"]:
            add("%s.%s" % (rec, flag.strip("-")), base + [flag, data(rec)])
        add("%s.tid-annotate-python" % rec,
            base + ["--tid", "--annotate", "--view", "python", data(rec)])
        add("%s.speedscope-tid" % rec, base + ["--tid", "--format", "speedscope", data(rec)])
        for w in weights:
            add("%s.weight-%s" % (rec, w), base + ["--weight", w, data(rec)])
            add("%s.weight-%s.pprof" % (rec, w),
                base + ["--weight", w, "--format", "pprof", data(rec)])
        add("%s.events" % rec, ["--events", data(rec)])
        add("%s.verbose" % rec, base + ["-v", data(rec)])
        add("%s.no-kallsyms-kernel" % rec, ["--no-kernel", data(rec)])
        add("%s.svg-options" % rec, base + ["--format", "svg", "--title", "t <&> 'x'",
                                            "--width", "800", "--inverted", data(rec)])
        add("%s.table-top3" % rec, base + ["--format", "table", "--top", "3", data(rec)])
        add("%s.stdin" % rec, base + ["--map-dir", rec, "-"], stdin=data(rec))
        add("%s.output-file" % rec, base + ["--format", "svg", data(rec)], ofile="out.svg")
    for rec in DWARF:
        add("%s.no-stitch" % rec, ks(rec) + ["--no-stitch", data(rec)])
        add("%s.dwarf-copy-2048" % rec, ks(rec) + ["-v", "--dwarf-copy", "2048", data(rec)])

    # a mode other than the recording's, and tracepoint fields as weights
    add("wall.mode-cpu", ks("wall") + ["--mode", "cpu", data("wall")])
    add("wall.mode-offcpu", ks("wall") + ["--mode", "offcpu", "--tid", data("wall")])
    add("wall.event-cpu-clock", ks("wall") + ["--event", "cpu-clock/freq=499/", data("wall")])
    add("offcpu.field-prev_prio", ks("offcpu") + ["--event", "sched:sched_switch",
                                                  "--weight", "prev_prio", data("offcpu")])
    add("offcpu.field-bad", ks("offcpu") + ["--event", "sched:sched_switch",
                                            "--weight", "prev_comm", data("offcpu")])
    add("syscalls.mode-cpu", ks("syscalls") + ["--mode", "cpu", data("syscalls")])
    add("alloc-exact.field-bytes", ks("alloc-exact") + ["--mode", "cpu", "--event",
                                                        "syscalls:sys_enter_mmap",
                                                        "--weight", "len", data("alloc-exact")])
    add("cpu.mode-leaks", ks("cpu") + ["--mode", "leaks", data("cpu")])
    add("cpu.weight-bad", ks("cpu") + ["--weight", "offcpu-ns", data("cpu")])
    add("cpu.format-growth", ks("cpu") + ["--format", "growth", data("cpu")])

    # calls: keeping some calls, and calls inside others
    for fmt in ["folded", "trace", "table"]:
        add("calls.only.%s" % fmt, ks("calls") + ["--only", "^handle|leaf", "--format", fmt,
                                                  data("calls")])
        add("calls.inside.%s" % fmt, ks("calls") + ["--inside", "^clone ", "--format", fmt,
                                                    data("calls")])
    add("calls.only-inside-count", ks("calls") + ["--only", "leaf", "--inside", "^clone ",
                                                  "--weight", "count", data("calls")])
    add("calls.only-bad-regex", ks("calls") + ["--only", "(", data("calls")])

    # leaks: when to count, and the growth table and plot
    for at in ["end", "peak", "0.3"]:
        for fmt in ["folded", "table", "growth"]:
            add("leaks.at-%s.%s" % (at, fmt), ks("leaks") + ["--at", at, "--format", fmt,
                                                            data("leaks")])
    add("leaks.at-bad", ks("leaks") + ["--at", "later", data("leaks")])

    # live snapshots from a pipe
    add("pipe.live-interval", ks("pipe") + ["--format", "live", "--interval", "0.2", "-"],
        stdin=data("pipe"))

    # folded and pprof files as inputs
    inputs = [("folded", "inputs/cpu.folded"), ("folded", "inputs/cpu-fp.folded"),
              ("pprof", "inputs/wall.pb.gz"), ("pprof", "inputs/leaks.pb.gz")]
    for kind, path in inputs:
        name = os.path.basename(path)
        for fmt in ["folded", "svg", "speedscope", "pprof", "table", "trace"]:
            add("input-%s.%s.format-%s" % (kind, name, fmt),
                ["--input", kind, "--format", fmt, path])
        for view in ["native", "python"]:
            add("input-%s.%s.view-%s" % (kind, name, view),
                ["--input", kind, "--view", view, path])
        add("input-%s.%s.no-kernel" % (kind, name), ["--input", kind, "--no-kernel", path])
        add("input-%s.%s.stdin" % (kind, name), ["--input", kind, "-"], stdin=path)
    add("input-folded.weight-wall-ns", ["--input", "folded", "--weight", "wall-ns",
                                        "--format", "speedscope", "inputs/cpu.folded"])
    add("input-pprof.weight-cpu-ns", ["--input", "pprof", "--weight", "cpu-ns",
                                      "inputs/wall.pb.gz"])
    add("input-pprof.weight-bad", ["--input", "pprof", "--weight", "bytes",
                                   "inputs/wall.pb.gz"])

    # diff: recordings, folded and pprof files against each other
    diffs = [("cpu-cpufp", [data("cpu"), data("cpu-fp")]),
             ("folded-cpu", ["inputs/cpu.folded", data("cpu")]),
             ("fp-folded-cpu-folded", ["inputs/cpu-fp.folded", "inputs/cpu.folded"]),
             ("pprof-wall", ["inputs/wall.pb.gz", data("wall")]),
             ("cprog-pipe", [data("cprog"), data("pipe")])]
    for name, files in diffs:
        add("diff.%s.svg" % name, ["diff"] + ks("cpu") + files)
        add("diff.%s.table" % name, ["diff", "--format", "table", "--top", "5"] + ks("cpu") + files)
    add("diff.view-python", ["diff", "--view", "python", "--format", "table"] + ks("cpu")
        + [data("cpu"), data("cpu-fp")])
    add("diff.fail-above", ["diff", "--format", "table", "--fail-above", "1"] + ks("cpu")
        + [data("cpu-fp"), data("cpu")])
    add("diff.title-no-kernel", ["diff", "--title", "d", "--no-kernel", "--weight", "samples"]
        + ks("wall") + [data("cpu"), data("wall")])
    add("diff.output-file", ["diff"] + ks("cpu") + [data("cpu"), data("cpu-fp")], ofile="d.svg")
    add("diff.one-file", ["diff", data("cpu")])

    # merge: many profiles into one, the format from -o's extension
    many = ["--label", "host=a", data("cpu"), "--label", "host=b", data("fork"), data("wall")]
    for ext in ["folded", "svg", "pb.gz", "txt"]:
        add("merge.out-%s" % ext, ["merge"] + ks("cpu") + many, ofile="all." + ext)
    add("merge.label-frames", ["merge", "--label-frames"] + ks("cpu") + many, ofile="all.folded")
    add("merge.pprof-inputs", ["merge", "inputs/wall.pb.gz", data("wall")] + ks("wall"),
        ofile="all.pb.gz")
    add("merge.weight-samples", ["merge", "--weight", "samples", data("cpu"), data("fork")]
        + ks("cpu"), ofile="all.folded")
    add("merge.folded-inputs", ["merge", "--label", "x=1", "inputs/cpu.folded",
                                "inputs/cpu-fp.folded"], ofile="all.pb.gz")
    add("merge.folded-and-perf", ["merge", "inputs/cpu.folded", data("cpu")] + ks("cpu"),
        ofile="all.folded")
    add("merge.perf-and-folded", ["merge", data("cpu"), "inputs/cpu.folded"] + ks("cpu"),
        ofile="all.folded")
    add("merge.weight-missing", ["merge", "--weight", "offcpu-ns", data("cpu"), data("wall")]
        + ks("cpu"), ofile="all.folded")
    add("merge.format-svg-stdout", ["merge", "--format", "svg"] + ks("cpu")
        + [data("cpu"), data("fork")])
    add("merge.no-output", ["merge", data("cpu")] + ks("cpu"))

    # bad input and bad usage (their messages may get better)
    add("bad.missing-file", ["no/such/perf.data"])
    add("bad.not-perf-data", ["inputs/cpu.folded"])
    add("bad.folded-as-pprof", ["--input", "pprof", "inputs/cpu.folded"])
    add("bad.pprof-as-folded", ["--input", "folded", "inputs/wall.pb.gz"])
    add("bad.unknown-option", ["--no-such-option", data("cpu")])
    add("bad.format", ["--format", "png", data("cpu")])
    add("bad.view", ["--view", "java", data("cpu")])
    add("bad.mode", ["--mode", "gpu", data("cpu")])
    add("bad.input-kind", ["--input", "json", data("cpu")])
    add("bad.width", ["--format", "svg", "--width", "-3", data("cpu")])
    add("bad.interval", ["--format", "live", "--interval", "0", data("cpu")])
    add("bad.dwarf-copy", ["--dwarf-copy", "x", data("cpu")])
    add("bad.two-files", [data("cpu"), data("wall")])
    add("bad.kallsyms-missing", ["--kallsyms", "no/such/kallsyms", data("cpu")])
    add("bad.empty-stdin", ["-"], stdin="/dev/null")
    add("bad.truncated", ks("cpu") + ["--map-dir", "cpu", "-"], stdin=("cpu/perf.data", 300000))
    add("bad.truncated-header", ["-"], stdin=("cpu/perf.data", 100))
    add("bad.truncated-pipe", ks("pipe") + ["-"], stdin=("pipe/perf.data", 40000))
    add("help", ["--help"])
    return out


# The recorded programs: each a second or less of work through a few
# nested calls, of the kind its mode measures.
SPIN = """import time
def work(sec):
    t = time.time(); s = 0
    while time.time() - t < sec:
        s += 1
"""
ALLOC = """kept = []
def keep(n):
    for _ in range(n):
        kept.append(bytearray(200000))
def churn(n):
    for _ in range(n):
        b = bytearray(100000)
        del b
def small(n):
    return [str(i) * 10 for i in range(n)]
def main():
    for _ in range(%d):
        keep(2)
        churn(6)
        small(%d)
main()
"""
PROGRAMS = {
    "cpu.py": spin("leaf") + """import time
def middle(n):
    return leaf(n) + leaf(n // 2)
def outer():
    t = time.time()
    while time.time() - t < 0.5:
        middle(20000)
outer()
""",
    "wall.py": SPIN + """import os, threading
def waiter():
    time.sleep(0.4)
def reader():
    r, w = os.pipe()
    def feed():
        time.sleep(0.3); os.write(w, b"x")
    th = threading.Thread(target=feed); th.start()
    os.read(r, 1); th.join()
def main():
    work(0.4)
    waiter()
    reader()
    work(0.2)
main()
""",
    "sysc.py": """import os
def writer(fd, n):
    for _ in range(n):
        os.write(fd, b"abc")
def reader(n):
    for _ in range(n):
        os.getpid()
fd = os.open("/dev/null", os.O_WRONLY)
writer(fd, 3000)
reader(2000)
""",
    "alloc.py": ALLOC % (20, 5000),
    "alloc_small.py": ALLOC % (2, 300),     # --exact: every malloc of startup too
    "calls.py": """import os
def leaf(i):
    return i * 2
def handle(n):
    s = 0
    for i in range(n):
        s += leaf(i)
    os.getpid()
    return s
def clone(n):
    return handle(n)
def main():
    for _ in range(30):
        handle(20)
        clone(10)
main()
""",
    "fork.py": SPIN + """import os
def child():
    work(0.3)
def parent():
    work(0.3)
pid = os.fork()
if pid == 0:
    child(); os._exit(0)
parent()
os.waitpid(pid, 0)
""",
    "prog.c": r"""#include <stdio.h>
#include <time.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void leaf(unsigned n) { for (unsigned i = 0; i < n; i++) sink += i * i; }
__attribute__((noinline)) static void mid(unsigned n) { leaf(n); leaf(n / 2); }
__attribute__((noinline)) static void top(void) {
    struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
    do { mid(100000); clock_gettime(CLOCK_MONOTONIC, &b); }
    while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 1000000000L);
}
int main(void) { top(); printf("%lu\n", sink); return 0; }
""",
}
# (folder, pyperf-record options, program)
RECORDINGS = [
    ("cpu", ["-F", "499"], "cpu.py"),
    ("cpu-fp", ["--fp"], "cpu.py"),
    ("wall", ["--mode", "wall", "-F", "499"], "wall.py"),
    ("offcpu", ["--mode", "offcpu"], "wall.py"),
    ("syscalls", ["--mode", "syscalls"], "sysc.py"),
    ("alloc", ["--mode", "alloc"], "alloc.py"),
    ("alloc-exact", ["--mode", "alloc", "--exact", "--dwarf", "2048"], "alloc_small.py"),
    ("leaks", ["--mode", "leaks"], "alloc.py"),
    ("calls", ["--mode", "calls", "--with-syscalls"], "calls.py"),
    ("fork", ["-F", "499"], "fork.py"),
]
# inputs/: (file, pymerge options, recording)
INPUTS = [
    ("cpu.folded", ["--annotate"], "cpu"),
    ("cpu-fp.folded", [], "cpu-fp"),
    ("wall.pb.gz", ["--tid", "--format", "pprof"], "wall"),
    ("leaks.pb.gz", ["--format", "pprof"], "leaks"),
]


def record(builddir, python, recdir):
    """Makes the recordings of RECORDINGS, cprog, pipe and inputs/ in recdir."""
    if os.path.exists(recdir):
        sys.exit("golden.py: %s exists; record makes a new folder" % recdir)
    builddir, recdir = os.path.abspath(builddir), os.path.abspath(recdir)
    here = os.path.dirname(os.path.abspath(__file__))
    pyperf_record = os.path.join(here, "..", "perf-scripts", "pyperf-record")
    pymerge = os.path.join(builddir, "merge", "pymerge")
    src = os.path.join(recdir, "src")
    os.makedirs(src)
    for name, text in PROGRAMS.items():
        with open(os.path.join(src, name), "w") as f:
            f.write(text)
    env = dict(os.environ, PYTHONPATH=os.path.join(builddir, "libpyperfmap"))

    def check(argv, **kw):
        subprocess.run(argv, cwd=src, env=env, check=True, **kw)

    for name, options, program in RECORDINGS:
        check([pyperf_record, "-o", os.path.join(recdir, name)] + options
              + ["--", python, program])
    check(["gcc", "-O1", "-g", "-fno-omit-frame-pointer", "-o", "prog", "prog.c"])
    for name in ["cprog", "pipe"]:
        os.makedirs(os.path.join(recdir, name))
        shutil.copy(os.path.join(src, "prog"), os.path.join(recdir, name))
    perf = ["perf", "record", "-g", "-F", "999", "-o"]
    check(perf + [os.path.join(recdir, "cprog", "perf.data"), "--", "./prog"])
    with open(os.path.join(recdir, "pipe", "perf.data"), "wb") as out:
        check(perf + ["-", "--", "./prog"], stdout=out)
    kallsyms = os.path.join(recdir, "cpu", "kallsyms")
    for name in list(PERF_RECORDINGS):
        copy = os.path.join(recdir, name, "kallsyms")
        if copy != kallsyms:
            if os.path.exists(copy):
                os.unlink(copy)
            os.link(kallsyms, copy)
    os.makedirs(os.path.join(recdir, "inputs"))
    for name, options, rec in INPUTS:
        with open(os.path.join(recdir, "inputs", name), "wb") as out:
            subprocess.run([pymerge] + ks(rec) + options + [data(rec)], cwd=recdir, stdout=out,
                           check=True)
    print("golden.py: recordings in %s" % recdir)


def run_case(pymerge, recdir, outdir, case, env):
    name, argv, stdin, ofile = case
    tmp = tempfile.mkdtemp(prefix="golden-")
    try:
        if ofile:
            argv = argv + ["-o", os.path.join(tmp, ofile)]
        if isinstance(stdin, tuple):        # the first bytes of a file
            path, size = stdin
            with open(os.path.join(recdir, path), "rb") as f:
                cut = os.path.join(tmp, "cut")
                with open(cut, "wb") as g:
                    g.write(f.read(size))
            stdin = cut
        with open(os.path.join(recdir, stdin) if stdin else os.devnull, "rb") as inp:
            try:
                p = subprocess.run(["pymerge"] + argv, executable=pymerge, cwd=recdir, stdin=inp, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
                rc, out, err = str(p.returncode), p.stdout, p.stderr
            except subprocess.TimeoutExpired as e:
                rc, out, err = "timeout", e.stdout or b"", e.stderr or b""
        if ofile:
            written = os.path.join(tmp, ofile)
            if os.path.exists(written):
                with open(written, "rb") as f:
                    out = b"--- stdout ---\n" + out + b"--- " + ofile.encode() + b" ---\n" + f.read()
        err = err.replace(tmp.encode(), b"<TMP>")
        shown = " ".join(("<TMP>/" + ofile) if a == os.path.join(tmp, ofile or "") else a
                         for a in argv)
        if isinstance(case[2], tuple):
            shown += " < first %d bytes of %s" % (case[2][1], case[2][0])
        elif stdin:
            shown += " < " + stdin
        with open(os.path.join(outdir, name + ".out"), "wb") as f:
            f.write(out)
        with open(os.path.join(outdir, name + ".meta"), "wb") as f:
            f.write(("pymerge %s\nexit: %s\n--- stderr ---\n" % (shown, rc)).encode() + err)
        return rc
    finally:
        shutil.rmtree(tmp)


def outputs(pymerge, recdir, outdir):
    pymerge = os.path.abspath(pymerge)
    missing = sorted({r for r in list(PERF_RECORDINGS) + ["inputs"]
                      if not os.path.isdir(os.path.join(recdir, r))})
    if missing:
        sys.exit("golden.py: %s lacks the recordings %s" % (recdir, ", ".join(missing)))
    os.makedirs(outdir, exist_ok=True)
    if os.listdir(outdir):
        sys.exit("golden.py: %s is not empty" % outdir)
    env = dict(os.environ, LC_ALL="C", TZ="UTC")
    all_cases = cases()
    names = [c[0] for c in all_cases]
    assert len(names) == len(set(names)), "two cases of one name"
    for case in all_cases:
        run_case(pymerge, recdir, outdir, case, env)
    print("golden.py: %d cases written to %s" % (len(all_cases), outdir))


def is_text(b):
    return b"\0" not in b[:8192] and not b.startswith(b"\x1f\x8b")


def show_diff(name, a, b):
    if is_text(a) and is_text(b):
        lines = list(difflib.unified_diff(a.decode("utf-8", "replace").splitlines(),
                                          b.decode("utf-8", "replace").splitlines(),
                                          "A/" + name, "B/" + name, n=1, lineterm=""))
        for line in lines[:20]:
            print("    " + line[:200])
        if len(lines) > 20:
            print("    ... %d more diff lines" % (len(lines) - 20))
    else:
        at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        print("    binary: %d and %d bytes, first difference at byte %d" % (len(a), len(b), at))


def compare(dir_a, dir_b):
    names_a, names_b = set(os.listdir(dir_a)), set(os.listdir(dir_b))
    differ = 0
    for name in sorted(names_a | names_b):
        if name not in names_b or name not in names_a:
            print("%s: only in %s" % (name, dir_a if name in names_a else dir_b))
            differ += 1
            continue
        with open(os.path.join(dir_a, name), "rb") as f:
            a = f.read()
        with open(os.path.join(dir_b, name), "rb") as f:
            b = f.read()
        if a != b:
            print("%s: differs" % name)
            show_diff(name, a, b)
            differ += 1
    print("golden.py: %d of %d files differ" % (differ, len(names_a | names_b)))
    return 1 if differ else 0


def main(argv):
    if len(argv) == 5 and argv[1] == "outputs":
        outputs(argv[2], argv[3], argv[4])
        return 0
    if len(argv) == 4 and argv[1] == "compare":
        return compare(argv[2], argv[3])
    if len(argv) == 5 and argv[1] == "record":
        record(argv[2], argv[3], argv[4])
        return 0
    sys.stderr.write("usage: golden.py outputs PYMERGE RECDIR OUTDIR\n"
                     "       golden.py compare DIR_A DIR_B\n"
                     "       golden.py record BUILDDIR PYTHON RECDIR\n")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
