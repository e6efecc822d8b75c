"""Servers: complete stacks of waits under large C frames, end to end.

Real programs under pyperf-record's wall and offcpu modes (real perf, as
root), merged by pymerge.  CPython's select.select() keeps about 49 KB of
arrays on its C stack and touches only their start: perf's copy of a
stack ends at the first page a thread never touched, so every sample
under such a frame loses its callers, whatever the copy's size, unless
pyperfmap maps each thread's stack pages (libpyperfmap/stackpages.h) and
the modes copy whole stacks at each switch.  Run by /usr/bin/python3
(meson suite "servers") with PYPERF_SCRIPTS, PYMERGE and PYPERFMAP_PATH
set; Debian's python3 runs the programs.
"""
import json
import os
import re
import signal
import subprocess
import sys
import unittest
from collections import Counter

from harness import HERE, PYMERGE, RECORD, Scratch, child_env, folded as parse_folded, output, program, run

sys.path.insert(0, os.path.join(HERE, "programs"))
from unix_http import answers, load  # noqa: E402

PYTHON = "/usr/bin/python3"


def shares(folded, keep=lambda stack: True):
    """(weight of the stacks keep() accepts, the part of it under
    [truncated]) of folded text."""
    total = truncated = 0
    for stack, w in parse_folded(folded):
        if keep(stack):
            total += w
            truncated += w if "[truncated]" in stack else 0
    return total, truncated


def lost(stderr):
    """The records pymerge -v says perf lost."""
    return int(re.search(r" (\d+) lost,", stderr).group(1))


class SelectWait(Scratch):
    """A SIGALRM handler beside a select() wait (tests/programs/select_alarm.py)."""

    def record(self, mode):
        prog = self.write("select_alarm.py", program("select_alarm.py"))
        out = self.path("rec-" + mode)
        run([RECORD, "--mode", mode, "-o", out, "--", PYTHON, prog, "1.5"], check=True)
        p = run([PYMERGE, "-v", "--view", "python", out + "/perf.data"], check=True)
        return p.stdout, p.stderr

    def check_complete(self, mode):
        folded, err = self.record(mode)
        total, truncated = shares(folded)
        waits = sum(w for s, w in parse_folded(folded)
                    if s.startswith("python3;<module> (select_alarm.py);main (select_alarm.py);"
                                    "wait_loop (select_alarm.py);"))
        print("%s: %.1f%% of the weight truncated, %.1f%% under wait_loop\n%s"
              % (mode, 100.0 * truncated / total, 100.0 * waits / total, err))
        self.assertEqual(lost(err), 0, err)
        # Measured: 96.4% of the samples truncated without the mapped pages
        # (0 of 644 stitched), 0.0-0.8% of the weight with them.
        self.assertLessEqual(truncated, 0.02 * total, folded)
        # the rest: starting and ending, longer on a busy machine
        self.assertGreaterEqual(waits, 0.7 * total, folded)

    def test_wall(self):
        """In wall mode, at least 98% of the program's wall time is under
        complete stacks, and at least 70% under the whole chain from
        <module> to wait_loop: the waits inside select() and the handler's
        samples beneath it reach their callers."""
        self.check_complete("wall")

    def test_offcpu(self):
        """The same in offcpu mode, whose samples are all waits."""
        self.check_complete("offcpu")


@unittest.skipUnless(subprocess.run([PYTHON, "-c", "import gevent"], stderr=subprocess.DEVNULL).returncode == 0,
                     "needs gevent for %s (Debian: python3-gevent)" % PYTHON)
class Greenlets(Scratch):
    """gevent's greenlets (tests/programs/greenlets.py)."""

    def test_complete(self):
        """Each greenlet's stack ends at its own start (g_initialstub), not
        at _start: pymerge takes that as complete, so at least 98% of the
        samples under greenlet_body have no [truncated] above it (without
        that, all of them were [truncated]), and greenlet_body is their
        outermost Python frame, right under the process."""
        prog = self.write("greenlets.py", program("greenlets.py"))
        out = self.path("rec")
        run([RECORD, "-o", out, "--", PYTHON, prog, "100"], check=True)
        folded = output([PYMERGE, "--view", "python", "--weight", "samples", out + "/perf.data"])
        total, truncated = shares(folded, lambda s: "greenlet_body (greenlets.py)" in s)
        rooted = sum(w for s, w in parse_folded(folded) if s.startswith("python3;greenlet_body (greenlets.py)"))
        print("%d samples under greenlet_body, %d truncated, %d right under the root"
              % (total, truncated, rooted))
        self.assertGreater(total, 100, folded)
        self.assertLessEqual(truncated, 0.02 * total, folded)
        self.assertGreaterEqual(rooted, 0.98 * total, folded)


