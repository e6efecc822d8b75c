"""Allocations sampled by bytes (pyperf-record --mode alloc and leaks, the
default since they sample): real programs under real perf, merged by
pymerge, against what the programs know they allocated (sys.getsizeof).

Run by /usr/bin/python3 (meson test suite "memory") with PYPERF_SCRIPTS,
PYMERGE, PYPERFMAP_PATH, EARLY_ALLOC and DEEPBIND_ALLOC (tests/memory/*.c
built) and TEST_PYTHONS set.

Every statistical bound is many standard deviations wide: at --sample-bytes
32768 a 64 KiB block is sampled with probability 1 - exp(-2) = 0.86, so
1000 of them are estimated within 1.3% (one standard deviation), and
400,000 objects of 200 bytes, each sampled with probability 0.6%, within
2% (2,400 samples): 10% is 5 to 8 of those.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import unittest
from collections import Counter

from harness import (RECORD, PYMERGE, PYPATH, PYTHONS, SharedScratch, assert_users_frames_only,
                     program, run, folded as parse_folded)

EARLY_ALLOC = os.environ.get("EARLY_ALLOC", "")
PYTHON = next((p for p in PYTHONS if "3.12" in p), PYTHONS[0] if PYTHONS else sys.executable)
PRELOAD = os.path.join(PYPATH, "pyperfmap", "libpyperfmap-preload.so")
RATE = "32768"

# A leak with a normal exit beside millions of small objects a second, as
# the program itself counts them (its docstring says what it prints).
LEAKY = program("leaky.py")

# ctypes' malloc: the C allocator's calls, through the interposer.  Looked
# up in the process's global scope (CDLL(None)), as a C extension's calls
# are bound (NATIVE_KEEPER reaches it other ways).
NATIVE = r"""
import ctypes
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
kept = [None] * 1000
def keeper(i):
    kept[i] = libc.malloc(65536)
def freer():
    libc.free(libc.malloc(65536))
for i in range(1000):
    keeper(i)
    freer(); freer(); freer()
"""

# The C allocator reached other than through the global scope (its
# docstring says how): keeper keeps 200 blocks of 64 KiB, churner allocates
# and frees 600.  At --sample-bytes 8192 a 64 KiB block is sampled with
# probability 1 - exp(-8) = 0.9997, so keeper's estimate has a standard
# deviation of 0.13%: 5% is far outside it.
NATIVE_KEEPER = program("native_keeper.py")
KEPT, CHURNED = 200 * 65536, 600 * 65536
DIRECT_RATE = "8192"
DEEPBIND_ALLOC = os.environ.get("DEEPBIND_ALLOC", "")

# 10 MiB kept through CDLL("libc.so.6").malloc beside a dict growing to
# about 26 MB of strings (its docstring says what it prints).
NATIVE_BESIDE_DICT = program("native_beside_dict.py")

# What an interposer must survive: threads allocating, fork from a
# threaded process (the children allocate and exit), multiprocessing's
# fork workers, and dlopen of libraries, all at once.
STRESS = r"""
import ctypes, ctypes.util, multiprocessing, os, threading
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.calloc.restype = ctypes.c_void_p
libc.realloc.restype = ctypes.c_void_p
libc.realloc.argtypes = [ctypes.c_void_p, ctypes.c_size_t]

def work(k):
    keep = []
    for i in range(3000):
        p = libc.realloc(libc.malloc(i % 4000 + 1), i % 9000 + 1)
        libc.free(p)
        keep.append(bytearray(i % 700))
        if len(keep) > 100:
            keep.clear()
    return k

def opener():
    for name in ("z", "m", "crypt", "bz2", "lzma", "ssl", "sqlite3") * 5:
        path = ctypes.util.find_library(name)
        if path:
            ctypes.CDLL(path)
        work(0)

def square(x):
    work(x)
    return x * x

if __name__ == "__main__":
    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    threads.append(threading.Thread(target=opener))
    for t in threads:
        t.start()
    for _ in range(15):
        pid = os.fork()
        if pid == 0:
            work(1)
            os._exit(0)
        assert os.waitpid(pid, 0)[1] == 0
    with multiprocessing.get_context("fork").Pool(3) as pool:
        assert pool.map(square, range(12)) == [x * x for x in range(12)]
    for t in threads:
        t.join()
    print("done")
