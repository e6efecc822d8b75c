"""libpyperfmap, end to end, on the interpreter that runs this file.

Run once per CPython (meson test does that): python3.X tests/test_pyperfmap.py.
Every test runs real child interpreters, and the perf tests real perf.
"""
import json
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

import harness
from harness import run

LINE = re.compile(r"^([0-9a-f]+) ([0-9a-f]+) (.+)$")
SIZE = "%x" % _pyperfmap.TRAMPOLINE_SIZE
PY = sys.executable
PERF = shutil.which("perf")


def read_map(path, killed=False):
    """Parses a perf map into [(start, size, name)].

    The file must hold only entries, each with its newline, however the
    process ended (mapfile.h); killed: the process may have been killed
    while it wrote its last line, which may then be cut short, without its
    newline.
    """
    with open(path) as f:
        text = f.read()
    if killed and not text.endswith("\n"):
        text = text[:text.rfind("\n") + 1]
    if text and not text.endswith("\n"):
        raise AssertionError("%s: the last line has no newline: %r" % (path, text[-80:]))
    entries = []
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            raise AssertionError("%s: malformed line %r" % (path, line))
        entries.append((int(m.group(1), 16), int(m.group(2), 16), m.group(3)))
    return entries


def names(entries):
    return [n for _, _, n in entries]


