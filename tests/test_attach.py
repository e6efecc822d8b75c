"""Attaching to a running CPython that was started without pyperfmap:
pyperf-record -p PID enables pyperfmap inside it at a
safe point (ptrace queues a pending call; gdb off x86-64), records, and
turns it off again.

Run by /usr/bin/python3 (meson test suite "attach") with PYPERF_SCRIPTS,
PYPERFMAP_PATH (the build's importable package folder), TEST_PYTHONS (the
CPythons to attach to) and pymerge on PATH.  Needs gdb off x86-64.  Every target is
killed (SIGKILL) when its test ends, whatever happened.
"""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import textwrap
import time
import unittest

from harness import RECORD, PYPATH, PYTHONS, TIMEOUT, child_env, run, spin

# A plain program: nothing of pyperfmap in it.  The main thread loops through
# named functions until a line arrives on stdin, then calls a function it
# defines only then, and prints what must not change under attaching: the
# results, its own names and whether an eval hook is still on.
LOOP = spin("alpha_work") + """
import sys, threading, time

def beta_work(n):
    return sum(alpha_work(10) for _ in range(n))

stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.readline(), stop.set()), daemon=True).start()
print("ready", flush=True)
while not stop.is_set():
    alpha_work(20000)
    beta_work(200)
    time.sleep(0.001)

def fresh_after_detach():
    return 1

for _ in range(1000):
    fresh_after_detach()
m = sys.modules.get("pyperfmap")
print("alpha", alpha_work(1000), "beta", beta_work(10))
print("names", sorted(globals()))
print("path", sys.path)
print("hook", bool(m and m.is_enabled()))
"""

# The safety target: threads doing Python work, sleeping, file and pipe I/O
# and hashing (C code that drops the GIL), each checking its own results;
# the main thread works and sleeps too.
STRESS = """
import hashlib, os, sys, threading, time

def arith_step(k):
    return sum(i * i for i in range(k))

DATA = bytes(range(256)) * 256
EXPECT = (arith_step(500), arith_step(50), hashlib.sha256(DATA).hexdigest())
stop = threading.Event()
errors, rounds = [], {}

def cpu_worker():
    while not stop.is_set():
        if arith_step(500) != EXPECT[0]:
            errors.append("cpu")
        rounds["cpu"] = rounds.get("cpu", 0) + 1

def sleepy_worker():
    while not stop.is_set():
        time.sleep(0.003)
        if arith_step(50) != EXPECT[1]:
            errors.append("sleepy")
        rounds["sleepy"] = rounds.get("sleepy", 0) + 1

def io_worker(path):
    while not stop.is_set():
        with open(path, "wb") as f:
            f.write(DATA)
        with open(path, "rb") as f:
            if f.read() != DATA:
                errors.append("file")
        r, w = os.pipe()
        os.write(w, DATA[:4096])
        if os.read(r, 4096) != DATA[:4096]:
            errors.append("pipe")
        os.close(r), os.close(w)
        rounds["io"] = rounds.get("io", 0) + 1

def hash_worker():
    while not stop.is_set():
        if hashlib.sha256(DATA).hexdigest() != EXPECT[2]:
            errors.append("hash")
        rounds["hash"] = rounds.get("hash", 0) + 1

threads = [threading.Thread(target=cpu_worker), threading.Thread(target=sleepy_worker),
           threading.Thread(target=io_worker, args=(sys.argv[1],)), threading.Thread(target=hash_worker)]
for t in threads:
    t.start()
threading.Thread(target=lambda: (sys.stdin.readline(), stop.set()), daemon=True).start()
print("ready", flush=True)
main_rounds = 0
while not stop.is_set():
    if arith_step(200) != arith_step(200):
        errors.append("main")
    main_rounds += 1
    time.sleep(0.002)
for t in threads:
    t.join()
print("errors", errors)
print("every thread ran", sorted(rounds), main_rounds > 0)
print("names", sorted(globals()))
"""


def version(python):
    return subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                          stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout.strip()


