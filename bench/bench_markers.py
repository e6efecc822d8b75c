#!/usr/bin/env python3
"""What pyperfmap's standard markers cost per Python call, with and
without a tracer attached.

Runs a recursive fib under pyperfmap, timing it (process CPU time, user
and system: a uprobe's trap is the process's system time) in three
states: no tracer; bpftrace counting python:function__entry per function
name (the issue's one-liner); and the same with function__return too.
Each state is one process, fib(N) repeated, best of the repeats.  Prints
ns per call and the difference to the untraced run.  As root.

usage: bench/bench_markers.py [--build DIR] [--n N] [PYTHON...]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

from bench_usdt import calls_of_fib  # this folder is on sys.path

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r"""
import os, sys, time
import pyperfmap
pyperfmap.enable()
go = sys.argv[1]
while go != "-" and not os.path.exists(go):
    time.sleep(0.01)
def fib(k): return k if k < 2 else fib(k - 1) + fib(k - 2)
best = None
for _ in range(5):
    t = time.process_time()
    fib(int(sys.argv[2]))
    t = time.process_time() - t
    best = t if best is None else min(best, t)
print(best)
"""

PROBE = "usdt:*:python:%s { @[str(arg1)] = count(); }"


def run(py, build, n, probes, tmp):
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.abspath(build), "libpyperfmap"))
    go = os.path.join(tmp, "go")
    if os.path.exists(go):
        os.unlink(go)
    child = subprocess.Popen([py, "-c", CHILD, go if probes else "-", str(n)], env=env,
                             stdout=subprocess.PIPE, universal_newlines=True)
    bt = None
    if probes:
        prog = 'BEGIN { system("touch %s"); } ' % go + " ".join(PROBE % p for p in probes)
        bt = subprocess.Popen(["bpftrace", "--unsafe", "-p", str(child.pid), "-e", prog],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = child.communicate()[0]
    if bt:
        bt.wait()
    return float(out) / calls_of_fib(n) * 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--n", type=int, default=22)
    ap.add_argument("pythons", nargs="*", default=["/root/.pyenv/versions/3.8.18/bin/python3.8",
                                                   "/root/.pyenv/versions/3.12.1/bin/python3.12"])
    a = ap.parse_args()
    print("| CPython | fib(%d), ns per call: no tracer | bpftrace on function__entry | on entry and return |"
          % a.n)
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for py in a.pythons:
            ver = re.search(r"python(3\.\d+)", py).group(1)
            base = run(py, a.build, a.n, [], tmp)
            entry = run(py, a.build, a.n, ["function__entry"], tmp)
            both = run(py, a.build, a.n, ["function__entry", "function__return"], tmp)
            print("| %s | %.0f | %.0f (+%.0f) | %.0f (+%.0f) |" % (ver, base, entry, entry - base, both, both - base))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
