#!/usr/bin/env python3
"""Benchmark the memory modes of pyperf-record on a realistic program.

    bench/bench_memory.py --python PYTHON [--rounds 100] [--runs 3]
                          [--pythonpath BUILD/libpyperfmap] [--pymerge BUILD/merge/pymerge]

The program (tests/programs/leaky.py, which the memory test records too)
makes millions of small objects a second (dicts, tuples, strings, lists,
ints: pymalloc's) beside 64 KiB bytearrays, and keeps some of each in
module-level lists that keep growing (a leak with a normal exit); it
measures its own work (the CPU time of its process, time.process_time,
which counts the kernel's time in its uprobe traps and is less at the
mercy of a loaded machine than wall time) and prints what it keeps, as
sys.getsizeof counts it.

Each configuration runs --runs times, interleaved, in the same run:
  unprofiled      the program alone
  alloc           pyperf-record --mode alloc (sampled, 512 KiB)
  leaks           pyperf-record --mode leaks (sampled, 512 KiB)
  alloc/leaks 128K the same, one sample per 128 KiB (--sample-bytes 131072)
  alloc --exact   uprobes on every libc allocation (the modes before)
  leaks --exact
and reports, per configuration: the program's CPU time (its own measure,
the median of --runs) and the whole command's wall time (perf's start,
probes and the interpreter's start included), each against the unprofiled
run's; the events perf lost (perf report --stats); perf.data's size; and
accuracy: leak_big's allocated bytes (alloc) or live bytes at the end
(leaks) against the truth, and leak_small's live bytes (leaks).

Prints a Markdown table.  Needs root (uprobes), perf, and a pyperfmap build
for PYTHON.  Timings are wall-clock: say when the machine was loaded.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
RECORD = os.path.join(HERE, "..", "perf-scripts", "pyperf-record")

# The program, and the leaks of each round: 4 big blocks and 400 small ones.
PROGRAM = os.path.join(HERE, "..", "tests", "programs", "leaky.py")
LEAKS = ["4", "400"]

CONFIGS = [("unprofiled", None), ("alloc", ["--mode", "alloc"]), ("leaks", ["--mode", "leaks"]),
           ("alloc 128K", ["--mode", "alloc", "--sample-bytes", "131072"]),
           ("leaks 128K", ["--mode", "leaks", "--sample-bytes", "131072"]),
           ("alloc --exact", ["--mode", "alloc", "--exact"]),
           ("leaks --exact", ["--mode", "leaks", "--exact"])]


def lost(data):
    r = subprocess.run(["perf", "report", "--stats", "-i", data], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    return sum(int(n) for n in re.findall(r"^\s*LOST(?:_SAMPLES)? events:\s+(\d+)", r.stdout, re.M))


def by_function(text, names):
    by = Counter()
    for line in text.splitlines():
        stack, w = line.rsplit(" ", 1)
        for n in names:
            if (";" + stack + ";").find(";%s (" % n) >= 0:
                by[n] += int(w)
    return by


def recording(a, out, names, res):
    """The weight under each of names in pymerge's python view of out's
    perf.data; the events perf lost and the file's size into res."""
    data = os.path.join(out, "perf.data")
    res["lost"] = lost(data)
    res["size"] = os.path.getsize(data)
    merged = subprocess.run([a.pymerge, "--view", "python", data], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, universal_newlines=True).stdout
    return by_function(merged, names)


def run_once(a, name, opts, script, out):
    env = dict(os.environ, PYTHONPATH=a.pythonpath)
    cmd = [a.python, script, str(a.rounds)] + LEAKS
    if opts:
        cmd = [RECORD, "-o", out] + opts + ["--"] + cmd
    t = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, universal_newlines=True)
    wall = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit("%s failed: %s" % (name, r.stderr[-2000:]))
    m = re.search(r"took ([\d.]+) leak_big (\d+) (\d+) leak_small (\d+)", r.stdout)
    res = {"took": float(m.group(1)), "wall": wall, "big": int(m.group(2)), "n_big": int(m.group(3)),
           "small": int(m.group(4))}
    if opts:
        by = recording(a, out, ("leak_big", "leak_small"), res)
        res["est_big"], res["est_small"] = by["leak_big"], by["leak_small"]
    return res


def bench_args(ap, runs=3):
    """The options of a memory benchmark: which CPython, how many runs,
    which pyperfmap and pymerge."""
    ap.add_argument("--python", required=True)
    ap.add_argument("--runs", type=int, default=runs)
    ap.add_argument("--pythonpath", default=os.path.join(HERE, "..", "build", "libpyperfmap"))
    ap.add_argument("--pymerge", default=os.path.join(HERE, "..", "build", "merge", "pymerge"))


def medians(configs, runs, work, once):
    """Each configuration's median run by the program's CPU time ("took"),
    of `runs` interleaved: once(name, opts, out) runs one, recording into
    out."""
    results = {name: [] for name, _ in configs}
    for i in range(runs):
        for name, opts in configs:
            out = os.path.join(work, name.replace(" ", "").replace("-", "_"))
            results[name].append(once(name, opts, out))
            sys.stderr.write("run %d %s: %s\n" % (i + 1, name, results[name][-1]))
    return {name: sorted(rs, key=lambda r: r["took"])[len(rs) // 2] for name, rs in results.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=100)
    bench_args(ap)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="bench-memory-")
    median = medians(CONFIGS, a.runs, work, lambda name, opts, out: run_once(a, name, opts, PROGRAM, out))
    base = median["unprofiled"]
    print("| mode | program time | slowdown | whole command | lost events | perf.data |"
          " leak_big bytes (truth %.1f MB) | leak_small live (truth %.1f MB) |"
          % (base["big"] / 1e6, base["small"] / 1e6))
    print("|---|---|---|---|---|---|---|---|")
    for name, _ in CONFIGS:
        r = median[name]
        if name == "unprofiled":
            print("| unprofiled | %.2f s | 1.00x | %.2f s | | | | |" % (r["took"], r["wall"]))
            continue
        small = "%+.1f%%" % (100 * (r["est_small"] / r["small"] - 1)) if "leaks" in name else "-"
        print("| %s | %.2f s | %.2fx | %.2f s (%.2fx) | %d | %.1f MB | %+.1f%% | %s |"
              % (name, r["took"], r["took"] / base["took"], r["wall"], r["wall"] / base["wall"],
                 r["lost"], r["size"] / 1e6, 100 * (r["est_big"] / r["big"] - 1), small))


if __name__ == "__main__":
    main()
