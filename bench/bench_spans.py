#!/usr/bin/env python3
"""What a pyperfmap.span costs, with and without a recording of its probes.

One process per state runs N `with span("work", n=i):` around nothing, and
the same loop without the span, timing each with process CPU time (user
and system: a uprobe's trap is the process's system time), best of 5.
States: not recorded (the probes' semaphores down); semaphores up (raised
by the process itself, no uprobe: the traced path without its traps);
and recorded (perf record of pyperf-record's span probes, as every
pyperf-record mode records them), each with pyperfmap's trampolines off
and on.  Prints ns per span (loop with spans minus the bare loop).  Then
what one bare uprobe trap costs here: a C loop calling an empty function,
with and without perf recording a uprobe on it (ns per call, best of 5).
As root.

usage: bench/bench_spans.py [--build DIR] [--n N] [PYTHON...]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "perf-scripts"))

CHILD = r"""
import ctypes, os, sys, time
import pyperfmap
if len(sys.argv) > 3:       # the semaphores' addresses in the extension: raise them
    ext = pyperfmap._pyperfmap.__file__
    base = min(int(l.split("-")[0], 16) for l in open("/proc/self/maps") if l.rstrip().endswith(ext))
    for a in sys.argv[3:]:
        ctypes.c_ushort.from_address(base + int(a, 16)).value += 1
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


LOOP = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
/* its first instruction a nop, as at a USDT probe: the kernel skips it
 * without stepping it out of line */
__attribute__((noinline)) void hit(long i) { __asm__ volatile("nop" : : "r"(i)); }
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}
int main(int argc, char **argv)
{
    long n = atol(argv[1]);
    double best = 1e300;
    for (int r = 0; r < 5; r++) {
        double t = now();
        for (long i = 0; i < n; i++)
            hit(i);
        t = now() - t;
        best = t < best ? t : best;
    }
    printf("%.1f\n", best / n);
    return 0;
}
"""


def semaphores(ext):
    """The span__enter and span__exit semaphores' addresses in ext."""
    notes = subprocess.run(["readelf", "-n", ext], stdout=subprocess.PIPE, universal_newlines=True,
                           check=True).stdout
    return re.findall(r"Name: span__(?:enter|exit)\n.*Semaphore: (0x[0-9a-f]+)", notes)


def bare_trap(n, tmp):
    """ns per call of an empty C function, without and with a uprobe on it."""
    exe = os.path.join(tmp, "loop")
    subprocess.run(["cc", "-O2", "-fcf-protection=none", "-x", "c", "-", "-o", exe], input=LOOP, universal_newlines=True, check=True)
    group = "benchspans%d" % os.getpid()
    subprocess.run(["perf", "probe", "-q", "-x", exe, "-a", "%s:hit=hit" % group], check=True)
    try:
        off = float(subprocess.run([exe, str(n)], stdout=subprocess.PIPE, check=True).stdout)
        on = float(subprocess.run(["perf", "record", "-q", "-o", os.path.join(tmp, "loop.data"), "-e",
                                   group + ":hit/call-graph=no/", "--", exe, str(n)],
                                  stdout=subprocess.PIPE, check=True).stdout.split()[-1])
    finally:
        subprocess.run(["perf", "probe", "-q", "-d", group + ":*"], check=True)
    return off, on


def run(py, build, n, tramp, probes, tmp, sems=()):
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.abspath(build), "libpyperfmap"))
    cmd = [py, "-c", CHILD, str(n), tramp] + list(sems)
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
    print("%-10s %-12s %14s %14s %14s" % ("python", "trampolines", "not recorded", "semaphores up",
                                          "recorded"))
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
                    up = run(py, a.build, a.n, tramp, None, tmp, semaphores(ext))
                    on = run(py, a.build, a.n, tramp, probes, tmp)
                    print("%-10s %-12s %11.0f ns %11.0f ns %11.0f ns" % (os.path.basename(py), tramp, off,
                                                                         up, on))
            finally:
                probes.remove()
    with tempfile.TemporaryDirectory() as tmp:
        off, on = bare_trap(a.n, tmp)
        print("one bare uprobe trap: %.0f ns (an empty C call: %.1f ns, with a uprobe: %.0f ns)"
              % (on - off, off, on))


if __name__ == "__main__":
    main()
