#!/usr/bin/env python3
"""Overhead of pyperfmap's trampolines, per installed CPython.

For each interpreter, prints the CPU-time ratio of a workload run with a
hook against the same workload run plain:
  noop       a PEP 523 hook that only calls the default evaluator: the floor
             that any eval-frame hook pays (3.11+ leave their inlined calls)
  pyperfmap  pyperfmap.enable()
  -X perf    CPython's own perf trampolines (3.12+), measured in the same run
Workloads: "calls" (recursive fib, method calls, generators) and "mix"
(json, re, hashlib).  Modes are interleaved in rounds, and each figure is
the best repetition over all rounds: on a shared VM interference only ever
adds time, so the minimum is the estimate that noise disturbs least.

--baseline DIR adds a fifth mode, the pyperfmap of another build tree (say,
the commit before a change to the hook), interleaved with the others, and a
last column: this build's pyperfmap against it.  On a loaded VM timing
cannot resolve a 1% change; --instructions with --baseline counts instead
(valgrind's callgrind, as bench_usdt.py --instructions does): instructions
per Python call of a recursive fib under each build's pyperfmap; --paths
counts this build's with enable(paths=True).

usage: bench/bench_trampolines.py [--rounds N] [--build DIR] [--baseline DIR [--instructions [--paths]]] [PYTHON...]
"""
import argparse
import glob
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = os.path.join(HERE, "trampoline_workloads.py")


def measure(py, mode, workload, env, repeat):
    args = [py] + (["-X", "perf"] if mode == "xperf" else []) + [
        WORKLOADS, "pyperfmap" if mode == "baseline" else mode, workload, str(repeat)]
    out = subprocess.run(args, env=env, check=True, stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    return min(float(x) for x in out.split())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--baseline", help="another build tree whose pyperfmap to compare with")
    ap.add_argument("--instructions", action="store_true",
                    help="with --baseline: count instructions per call (valgrind) instead of timing")
    ap.add_argument("--paths", action="store_true",
                    help="with --instructions: this build's pyperfmap keeps call paths")
    ap.add_argument("pythons", nargs="*")
    a = ap.parse_args()
    pythons = a.pythons or sorted(glob.glob("/root/.pyenv/versions/3.*/bin/python3.[0-9]") + glob.glob("/root/.pyenv/versions/3.*/bin/python3.[0-9][0-9]"),
                                  key=lambda p: int(p.rsplit(".", 1)[1]))
    if a.instructions:
        if not a.baseline:
            ap.error("--instructions compares with --baseline DIR")
        import bench_usdt  # its valgrind counter; this folder is on sys.path
        print("| CPython | workload | instructions per call, baseline | this build | difference |")
        print("|---|---|---|---|---|")
        for py in pythons:
            ver = subprocess.run([py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                 stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
            if tuple(map(int, ver.split("."))) < (3, 8):
                continue
            bench_usdt.count(py, bench_usdt.extension(a.build, py), bench_usdt.extension(a.baseline, py), ver,
                             a.paths)
        return
    # A fixed hash seed: string hashing changes dict layouts, and so timings,
    # from one process to the next.
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.abspath(a.build), "libpyperfmap"),
               PYTHONHASHSEED="0")
    envs = {"baseline": dict(env, PYTHONPATH=os.path.join(os.path.abspath(a.baseline), "libpyperfmap"))
            if a.baseline else None}
    last = " pyperfmap / baseline |" if a.baseline else ""
    print("| CPython | workload | noop hook | pyperfmap | -X perf | pyperfmap / noop | pyperfmap / -X perf |"
          + last)
    print("|---|---|---|---|---|---|---|" + ("---|" if a.baseline else ""))
    for py in pythons:
        ver = subprocess.run([py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
        if tuple(map(int, ver.split("."))) < (3, 8):
            continue
        modes = (["off", "noop", "pyperfmap"] + (["xperf"] if ver >= "3.12" and len(ver) > 3 else [])
                 + (["baseline"] if a.baseline else []))
        for wl in ("calls", "mix"):
            times = {m: [] for m in modes}
            for _ in range(a.rounds):
                for m in modes:
                    times[m].append(measure(py, m, wl, envs.get(m) or env, a.repeat))
            base = min(times["off"])
            r = {m: min(times[m]) / base for m in modes}
            xp = r.get("xperf")
            print("| %s | %s | %.3fx | %.3fx | %s | %.3f | %s |%s" % (
                ver, wl, r["noop"], r["pyperfmap"], "%.3fx" % xp if xp else "n/a",
                r["pyperfmap"] / r["noop"], "%.3f" % (r["pyperfmap"] / xp) if xp else "n/a",
                " %.3f |" % (r["pyperfmap"] / r["baseline"]) if a.baseline else ""))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
