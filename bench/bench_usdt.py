#!/usr/bin/env python3
"""What pyperfmap's static probes (USDT) cost while no one traces them.

Times bench_trampolines.py's workloads with pyperfmap enabled, from two
builds of the extension: one with the probes (-Dusdt=enabled) and one
without (-Dusdt=disabled).  Both are loaded side by side into one
interpreter (two files, two modules), and enabled in turns, each round
rotating the order (every arm runs first, second and third as often), so that the two arms share the process, its memory
layout and the machine's moment: across processes this VM's noise (a few
percent) hides a 1% effect.  A third arm is a copy of the build without
probes: its ratio to the second is the run's noise floor (an A/A test).
Each figure is the best repetition over all rounds (on a shared VM noise
only ever adds time).

Timing cannot resolve 1% here: the A/A arm, the same code from another
file, lands a few percent off.  --instructions counts instead (valgrind's
callgrind, exact and repeatable): the instructions a recursive fib costs
per Python call with each build, with fib(2) subtracted (start-up).

usage: bench/bench_usdt.py --with BUILD --without BUILD [--rounds N] [--instructions] [PYTHON...]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# Runs in the interpreter measured: loads each arm's extension under the
# module name its init function has, from its own file.
CHILD = r"""
import importlib.machinery, importlib.util, json, sys, tempfile, time
sys.path.insert(0, %(here)r)
import trampoline_workloads as w
fn = getattr(w, %(workload)r)
arms = {}
for name, path in %(arms)r:
    loader = importlib.machinery.ExtensionFileLoader("_pyperfmap", path)
    spec = importlib.util.spec_from_file_location("_pyperfmap", path, loader=loader)
    arms[name] = (importlib.util.module_from_spec(spec), tempfile.mkdtemp())
times = {name: [] for name in arms}
for r in range(%(rounds)d):
    names = list(arms)
    for name in names[r %% len(names):] + names[:r %% len(names)]:
        m, maps = arms[name]
        assert m.enable(maps)
        fn()  # warm-up: this arm's trampolines, caches
        for _ in range(%(repeat)d):
            t = time.process_time()
            fn()
            times[name].append(time.process_time() - t)
        m.disable()
print(json.dumps({name: min(v) for name, v in times.items()}))
"""


# The same, counting: fib(N) under one build's pyperfmap.
FIB = r"""
import importlib.machinery, importlib.util, sys, tempfile
loader = importlib.machinery.ExtensionFileLoader("_pyperfmap", sys.argv[1])
m = importlib.util.module_from_spec(importlib.util.spec_from_file_location("_pyperfmap", sys.argv[1], loader=loader))
def fib(k): return k if k < 2 else fib(k - 1) + fib(k - 2)
assert m.enable(tempfile.mkdtemp(), *([True] if sys.argv[3:] == ["paths"] else []))
fib(int(sys.argv[2]))
"""


def calls_of_fib(n):
    return 1 if n < 2 else 1 + calls_of_fib(n - 1) + calls_of_fib(n - 2)


def instructions(py, so, n, paths=False):
    err = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", py, "-c", FIB, so,
                          str(n)] + (["paths"] if paths else []), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         env=dict(os.environ, PYTHONHASHSEED="0"), universal_newlines=True, check=True).stderr
    return int(re.search(r"Collected : (\d+)", err).group(1))


def count(py, w, wo, ver, paths=False):
    """Instructions per Python call under two builds' pyperfmap: w, the
    one measured (with the probes; with paths, enable(paths=True)), and wo,
    its reference."""
    n = 25
    per = {}
    for name, so, p in (("without", wo, False), ("with", w, paths)):
        per[name] = ((instructions(py, so, n, p) - instructions(py, so, 2, p))
                     / (calls_of_fib(n) - calls_of_fib(2)))
    print("| %s | fib(%d) | %.1f | %.1f | +%.1f (%.2f%%) |" % (ver, n, per["without"], per["with"],
                                                              per["with"] - per["without"],
                                                              100 * (per["with"] / per["without"] - 1)))


def extension(build, python):
    suffix = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"],
                            stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout.strip()
    return os.path.join(os.path.abspath(build), "libpyperfmap", "pyperfmap", "_pyperfmap" + suffix)


def has_probes(so):
    notes = subprocess.run(["readelf", "-n", so], stdout=subprocess.PIPE, universal_newlines=True).stdout
    return "function__entry" in notes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--with", dest="probes", required=True, help="build folder with the probes")
    ap.add_argument("--without", dest="plain", required=True, help="build folder without them")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workload", default="calls", choices=("calls", "mix"))
    ap.add_argument("--instructions", action="store_true",
                    help="count instructions per call (valgrind) instead of timing")
    ap.add_argument("pythons", nargs="*", default=["/root/.pyenv/versions/3.10.13/bin/python3.10",
                                                   "/root/.pyenv/versions/3.12.1/bin/python3.12"])
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-usdt-")
    if a.instructions:
        print("| CPython | workload | instructions per call, without probes | with probes | difference |")
        print("|---|---|---|---|---|")
    else:
        print("| CPython | workload | without probes (s) | with probes (s) | with / without |"
              " A/A: a copy of without / without |")
        print("|---|---|---|---|---|---|")
    try:
        for py in a.pythons:
            w, wo = extension(a.probes, py), extension(a.plain, py)
            if not has_probes(w) or has_probes(wo):
                sys.exit("bench_usdt: %s must have the probes and %s must not (readelf -n)" % (w, wo))
            ver = subprocess.run([py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                 stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
            if a.instructions:
                count(py, w, wo, ver)
                continue
            again = os.path.join(tmp, os.path.basename(wo))
            shutil.copyfile(wo, again)
            arms = [("with", w), ("without", wo), ("again", again)]
            out = subprocess.run([py, "-c", CHILD % dict(here=HERE, workload=a.workload, arms=arms,
                                                         rounds=a.rounds, repeat=a.repeat)],
                                 env=dict(os.environ, PYTHONHASHSEED="0"), stdout=subprocess.PIPE,
                                 universal_newlines=True, check=True).stdout
            t = json.loads(out)
            print("| %s | %s | %.4f | %.4f | %.4f | %.4f |" % (ver, a.workload, t["without"], t["with"],
                                                             t["with"] / t["without"],
                                                             t["again"] / t["without"]))
            sys.stdout.flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
