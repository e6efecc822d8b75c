#!/usr/bin/env python3
"""Benchmark the ways of seeing C allocations that bypass the global scope.

    bench/bench_native_alloc.py --python PYTHON [--calls 100000] [--runs 3]
                                [--pythonpath BUILD/libpyperfmap] [--pymerge BUILD/merge/pymerge]

The program calls malloc and free of ctypes.CDLL("libc.so.6"), which dlsym
finds on libc's own handle, not through the global scope where the
preloaded interposer is: churn allocates and frees --calls blocks of 4
to 64 KiB (big enough that the Python objects of each call, which count
under churn too, are about 1% of its bytes), keep keeps 1,000 blocks of
64 KiB.  It measures its own work
(time.process_time: its CPU time, which counts the kernel's time in uprobe
traps) and prints the truth.

Each configuration runs --runs times, interleaved, in the same run:
  unprofiled      the program alone
  alloc           pyperf-record --mode alloc: the interposer, which the C
                  library's own definitions now name (sampled, 512 KiB)
  alloc --exact   uprobes on every call of libc's allocator, the other way
                  of seeing calls that never reach the interposer
and reports, per configuration: the program's CPU time (the median of
--runs) against the unprofiled one's, the events perf lost, perf.data's
size, and keep's and churn's estimated bytes against the truth.

Prints a Markdown table.  Needs root (uprobes), perf, and a pyperfmap build
for PYTHON.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

from bench_memory import bench_args, medians, recording

HERE = os.path.dirname(os.path.abspath(__file__))
RECORD = os.path.join(HERE, "..", "perf-scripts", "pyperf-record")

PROGRAM = r"""
import ctypes, sys, time
libc = ctypes.CDLL("libc.so.6")
malloc, free = libc.malloc, libc.free
malloc.restype = ctypes.c_void_p
malloc.argtypes = [ctypes.c_size_t]
free.argtypes = [ctypes.c_void_p]
KEPT = []

def churn(n):
    total = 0
    for i in range(n):
        size = 4096 * (1 + i % 16)
        free(malloc(size))
        total += size
    return total

def keep(n):
    for _ in range(n):
        KEPT.append(malloc(65536))

calls = int(sys.argv[1])
start = time.process_time()
churned = sum(churn(calls // 10) for _ in range(10))
keep(1000)
print("took", time.process_time() - start, "keep", 1000 * 65536, "churn", churned)
"""

CONFIGS = [("unprofiled", None), ("alloc", ["--mode", "alloc"]),
           ("alloc --exact", ["--mode", "alloc", "--exact"])]


def run_once(a, opts, script, out):
    env = dict(os.environ, PYTHONPATH=a.pythonpath)
    cmd = [a.python, script, str(a.calls)]
    if opts:
        cmd = [RECORD, "-o", out] + opts + ["--"] + cmd
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, universal_newlines=True)
    if r.returncode != 0:
        sys.exit("%s failed: %s" % (" ".join(cmd), r.stderr[-2000:]))
    m = re.search(r"took ([\d.]+) keep (\d+) churn (\d+)", r.stdout)
    res = {"took": float(m.group(1)), "keep": int(m.group(2)), "churn": int(m.group(3))}
    if opts:
        by = recording(a, out, ("keep", "churn"), res)
        res["est_keep"], res["est_churn"] = by["keep"], by["churn"]
        os.unlink(os.path.join(out, "perf.data"))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=100000)
    bench_args(ap)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="bench-native-alloc-")
    script = os.path.join(work, "native_alloc.py")
    with open(script, "w") as f:
        f.write(PROGRAM)
    median = medians(CONFIGS, a.runs, work, lambda name, opts, out: run_once(a, opts, script, out))
    base = median["unprofiled"]
    print("| mode | program time | slowdown | lost events | perf.data | keep (truth %.1f MB) |"
          " churn (truth %.1f MB) |" % (base["keep"] / 1e6, base["churn"] / 1e6))
    print("|---|---|---|---|---|---|---|")
    for name, _ in CONFIGS:
        r = median[name]
        if name == "unprofiled":
            print("| unprofiled | %.2f s | 1.00x | | | | |" % r["took"])
            continue
        print("| %s | %.2f s | %.2fx | %d | %.1f MB | %+.1f%% | %+.1f%% |"
              % (name, r["took"], r["took"] / base["took"], r["lost"], r["size"] / 1e6,
                 100 * (r["est_keep"] / r["keep"] - 1), 100 * (r["est_churn"] / r["churn"] - 1)))


if __name__ == "__main__":
    main()
