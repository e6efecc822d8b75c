"""libpyperfmap, end to end, on the interpreter that runs this file.

Run once per CPython (meson test does that): python3.X tests/test_pyperfmap.py.
Every test runs real child interpreters, and the perf tests real perf.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

import pyperfmap
from pyperfmap import _pyperfmap

LINE = re.compile(r"^([0-9a-f]+) ([0-9a-f]+) (.+)$")
SIZE = "%x" % _pyperfmap.TRAMPOLINE_SIZE
PY = sys.executable
PERF = shutil.which("perf")


def run(args, *, env=None, cwd=None, timeout=300, check=False):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(args, env=e, cwd=cwd, timeout=timeout, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    if check and p.returncode != 0:
        raise AssertionError("%s failed (%d):\n%s%s" % (args, p.returncode, p.stdout, p.stderr))
    return p


def read_map(path, exact=True):
    """Parses a perf map into [(start, size, name)].

    exact: the file must hold only entries (a clean exit trims the padding);
    otherwise trailing blank lines left by a killed process are allowed.
    """
    with open(path) as f:
        text = f.read()
    if not exact:
        text = text.rstrip("\n") + "\n"
    entries = []
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            raise AssertionError("%s: malformed line %r" % (path, line))
        entries.append((int(m.group(1), 16), int(m.group(2), 16), m.group(3)))
    return entries


def names(entries):
    return [n for _, _, n in entries]


class Scratch(unittest.TestCase):
    """A temporary folder, and removal of the maps the test's children wrote."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="pyperfmap-test-")
        self.maps = []

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        for m in self.maps:
            try:
                os.unlink(m)
            except OSError:
                pass

    def script(self, body, name="prog.py"):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(body))
        return path

    def map_of(self, pid):
        path = "/tmp/perf-%d.map" % pid
        self.maps.append(path)
        return path


NESTED = """
    import os, sys
    class C:
        def m(self):
            def inner():
                return baz(10)
            return inner()
    def baz(n):
        return sum(range(n))
    def bar(n):
        return baz(n)
    def foo(n):
        return bar(n) + C().m()
    def never():
        return 1
    if __name__ == "__main__":
        import pyperfmap
        pyperfmap.disable()
        never()
        pyperfmap.enable()
        foo(5)
        print(os.getpid())
"""


class MapContents(Scratch):
    def test_nested_calls_are_named_exactly(self):
        prog = self.script(NESTED)
        p = run([PY, "-m", "pyperfmap", prog], check=True)
        path = self.map_of(int(p.stdout))
        st = os.stat(path)
        self.assertEqual(st.st_mode & 0o777, 0o600)
        with open(path) as f:
            raw = f.read()
        self.assertTrue(raw.endswith("\n") and not raw.endswith("\n\n"), "clean exit trims padding")
        entries = read_map(path)
        got = names(entries)
        for qual in ("foo", "bar", "baz", "C.m", "C.m.<locals>.inner", "<module>"):
            self.assertIn("py::%s:%s" % (qual, prog), got)
        self.assertNotIn("py::never:%s" % prog, got, "ran only while disabled")
        for qual in ("foo", "C.m.<locals>.inner"):
            self.assertEqual(got.count("py::%s:%s" % (qual, prog)), 1, "one per code object")
        starts = set()
        arenas = {s for s, _, n in entries if n == _pyperfmap.ARENA_SYMBOL}
        self.assertTrue(arenas)
        for line in raw.splitlines():
            start, size, name = LINE.match(line).groups()
            self.assertFalse(start.startswith("0x"))
            self.assertEqual(size, SIZE)
            start = int(start, 16)
            self.assertEqual(start % _pyperfmap.TRAMPOLINE_SIZE, 0)
            self.assertNotIn(start, starts)
            starts.add(start)
            if name != _pyperfmap.ARENA_SYMBOL:
                self.assertTrue(name.startswith("py::"), name)
                # the unwinder's rule: the marker sits at the arena's base
                self.assertIn(start & ~(_pyperfmap.ARENA_SIZE - 1), arenas)

    def test_trampoline_addresses_are_the_ones_running(self):
        # The address in the map is the return address perf will see: check
        # it against the live process's executable, non-writable mappings.
        prog = self.script("""
            import pyperfmap
            def f():
                with open("/proc/self/maps") as m:
                    return m.read()
            pyperfmap.enable()
            print(f())
            print(pyperfmap.map_path())
        """)
        p = run([PY, prog], check=True)
        *maps, path = p.stdout.strip().splitlines()
        self.maps.append(path)
        start = [s for s, _, n in read_map(path) if n.startswith("py::f:")][0]
        for line in maps:
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            if lo <= start < hi:
                self.assertEqual(line.split()[1][:3], "r-x", line)
                break
        else:
            self.fail("trampoline %x not mapped" % start)


