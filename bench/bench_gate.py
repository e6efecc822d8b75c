#!/usr/bin/env python3
"""How often `pymerge diff --runs` catches a slowdown, and how often it
fails an unchanged suite, on this machine (docs/ci.md).

Each trial records tests/programs/gate_bench (a pytest suite under
pytest --pyperfmap) RUNS times as the base, RUNS times with
GATE_SLOWDOWN=1.3 (parse_fields in test_parse does 30% more work) and
RUNS times unchanged, the three interleaved so that a change of the
machine's load falls on every side alike.  Then, per trial:
  caught      pymerge diff --runs RUNS BASE... SLOW... exits 3 naming
              test_parse and parse_fields;
  passed      pymerge diff --runs RUNS BASE... SAME... exits 0.
Prints both counts out of TRIALS and the command.  As root (uprobes).

usage: bench/bench_gate.py [--build DIR] [--trials N] [--runs N] [--keep DIR]
                           [--evaluate DIR] [-- PYMERGE-DIFF-OPTIONS...]
--keep DIR keeps the recordings; --evaluate DIR reads recordings kept
before instead of recording (to try other gate options on the same runs).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
SUITE = os.path.join(ROOT, "tests", "programs", "gate_bench")
PYTHON = "/usr/bin/python3"
# Samples per second: a benchmark's functions are told apart by their
# samples, and 3000 a second give each round of the suite's benchmarks
# some hundreds (docs/ci.md).
FREQ = "2999"


def record(build, out, slowdown):
    env = dict(os.environ, PYTHONPATH=os.path.join(build, "libpyperfmap"), GATE_SLOWDOWN=slowdown)
    cmd = [os.path.join(ROOT, "perf-scripts", "pyperf-record"), "-F", FREQ, "-m", "128M", "-o", out,
           "--", PYTHON, "-m",
           "pytest", "-q", "-p", "pyperfmap._pytest", "-p", "no:cacheprovider", "--pyperfmap", SUITE]
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, cwd=out.rsplit("/", 1)[0])
    if r.returncode:
        sys.exit("bench_gate: %s failed:\n%s" % (" ".join(cmd), r.stdout))


def record_trial(build, folder, runs):
    for i in range(runs):
        for side, slowdown in (("base", "1"), ("slow", "1.3"), ("same", "1")):
            record(build, os.path.join(folder, "%s%d" % (side, i)), slowdown)


def gate(build, folder, runs, other, options):
    paths = [os.path.join(folder, "%s%d" % (side, i)) for side in ("base", other)
             for i in range(runs)]
    cmd = [os.path.join(build, "merge", "pymerge"), "diff", "--runs", str(runs)] + options + paths
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    return r.returncode, r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--keep")
    ap.add_argument("--evaluate")
    ap.add_argument("options", nargs="*")
    a = ap.parse_args()
    top = a.evaluate or a.keep or tempfile.mkdtemp(prefix="bench-gate-")
    caught = passed = 0
    for t in range(a.trials):
        folder = os.path.join(top, "trial%d" % t)
        if not a.evaluate:
            os.makedirs(folder, exist_ok=True)
            record_trial(a.build, folder, a.runs)
        status, said = gate(a.build, folder, a.runs, "slow", a.options)
        hit = status == 3 and "test_parse" in said and "parse_fields" in said
        caught += hit
        status2, said2 = gate(a.build, folder, a.runs, "same", a.options)
        passed += status2 == 0
        print("trial %d: slowdown %s (exit %d), unchanged %s (exit %d)%s" % (
            t, "caught" if hit else "MISSED", status, "passed" if status2 == 0 else "FAILED",
            status2, "" if status2 == 0 else ": " + said2.strip().replace("\n", " | ")), flush=True)
        if not hit:
            print("  " + said.strip().replace("\n", "\n  "), flush=True)
    print("slowdown caught in %d of %d trials; unchanged suite passed %d of %d (%d runs a side)"
          % (caught, a.trials, passed, a.trials, a.runs))
    print("command: bench/bench_gate.py --trials %d --runs %d%s"
          % (a.trials, a.runs, " -- " + " ".join(a.options) if a.options else ""))
    if not (a.keep or a.evaluate):
        shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    main()