class NamedWaits(Scratch):
    """The python view names a wait in its leaf (tests/programs/lock_waits.py)."""

    def test_lock_and_sleep(self):
        """Four threads contend on a threading.Lock and sleep: in the python
        view, the waits under take() end in [off-cpu: lock] and those under
        nap() in [off-cpu: sleep] (not the bare [off-cpu: S]), each within 3
        points of the share of the threads' time the program measured in
        them (measured: 0.2-0.3 points), and the GIL waits as [GIL wait];
        the mixed view keeps the native frames."""
        prog = self.write("lock_waits.py", program("lock_waits.py"))
        out = self.path("rec")
        took = json.loads(output([RECORD, "--mode", "wall", "-o", out, "--", PYTHON, prog, "1.5"]))
        data = out + "/perf.data"
        leaves = Counter()
        for stack, w in parse_folded(output([PYMERGE, "--view", "python", data])):
            frames = stack.split(";")
            if "worker (lock_waits.py)" in frames:
                leaves[tuple(frames[-2:])] += w
                leaves["all"] += w
        share = {k: 100.0 * v / leaves["all"] for k, v in leaves.items()}
        print("measured %s; profile %s" % (took, sorted(share.items(), key=lambda kv: -kv[1])[:6]))
        for fn, leaf, measured in (("take", "lock", "acquire"), ("nap", "sleep", "sleep")):
            key = ("%s (lock_waits.py)" % fn, "[off-cpu: %s]" % leaf)
            # what the program timed in a wait includes taking the GIL back
            got = share.get(key, 0) + share.get((key[0], "[GIL wait]"), 0)
            want = 100.0 * took[measured] / took["worker"]
            self.assertLess(abs(got - want), 3, "%s: measured %.1f%%, profile %.1f%%" % (fn, want, got))
            self.assertLess(share.get((key[0], "[off-cpu: S]"), 0), 0.5, share)
        mixed = output([PYMERGE, data])
        self.assertIn("take (lock_waits.py);lock_PyThread_acquire_lock", mixed)
        self.assertNotIn("[off-cpu: lock]", mixed)


@unittest.skipUnless(subprocess.run([PYTHON, "-c", "import gunicorn"], stderr=subprocess.DEVNULL).returncode == 0,
                     "needs gunicorn for %s (Debian: python3-gunicorn)" % PYTHON)
class Gunicorn(Scratch):
    """gunicorn, a real forking WSGI server: sync workers wait in select()."""

    def serve(self, seconds, clients=4, pause=0.002):
        """Requests from `clients` threads for `seconds` once the server
        answers; the number served."""
        sock = self.path("sock")
        self.assertTrue(answers(sock), "gunicorn never answered")
        return load(sock, seconds, clients, pause,
                    lambda body: self.assertIn(b"<li>199</li>", body))[0]

    def test_wall(self):
        """In wall mode, under load, perf loses no record and at least 95%
        of the sync workers' wall time is under complete stacks that reach
        the worker's own Python frames, from the arbiter's spawn_worker
        (which forked it) down; without the mapped stack pages half of it
        was [truncated] above select() (measured: 49% complete, now 98-99.8%)."""
        self.write("app.py", program("gunicorn_app.py"))
        out, pidfile = self.path("rec"), self.path("arbiter.pid")
        rec = subprocess.Popen([RECORD, "--mode", "wall", "-o", out, "--", PYTHON, "-m", "gunicorn",
                                "-w", "2", "-b", "unix:" + self.path("sock"), "--pid", pidfile,
                                "--chdir", self.dir, "app:app"],
                               env=child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               universal_newlines=True, start_new_session=True)
        try:
            served = self.serve(3)
        finally:
            arbiter = None
            if os.path.exists(pidfile):
                with open(pidfile) as f:
                    arbiter = f.read().strip()
            os.killpg(rec.pid, signal.SIGINT)      # Ctrl-C, as in a terminal
            err = rec.communicate(timeout=300)[1]
        self.assertTrue(arbiter, err)
        p = run([PYMERGE, "-v", "--tid", "--view", "python", out + "/perf.data"], check=True)
        # the workers' stacks that hold a user stack: Python frames or the
        # [truncated] root (not a worker's exit, in the kernel alone)
        workers = lambda s: (not re.match(r"[^;]*-%s/" % arbiter, s)
                             and ("[truncated]" in s or ".py);" in s or ".py) " in s))
        total, truncated = shares(p.stdout, workers)
        reach = sum(int(l.rsplit(" ", 1)[1]) for l in p.stdout.splitlines()
                    if workers(l) and "[truncated]" not in l and "Arbiter.spawn_worker (arbiter.py)" in l)
        others = sorted((l for l in p.stdout.splitlines()
                         if workers(l) and ("[truncated]" in l or "Arbiter.spawn_worker" not in l)),
                        key=lambda l: -int(l.rsplit(" ", 1)[1]))
        print("%d requests; workers: %.2f s, %.1f%% complete to spawn_worker, %.1f%% truncated\n%s"
              % (served, total / 1e9, 100.0 * reach / total, 100.0 * truncated / total, p.stderr))
        self.assertGreater(served, 100)
        self.assertEqual(lost(p.stderr), 0, p.stderr)
        self.assertGreaterEqual(reach, 0.95 * total, "\n".join(others[:10]))


if __name__ == "__main__":
    unittest.main()
