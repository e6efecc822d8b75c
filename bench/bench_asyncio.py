#!/usr/bin/env python3
"""Cost of asyncio task frames (docs/asyncio.md), in instructions.

An asyncio program made of the shortest task steps there are: TASKS tasks,
gathered by a main task, each awaiting asyncio.sleep(0) STEPS times, so
every step resumes a coroutine whose task is awaited (a chain of two task
frames).  valgrind's callgrind counts its instructions at two step counts;
the difference, divided by the extra steps, is the cost of one step without
the start and the end.  Modes, per interpreter (and with asyncio's C
accelerator off too, sys.modules['_asyncio'] = None):
  plain      no profiler
  no-tasks   pyperfmap.enable() with task frames off (PYPERFMAP_TASKS=0)
  tasks      pyperfmap.enable(): task frames on
  -X perf    CPython's own perf trampolines (3.12+), the standard tool
The last column is the task frames' own cost: tasks against no-tasks.

--baseline DIR also counts a program without asyncio (recursive fib and
method calls, bench/trampoline_workloads.py) under this build's pyperfmap
and under another build tree's (say, the commit before task frames), to
show what task frames cost a program that does not use asyncio.

usage: bench/bench_asyncio.py [--build DIR] [--baseline DIR] [PYTHON...]
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = os.path.join(HERE, "trampoline_workloads.py")

PROGRAM = r"""
import os, sys
if os.environ.get("NO_ACCEL") == "1":
    sys.modules["_asyncio"] = None
if os.environ.get("MODE") in ("tasks", "no-tasks"):
    import pyperfmap
    pyperfmap.enable()
import asyncio

TASKS, STEPS = 10, int(sys.argv[1])

async def worker():
    for _ in range(STEPS):
        await asyncio.sleep(0)

async def main():
    await asyncio.gather(*(asyncio.create_task(worker()) for _ in range(TASKS)))

asyncio.run(main())
"""
TASKS = 10
STEPS = (200, 1200)


def instructions(args, env):
    """Instructions that args execute under callgrind."""
    with tempfile.NamedTemporaryFile(suffix=".cg") as out:
        r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out.name]
                           + args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           universal_newlines=True)
        if r.returncode != 0:
            sys.exit("bench_asyncio: %s failed:\n%s" % (" ".join(args), r.stderr[-2000:]))
        for line in open(out.name):
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    sys.exit("bench_asyncio: no instruction count from callgrind")


def per_step(py, prog, mode, no_accel, build):
    env = dict(os.environ, MODE=mode, NO_ACCEL="1" if no_accel else "0", PYTHONHASHSEED="0",
               PYTHONPATH=os.path.join(build, "libpyperfmap"),
               PYPERFMAP_TASKS="0" if mode == "no-tasks" else "1")
    xperf = ["-X", "perf"] if mode == "xperf" else []
    lo, hi = (instructions([py] + xperf + [prog, str(n)], env) for n in STEPS)
    return (hi - lo) / ((STEPS[1] - STEPS[0]) * TASKS)


def version(py):
    """(major, minor) of interpreter py."""
    out = subprocess.run([py, "-c", "import sys; print('%d %d' % sys.version_info[:2])"],
                         check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout
    return tuple(int(x) for x in out.split())


def steps_table(pythons, build):
    # A folder of its own: the script's folder is searched on every import,
    # and a crowded /tmp, changing while it runs, makes the counts drift.
    with tempfile.TemporaryDirectory() as d:
        prog = os.path.join(d, "steps.py")
        with open(prog, "w") as f:
            f.write(PROGRAM)
        print("instructions per task step (%d tasks x sleep(0), steps %d..%d, callgrind)"
              % (TASKS, STEPS[0], STEPS[1]))
        print("%-8s %-9s %9s %9s %9s %9s %14s" % ("python", "asyncio", "plain", "no-tasks", "tasks",
                                                  "-X perf", "tasks/no-tasks"))
        for py in pythons:
            v = "%d.%d" % version(py)
            for no_accel in (False, True):
                row = {m: per_step(py, prog, m, no_accel, build)
                       for m in ("plain", "no-tasks", "tasks")}
                xp = per_step(py, prog, "xperf", no_accel, build) if version(py) >= (3, 12) else None
                print("%-8s %-9s %9.0f %9.0f %9.0f %9s %+13.2f%%" % (
                    v, "python" if no_accel else "C", row["plain"], row["no-tasks"], row["tasks"],
                    "%.0f" % xp if xp else "-", 100 * (row["tasks"] / row["no-tasks"] - 1)))


def no_asyncio_table(pythons, build, baseline):
    print("\nwithout asyncio: instructions of trampoline_workloads.py calls (whole run)")
    print("%-8s %14s %14s %10s" % ("python", "baseline", "this build", "change"))
    for py in pythons:
        counts = []
        for b in (baseline, build):
            env = dict(os.environ, PYTHONHASHSEED="0", PYTHONPATH=os.path.join(b, "libpyperfmap"))
            counts.append(instructions([py, WORKLOADS, "pyperfmap", "calls", "1"], env))
        print("%-8s %14d %14d %+9.3f%%" % ("%d.%d" % version(py), counts[0], counts[1],
                                          100 * (counts[1] / counts[0] - 1)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--baseline", help="another build tree, for the program without asyncio")
    ap.add_argument("pythons", nargs="*")
    a = ap.parse_args()
    pythons = a.pythons or sorted(glob.glob("/root/.pyenv/versions/3.*/bin/python3.*[0-9]"),
                                  key=lambda p: version(p))
    pythons = [p for p in pythons if version(p) >= (3, 8)]
    steps_table(pythons, os.path.abspath(a.build))
    if a.baseline:
        no_asyncio_table(pythons, os.path.abspath(a.build), os.path.abspath(a.baseline))


if __name__ == "__main__":
    main()
