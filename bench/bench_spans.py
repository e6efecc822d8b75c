#!/usr/bin/env python3
"""What a pyperfmap.span costs, with and without a recording of its probes.

One process per state runs N `with span("work", n=i):` around nothing, and
the same loop without the span, timing each with process CPU time (user
and system: a uprobe's trap is the process's system time), best of 5.
States: not recorded (the probes' semaphores down), and recorded (perf
record of pyperf-record's span probes, as every pyperf-record mode records
them), each with pyperfmap's trampolines off and on.  Prints ns per span
(loop with spans minus the bare loop).  As root.

usage: bench/bench_spans.py [--build DIR] [--n N] [PYTHON...]
"""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "perf-scripts"))

CHILD = r"""
import os, sys, time
import pyperfmap
if sys.argv[2] == "on":
    pyperfmap.enable()
from pyperfmap import span
n = int(sys.argv[1])
def bare():
    for i in range(n):
        pass
def spans():
    for i in range(n):
        with span("work", n=i):
            pass
def best(f):
    b = None
    for _ in range(5):
        t = time.process_time()
        f()
        t = time.process_time() - t
        b = t if b is None else min(b, t)
    return b
print((best(spans) - best(bare)) / n * 1e9)
"""


def run(py, build, n, tramp, probes, tmp):
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.abspath(build), "libpyperfmap"))
    cmd = [py, "-c", CHILD, str(n), tramp]
    if probes:
        cmd = ["perf", "record", "-q", "-o", os.path.join(tmp, "perf.data")] + [
            a for e in probes.events for a in ("-e", e + "/call-graph=no/")] + ["--"] + cmd
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    return float(out.split()[-1])


def main():
    from pyperfrecord.probes import span_probes
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--n", type=int, default=200000)
    ap.add_argument("pythons", nargs="*", default=["/root/.pyenv/versions/3.12.1/bin/python3.12"])
    a = ap.parse_args()
    print("%-10s %-12s %14s %14s" % ("python", "trampolines", "not recorded", "recorded"))
    for py in a.pythons:
        env = dict(os.environ, PYTHONPATH=os.path.join(os.path.abspath(a.build), "libpyperfmap"))
        ext = subprocess.run([py, "-c", "import pyperfmap._pyperfmap as m; print(m.__file__)"], env=env,
                             stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout.strip()
        probes = span_probes("perf", ext)
        with tempfile.TemporaryDirectory() as tmp:
            try:
                probes.add()
                for tramp in ("off", "on"):
                    off = run(py, a.build, a.n, tramp, None, tmp)
                    on = run(py, a.build, a.n, tramp, probes, tmp)
                    print("%-10s %-12s %11.0f ns %11.0f ns" % (os.path.basename(py), tramp, off, on))
            finally:
                probes.remove()


if __name__ == "__main__":
    main()
