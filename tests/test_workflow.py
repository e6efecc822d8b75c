"""perf-scripts end to end: pyperf-record and pyperf-flamegraph with real perf.

Run by /usr/bin/python3 (meson test suite "workflow"), with PYPERF_SCRIPTS,
PYMERGE and PYPERFMAP_PATH (the build's importable package folder) set.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

SCRIPTS = os.environ.get("PYPERF_SCRIPTS", os.path.join(os.path.dirname(__file__), "..", "perf-scripts"))
RECORD = os.path.join(SCRIPTS, "pyperf-record")
PYPATH = os.environ.get("PYPERFMAP_PATH", "")
PYTHON = os.environ.get("TEST_PYTHON", "/root/.pyenv/versions/3.12.1/bin/python3.12")


def run(args, env=None, **kw):
    e = dict(os.environ, PYTHONPATH=PYPATH)
    e.update(env or {})
    return subprocess.run(args, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=300, **kw)


class Record(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="pyperf-workflow-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def script(self, body, name="app.py"):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(body))
        return path

    def test_fork_maps_travel_with_the_recording(self):
        app = self.script("""
            import os
            def child_work():
                s = 0
                for i in range(3000000):
                    s += i
                return s
            def parent_work():
                s = 0
                for i in range(3000000):
                    s += 2 * i
                return s
            pid = os.fork()
            if pid == 0:
                child_work()
                os._exit(0)
            parent_work()
            os.waitpid(pid, 0)
        """)
        out = os.path.join(self.dir, "rec")
        r = run([RECORD, "-o", out, "--", PYTHON, app])
        self.assertEqual(r.returncode, 0, r.stderr)
        maps = sorted(f for f in os.listdir(out) if f.startswith("perf-") and f.endswith(".map"))
        self.assertEqual(len(maps), 2, os.listdir(out))
        for m in maps:   # /tmp cleaned: only the folder's copies remain
            os.unlink(os.path.join("/tmp", m))
        self.assertIn("pyperf-flamegraph", r.stderr)
        folded = run(["pymerge", "--view", "python", "--pid", os.path.join(out, "perf.data")])
        self.assertEqual(folded.returncode, 0, folded.stderr)
        pids = {m[5:-4] for m in maps}
        seen = {}
        for line in folded.stdout.splitlines():
            root = line.split(";")[0]
            for fn in ("child_work", "parent_work"):
                if ";%s (app.py)" % fn in line:
                    seen.setdefault(fn, set()).add(root.rsplit("-", 1)[1])
        self.assertEqual(set(seen), {"child_work", "parent_work"}, folded.stdout[:3000])
        self.assertEqual(len(seen["child_work"] | seen["parent_work"]), 2)
        self.assertTrue((seen["child_work"] | seen["parent_work"]) <= pids)
        self.assertFalse(seen["child_work"] & seen["parent_work"])
        # and one step to a picture
        svg = os.path.join(self.dir, "flame.svg")
        r = run([os.path.join(SCRIPTS, "pyperf-flamegraph"), out, "-o", svg])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(svg) as f:
            text = f.read()
        self.assertIn("child_work (app.py)", text)
        self.assertIn("<title>", text)

    def test_call_paths_leave_no_hook_frames(self):
        """A DWARF copy below the default turns the program's call paths on
        (pyperfmap_eval_path); the mixed view must drop that hook between
        Python frames as it drops pyperfmap_eval."""
        app = self.script("""
            def leaf(n):
                s = 0
                for i in range(n):
                    s += i * i
                return s
            def middle(n): return leaf(n)
            def outer(n): return middle(n)
            for _ in range(20):
                outer(200000)
        """)
        out = os.path.join(self.dir, "rec")
        r = run([RECORD, "-o", out, "--dwarf=8192", "--", PYTHON, app])
        self.assertEqual(r.returncode, 0, r.stderr)
        folded = run(["pymerge", os.path.join(out, "perf.data")])
        self.assertEqual(folded.returncode, 0, folded.stderr)
        python = hooks = 0
        for line in folded.stdout.splitlines():
            stack, weight = line.rsplit(" ", 1)
            if "leaf (app.py)" not in stack:
                continue
            python += int(weight)
            frames = stack.split(";")
            if any(f.startswith("pyperfmap_") for f in frames[frames.index("outer (app.py)"):]):
                hooks += int(weight)
        self.assertGreater(python, 0, folded.stdout[:3000])
        self.assertEqual(hooks, 0, folded.stdout[:3000])

    def test_buffer_size_reaches_perf(self):
        """-m/--mmap-pages is perf record's -m, the one buffer option
        (replacing the tracing modes' default); perf's own header says
        what it was given."""
        app = self.script("print(sum(range(100000)))\n")
        for mode, pages in (("cpu", "64"), ("syscalls", "1M")):
            out = os.path.join(self.dir, mode)
            r = run([RECORD, "-o", out, "--mode", mode, "--mmap-pages", pages, "--", PYTHON, app])
            self.assertEqual(r.returncode, 0, r.stderr)
            header = run(["perf", "report", "--header-only", "-i", os.path.join(out, "perf.data")])
            cmdline = [l for l in header.stdout.splitlines() if l.startswith("# cmdline")]
            self.assertEqual(len(cmdline), 1, header.stdout)
            self.assertEqual(cmdline[0].split().count("-m"), 1, cmdline[0])
            self.assertIn(" -m %s " % pages, cmdline[0])
        r = run([RECORD, "-o", os.path.join(self.dir, "bad"), "-m", "lots", "--", PYTHON, app])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("-m/--mmap-pages takes a number of pages", r.stderr)

    def test_flamegraph_errors(self):
        fg = os.path.join(SCRIPTS, "pyperf-flamegraph")
        r = run([fg, os.path.join(self.dir, "missing")])
        self.assertEqual(r.returncode, 2)
        self.assertIn("no such recording folder", r.stderr)
        r = run([fg, self.dir])
        self.assertEqual(r.returncode, 2)
        self.assertIn("holds no perf.data", r.stderr)

    def test_attach_to_running_pid(self):
        app = self.script("""
            import os, sys, time
            def spin_forever():
                print(os.getpid(), flush=True)
                end = time.time() + 60
                while time.time() < end:
                    sum(range(1000))
            spin_forever()
        """)
        e = dict(os.environ, PYTHONPATH=PYPATH)
        p = subprocess.Popen([PYTHON, "-m", "pyperfmap", app], stdout=subprocess.PIPE,
                             universal_newlines=True, env=e)
        try:
            pid = int(p.stdout.readline())
            out = os.path.join(self.dir, "rec")
            t = time.time()
            r = run([RECORD, "-o", out, "-p", str(pid), "--duration", "1.5"])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertLess(time.time() - t, 30)
        finally:
            p.kill()
            p.wait()
            try:
                os.unlink("/tmp/perf-%d.map" % pid)
            except OSError:
                pass
        files = set(os.listdir(out))
        self.assertTrue({"perf.data", "recording.txt", "perf-%d.map" % pid} <= files, files)
        with open(os.path.join(out, "perf-%d.map" % pid)) as f:
            self.assertIn("py::spin_forever:%s" % app, f.read())
        with open(os.path.join(out, "recording.txt")) as f:
            meta = f.read()
        self.assertIn("attach to PID %d" % pid, meta)
        self.assertIn("--call-graph dwarf", meta)
        self.assertIn("pymerge", r.stderr)

    def test_errors(self):
        app = self.script("print(1)\n")
        out = os.path.join(self.dir, "rec")
        cases = [
            # no such process
            ([RECORD, "-o", out, "-p", "999999999"], None, "no process with PID 999999999"),
            # an interpreter that cannot import pyperfmap
            ([RECORD, "-o", out, "--", PYTHON, app], {"PYTHONPATH": ""}, "cannot import pyperfmap"),
            # perf missing
            ([sys.executable, RECORD, "-o", out, "--", PYTHON, app], {"PATH": "/nonexistent"},
             "perf is not installed"),
            # neither a command nor a PID
            ([RECORD, "-o", out], None, "give either a command"),
        ]
        for args, env, msg in cases:
            e = {"PYTHONPATH": PYPATH}
            e.update(env or {})
            r = run(args, env=e)
            self.assertNotEqual(r.returncode, 0, args)
            self.assertIn(msg, r.stderr, args)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    @unittest.skipUnless(shutil.which("setpriv"), "setpriv missing")
    def test_not_permitted_names_the_fix(self):
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            if int(f.read()) <= 1:
                self.skipTest("perf_event_paranoid allows unprivileged profiling here")
        app = self.script("print(1)\n")
        os.chmod(self.dir, 0o777)
        r = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                 sys.executable, RECORD, "-o", os.path.join(self.dir, "rec"), "--", PYTHON, app])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("perf_event_paranoid", r.stderr)
        self.assertIn("sysctl kernel.perf_event_paranoid=1", r.stderr)


if __name__ == "__main__":
    unittest.main()