class Api(Scratch):
    def test_api_in_process(self):
        was = pyperfmap.is_enabled()
        try:
            self.assertTrue(pyperfmap.enable())
            self.assertTrue(pyperfmap.enable(), "idempotent")
            self.assertTrue(pyperfmap.is_enabled())
            self.assertEqual(pyperfmap.map_path(), "/tmp/perf-%d.map" % os.getpid())
            pyperfmap.disable()
            self.assertFalse(pyperfmap.is_enabled())
            with pyperfmap.enabled():
                self.assertTrue(pyperfmap.is_enabled())
            self.assertFalse(pyperfmap.is_enabled())
        finally:
            self.maps.append(pyperfmap.map_path())
            (pyperfmap.enable if was else pyperfmap.disable)()

    def test_main_runs_script_as_python_would(self):
        prog = self.script("""
            import sys
            print(sys.argv, __name__, sys.path[0] == __import__("os").path.dirname(__file__))
            def fail():
                raise ValueError("boom")
            if sys.argv[1] == "raise":
                fail()
            sys.exit(int(sys.argv[1]))
        """)
        for arg in ("7", "raise"):
            plain = run([PY, prog, arg])
            ours = run([PY, "-m", "pyperfmap", prog, arg])
            self.assertEqual(plain.returncode, ours.returncode)
            self.assertEqual(plain.stdout, ours.stdout)
            self.assertEqual(plain.stderr, ours.stderr)
        self.assertIn("ValueError: boom", ours.stderr)

    def test_main_runs_module_as_python_would(self):
        self.script("""
            import sys
            print(sys.argv[1:], __name__)
            sys.exit(4)
        """, name="mymod.py")
        plain = run([PY, "-m", "mymod", "x", "y"], cwd=self.dir)
        ours = run([PY, "-m", "pyperfmap", "-m", "mymod", "x", "y"], cwd=self.dir)
        self.assertEqual((plain.returncode, plain.stdout), (4, "['x', 'y'] __main__\n"))
        self.assertEqual((ours.returncode, ours.stdout), (plain.returncode, plain.stdout))

    def test_main_runs_code_as_python_would(self):
        code = textwrap.dedent("""
            import sys
            print(sys.argv, __name__, repr(sys.path[0]))
            if sys.argv[1] == "raise":
                1 / 0
            sys.exit(6)
        """)
        for arg in ("x", "raise"):
            plain = run([PY, "-c", code, arg, "-y"], cwd=self.dir)
            ours = run([PY, "-m", "pyperfmap", "-c", code, arg, "-y"], cwd=self.dir)
            self.assertEqual((ours.returncode, ours.stdout, ours.stderr),
                             (plain.returncode, plain.stdout, plain.stderr))
        self.assertEqual(plain.stdout, "['-c', 'raise', '-y'] __main__ ''\n")
        self.assertIn("ZeroDivisionError", ours.stderr)

    def test_main_usage_errors(self):
        p = run([PY, "-m", "pyperfmap"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("usage", p.stderr)
        p = run([PY, "-m", "pyperfmap", os.path.join(self.dir, "missing.py")])
        self.assertEqual(p.returncode, 2)
        self.assertIn("can't open file", p.stderr)

    @unittest.skipUnless(sys.version_info >= (3, 12), "-X perf exists from 3.12")
    def test_other_hook_installed_raises_and_changes_nothing(self):
        prog = self.script("""
            import sys, pyperfmap
            try:
                pyperfmap.enable()
            except RuntimeError as e:
                print("RuntimeError:", e)
            print(pyperfmap.is_enabled(), sys.is_stack_trampoline_active(), pyperfmap.map_path())
        """)
        p = run([PY, "-X", "perf", prog], check=True)
        self.maps.append("/tmp/perf-0.map")
        self.assertIn("RuntimeError: pyperfmap: another eval-frame hook", p.stdout)
        self.assertTrue(p.stdout.endswith("False True None\n"), p.stdout)


class Failures(Scratch):
    """A profiler must never take the program down."""

    def check_degrades(self, prog, env=None):
        p = run([PY, prog], env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip().splitlines()[-1], "False ran")
        warnings = [l for l in p.stderr.splitlines() if l.startswith("pyperfmap: warning:")]
        self.assertEqual(len(warnings), 1, p.stderr)
        return warnings[0]

    def test_unwritable_map_dir(self):
        prog = self.script("""
            import pyperfmap
            ok = pyperfmap.enable()
            ok = pyperfmap.enable() or ok
            print(ok, sum(range(10)) and "ran")
        """)
        w = self.check_degrades(prog, env={"PYPERFMAP_MAP_DIR": "/proc"})
        self.assertIn("/proc/perf-", w)

    def test_planted_symlink_is_not_followed(self):
        victim = os.path.join(self.dir, "victim")
        with open(victim, "w") as f:
            f.write("precious\n")
        prog = self.script("""
            import os, pyperfmap
            path = "/tmp/perf-%%d.map" %% os.getpid()
            if os.path.lexists(path):   # left by an earlier process with our PID
                os.unlink(path)
            os.symlink(%r, path)
            print(pyperfmap.enable(), "ran")
            print(os.getpid())
        """ % victim)
        p = run([PY, prog])
        self.maps.append("/tmp/perf-%s.map" % p.stdout.split()[-1])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("False ran", p.stdout)
        self.assertEqual(p.stderr.count("pyperfmap: warning:"), 1, p.stderr)
        with open(victim) as f:
            self.assertEqual(f.read(), "precious\n")

    def test_file_of_another_user_is_not_clobbered(self):
        prog = self.script("""
            import os, pyperfmap
            path = "/tmp/perf-%d.map" % os.getpid()
            with open(path, "w") as f:
                f.write("theirs\\n")
            os.chmod(path, 0o666)
            os.chown(path, 65534, 65534)
            print(pyperfmap.enable(), "ran")
            print(open(path).read() == "theirs\\n", os.getpid())
        """)
        p = run([PY, prog])
        self.assertEqual(p.returncode, 0, p.stderr)
        out = p.stdout.split()
        self.maps.append("/tmp/perf-%s.map" % out[-1])
        self.assertEqual(out[:3], ["False", "ran", "True"])
        self.assertIn("not a regular file owned by this user", p.stderr)


class Lifetime(Scratch):
    def test_map_complete_after_kill_and_os_exit(self):
        for ending in ("os.kill(os.getpid(), signal.SIGKILL)", "os._exit(0)"):
            prog = self.script("""
                import os, signal, sys, pyperfmap
                pyperfmap.enable()
                def work_%d(): return 1
                for i in range(3000):
                    exec(compile("def f%%d(): return %%d" %% (i, i), "gen%%d.py" %% i, "exec"))
                    locals()["f%%d" %% i]()
                work_%d()
                print(os.getpid()); sys.stdout.flush()
                %s
            """ % (len(ending), len(ending), ending))
            p = run([PY, prog])
            got = names(read_map(self.map_of(int(p.stdout)), exact=False))
            self.assertIn("py::work_%d:%s" % (len(ending), prog), got)
            self.assertEqual(sum(n.startswith("py::f") for n in got), 3000, ending)

    def test_fork_child_has_inherited_and_own_entries(self):
        prog = self.script("""
            import os, pyperfmap
            def inherited(): return 1
            def parent_after(): return 1
            def child_only(): return 1
            pyperfmap.enable()
            inherited()
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                child_only()
                os.write(w, b"%d" % os.getpid())
                os._exit(0)
            os.waitpid(pid, 0)
            parent_after()
            print(os.getpid(), os.read(r, 64).decode())
        """)
        p = run([PY, prog], check=True)
        parent, child = (int(x) for x in p.stdout.split())
        pm = names(read_map(self.map_of(parent)))
        cm = names(read_map(self.map_of(child), exact=False))
        n = lambda f: "py::%s:%s" % (f, prog)
        self.assertIn(n("inherited"), cm)
        self.assertIn(n("child_only"), cm)
        self.assertNotIn(n("parent_after"), cm)
        self.assertIn(n("parent_after"), pm)
        self.assertNotIn(n("child_only"), pm)
        # inherited entries keep their addresses in the child
        self.assertEqual([e for e in read_map(self.map_of(parent)) if e[2] == n("inherited")],
                         [e for e in read_map(self.map_of(child), exact=False) if e[2] == n("inherited")])

    def test_multiprocessing_fork_workers(self):
        prog = self.script("""
            import multiprocessing as mp, os, pyperfmap
            def square(x):
                return os.getpid(), x * x
            def main():
                ctx = mp.get_context("fork")
                with ctx.Pool(2) as pool:
                    res = pool.map(square, range(40))
                print(os.getpid(), " ".join(sorted({str(p) for p, _ in res})))
            if __name__ == "__main__":
                pyperfmap.enable()
                main()
        """)
        p = run([PY, prog], check=True)
        parent, *workers = (int(x) for x in p.stdout.split())
        self.assertTrue(workers)
        for w in workers:
            got = names(read_map(self.map_of(w), exact=False))
            self.assertIn("py::main:%s" % prog, got, "inherited from the parent")
            self.assertIn("py::square:%s" % prog, got, "the worker's own")
        self.assertNotIn("py::square:%s" % prog, names(read_map(self.map_of(parent))))

    def test_subprocess_enabled_by_pth_and_env(self):
        # An installed pyperfmap.pth in a site folder (here: the user site)
        # turns PYPERFMAP=1 into enable() at start; `-m pyperfmap` sets it.
        site = os.path.join(self.dir, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")
        os.makedirs(site)
        shutil.copy(os.path.join(os.path.dirname(__file__), "..", "libpyperfmap", "pyperfmap.pth"), site)
        os.symlink(os.path.dirname(pyperfmap.__file__), os.path.join(site, "pyperfmap"))
        child = self.script("""
            import os, sys
            def in_child(): return 1
            in_child()
            print(os.getpid(), "pyperfmap" in sys.modules)
        """, name="child.py")
        parent = self.script("""
            import subprocess, sys
            def in_parent():
                return subprocess.run([sys.executable, %r], stdout=subprocess.PIPE).stdout
            sys.stdout.write(in_parent().decode())
        """ % child)
        env = {"PYTHONUSERBASE": self.dir, "PYTHONPATH": ""}
        p = run([PY, "-m", "pyperfmap", parent], env=dict(env, PYTHONPATH=os.environ["PYTHONPATH"]),
                check=True)
        pid, imported = p.stdout.split()
        self.assertEqual(imported, "True")
        got = names(read_map(self.map_of(int(pid))))
        self.assertIn("py::in_child:%s" % child, got)
        # and without PYPERFMAP, the hook does not even import pyperfmap
        p = run([PY, child], env=dict(env, PYPERFMAP="0"), check=True)
        self.assertEqual(p.stdout.split()[1], "False")


class Threads(Scratch):
    def test_stress_threads_and_toggling(self):
        prog = self.script("""
            import os, sys, threading, pyperfmap
            stop = threading.Event()
            def worker(k):
                for i in range(2500):
                    src = "def f_%d_%d(x):\\n    return x + %d\\n" % (k, i, i)
                    ns = {}
                    exec(compile(src, "gen_%d.py" % k, "exec"), ns)
                    ns["f_%d_%d" % (k, i)](i)
                    shared(i)
            def shared(i):
                return i
            def toggler():
                while not stop.is_set():
                    pyperfmap.disable()
                    pyperfmap.enable()
            pyperfmap.enable()
            t = threading.Thread(target=toggler)
            t.start()
            ws = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
            for w in ws: w.start()
            for w in ws: w.join()
            stop.set(); t.join()
            # daemon threads still calling through trampolines at exit
            def spin():
                while True:
                    shared(1)
            for _ in range(2):
                threading.Thread(target=spin, daemon=True).start()
            print(os.getpid())
        """)
        sys_switch = {"PYTHONUNBUFFERED": "1"}
        p = run([PY, "-X", "faulthandler", prog], env=sys_switch, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        entries = read_map(self.map_of(int(p.stdout)))
        got = names(entries)
        self.assertEqual(got.count("py::shared:%s" % prog), 1)
        self.assertGreater(sum(n.startswith("py::f_") for n in got), 1000)
        self.assertEqual(len({s for s, _, _ in entries}), len(entries))


@unittest.skipUnless(PERF, "perf is not installed")
class RealPerf(Scratch):
    PROG = """
        def baz(n):
            s = 0
            for i in range(n):
                s += i * i
            return s
        def bar(n):
            return baz(n)
        def foo(n):
            return bar(n)
        if __name__ == "__main__":
            import os
            print(os.getpid())
            foo(5000000)
    """

    def record(self, callgraph, with_pyperfmap):
        prog = self.script(self.PROG)
        data = os.path.join(self.dir, "perf.data")
        cmd = [PY, "-m", "pyperfmap", prog] if with_pyperfmap else [PY, prog]
        rec = run([PERF, "record", "-q", "-e", "cpu-clock", "-F", "999"] + callgraph
                  + ["-o", data, "--"] + cmd, check=True)
        self.maps.append("/tmp/perf-%d.map" % int(rec.stdout))
        script = run([PERF, "script", "-i", data], check=True)
        return script.stdout, prog

    def test_perf_record_dwarf(self):
        # perf's own DWARF unwinder reaches the innermost trampoline (it
        # cannot step through it: pymerge can), so nearly every sample of
        # the workload names its Python function.
        out, prog = self.record(["--call-graph", "dwarf,32768"], True)
        samples = [s for s in out.split("\n\n") if "cpu-clock" in s]
        named = [s for s in samples if "py::baz:%s" % prog in s]
        self.assertGreater(len(named), len(samples) // 2, out[:3000])
        plain, _ = self.record(["--call-graph", "dwarf,32768"], False)
        self.assertNotIn("py::", plain)

    def test_perf_record_frame_pointers(self):
        # These CPythons are built without frame pointers, so a -g chain
        # breaks in the eval loop and sampling rarely lands in a trampoline.
        # A hardware breakpoint on the trampoline's `call` (after its
        # `mov %rsp,%rbp`) makes every sample land there: each must name
        # py::baz and unwind, through the trampoline's frame record, to the
        # real caller in the interpreter or the hook - never to [unknown].
        prog = self.script("""
            import os, sys, time, pyperfmap
            pyperfmap.enable()
            def baz(): return 1
            def bar(): return baz()
            def foo(): return bar()
            foo()
            me = "py::baz:" + __file__
            print(os.getpid(), [l.split()[0] for l in open(pyperfmap.map_path()) if l.strip().endswith(me)][0])
            sys.stdout.flush()
            sys.stdin.readline()
            for i in range(300):
                foo()
                time.sleep(0.002)
        """)
        data = os.path.join(self.dir, "perf.data")
        py = subprocess.Popen([PY, prog], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              universal_newlines=True)
        try:
            pid, addr = py.stdout.readline().split()
            self.maps.append(self.map_of(int(pid)))
            bp = "mem:0x%x:x" % (int(addr, 16) + 4)
            rec = subprocess.Popen([PERF, "record", "-q", "-e", bp, "-g", "-p", pid, "-o", data],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            time.sleep(1)
            py.stdin.write("go\n")
            py.stdin.flush()
            self.assertEqual(py.wait(timeout=120), 0)
            rec.wait(timeout=60)
        finally:
            py.kill()
        out = run([PERF, "script", "-i", data], check=True).stdout
        samples = [s.strip().splitlines()[1:] for s in out.split("\n\n") if s.strip()]
        self.assertGreater(len(samples), 50, out[:2000])
        for s in samples:
            self.assertRegex(s[0], r"py::baz:%s\+0x4 " % re.escape(prog))
            self.assertTrue(len(s) > 1 and "[unknown]" not in s[1], s)
        plain, _ = self.record(["-g"], False)
        self.assertNotIn("py::", plain)


if __name__ == "__main__":
    unittest.main()
