#!/usr/bin/env python3
"""What pyperf-top's live view costs, against pyperf-record in the same run.

One busy thread does a fixed amount of Python work (about 8 s alone),
recorded at 999 Hz three ways, in turns, ROUNDS times:

  alone          python work.py
  pyperf-record  pyperf-record -F 999 -- python work.py
  pyperf-top     pyperf-top -F 999 -- python work.py, in a 160x45 tmux
                 terminal (curses drawing every second), or on a pipe when
                 tmux is missing

Reported (medians): the program's wall time and its own CPU time in each
way; the ratio pyperf-top / pyperf-record of both (the slowdown pyperf-top
adds beyond recording); and the live view's own CPU (pymerge + pyperf-top,
not perf, from the folder's recording.txt) as a share of one core over the
run, with the samples per second that it handled.  On a loaded machine the
program gets less than a core, so fewer than 999 samples a second: the
view's cost is also split into what it costs without samples (pyperf-top
as long on a program that sleeps) and a part per sample, and given for 999
samples/s.

usage: PATH=build/merge:$PATH PYTHONPATH=build/libpyperfmap \\
       python3 bench/bench_top.py [--python PY] [--rounds N] [--work N]
"""
import argparse
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "perf-scripts")
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from harness import spin  # noqa: E402  (the hot leaf the tests' programs share)

WORK = spin("leaf") + """
import os, sys, time
def middle(n):
    return sum(leaf(200) for _ in range(n))
t0, c0 = time.time(), os.times()
for _ in range(int(sys.argv[1])):
    middle(100)
c1 = os.times()
print("elapsed %.3f cpu %.3f" % (time.time() - t0, c1.user + c1.system - c0.user - c0.system))
"""


def timings(text):
    m = re.search(r"elapsed ([\d.]+) cpu ([\d.]+)", text)
    if not m:
        sys.exit("bench_top: the program printed no timings:\n" + text)
    return float(m.group(1)), float(m.group(2))


def samples(folder):
    err = subprocess.run(["pymerge", "-v", os.path.join(folder, "perf.data")], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, universal_newlines=True).stderr
    m = re.search(r"(\d+) samples", err)
    return int(m.group(1)) if m else 0


def live_cpu(folder):
    with open(os.path.join(folder, "recording.txt")) as f:
        m = re.search(r"live view cpu: pymerge ([\d.]+) s, pyperf-top ([\d.]+) s .* in ([\d.]+) s:", f.read())
    return float(m.group(1)), float(m.group(2)), float(m.group(3))


def run_top_tmux(cmd, folder):
    sock = "bench-top-%d" % os.getpid()
    line = shlex.join(cmd) + "; echo DONE > %s/done" % shlex.quote(folder)
    try:
        subprocess.run(["tmux", "-L", sock, "new-session", "-d", "-x", "160", "-y", "45",
                        "sh", "-c", line], check=True)
        while not os.path.exists(os.path.join(folder, "done")):
            time.sleep(0.2)
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], stderr=subprocess.DEVNULL)
        # the server leaves its socket behind
        subprocess.run(["rm", "-f", "/tmp/tmux-%d/%s" % (os.getuid(), sock)])


def run_top(python, args, folder, tty):
    cmd = [sys.executable, os.path.join(SCRIPTS, "pyperf-top"), "-o", folder, "-F", "999",
           "--", python] + args
    if tty:
        os.makedirs(folder)
        run_top_tmux(cmd, folder)
    else:
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return live_cpu(folder) + (samples(folder),)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", type=int, default=16000, help="rounds of work (default 16000: ~8 s of CPU)")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-top-")
    prog = os.path.join(tmp, "work.py")
    with open(prog, "w") as f:
        f.write(WORK)
    res = {"alone": [], "record": [], "top": []}
    busy, idle = [], []     # (pymerge s, pyperf-top s, seconds, samples)
    tty = bool(shutil.which("tmux"))
    try:
        for r in range(a.rounds):
            out = subprocess.run([a.python, prog, str(a.work)], stdout=subprocess.PIPE,
                                 universal_newlines=True).stdout
            res["alone"].append(timings(out))
            rec = os.path.join(tmp, "rec%d" % r)
            out = subprocess.run([sys.executable, os.path.join(SCRIPTS, "pyperf-record"), "-o", rec,
                                  "-F", "999", "--", a.python, prog, str(a.work)],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 universal_newlines=True).stdout
            res["record"].append(timings(out))
            top = os.path.join(tmp, "top%d" % r)
            busy.append(run_top(a.python, [prog, str(a.work)], top, tty))
            with open(os.path.join(top, "output.txt")) as f:
                res["top"].append(timings(f.read()))
            # the same view as long on a program that sleeps: what it costs
            # without samples (start-up, drawing every second)
            idle.append(run_top(a.python, ["-c", "import time; time.sleep(%.1f)" % busy[-1][2]],
                                os.path.join(tmp, "idle%d" % r), tty))
            for d in (rec, top, os.path.join(tmp, "idle%d" % r)):
                shutil.rmtree(d, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in res.items()}
    print("bench_top: %d rounds, %s, the view %s" % (a.rounds, a.python,
                                                      "in tmux (curses)" if tty else "on a pipe"))
    print("%-14s %10s %10s" % ("", "wall s", "cpu s"))
    for k, name in (("alone", "alone"), ("record", "pyperf-record"), ("top", "pyperf-top")):
        print("%-14s %10.2f %10.2f" % (name, med[k][0], med[k][1]))
    print("pyperf-top / pyperf-record: wall %.3f, program cpu %.3f"
          % (med["top"][0] / med["record"][0], med["top"][1] / med["record"][1]))
    shares = [100 * (m + u) / s for m, u, s, _ in busy]
    rate = statistics.median(n / s for _, _, s, n in busy)
    print("live view cpu (pymerge + pyperf-top), busy program: median %.2f%% of a core (runs: %s),"
          " %.0f samples/s; pymerge %.2f s, pyperf-top %.2f s of %.1f s"
          % (statistics.median(shares), ", ".join("%.2f" % x for x in shares), rate,
             statistics.median(v[0] for v in busy), statistics.median(v[1] for v in busy),
             statistics.median(v[2] for v in busy)))
    # Without samples (the sleeping program as long: start-up, drawing) and
    # per sample (what the busy run cost beyond that), for 999 samples/s.
    fixed = [(m + u) / s for m, u, s, _ in idle]
    per = [max(0.0, b[0] + b[1] - f * b[2]) / b[3] for b, f in zip(busy, fixed) if b[3]]
    print("  sleeping program: %.2f%% of a core; per sample: %.1f us; so at 999 samples/s:"
          " %.2f%% of a core" % (100 * statistics.median(fixed), 1e6 * statistics.median(per),
                                 100 * (statistics.median(fixed) + 999 * statistics.median(per))))


if __name__ == "__main__":
    main()
