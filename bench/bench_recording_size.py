#!/usr/bin/env python3
"""What `pyperf-record --mode cpu` writes at its defaults, beside a baseline.

Two busy single-threaded programs run under pyperf-record (cpu mode, no
options but -o) of each tree given, in the same run:
  phases  tests/merge/dwarf/phases.py: three phases reached through seven
          Python calls, whose CPU split the program measures itself;
  django  tests/merge/dwarf/django_site.py: a Django request loop through
          the test client (Debian's python3-django), deep real stacks.
Each line gives perf.data's size, megabytes per second of the recording
(first to last sample), the records perf lost (pymerge -v), the share of
the samples holding Python frames whose stack is complete (python view,
no [truncated]), and for phases the largest gap between a phase's share of
the samples and its measured share of the CPU time, in points.

  bench/bench_recording_size.py [--seconds S] [--python PY] [--baseline TREE]

TREE: another checkout with build/ compiled (today's defaults: a worktree
of main).  Run as root from the top of a clone with build/ compiled.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYMERGE = os.path.join(TOP, "build", "merge", "pymerge")
sys.path.insert(0, os.path.join(TOP, "tests", "merge"))
import test_dwarf_python as tdp  # noqa: E402  (phase_of, PHASES)
import test_stitch as ts  # noqa: E402  (complete_share)


def record(tree, d, cmd):
    """pyperf-record of tree, at its defaults; the folder."""
    out = os.path.join(d, "rec")
    shutil.rmtree(out, ignore_errors=True)
    lib = os.path.join(tree, "build", "libpyperfmap")
    env = dict(os.environ, PYTHONPATH=os.path.join(lib, "pyperfmap", "hook") + ":" + lib)
    subprocess.run([os.path.join(tree, "perf-scripts", "pyperf-record"), "-o", out, "--"] + cmd,
                   env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


def span(data):
    """Seconds from the first sample to the last."""
    out = subprocess.run(["perf", "script", "-i", data, "-F", "time"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, universal_newlines=True).stdout.split()
    times = [float(t.rstrip(":")) for t in out]
    return max(times) - min(times)


def measure(tree, d, name, python, seconds):
    split = os.path.join(d, "split.json")
    cmd = [python, os.path.join(TOP, "tests", "merge", "dwarf", "phases.py"), str(seconds), split] \
        if name == "phases" else [python, ts.DJANGO, str(seconds)]
    data = os.path.join(record(tree, d, cmd), "perf.data")
    p = subprocess.run([PYMERGE, "-v", "--weight", "samples", "--view", "python", "--no-native-leaf", data],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=True)
    stacks = ts.folded_sums(p.stdout)
    lost = re.search(r" (\d+) lost,", p.stderr)
    gap = ""
    if name == "phases":
        with open(split) as f:
            measured = json.load(f)
        total = sum(stacks.values())
        gap = "%.1f pt" % max(abs(sum(c for s, c in stacks.items() if tdp.phase_of(s.split(";")) == ph) / total
                                  - measured[ph] / measured["total"]) * 100 for ph in tdp.PHASES)
    size = os.path.getsize(data)
    return size, size / span(data), lost.group(1) if lost else "?", 100 * ts.complete_share(stacks), gap


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--baseline", metavar="TREE")
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="bench-recording-size-")
    try:
        print("| program | pyperf-record of | perf.data | MB/s | lost | complete | phase gap |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for name in ("phases", "django"):
            for label, tree in (("--baseline", a.baseline), ("this tree", TOP)):
                if not tree:
                    continue
                size, rate, lost, complete, gap = measure(tree, d, name, a.python, a.seconds)
                print("| %s | %s | %.1f MB | %.2f | %s | %.1f%% | %s |"
                      % (name, label, size / 1e6, rate / 1e6, lost, complete, gap))
                sys.stdout.flush()
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