"""


def by_function(folded, names):
    """{name: weight of the stacks through it} of pymerge's folded output."""
    by = Counter()
    for stack, w in parse_folded(folded):
        frames = stack.split(";")
        for n in names:
            if any(f.startswith(n + " ") for f in frames):
                by[n] += w
    return by


def lost_events(data):
    """The records perf lost (its LOST records), by perf report --stats."""
    r = subprocess.run(["perf", "report", "--stats", "-i", data], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    return sum(int(n) for n in re.findall(r"^\s*LOST(?:_SAMPLES)? events:\s+(\d+)", r.stdout, re.M))


class Memory(SharedScratch):
    def script(self, name, body):
        path = os.path.join(self.dir, name + ".py")
        with open(path, "w") as f:
            f.write(body)
        return path

    def record(self, name, mode, body, *opts, python=PYTHON, args=()):
        """Records body (run by python with args) in mode; returns
        (perf.data, the program's stdout).  Its python and mixed views hold
        none of pyperfmap's own frames: an allocation's stack ends at the
        function that allocated."""
        out = os.path.join(self.dir, name + "-" + mode)
        r = run([RECORD, "--mode", mode, "-o", out] + list(opts) + ["--", python, self.script(name, body)]
                + list(args))
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "recording.txt")) as f:
            group = re.search(r"^probes: (\S+)$", f.read(), re.M).group(1)
        listed = subprocess.run(["perf", "probe", "-l"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                universal_newlines=True).stdout
        self.assertNotIn(group + ":", listed)
        assert_users_frames_only(os.path.join(out, "perf.data"))
        return os.path.join(out, "perf.data"), r.stdout

    def merge(self, *args):
        r = run([PYMERGE] + list(args))
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def truth(self, stdout):
        m = re.search(r"leak_big (\d+) \d+ leak_small (\d+) rate (\d+)", stdout)
        self.assertTrue(m, stdout)
        return int(m.group(1)), int(m.group(2)), int(m.group(3))

    def test_python_leak_at_normal_exit(self):
        """A module global that keeps growing shows its live bytes at the
        end of the program's code (before finalization frees it), within
        10%, for 64 KiB bytearrays and for pymalloc's 200-byte ones; the
        churn beside it (2,000,000 objects made and freed) under 2% of
        that; nothing lost; the output says it is sampled."""
        data, out = self.record("leaky", "leaks", LEAKY, "--sample-bytes", RATE)
        big, small, _ = self.truth(out)
        r = self.merge("--view", "python", data)
        live = by_function(r.stdout, ("leak_big", "leak_small", "churn"))
        self.assertAlmostEqual(live["leak_big"] / big, 1, delta=0.1)
        self.assertAlmostEqual(live["leak_small"] / small, 1, delta=0.1)
        self.assertLess(live["churn"], 0.02 * (big + small))
        self.assertRegex(r.stderr, r"still live at the end of the program's code of \d+ sampled \(estimates")
        self.assertEqual(lost_events(data), 0)
        # at the peak, the same (the lists only grow); at 0 s, nothing yet
        peak = by_function(self.merge("--view", "python", "--at", "peak", data).stdout, ("leak_big",))
        self.assertAlmostEqual(peak["leak_big"] / big, 1, delta=0.1)
        early = by_function(self.merge("--view", "python", "--at", "0", data).stdout, ("leak_big",))
        self.assertLess(early["leak_big"], 0.1 * big)
        # the growth table ends at that moment: leak_big's row ends at its live bytes
        table = self.merge("--format", "table", "--view", "python", data).stdout.splitlines()
        rows = [line.split() for line in table[1:] if "leak_big (leaky.py)" in line]
        self.assertTrue(rows, table)
        self.assertAlmostEqual(sum(int(r[5]) for r in rows) / big, 1, delta=0.1)
        # pprof: Go's heap profile types, read by go tool pprof as memory
        pb = os.path.join(self.dir, "leaky.pb.gz")
        self.merge("--view", "python", "--format", "pprof", "-o", pb, data)
        if shutil.which("go"):
            for index, want in (("inuse_space", big), ("alloc_space", big)):
                top = subprocess.run(["go", "tool", "pprof", "-sample_index=" + index, "-top", "-cum",
                                      "-unit=B", pb], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     universal_newlines=True).stdout
                self.assertIn("Type: " + index, top)
                m = re.search(r"^\s*\S+\s+\S+%\s+\S+%\s+(\d+)B\s+\S+%\s+leak_big \(leaky\.py\)$", top, re.M)
                self.assertTrue(m, top)
                self.assertAlmostEqual(int(m.group(1)) / want, 1, delta=0.1)
            for index in ("inuse_objects", "alloc_objects"):
                top = subprocess.run(["go", "tool", "pprof", "-sample_index=" + index, "-top", pb],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     universal_newlines=True).stdout
                self.assertIn("Type: " + index, top)
        elif os.environ.get("CI") == "true":
            self.fail("go is not installed")

    def test_sampled_estimates_state_their_error(self):
        """At the default rate (one sample per 512 KiB), leak_big's and
        leak_small's live bytes in the growth table each come with their
        expected error (one standard error): about 1/sqrt(n) for the n
        samples behind them, and the estimate within 4 of it of what the
        program kept.  The alloc mode's table states one per function."""
        data, out = self.record("leaky-default", "leaks", LEAKY)
        big, small, _ = self.truth(out)
        r = self.merge("--format", "table", "--view", "python", data)
        self.assertIn("+/-err", r.stdout.splitlines()[0])
        self.assertRegex(r.stderr, r"still live at the end of the program's code of \d+ sampled"
                         r" \(estimates|bytes \+/-\d+\.\d%\) still live")
        for fn, truth in (("leak_big", big), ("leak_small", small)):
            est = var = 0
            for line in r.stdout.splitlines()[1:]:
                cols = line.split()
                if ";%s (" % fn in line:
                    est += int(cols[5])
                    var += (float(cols[6].rstrip("%")) / 100 * int(cols[5])) ** 2
            err = var ** 0.5 / est
            expected = (524288 / truth) ** 0.5         # 1/sqrt(n) for n = truth / 512 KiB
            self.assertLess(abs(err / expected - 1), 0.5, (fn, err, expected))
            self.assertLess(abs(est / truth - 1), 4 * err, (fn, est, truth, err))
        table = self.merge("--format", "table", "--view", "python",
                           self.record("leaky-alloc", "alloc", LEAKY)[0]).stdout.splitlines()
        self.assertEqual(table[0].split()[-2:], ["+/-err", "function"])
        row = [l.split() for l in table if l.split()[-2:-1] == ["leak_big"]][0]
        self.assertLess(abs(float(row[3].rstrip("%")) / 100 / ((524288 / big) ** 0.5) - 1), 0.5, row)

    def test_alloc_bytes(self):
        """alloc mode: leak_big's allocated bytes within 10% of what it
        allocated (its list's item array is 0.1% of them); nothing lost;
        the output says it is sampled."""
        data, out = self.record("leaky", "alloc", LEAKY, "--sample-bytes", RATE)
        big, _, _ = self.truth(out)
        r = self.merge("--view", "python", data)
        allocated = by_function(r.stdout, ("leak_big", "churn"))
        self.assertAlmostEqual(allocated["leak_big"] / big, 1, delta=0.1)
        # the churn allocates far more than it keeps
        self.assertGreater(allocated["churn"], big)
        self.assertRegex(r.stderr, r"\d+ sampled allocations: counts and bytes are estimates")
        self.assertEqual(lost_events(data), 0)

    def test_ctypes_malloc_through_the_interposer(self):
        """The C allocator's calls (ctypes' malloc) reach the preloaded
        interposer: keeper's 1000 blocks of 64 KiB are live at the end
        within 10%, freer's 3000 freed ones are not."""
        data, _ = self.record("native", "leaks", NATIVE, "--sample-bytes", RATE)
        r = self.merge("--view", "python", data)
        live = by_function(r.stdout, ("keeper", "freer"))
        self.assertAlmostEqual(live["keeper"] / (1000 * 65536), 1, delta=0.1)
        self.assertLess(live["freer"], 0.02 * 1000 * 65536)
        allocated = by_function(self.merge("--view", "python", "--weight", "bytes", data).stdout,
                                ("keeper", "freer"))
        self.assertAlmostEqual(allocated["freer"] / (3000 * 65536), 1, delta=0.1)

    def keeper(self, name, mode, python=PYTHON, args=()):
        """native_keeper.py recorded in mode: {keeper, churner: bytes}
        live at the end (leaks) or allocated (alloc), and allocated
        (leaks, --weight bytes)."""
        data, out = self.record(name, mode, NATIVE_KEEPER, "--sample-bytes", DIRECT_RATE, python=python,
                                args=args)
        self.assertEqual(out, "keeper %d churner %d\n" % (KEPT, CHURNED))
        names = ("keeper", "churner")
        by = by_function(self.merge("--view", "python", data).stdout, names)
        if mode == "alloc":
            return by, by
        return by, by_function(self.merge("--view", "python", "--weight", "bytes", data).stdout, names)

    def test_native_through_libc_handle(self):
        """ctypes.CDLL("libc.so.6").malloc, which dlsym finds on libc's
        own handle and not through the global scope, reaches the sampler
        on every CPython: keeper's 200 blocks of 64 KiB are live at the
        end within 5% (leaks) and churner's freed ones are not; churner
        allocated 3.00 times keeper's bytes, within 5% (alloc)."""
        seen = set()
        for py in PYTHONS:
            version = os.path.basename(py)
            if version in seen:
                continue
            seen.add(version)
            with self.subTest(python=version):
                live, _ = self.keeper("keeper-" + version, "leaks", python=py)
                self.assertAlmostEqual(live["keeper"] / KEPT, 1, delta=0.05)
                self.assertLess(live["churner"], 0.01 * KEPT)
                allocated, _ = self.keeper("keeper-" + version, "alloc", python=py)
                self.assertAlmostEqual(allocated["churner"] / allocated["keeper"] / 3, 1, delta=0.05)

    def test_native_through_deepbind_and_cffi(self):
        """Two more ways around the global scope: a library that ctypes
        loads after start-up with RTLD_DEEPBIND (its calls bind to libc's
        malloc first), and cffi's dlopen of libc.  keeper's blocks are live
        at the end within 5%, and churner allocated 3.00 times keeper's
        bytes within 5%."""
        ways = [("deepbind", PYTHON, [DEEPBIND_ALLOC])] if DEEPBIND_ALLOC else []
        cffi = next((py for py in PYTHONS + [sys.executable]
                     if run([py, "-c", "import cffi"]).returncode == 0), None)
        if cffi:
            ways.append(("cffi", cffi, []))
        elif os.environ.get("CI") == "true":
            self.fail("cffi is not installed (Debian: python3-cffi)")
        if not ways:
            self.skipTest("neither DEEPBIND_ALLOC nor cffi")
        for how, py, args in ways:
            with self.subTest(how=how):
                live, allocated = self.keeper("keeper-" + how, "leaks", python=py, args=[how] + args)
                self.assertAlmostEqual(live["keeper"] / KEPT, 1, delta=0.05)
                self.assertAlmostEqual(allocated["churner"] / allocated["keeper"] / 3, 1, delta=0.05)

    def test_native_leak_beside_dict(self):
        """10 MiB kept through ctypes.CDLL("libc.so.6").malloc beside a
        growing dict: both are live at the end, the C blocks within 5%
        and the dict within 10% (its 2,000 samples or so have a standard
        deviation of about 2%), in the mixed view as in the python one.
        The interposer's samples keep their callers: in the mixed view,
        every stack with no Python frame either was cut by the stack copy
        ([truncated]) or was made before the program's code ran (the
        interpreter's start-up, the compiling of the script: no
        run_eval_code_obj); those are what the python view shows with no
        frame above its leaf."""
        data, out = self.record("dict", "leaks", NATIVE_BESIDE_DICT, "--sample-bytes", DIRECT_RATE)
        m = re.match(r"grow (\d+) native_leak (\d+)$", out)
        self.assertTrue(m, out)
        grow, leak = int(m.group(1)), int(m.group(2))
        for view in ("python", "mixed"):
            folded = self.merge("--view", view, data).stdout
            live = by_function(folded, ("grow", "native_leak"))
            self.assertAlmostEqual(live["native_leak"] / leak, 1, delta=0.05, msg=view)
            self.assertAlmostEqual(live["grow"] / grow, 1, delta=0.1, msg=view)
        for line in folded.splitlines():
            frames = line.rsplit(" ", 1)[0].split(";")
            if not any(" (" in f for f in frames):
                self.assertTrue("[truncated]" in frames or "run_eval_code_obj" not in frames, line)

    def test_interposer_survives_fork_threads_dlopen(self):
        """Threads allocating, fork from a threaded process, fork workers
        and dlopen, with every sampled block remembered (leaks mode, a
        small rate): no deadlock (the timeout), no crash, same output."""
        out = os.path.join(self.dir, "stress")
        r = run([RECORD, "--mode", "leaks", "--sample-bytes", "4096", "-o", out, "--", PYTHON,
                 self.script("stress", STRESS)], timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "done\n")
        # and with no one tracing (the probes' semaphores down)
        r = run([PYTHON, self.script("stress", STRESS)], {"LD_PRELOAD": PRELOAD, "PYPERFMAP_ALLOC_FREES": "1"},
                timeout=300)
        self.assertEqual((r.returncode, r.stdout), (0, "done\n"), r.stderr)

    def test_allocation_during_interposer_start(self):
        """A library preloaded after the interposer allocates in its
        constructor, which runs before the interposer's: its calls find the
        next malloc then.  A C program and Python both run normally."""
        if not EARLY_ALLOC:
            self.skipTest("EARLY_ALLOC is not set")
        for argv in (["/bin/ls", "/"], [PYTHON, "-c", "import ctypes; print('ok')"]):
            r = run(argv, {"LD_PRELOAD": PRELOAD + " " + EARLY_ALLOC, "PYPERFMAP_ALLOC_RATE": "64"})
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stderr, "")

    def test_bad_sampling_interval(self):
        """--sample-bytes 0 or negative: one clear line, exit 2, no probes
        left, nothing run; in the process, a bad rate is one warning."""
        marker = os.path.join(self.dir, "ran")
        for n in ("0", "-4096"):
            r = run([RECORD, "--mode", "alloc", "--sample-bytes", n, "-o", os.path.join(self.dir, "bad"),
                     "--", PYTHON, "-c", "open(%r, 'w')" % marker])
            self.assertEqual(r.returncode, 2)
            self.assertEqual(r.stderr, "pyperf-record: --sample-bytes must be a positive number of bytes"
                             " (default 524288), not %s\n" % n)
            self.assertFalse(os.path.exists(marker))
        r = run([RECORD, "--mode", "cpu", "--exact", "--", PYTHON, "-c", "pass"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("--exact and --sample-bytes belong to --mode alloc and leaks", r.stderr)
        hook = os.path.join(PYPATH, "pyperfmap", "hook")
        r = run([PYTHON, "-c", "print('ran')"], {"PYPERFMAP": "1", "PYPERFMAP_ALLOC_RATE": "-1",
                                                 "PYTHONPATH": hook + ":" + PYPATH})
        self.assertEqual(r.stdout, "ran\n")
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertIn("PYPERFMAP_ALLOC_RATE=-1: allocations are not sampled", r.stderr)
        r = run([PYMERGE, "--at", "soon", "x"])
        self.assertEqual(r.returncode, 1)
        self.assertIn("pymerge: --at soon: give end, peak or a number of seconds", r.stderr)

    def test_attach_alloc(self):
        """-p PID --mode alloc: Python's allocations sampled from then on
        (a running process takes no preload), stated on stderr; the
        function allocating shows, and the program runs on unchanged
        after pyperfmap is switched off again."""
        if not shutil.which("gdb"):
            self.skipTest("gdb is not installed")
        body = ("import sys, time\nKEEP = []\n"
                "def attached_alloc():\n    KEEP.append(bytearray(65536))\n    del KEEP[:-100]\n"
                "print('ready', flush=True)\nend = time.time() + 60\n"
                "while time.time() < end and not sys.stdin.closed:\n"
                "    attached_alloc()\n    time.sleep(0.0005)\n")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYPERFMAP")}
        proc = subprocess.Popen([PYTHON, self.script("target", body)], stdout=subprocess.PIPE,
                                stdin=subprocess.PIPE, env=env, universal_newlines=True)
        try:
            self.assertEqual(proc.stdout.readline(), "ready\n")
            out = os.path.join(self.dir, "attached")
            r = run([RECORD, "--mode", "alloc", "--sample-bytes", RATE, "-o", out, "-p", str(proc.pid),
                     "--duration", "3"])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("Python's allocations are sampled from now on", r.stderr)
            self.assertIn("turned pyperfmap off in PID %d" % proc.pid, r.stderr)
            by = by_function(self.merge("--view", "python", os.path.join(out, "perf.data")).stdout,
                             ("attached_alloc",))
            # up to 1,500 a second of 64 KiB each, fewer while the machine
            # is busy or gdb holds the process: ask for some
            self.assertGreater(by["attached_alloc"], 65536 * 20)
            self.assertIsNone(proc.poll())
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            proc.stdin.close()
            proc.stdout.close()
            if os.path.exists("/tmp/perf-%d.map" % proc.pid):
                os.unlink("/tmp/perf-%d.map" % proc.pid)


if __name__ == "__main__":
    unittest.main()
