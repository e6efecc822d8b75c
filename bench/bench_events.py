#!/usr/bin/env python3
"""Benchmark pymerge on tracepoint recordings, and the profile model's cost.

    bench/bench_events.py --pymerge BUILD/merge/pymerge [--old OLD/pymerge]
                          [--switches 400000] [--runs 3]

1. sched:sched_switch throughput.  A C-free workload of two threads that
   ping-pong a byte through two pipes (every round trip is two context
   switches per thread) is recorded twice, with frame-pointer callchains
   (perf record -e sched:sched_switch -g) and with DWARF stacks
   (--call-graph dwarf,16384), with pyperf-record's buffers (-m 128M).  On
   each file it times (best of --runs):
     pymerge --mode offcpu   pairing every switch-out with its switch-in
     perf script             perf's own decoding and printing alone
   and reports events per second and the ratio, the events perf lost, and
   the recording's cost to the program: its round trips' time, as it
   measures them itself, recorded and alone.

2. The model's cost (--old: a pymerge built before the profile model):
   old and new pymerge --view native on the same frame-pointer recording of
   bench_pymerge.py's kind (xz/gzip/sort) and on a DWARF recording of a
   Python program, interleaved, best of --runs, with peak RSS.

Prints Markdown tables for the README.  Needs root (tracepoints), tracefs
mounted (it mounts it when missing), perf, and python3.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_pymerge import measure  # noqa: E402  (wall seconds, peak RSS MiB)

TRACEFS = "/sys/kernel/tracing"

PINGPONG = r"""
import os, sys, threading, time
n, work = int(sys.argv[1]), int(sys.argv[2])
a_r, a_w = os.pipe()
b_r, b_w = os.pipe()
def echo():
    for _ in range(n):
        os.write(b_w, os.read(a_r, 1))
t = threading.Thread(target=echo)
t.start()
start = time.perf_counter()
for _ in range(n):
    for _ in range(work):
        pass
    os.write(a_w, b"x")
    os.read(b_r, 1)
print(time.perf_counter() - start)
t.join()
"""


def best(cmds, runs):
    """Interleaved runs of every command; the best time and largest RSS each."""
    res = {c: [] for c in cmds}
    for _ in range(runs):
        for c in cmds:
            res[c].append(measure(c + " >/dev/null"))
    return {c: (min(r[0] for r in v), max(r[1] for r in v)) for c, v in res.items()}


def count_events(pymerge, data, event):
    """(samples, lost records) of event, as pymerge --events counts them."""
    out = subprocess.run([pymerge, "--events", data], stdout=subprocess.PIPE, check=True,
                         universal_newlines=True).stdout
    m = re.search(r"^%s: (\d+) samples(?:, (\d+) lost)?" % re.escape(event), out, re.M)
    return int(m.group(1)), int(m.group(2) or 0)


def pingpong(cmd):
    """The ping-pong's round trips, in seconds, as the program timed them."""
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout
    return float(out.split()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pymerge", required=True)
    ap.add_argument("--old", help="a pymerge built before the profile model")
    ap.add_argument("--switches", type=int, default=200000, help="ping-pong round trips")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    if not os.path.isdir(os.path.join(TRACEFS, "events")):
        subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS], check=True)
    tmp = tempfile.mkdtemp(prefix="bench-events-")
    prog = os.path.join(tmp, "pingpong.py")
    with open(prog, "w") as f:
        f.write(PINGPONG)

    print("## sched:sched_switch: pymerge --mode offcpu vs perf script\n")
    print("| callchains | file | events (lost) | round trip recorded / alone | pymerge | events/s | perf script "
          "| ratio | RSS pymerge / perf |")
    print("|---|---|---|---|---|---|---|---|---|")
    # DWARF twice: flat out (perf cannot keep up: most events are lost),
    # and with a little work between the round trips, at a rate it keeps.
    dwarf = ["--call-graph", "dwarf,16384"]
    for name, cg, n, work in (("frame pointers (-g)", ["-g"], a.switches, 0),
                              ("DWARF 16 KiB", dwarf, a.switches // 10, 0),
                              ("DWARF 16 KiB, some work between trips", dwarf, a.switches // 20, 5000)):
        data = os.path.join(tmp, "switch-%d.data" % len(os.listdir(tmp)))
        rec = ["perf", "record", "-q", "-e", "sched:sched_switch", "--switch-events", "-m", "128M",
               "-o", data] + cg + ["--", sys.executable, prog, str(n), str(work)]
        rec_s = pingpong(rec)
        plain_s = min(pingpong([sys.executable, prog, str(n), str(work)]) for _ in range(a.runs))
        events, lost = count_events(a.pymerge, data, "sched:sched_switch")
        pm = "%s --mode offcpu %s" % (a.pymerge, data)
        ps = "perf script -i %s" % data
        r = best([pm, ps], a.runs)
        mb = os.path.getsize(data) / 1e6
        print("| %s | %.0f MB | %d (%d) | %.1f us / %.1f us | %.3f s | %.2fM | %.3f s | %.1fx | %.0f / %.0f MiB |"
              % (name, mb, events, lost, 1e6 * rec_s / n, 1e6 * plain_s / n, r[pm][0], events / r[pm][0] / 1e6,
                 r[ps][0], r[ps][0] / r[pm][0], r[pm][1], r[ps][1]))

    if a.old:
        print("\n## The profile model's cost: old (folded text) vs new pymerge, --view native\n")
        print("| recording | old | new | new/old | RSS old / new |")
        print("|---|---|---|---|---|")
        fp = os.path.join(tmp, "fp.data")
        words = os.path.join(tmp, "words.txt")
        with open(words, "w") as f:
            for i in range(2000000):
                f.write("w%d x%d y%d\n" % (i * 7919 % 100003, i % 977, i % 31))
        subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "4999", "-g", "-o", fp, "--",
                        "sh", "-c", "xz -9 -T1 -c %s >/dev/null; gzip -9 -c %s >/dev/null; sort %s >/dev/null"
                        % (words, words, words)], check=True)
        dw = os.path.join(tmp, "dwarf.data")
        subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "999", "--call-graph", "dwarf,32768",
                        "-o", dw, "--", sys.executable, "-c",
                        "import json,hashlib\n"
                        "for i in range(60):\n"
                        "    json.loads(json.dumps([{'a': j, 'b': str(j)} for j in range(20000)]))\n"
                        "    hashlib.sha256(b'x' * 2000000).hexdigest()"], check=True)
        for name, data in (("frame pointers", fp), ("DWARF", dw)):
            old = "%s --view native %s" % (a.old, data)
            new = "%s --view native %s" % (a.pymerge, data)
            r = best([old, new], a.runs)
            print("| %s, %.0f MB | %.3f s | %.3f s | %.2f | %.0f / %.0f MiB |" % (
                name, os.path.getsize(data) / 1e6, r[old][0], r[new][0], r[new][0] / r[old][0],
                r[old][1], r[new][1]))
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