class Target:
    """A program running in the background, without pyperfmap (PYTHONPATH
    and PYPERFMAP are kept out of its environment), SIGKILLed by kill()."""

    def __init__(self, argv):
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYPERFMAP")}
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, universal_newlines=True, env=env)
        self.pid = self.proc.pid
        self.first = self.proc.stdout.readline()

    def finish(self):
        """Asks it to stop; (output after "ready", stderr)."""
        out, err = self.proc.communicate("stop\n", timeout=TIMEOUT)
        return out, err

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            stream.close()
        if os.path.exists("/tmp/perf-%d.map" % self.pid):
            os.unlink("/tmp/perf-%d.map" % self.pid)


class Attach(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="pyperf-attach-test-")
        self.targets = []

    def tearDown(self):
        for t in self.targets:
            t.kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    def start(self, argv):
        t = Target(argv)
        self.targets.append(t)
        self.assertEqual(t.first, "ready\n", t.proc.stderr.read() if t.proc.poll() is not None else "")
        return t

    def script(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text).lstrip())
        return path

    def record(self, pid, out, duration="2"):
        r = run([RECORD, "-o", out, "-p", str(pid), "--duration", duration])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("pyperf-record: enabled pyperfmap in PID %d" % pid, r.stderr)
        self.assertIn("pyperf-record: turned pyperfmap off in PID %d" % pid, r.stderr)
        return r

    def unattached_output(self, argv):
        """What the program prints when no one attaches to it."""
        t = self.start(argv)
        time.sleep(0.5)
        return t.finish()

    def test_attach_each_python(self):
        loop = self.script("loop.py", LOOP)
        for python in PYTHONS:
            with self.subTest(python=version(python)):
                expected = self.unattached_output([python, loop])
                t = self.start([python, loop])
                out = os.path.join(self.dir, "rec-" + version(python))
                self.record(t.pid, out)
                self.assertIsNone(t.proc.poll(), "the program died")
                view = subprocess.run(["pymerge", "--view", "python", os.path.join(out, "perf.data")],
                                      stdout=subprocess.PIPE, universal_newlines=True, check=True,
                                      timeout=TIMEOUT).stdout
                self.assertIn("alpha_work (loop.py)", view)  # a Python frame named
                self.assertIn("beta_work (loop.py);", view)
                self.assertEqual(t.finish(), expected)
                # Turned off: a function first called after the recording got no trampoline.
                with open("/tmp/perf-%d.map" % t.pid) as f:
                    names = f.read()
                self.assertIn("py::alpha_work:", names)
                self.assertNotIn("fresh_after_detach", names)

    def test_attach_detach_20_times_under_load(self):
        python = PYTHONS[-1]
        argv = [python, self.script("stress.py", STRESS), os.path.join(self.dir, "io.bin")]
        expected = self.unattached_output(argv)
        self.assertIn("errors []\nevery thread ran ['cpu', 'hash', 'io', 'sleepy'] True\n", expected[0])
        t = self.start(argv)
        times, on, off = [], [], []
        for i in range(20):
            started = time.monotonic()
            # the last recording long enough for samples on a loaded machine
            r = self.record(t.pid, os.path.join(self.dir, "stress"), duration="0.3" if i < 19 else "3")
            if i < 19:
                times.append(time.monotonic() - started)
            on += re.findall(r"enabled pyperfmap in PID \d+ \(([\d.]+) s\)", r.stderr)
            off += re.findall(r"turned pyperfmap off in PID \d+ \(([\d.]+) s\)", r.stderr)
            self.assertIsNone(t.proc.poll(), "the program died at attach %d" % (i + 1))
        view = subprocess.run(["pymerge", "--view", "python", os.path.join(self.dir, "stress", "perf.data")],
                              stdout=subprocess.PIPE, universal_newlines=True, check=True,
                              timeout=TIMEOUT).stdout
        self.assertIn("arith_step (stress.py)", view)  # the 20th attach named functions again
        self.assertEqual(t.finish(), expected)
        print("20 attach-record-detach cycles of pyperf-record (0.3 s of recording, 3 s the last):"
              " median %.2f s, max %.2f s; enabling median %s s, max %s s; disabling median %s s,"
              " max %s s" % (sorted(times)[9], max(times), sorted(on, key=float)[10], max(on, key=float),
                            sorted(off, key=float)[10], max(off, key=float)))

    def test_target_unharmed(self):
        """Attaching and detaching leave the program's state as it was: a
        main thread stopped in time.sleep sleeps its whole time without an
        error (no leaked ERESTART* errno, the system call restarted), and
        one computing floats in a loop gets the same checksum each round
        and the same as without attaching (vector registers and MXCSR put
        back)."""
        python = PYTHONS[-1]
        sleeper = self.script("sleeper.py", """
            import sys, threading, time
            stop = threading.Event()
            threading.Thread(target=lambda: (sys.stdin.readline(), stop.set()), daemon=True).start()
            print("ready", flush=True)
            started = time.monotonic()
            time.sleep(4)
            print("slept", time.monotonic() - started >= 4)
            while not stop.is_set():
                sum(range(1000))
            """)
        numeric = self.script("numeric.py", """
            import math, sys, threading
            def one_round():
                acc = 0.0
                for i in range(1, 3000):
                    acc += math.sqrt(i) * math.sin(i * 0.001) / (i + 0.5)
                return acc
            first = one_round()
            stop = threading.Event()
            threading.Thread(target=lambda: (sys.stdin.readline(), stop.set()), daemon=True).start()
            print("ready", flush=True)
            wrong = 0
            while not stop.is_set():
                wrong += one_round() != first
            print("checksum", repr(first), "wrong rounds", wrong)
            """)
        expected = self.unattached_output([python, numeric])
        self.assertIn("wrong rounds 0\n", expected[0])
        for argv, want in (([python, sleeper], ("slept True\n", "")), ([python, numeric], expected)):
            with self.subTest(program=os.path.basename(argv[1])):
                t = self.start(argv)
                r = run([RECORD, "-o", os.path.join(self.dir, "unharmed"), "-p", str(t.pid), "--duration", "1"])
                self.assertIsNone(t.proc.poll(), "the program died")
                self.assertEqual(t.finish(), want)  # first: a failed attach may have harmed it
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn("pyperf-record: enabled pyperfmap in PID %d" % t.pid, r.stderr)

    def test_main_thread_never_at_a_safe_point(self):
        """A main thread blocked in C for the whole recording: one line
        each way, the recording is made, and nothing hangs."""
        t = self.start([PYTHONS[-1], "-c", "import threading\n"
                        "def spin():\n    while True:\n        sum(range(1000))\n"
                        "threading.Thread(target=spin, daemon=True).start()\n"
                        "print('ready', flush=True)\nthreading.Event().wait()\n"])
        r = run([RECORD, "-o", os.path.join(self.dir, "blocked"), "-p", str(t.pid), "--duration", "1"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("main thread reached no safe point in 10 s", r.stderr)
        self.assertIn("pyperfmap goes off when it does", r.stderr)
        self.assertIn("pyperf-record: wrote", r.stderr)
        self.assertIsNone(t.proc.poll())

    def test_interrupted_while_enabling(self):
        """Ctrl-C while pyperf-record enables pyperfmap (its main thread is
        blocked, so the safe point is not reached): the enabling goes ahead
        inside when the main thread wakes, and so does the disabling queued
        after it, so pyperfmap ends up off."""
        t = self.start([PYTHONS[-1], "-c", "import sys, threading\n"
                        "def spin():\n    while True:\n        sum(range(1000))\n"
                        "threading.Thread(target=spin, daemon=True).start()\n"
                        "print('ready', flush=True)\nsys.stdin.readline()\n"
                        "for _ in range(10000):\n    sum(range(10))\n"
                        "m = sys.modules.get('pyperfmap')\n"
                        "print('loaded', m is not None, 'hook', bool(m and m.is_enabled()))\n"])
        rec = subprocess.Popen([RECORD, "-o", os.path.join(self.dir, "int"), "-p", str(t.pid)],
                               env=child_env(), stderr=subprocess.PIPE,
                               universal_newlines=True, start_new_session=True)
        try:
            # gdb at work, or the page of code in the process (its maps
            # change) and waiting for the safe point (10 s): either way
            # inside on()
            children = "/proc/%d/task/%d/children" % (rec.pid, rec.pid)
            maps = "/proc/%d/maps" % t.pid
            with open(maps) as f:
                before = f.read()
            deadline = time.monotonic() + TIMEOUT
            while rec.poll() is None and time.monotonic() < deadline:
                with open(children) as f, open(maps) as g:
                    if f.read().split() or g.read() != before:
                        break
                time.sleep(0.01)
            rec.send_signal(signal.SIGINT)
            err = rec.communicate(timeout=TIMEOUT)[1]
        finally:
            if rec.poll() is None:
                os.killpg(rec.pid, signal.SIGKILL)
                rec.wait()
        self.assertEqual(rec.returncode, 130, err)
        self.assertIn("interrupted while enabling pyperfmap in PID %d" % t.pid, err)
        self.assertNotIn("Traceback", err)
        out, _ = t.finish()
        self.assertEqual(out, "loaded True hook False\n")

    def assert_error(self, pid, words):
        r = run([RECORD, "-o", os.path.join(self.dir, "bad"), "-p", str(pid), "--duration", "1"])
        self.assertEqual(r.returncode, 2, r.stderr)
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        for w in words:
            self.assertIn(w, lines[0])

    def test_not_cpython(self):
        t = self.start(["sh", "-c", "echo ready; exec sleep 100"])
        self.assert_error(t.pid, ["is not a CPython process", "sleep"])

    def test_exited(self):
        p = subprocess.Popen(["true"])
        p.wait()
        self.assert_error(p.pid, ["no process with PID %d" % p.pid])

    def test_no_build_for_version(self):
        # A pyperfmap whose builds lack the target's version.
        pkg = os.path.join(self.dir, "lib", "pyperfmap")
        shutil.copytree(os.path.join(PYPATH, "pyperfmap"), pkg, symlinks=True)
        python = PYTHONS[0]
        tag = version(python).replace(".", "")
        for f in os.listdir(pkg):
            if f.startswith("_pyperfmap.cpython-%s-" % tag) and f.endswith(".so"):
                os.unlink(os.path.join(pkg, f))
        t = self.start([python, self.script("loop.py", LOOP)])
        # A map left by an earlier process with this PID (maps outlive
        # their process; PIDs come round) says nothing about this one: it
        # must not pass for a sign that the process runs pyperfmap already
        # (which needs no build), so the refusal below still comes.
        # (One may be there already, a dead process's; it is stale all the
        # same, made an hour old below.)
        stale = "/tmp/perf-%d.map" % t.pid
        if not os.path.exists(stale):
            with open(stale, "w") as f:
                f.write("7f0000000000 10 py::old:/gone.py\n")
            self.addCleanup(lambda: os.path.exists(stale) and os.unlink(stale))
        os.utime(stale, (time.time() - 3600, time.time() - 3600))
        r = subprocess.run([RECORD, "-o", os.path.join(self.dir, "bad"), "-p", str(t.pid), "--duration", "5"],
                           env=child_env({"PYTHONPATH": os.path.dirname(pkg)}), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=TIMEOUT)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertIn("no pyperfmap build for that version", r.stderr)
        self.assertIn("CPython %s" % version(python), r.stderr)

    def test_ptrace_not_permitted(self):
        # The target runs as nobody; pyperf-record as root without
        # CAP_SYS_PTRACE, which another user's process needs.
        os.chmod(self.dir, 0o755)
        t = self.start(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        "/usr/bin/python3", self.script("loop.py", LOOP)])
        r = run(["setpriv", "--inh-caps=-sys_ptrace", "--bounding-set=-sys_ptrace",
                 RECORD, "-o", os.path.join(self.dir, "bad"), "-p", str(t.pid), "--duration", "1"])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertIn("ptrace is not permitted", r.stderr)
        self.assertIn("ptrace_scope", r.stderr)
        self.assertIn("CAP_SYS_PTRACE", r.stderr)


if __name__ == "__main__":
    unittest.main()