class Scratch(harness.Scratch):
    def script(self, body, name="prog.py"):
        return self.write(name, textwrap.dedent(body))

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
        self.assertTrue(raw.endswith("\n") and not raw.endswith("\n\n"), "entries only, each with its newline")
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

    def test_no_code_extra_slot_left(self):
        """Other tools may take every co_extra slot CPython has: the import
        still works, and enable() says why it cannot name functions."""
        prog = self.script("""
            import ctypes, sys
            api = ctypes.pythonapi
            take = getattr(api, "PyUnstable_Eval_RequestCodeExtraIndex"
                           if sys.version_info >= (3, 12) else "_PyEval_RequestCodeExtraIndex")
            take.argtypes, take.restype = [ctypes.c_void_p], ctypes.c_ssize_t
            while take(None) >= 0:
                pass
            import pyperfmap
            ok = pyperfmap.enable()
            ok = pyperfmap.enable() or ok
            print(ok, sum(range(10)) and "ran")
        """)
        w = self.check_degrades(prog)
        self.assertIn("no co_extra slot left", w)

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
            got = names(read_map(self.map_of(int(p.stdout))))
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
        cm = names(read_map(self.map_of(child)))
        n = lambda f: "py::%s:%s" % (f, prog)
        self.assertIn(n("inherited"), cm)
        self.assertIn(n("child_only"), cm)
        self.assertNotIn(n("parent_after"), cm)
        self.assertIn(n("parent_after"), pm)
        self.assertNotIn(n("child_only"), pm)
        # inherited entries keep their addresses in the child
        self.assertEqual([e for e in read_map(self.map_of(parent)) if e[2] == n("inherited")],
                         [e for e in read_map(self.map_of(child)) if e[2] == n("inherited")])

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
            got = names(read_map(self.map_of(w)))
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
        self.threads_and_toggling(paths=False)

    def test_stress_threads_and_toggling_paths(self):
        """The same with call paths (PYPERFMAP_PATHS=1): each thread keeps
        its own, and the toggler also switches between the two hooks."""
        self.threads_and_toggling(paths=True)

    def threads_and_toggling(self, paths):
        prog = self.script("""
            import os, sys, threading, time, pyperfmap
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
            paths = os.environ.get("PYPERFMAP_PATHS") == "1"
            def toggler():
                n = 0
                while not stop.is_set():
                    pyperfmap.disable()
                    pyperfmap.enable()
                    n += 1
                    # Hand the GIL over with the hook on: spinning alone,
                    # the toggler can keep it off through most first calls.
                    time.sleep(0)
                    if paths and n % 3 == 0:
                        pyperfmap.enable(paths=False)   # the plain hook for a while
                        pyperfmap.enable()
            pyperfmap.enable()
            from pyperfmap import _pyperfmap
            assert _pyperfmap._stats()["paths"] == paths
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
        sys_switch = {"PYTHONUNBUFFERED": "1", "PYPERFMAP_PATHS": "1" if paths else "0"}
        p = run([PY, "-X", "faulthandler", prog], env=sys_switch, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        entries = read_map(self.map_of(int(p.stdout)))
        got = names(entries)
        self.assertEqual(got.count("py::shared:%s" % prog), 1)
        # Functions first called while the toggler has the hook off get no
        # trampoline; how many do depends on scheduling, so ask only for many.
        self.assertGreater(sum(n.startswith("py::f_") for n in got), 100)
        self.assertEqual(len({s for s, _, _ in entries}), len(entries))


class NegativeCache(Scratch):
    """A code object that cannot get a trampoline is not retried on every call."""

    def test_failed_trampoline_takes_the_fast_path(self):
        prog = self.script("""
            import atexit, os, pyperfmap
            from pyperfmap import _pyperfmap
            def first_calls():
                return _pyperfmap._stats()["first_calls"]
            def late():
                return 2
            def at_exit():  # runs after pyperfmap closed its map
                before = first_calls()
                s = sum(late() for _ in range(1000))
                print("atexit", s, first_calls() - before)
            atexit.register(at_exit)
            ns = {}
            # a name that is not UTF-8: no trampoline can be named for it
            exec(compile("def bad(i):\\n    return i\\n", "bad\\udcff.py", "exec"), ns)
            pyperfmap.enable()
            def loop():
                return sum(ns["bad"](i) for i in range(1000))
            before = first_calls()
            print("surrogate", loop(), first_calls() - before)
            print(os.getpid())
        """)
        p = run([PY, prog], check=True)
        out = p.stdout.splitlines()
        got = names(read_map(self.map_of(int(out[1]))))
        # loop, its generator and bad (or late): once each, not once per call
        self.assertEqual(out[0].split()[:2], ["surrogate", "499500"])
        self.assertLessEqual(int(out[0].split()[2]), 3, out)
        self.assertEqual(out[2].split()[:2], ["atexit", "2000"])
        self.assertLessEqual(int(out[2].split()[2]), 2, out)
        self.assertIn("py::loop:%s" % prog, got)
        # by function name: the scratch directory's random name may hold "bad"
        funcs = {n.split(":")[2] for n in got if n.startswith("py::")}
        self.assertFalse(funcs & {"bad", "late"}, got)
        self.assertLessEqual(p.stderr.count("pyperfmap: warning:"), 1, p.stderr)

    def test_enable_after_exit_keeps_the_map(self):
        prog = self.script("""
            import atexit, os, pyperfmap
            def again():  # registered first, so it runs after pyperfmap's own
                print("again", pyperfmap.enable(), pyperfmap.enable(), pyperfmap.is_enabled())
            atexit.register(again)
            pyperfmap.enable()
            def work():
                return 1
            work()
            print(os.getpid())
        """)
        p = run([PY, prog], check=True)
        pid, again = p.stdout.splitlines()
        self.assertEqual(again, "again False False False")
        got = names(read_map(self.map_of(int(pid))))  # exact: still trimmed, not emptied
        self.assertIn("py::work:%s" % prog, got)
        warnings = [l for l in p.stderr.splitlines() if l.startswith("pyperfmap: warning:")]
        self.assertEqual(len(warnings), 1, p.stderr)
        self.assertIn("closed at exit", warnings[0])


# The load in the host process: threads making code objects, a toggler, and
# a storm of forked children that end by os._exit, by a normal exit's atexit
# handlers, by SIGKILL from themselves at a random call, or by SIGKILL from
# the parent at a random moment.
STRESS = r"""
    import os, sys
    errdir = sys.argv[1]

    def own_stderr(dry=False):
        # Each child's warnings in a file of its own.  Registered before any
        # other fork handler (threading's and random's run Python code, which
        # can make the child's first trampoline, and warn), so it runs first;
        # run dry in the parent, so that it makes no trampoline in the child.
        path = os.path.join(errdir, "err-%d" % os.getpid())
        if dry:
            return
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 2)
        os.close(fd)
    os.register_at_fork(after_in_child=own_stderr)

    import json, random, signal, threading, time, warnings
    warnings.simplefilter("ignore", DeprecationWarning)  # fork() with threads (3.12+)
    nthreads, nfuncs, nchildren, seed, quiesce = (int(x) for x in sys.argv[2:7])
    rnd = random.Random(seed)
    sys.setswitchinterval(0.0005)  # the forking thread must not starve

    import atexit, pyperfmap
    enabled = pyperfmap.enable()
    own_stderr(dry=True)

    def make(tag, i):
        ns = {}
        exec(compile("def f(x):\n    return x + %d\n" % i, "gen_%s_%d.py" % (tag, i % 64), "exec"), ns)
        if ns["f"](i) != 2 * i:
            os._exit(3)

    stop = threading.Event()
    # Held by the threads while they work, and by the forking thread around
    # fork() when quiesce is set (see Stress.stress).
    gate = threading.Lock() if quiesce else None
    class NoGate:
        def __enter__(self): pass
        def __exit__(self, *exc): pass
    gate_or_none = gate or NoGate()

    def worker(k):
        for i in range(nfuncs):
            with gate_or_none:
                make(k, i)
        if gate:
            stop.wait()  # a thread's exit takes locks in the sanitizer's runtime too

    def toggler():
        while not stop.is_set():
            with gate_or_none:
                pyperfmap.disable()
            time.sleep(0.0002)
            with gate_or_none:
                pyperfmap.enable()

    def child(mode, n, kill_at):
        for i in range(n):
            make("c%d" % os.getpid(), i)
            if i == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            if i % 50 == 0:
                pyperfmap.disable()
                pyperfmap.enable()
        if mode == "clean":
            atexit._run_exitfuncs()  # what a normal exit runs: the map is trimmed
        os._exit(0)

    def status(st):
        return "sig%d" % os.WTERMSIG(st) if os.WIFSIGNALED(st) else "exit%d" % os.WEXITSTATUS(st)

    live, results = {}, {}
    def reap(below):
        while len(live) >= below:
            now = time.monotonic()
            for pid, c in list(live.items()):
                if c["kill_at"] is not None and now >= c["kill_at"]:
                    os.kill(pid, signal.SIGKILL)
                    c["kill_at"] = None
                if now >= c["deadline"] and not c["hung"]:
                    os.kill(pid, signal.SIGABRT)  # faulthandler: where it hangs
                    c["hung"] = True
                if now >= c["deadline"] + 2:
                    os.kill(pid, signal.SIGKILL)
                wpid, st = os.waitpid(pid, os.WNOHANG)
                if wpid:
                    results[pid] = [c["mode"], status(st), c["hung"]]
                    del live[pid]
            time.sleep(0.001)

    ts = [threading.Thread(target=worker, args=(k,)) for k in range(nthreads)]
    ts.append(threading.Thread(target=toggler))
    for t in ts:
        t.start()
    for _ in range(nchildren):
        mode = rnd.choice(["exit", "clean", "self-kill", "killed"])
        n = rnd.randrange(20, 300)
        kill_at = rnd.randrange(n) if mode == "self-kill" else None
        delay = rnd.uniform(0, 0.03)
        if gate:
            gate.acquire()
        pid = os.fork()
        if gate and pid:
            gate.release()
        if pid == 0:
            child(mode, n, kill_at)
        now = time.monotonic()
        live[pid] = {"mode": mode, "hung": False, "deadline": now + 30,
                     "kill_at": now + delay if mode == "killed" else None}
        reap(8)
    reap(1)
    stop.set()
    for t in ts:
        t.join()
    def final():
        return 1
    pyperfmap.enable()  # the toggler may have left it off
    final()
    print(json.dumps({"pid": os.getpid(), "enabled": enabled, "children": results}))
