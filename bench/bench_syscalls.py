#!/usr/bin/env python3
"""What `pyperf-record --mode syscalls` costs at a busy server's rate.

A program (tests/programs/paced_writes.py, which the rates test records
too) makes about RATE write()s a second for SECONDS, from two functions
whose counts it knows (one write in three from `rare`, the rest from
`common`).  It runs once unprofiled and once under pyperf-record per
configuration given; each line gives the ratio of the program's own wall
time to the unprofiled run's, the same for its CPU time (user and system:
the kernel's work per event is charged to the program), the records perf
lost, perf.data's size, and how many of each function's writes pymerge
counted.  Wall times suffer when other work shares the CPUs; CPU times
much less.

  bench/bench_syscalls.py [--python PY] [--rate N] [--seconds S] [-- EXTRA ...]

EXTRA, repeatable as ';'-separated groups, are pyperf-record options to
compare, e.g. `-- '--dwarf=2048' '--dwarf=1024;-m;4096'`.  Run as root from
the top of a clone with `build/` compiled (pymerge and pyperfmap from it).
"""
import argparse, os, re, shutil, subprocess, sys, tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORD = os.path.join(TOP, "perf-scripts", "pyperf-record")
PYMERGE = os.path.join(TOP, "build", "merge", "pymerge")

PROGRAM = os.path.join(TOP, "tests", "programs", "paced_writes.py")


def run_plain(python, prog, rate, seconds):
    out = subprocess.run([python, prog, str(rate), str(seconds)], stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout.split()
    return float(out[2]), float(out[3]), [int(x) for x in out[:2]]


def run_recorded(python, prog, rate, seconds, extra, work):
    out = os.path.join(work, "rec")
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=os.path.join(TOP, "build", "libpyperfmap"),
               PATH=os.path.dirname(PYMERGE) + ":" + os.environ["PATH"])
    r = subprocess.run([RECORD, "--mode", "syscalls", "-o", out] + extra +
                       ["--", python, prog, str(rate), str(seconds)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env)
    if r.returncode:
        sys.exit("pyperf-record %s failed: %s" % (" ".join(extra), r.stderr[-2000:]))
    printed = r.stdout.split()
    truth, took, cpu = [int(x) for x in printed[:2]], float(printed[2]), float(printed[3])
    data = os.path.join(out, "perf.data")
    m = subprocess.run([PYMERGE, "-v", "--view", "python", data], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, env=env)
    got = {"common": 0, "rare": 0}
    for line in m.stdout.splitlines():
        stack, _, n = line.rpartition(" ")
        for name in got:
            if ";%s (" % name in stack and "write" in stack:
                got[name] += int(n)
    lost = sum(int(x) for x in re.findall(r"(\d+) lost,", m.stderr))
    return took, cpu, truth, got, lost, os.path.getsize(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", default="/root/.pyenv/versions/3.12.1/bin/python3.12")
    ap.add_argument("--rate", type=float, default=50000)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("configs", nargs="*", default=[""])
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="bench-syscalls-")
    try:
        base, base_cpu, truth = run_plain(a.python, PROGRAM, a.rate, a.seconds)
        print("unprofiled: %.2f s (CPU %.2f s), %d + %d writes (%.0f/s)" %
              (base, base_cpu, truth[0], truth[1], sum(truth) / base))
        for config in a.configs:
            extra = [x for x in config.split(";") if x]
            took, cpu, truth, got, lost, size = run_recorded(a.python, PROGRAM, a.rate, a.seconds, extra, work)
            share = ["%s %.1f%%" % (k, 100.0 * got[k] / t) for k, t in zip(("common", "rare"), truth)]
            print("%-20s wall %.2fx  CPU %.2fx  lost %d  perf.data %.0f MB  counted: %s" %
                  (" ".join(extra) or "(default)", took / base, cpu / base_cpu, lost, size / 1e6,
                   ", ".join(share)))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
