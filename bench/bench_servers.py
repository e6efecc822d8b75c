#!/usr/bin/env python3
"""A forking WSGI server under pyperf-record: completeness, size, loss, rate.

gunicorn (Debian's python3-gunicorn) serves a small WSGI app with two sync
workers on a Unix socket, driven by CLIENTS threads of keep-nothing HTTP
requests for SECONDS.  It runs once unprofiled, then under the
pyperf-record of each tree given (this one, and --baseline TREE's, for
before/after), in the same run.  Each line gives the requests per second
the clients got, the records perf lost (pymerge -v), perf.data's size and
bytes per second of recording, and the share of the workers' wall time
(pymerge --tid, python view; the stacks with Python frames or [truncated])
under complete stacks that reach the arbiter's spawn_worker, which forked
them.  On a loaded machine the request rates
move by tens of percent from run to run: compare them only on a quiet one.

  bench/bench_servers.py [--mode wall|offcpu] [--seconds S] [--clients N] [--baseline TREE]

Run as root from the top of a clone with build/ compiled; TREE likewise.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = "/usr/bin/python3"
sys.path.insert(0, os.path.join(TOP, "tests", "programs"))
from unix_http import answers, load  # noqa: E402


def drive(sock, seconds, clients):
    """Requests per second over `seconds`, once the server answers."""
    if not answers(sock):
        raise SystemExit("gunicorn never answered on " + sock)
    served, took = load(sock, seconds, clients)
    return served / took


def env_of(tree):
    env = dict(os.environ)
    if tree:
        lib = os.path.join(tree, "build", "libpyperfmap")
        env["PYTHONPATH"] = os.path.join(lib, "pyperfmap", "hook") + ":" + lib     # as meson devenv
    return env


def serve(d, tree, mode, seconds, clients):
    """(requests per second, pymerge -v's stderr and --tid python view, perf.data's bytes,
    seconds recorded, the arbiter's PID)."""
    sock, pidfile, out = os.path.join(d, "sock"), os.path.join(d, "arbiter.pid"), os.path.join(d, "rec")
    for p in (sock, pidfile):
        if os.path.exists(p):
            os.unlink(p)
    shutil.rmtree(out, ignore_errors=True)
    server = [PYTHON, "-m", "gunicorn", "-w", "2", "-b", "unix:" + sock, "--pid", pidfile, "--chdir", d, "app:app"]
    cmd = server if not tree else [os.path.join(tree, "perf-scripts", "pyperf-record"), "--mode", mode, "-o", out,
                                   "--"] + server
    proc = subprocess.Popen(cmd, env=env_of(tree), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    t0 = time.time()
    try:
        rate = drive(sock, seconds, clients)
        with open(pidfile) as f:
            arbiter = f.read().strip()
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=600)
    if not tree:
        return rate, None, None, 0, 0, None
    took = time.time() - t0
    p = subprocess.run([os.path.join(tree, "build", "merge", "pymerge"), "-v", "--tid", "--view", "python",
                        out + "/perf.data"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    return rate, p.stderr, p.stdout, os.path.getsize(out + "/perf.data"), took, arbiter


def complete(folded, arbiter):
    total = ok = 0
    for line in folded.splitlines():
        stack, w = line.rsplit(" ", 1)
        # a worker's own stacks: not the arbiter's, and with a user stack
        # (Python frames or [truncated]; not its exit, in the kernel alone)
        if re.match(r"[^;]*-%s/" % arbiter, stack) or not ("[truncated]" in stack or ".py)" in stack):
            continue
        total += int(w)
        if "[truncated]" not in stack and "Arbiter.spawn_worker (arbiter.py)" in stack:
            ok += int(w)
    return 100.0 * ok / total if total else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", default="wall", choices=("wall", "offcpu"))
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--baseline", metavar="TREE")
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="bench-servers-")
    try:
        shutil.copy(os.path.join(TOP, "tests", "programs", "gunicorn_app.py"), os.path.join(d, "app.py"))
        plain = serve(d, None, a.mode, a.seconds, a.clients)[0]
        print("| pyperf-record of | requests/s (unprofiled %.0f) | lost | perf.data | per second of the run |"
              " workers' wall time complete |" % plain)
        print("|---|---:|---:|---:|---:|---:|")
        for name, tree in (("--baseline", a.baseline), ("this tree", TOP)):
            if not tree:
                continue
            rate, err, folded, size, took, arbiter = serve(d, tree, a.mode, a.seconds, a.clients)
            lost = re.search(r" (\d+) lost,", err)
            print("| %s | %.0f (%.2fx) | %s | %.1f MB | %.1f MB/s | %.1f%% |"
                  % (name, rate, rate / plain, lost.group(1) if lost else "?", size / 1e6,
                     size / 1e6 / took, complete(folded, arbiter)))
            sys.stdout.flush()
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