"""

# The longest line a stress process writes: address, size, a short name.
MAX_ENTRY = 200


class Stress(Scratch):
    def stress(self, map_dir, threads=16, funcs=400, children=100):
        prog = self.script(STRESS, name="stress.py")
        env = dict(os.environ, PYPERFMAP_MAP_DIR=map_dir, PYTHONFAULTHANDLER="1")
        start = time.monotonic()
        # GCC 12's ASan runtime is not fork-safe: a child forked while
        # another thread is inside it (its allocator, a thread's exit) spins
        # forever on the inherited lock (seen: 1 child in ~1,500, in
        # sched_yield, in compile()).  Under ASan the other threads are
        # therefore parked at a Python lock around each fork() and stay
        # alive until the storm is over; the plain build forks amid them.
        quiesce = "libasan" in os.environ.get("LD_PRELOAD", "")
        p = subprocess.Popen([PY, prog, self.dir, str(threads), str(funcs), str(children),
                              str(os.getpid()), str(int(quiesce))], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, universal_newlines=True,
                             start_new_session=True)
        try:
            out, err = p.communicate(timeout=240)
        finally:
            try:
                os.killpg(p.pid, signal.SIGKILL)  # the parent and any child left
            except ProcessLookupError:
                pass
            p.wait()
        sys.stderr.write("[stress %s: %.1f s] " % (os.path.basename(map_dir), time.monotonic() - start))
        self.assertEqual(p.returncode, 0, err[-3000:])
        res = json.loads(out)
        self.assertEqual(len(res["children"]), children)
        warned = {}  # pid -> warning lines
        self.check_warnings(err.splitlines(), str(res["pid"]), warned)
        for pid, (mode, st, hung) in res["children"].items():
            if hung:
                with open(os.path.join(self.dir, "err-%s" % pid)) as f:
                    self.fail("child %s (%s) hung:\n%s" % (pid, mode, f.read()))
            want = {"exit": ["exit0"], "clean": ["exit0"], "self-kill": ["sig9"],
                    "killed": ["exit0", "sig9"]}[mode]
            self.assertIn(st, want, "child %s (%s)" % (pid, mode))
            errf = os.path.join(self.dir, "err-%s" % pid)
            if st == "sig9" and not os.path.exists(errf):
                continue  # killed before its fork handlers ran
            with open(errf) as f:
                self.check_warnings(f.read().splitlines(), pid, warned)
        maps = {}
        if os.path.isdir(map_dir):
            for f in os.listdir(map_dir):
                if re.match(r"perf-\d+\.lines$", f):
                    self.check_lines(os.path.join(map_dir, f))
                    continue
                m = re.match(r"perf-(\d+)\.map$", f)
                self.assertTrue(m, f)
                maps[m.group(1)] = os.path.join(map_dir, f)
        for pid, path in maps.items():
            if pid == str(res["pid"]):
                how = "exact"
            else:
                self.assertIn(pid, res["children"], "a map of an unknown process")
                mode, st, _ = res["children"][pid]
                how = "killed" if st == "sig9" else "exact"
            self.check_map(path, how)
        return res, err, maps

    def check_warnings(self, lines, pid, warned):
        """At most one warning per process, and nothing else on stderr.  A
        child can warn before its stderr is its own, on its parent's: a
        warning about a map counts for the process the map belongs to."""
        for l in lines:
            self.assertTrue(l.startswith("pyperfmap: warning:"), "%s: %s" % (pid, l))
            m = re.search(r"/perf-(\d+)\.map", l)
            who = m.group(1) if m else pid
            warned.setdefault(who, []).append(l)
            self.assertEqual(len(warned[who]), 1, "process %s: %s" % (who, warned[who]))

    def check_map(self, path, how):
        """What a map guarantees (mapfile.h): whole lines "START SIZE name",
        nothing else (no blank line, no NUL), however the process ended; in
        the map of a killed process the last line may be cut short, without
        its newline."""
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        lines = text.split("\n")
        cut = lines.pop()       # "" when the file ends with its newline
        if how == "killed":
            self.assertLessEqual(len(cut), MAX_ENTRY, "%s: %r" % (path, cut))
        else:
            self.assertEqual(cut, "", path)
        bad = [l for l in lines if not (LINE.match(l) and l.split(" ")[1] == SIZE)]
        self.assertEqual(bad, [], "%s: %r" % (path, bad[:3]))

    def check_lines(self, path):
        """The line file beside a map (docs/lines.md) is written the same
        way: whole entries, the last one perhaps cut short by a kill."""
        with open(path, "rb") as f:
            lines = f.read().decode("ascii").split("\n")
        lines.pop()
        bad = [l for l in lines if not re.fullmatch(r"[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ [12]( [0-9a-f]+:-?\d+)+", l)]
        self.assertEqual(bad, [], "%s: %r" % (path, bad[:3]))

    def mount_tmpfs(self, opts):
        mnt = tempfile.mkdtemp(prefix="pyperfmap-tmpfs-")
        p = run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", mnt])
        if p.returncode != 0:
            os.rmdir(mnt)
            self.skipTest("cannot mount a tmpfs: %s" % p.stderr.strip())
        self.addCleanup(os.rmdir, mnt)
        self.addCleanup(run, ["umount", "-l", mnt])
        return mnt

    def test_stress(self):
        maps_dir = os.path.join(self.dir, "maps")
        os.mkdir(maps_dir)
        res, err, maps = self.stress(maps_dir)
        self.assertTrue(res["enabled"])
        self.assertEqual(err, "", "no failure with room to write")
        parent = names(read_map(maps[str(res["pid"])]))
        self.assertIn("py::final:%s" % os.path.join(self.dir, "stress.py"), parent)
        self.assertTrue([n for n in parent if n.startswith("py::f:gen_")])
        for pid, (mode, st, _) in res["children"].items():
            if st == "exit0":  # every child that finished named its own functions
                own = names(read_map(maps[pid]))
                self.assertTrue([n for n in own if n.startswith("py::f:gen_c%s_" % pid)], pid)
                self.assertIn("py::worker:%s" % os.path.join(self.dir, "stress.py"), own,
                              "inherited from the parent")

    def test_stress_full_map_dir(self):
        mnt = self.mount_tmpfs("size=192k,mode=0700")
        res, err, maps = self.stress(mnt)
        self.assertTrue(res["enabled"])
        errs = err
        for f in os.listdir(self.dir):
            if f.startswith("err-"):
                with open(os.path.join(self.dir, f)) as e:
                    errs += e.read()
        self.assertIn("No space left on device", errs)

    def test_stress_read_only_map_dir(self):
        mnt = self.mount_tmpfs("ro,size=64k")
        res, err, maps = self.stress(mnt, funcs=100, children=20)
        self.assertFalse(res["enabled"])
        self.assertIn("Read-only file system", err)
        self.assertEqual(maps, {})

    def test_stress_missing_map_dir(self):
        res, err, maps = self.stress(os.path.join(self.dir, "missing"), funcs=100, children=20)
        self.assertFalse(res["enabled"])
        self.assertIn("No such file or directory", err)


@unittest.skipUnless(PERF, "perf is not installed")
class RealPerf(Scratch):
    PROG = harness.spin("baz") + """
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
