"""Python programs as they really run: any command under
pyperf-record (console scripts, python -c/-m/SCRIPT), every kind of child
process, and pip install into a fresh venv (containers: test_containers.py).

Run by /usr/bin/python3 (meson test suite "commands") with PYPERF_SCRIPTS,
PYPERFMAP_PATH (the build's importable package folder), MESON_BUILD_ROOT,
MESON_SOURCE_ROOT and pymerge on PATH.  Needs Debian's mercurial (hg) and
python3-mesonpy.
"""
import glob
import os
import re
import shutil
import subprocess
import textwrap
import time
import unittest

import harness
from harness import RECORD, PYPATH, TIMEOUT, python, run

PYTHON = os.environ.get("TEST_PYTHON") or python("3.12")

# Children of every kind, each burning CPU in a function named for its kind
# (enough for hundreds of samples), each printing "KIND PID".
KIDS = """
import multiprocessing as mp, os, subprocess, sys

def burn():
    s = 0
    for i in range(BURN):
        s += i
    return s

def spawn_work():
    burn()
    return os.getpid()

def forkserver_work():
    burn()
    return os.getpid()

def fork_work():
    burn()
    return os.getpid()

if __name__ == "__main__":
    for kind, work in (("spawn", spawn_work), ("forkserver", forkserver_work), ("fork", fork_work)):
        with mp.get_context(kind).Pool(1) as pool:
            print(kind, pool.apply(work), flush=True)
    child = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "child.py")],
                           stdout=subprocess.PIPE, universal_newlines=True, check=True)
    print("subprocess", child.stdout.strip(), flush=True)
"""
CHILD = """
import os

def subprocess_work():
    s = 0
    for i in range(BURN):
        s += i

subprocess_work()
print(os.getpid())
"""


def running(pid):
    """Whether process pid exists and has not exited (a zombie has)."""
    try:
        with open("/proc/%s/stat" % pid) as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


class Scratch(harness.Scratch):
    def script(self, body, name="app.py", mode=0o644):
        return self.write(name, textwrap.dedent(body).lstrip(), mode)

    def kids(self, burn):
        self.script(CHILD.replace("BURN", str(burn)), name="child.py")
        return self.script(KIDS.replace("BURN", str(burn)), name="kids.py")

    def child_pids(self, stdout):
        pids = dict(line.split() for line in stdout.splitlines())
        self.assertEqual(sorted(pids), ["fork", "forkserver", "spawn", "subprocess"], stdout)
        self.maps += ["/tmp/perf-%s.map" % p for p in pids.values()]
        return pids

    def assert_children_mapped(self, pids):
        for kind, pid in pids.items():
            with open("/tmp/perf-%s.map" % pid) as f:
                self.assertIn("py::%s_work:" % kind, f.read(), kind)

    def record(self, cmd, env=None, cwd=None):
        out = os.path.join(self.dir, "rec")
        r = run([RECORD, "-o", out, "--"] + cmd, env=env, cwd=cwd)
        self.assertIn("pyperf-record: wrote", r.stderr)
        self.maps += glob.glob(os.path.join(out, "perf-*.map"))
        self.maps = [os.path.join("/tmp", os.path.basename(m)) for m in self.maps]
        return r, out

    def python_view(self, out):
        return subprocess.run(["pymerge", "--view", "python", os.path.join(out, "perf.data")],
                              stdout=subprocess.PIPE, universal_newlines=True, check=True,
                              timeout=600).stdout


class AnyCommand(Scratch):
    def test_console_script_hg(self):
        """hg (#!/usr/bin/python3, no pyperfmap installed there) runs as
        itself: output, exit status, and its functions named."""
        hg = shutil.which("hg")
        self.assertIsNotNone(hg, "mercurial is not installed (apt-get install mercurial)")
        for args in (["init", "repo"], ["-R", "missing", "log"]):
            plain = run([hg] + args, cwd=self.dir)
            if args[0] == "init":  # again, under pyperf-record
                shutil.rmtree(os.path.join(self.dir, "repo"))
            ours, out = self.record(["hg"] + args, cwd=self.dir)
            self.assertEqual(ours.returncode, plain.returncode, ours.stderr)
            self.assertEqual(ours.stdout, plain.stdout)
            for line in plain.stderr.splitlines():
                self.assertIn(line, ours.stderr)
        self.assertEqual(plain.returncode, 255)  # the missing repository
        self.assertTrue(os.path.isdir(os.path.join(self.dir, "repo", ".hg")))
        with open(os.path.join(out, "recording.txt")) as f:
            self.assertIn("interpreter: /usr/bin/python3 (CPython", f.read())
        maps = glob.glob(os.path.join(out, "perf-*.map"))
        self.assertEqual(len(maps), 1)
        with open(maps[0]) as f:
            self.assertIn("/mercurial/dispatch.py", f.read())
        stacks = self.python_view(out)
        self.assertIn("<module> (hg)", stacks)
        self.assertIn("(dispatch.py)", stacks)

    def test_python_forms(self):
        """python SCRIPT, -m MODULE, -c CODE and a #!/usr/bin/env script:
        same argv, output and exit status as without pyperf-record, and the
        program's own function in its map."""
        body = """
            import os, sys
            def work_here():
                return sum(range(3000000))
            work_here()
            print(sys.argv, __name__, sys.path[0])
            print(os.getpid(), file=sys.stderr)
            sys.exit(3)
        """
        app = self.script(body, name="app.py")
        self.script(body, name="appmod.py")
        self.script("#!/usr/bin/env %s\n" % os.path.basename(PYTHON) + textwrap.dedent(body),
                    name="apptool", mode=0o755)
        path = os.path.dirname(PYTHON) + ":" + self.dir + ":" + os.environ["PATH"]
        forms = [[PYTHON, app, "a", "-b"], [PYTHON, "-m", "appmod", "a"],
                 [PYTHON, "-c", textwrap.dedent(body), "a", "--x"], ["apptool", "a"]]
        for cmd in forms:
            plain = run(cmd, cwd=self.dir, env={"PATH": path})
            ours, out = self.record(cmd, cwd=self.dir, env={"PATH": path})
            self.assertEqual(plain.returncode, 3, plain.stderr)
            self.assertEqual((ours.returncode, ours.stdout), (plain.returncode, plain.stdout), cmd)
            self.assertIn("'a'", ours.stdout)
            pid = re.search(r"^(\d+)$", ours.stderr, re.M).group(1)
            with open(os.path.join(out, "perf-%s.map" % pid)) as f:
                self.assertIn("py::work_here:", f.read(), cmd)

    def test_errors(self):
        """One line each, exit 2: not Python, not found, no build for the
        interpreter's version, an option that keeps the hook out."""
        shell = self.script("#!/bin/sh\necho hi\n", name="tool.sh", mode=0o755)
        # a pyperfmap with only Debian's CPython 3.11 build: none for 3.12
        only311 = os.path.join(self.dir, "only311")
        shutil.copytree(os.path.join(PYPATH, "pyperfmap"), os.path.join(only311, "pyperfmap"),
                        ignore=lambda d, names: [n for n in names if n.endswith(".so")
                                                 and "cpython-311" not in n or n.endswith(".p")])
        cases = [
            (["true"], None, "true is not a Python program (an ELF executable)"),
            ([shell], None, "a script for /bin/sh"),
            (["no-such-command-here"], None, "command not found: no-such-command-here"),
            ([PYTHON, "-c", "pass"], {"PYTHONPATH": only311}, "has no build for that version"),
            ([PYTHON, "-I", "-c", "pass"], None, "runs with -I"),
        ]
        for cmd, env, msg in cases:
            r = run([RECORD, "-o", os.path.join(self.dir, "rec"), "--"] + cmd, env=env)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(msg, r.stderr, cmd)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            if cmd == ["true"]:
                self.assertIn("attach to that process: pyperf-record -p PID", r.stderr)


class Children(Scratch):
    def test_children_under_meson_devenv(self):
        """PYPERFMAP=1 in `meson devenv`: every child has its map, though a
        .pth is not read from PYTHONPATH."""
        meson = shutil.which("meson")
        self.assertIsNotNone(meson)
        kids = self.kids(1000)
        for python in (PYTHON, "/usr/bin/python3"):
            p = subprocess.run([meson, "devenv", "-C", os.environ["MESON_BUILD_ROOT"],
                                "env", "PYPERFMAP=1", python, kids],
                               stdout=subprocess.PIPE, universal_newlines=True, timeout=600,
                               env=dict(os.environ, PYTHONPATH=""), check=True)
            self.assert_children_mapped(self.child_pids(p.stdout))

    def test_own_pythonpath_under_meson_devenv(self):
        """PYTHONPATH=DIR pyperf-record in `meson devenv` (which replaces the
        devenv's PYTHONPATH): it still finds the build's pyperfmap, and the
        program imports from DIR and runs with pyperfmap enabled."""
        user = os.path.join(self.dir, "user")
        os.mkdir(user)
        with open(os.path.join(user, "usermod.py"), "w") as f:
            f.write("def from_user():\n    return 'user module'\n")
        out = os.path.join(self.dir, "rec")
        p = subprocess.run([shutil.which("meson"), "devenv", "-C", os.environ["MESON_BUILD_ROOT"], "env",
                            "PYTHONPATH=" + user, "pyperf-record", "-o", out, "--", PYTHON, "-c",
                            "import usermod, pyperfmap; print(usermod.from_user(), pyperfmap.is_enabled())"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                           timeout=600, env=dict(os.environ, PYTHONPATH=""))
        self.assertEqual((p.returncode, p.stdout), (0, "user module True\n"), p.stderr)
        self.assertRegex(" ".join(os.listdir(out)), r"perf-\d+\.map")

    def test_recorded_children_name_their_functions(self):
        """pyperf-record: every child's map lands in the folder, and the
        merged stacks name each child's Python function; the maps leave
        /tmp (the processes have exited), and --restore-maps puts them
        back for perf report."""
        kids = self.kids(3000000)
        r, out = self.record([PYTHON, kids], env={"PYTHONPATH": PYPATH})
        self.assertEqual(r.returncode, 0, r.stderr)
        pids = self.child_pids(r.stdout)
        stacks = self.python_view(out)
        for kind, pid in pids.items():
            self.assertTrue(os.path.exists(os.path.join(out, "perf-%s.map" % pid)), kind)
            self.assertIn("%s_work (%s)" % (kind, "child.py" if kind == "subprocess" else "kids.py"),
                          stacks)
        # the program's maps left /tmp for the folder; --restore-maps puts
        # them back, where perf report finds them
        # (the workers and the subprocess have exited)
        left = [p for p in pids.values() if os.path.exists("/tmp/perf-%s.map" % p)]
        self.assertEqual(left, [], "maps left in /tmp")
        report = ["perf", "report", "-i", os.path.join(out, "perf.data"), "--stdio", "-g", "none", "--sort", "sym"]
        before = run(report, check=True).stdout
        self.assertNotRegex(before, r"py::\S+:%s" % re.escape(self.dir))
        restore = run([RECORD, "--restore-maps", out])
        self.assertEqual(restore.returncode, 0, restore.stderr)
        maps = glob.glob(os.path.join(out, "perf-*.map"))
        self.assertIn("%d perf maps put back" % len(maps), restore.stderr)
        # Which functions perf report names depends on where its unwinding
        # stops (the innermost Python frame: in the parent, the standard
        # library's waits) and, in a fork child, on the parent's map (perf
        # gives a child its parent's anonymous mappings, named by the
        # parent's PID): that it names functions of the maps put back,
        # which it did not name before, is what they give it.
        entries = set()
        for path in maps:
            with open(path) as f:
                entries.update(line.rstrip("\n").split(" ", 2)[2] for line in f if line.count(" ") >= 2)
        gained = set(re.findall(r"py::\S+", run(report, check=True).stdout)) - set(re.findall(r"py::\S+", before))
        self.assertTrue(gained & entries, sorted(gained)[:20])

    def test_live_process_keeps_its_map(self):
        """A child still running when the recording ends keeps its map in
        /tmp (and its copy is in the folder); the program's, which exited,
        is only in the folder."""
        ready = os.path.join(self.dir, "ready")
        prog = self.script("""
            import os, subprocess, sys
            code = ("import os, sys, time\\n"
                    "def lingering_work():\\n    return sum(range(3000000))\\n"
                    "lingering_work()\\nopen(sys.argv[1], 'w').close()\\n"
                    "while not os.path.exists(sys.argv[1] + '.end'):\\n    time.sleep(0.05)\\n")
            kid = subprocess.Popen([sys.executable, "-c", code, sys.argv[1]], start_new_session=True,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            while not os.path.exists(sys.argv[1]):
                sum(range(10000))
            print(os.getpid(), kid.pid)
            """)
        try:
            r, out = self.record([PYTHON, prog, ready], env={"PYTHONPATH": PYPATH})
        finally:
            open(ready + ".end", "w").close()
        self.assertEqual(r.returncode, 0, r.stderr)
        main, kid = r.stdout.split()
        # The kid must see its .end before the scratch folder goes, or it
        # outlives the test.
        deadline = time.monotonic() + TIMEOUT
        while running(kid) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse(running(kid), "the lingering child did not end")
        self.assertTrue(os.path.exists(os.path.join(out, "perf-%s.map" % kid)))
        self.assertTrue(os.path.exists(os.path.join(out, "perf-%s.map" % main)))
        self.assertTrue(os.path.exists("/tmp/perf-%s.map" % kid))
        self.assertFalse(os.path.exists("/tmp/perf-%s.map" % main))


@unittest.skipUnless(os.geteuid() == 0, "namespaces need root")
class Pip(Scratch):
    def test_pip_install_into_a_venv(self):
        """pip install . into a fresh venv of /usr/bin/python3: extension,
        .pth hook and the three commands; they work from there, children too."""
        venv = os.path.join(self.dir, "venv")
        subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv], check=True)
        src = os.path.join(self.dir, "src")  # a copy with its git state, as the clone is
        top = os.environ["MESON_SOURCE_ROOT"]
        shutil.copytree(top, src, ignore=lambda d, names: [  # the clone's build folders and venv
            n for n in names if d == top and (n.startswith(("build", ".ci-")) or n == "venv")])
        status = ["git", "-C", src, "status", "--porcelain", "--ignored=no"]
        before = subprocess.run(status, stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
        py = os.path.join(venv, "bin", "python3")
        r = subprocess.run([py, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-index", src],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                           env=dict(os.environ, PYTHONPATH=""), timeout=900)
        self.assertEqual(r.returncode, 0, r.stdout)
        # pip leaves the tree as git saw it (meson-python writes its native file there).
        after = subprocess.run(status, stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
        self.assertEqual(after, before)
        bindir = os.path.join(venv, "bin")
        for cmd in ("pymerge", "pyperf-record", "pyperf-flamegraph"):
            self.assertTrue(os.access(os.path.join(bindir, cmd), os.X_OK), cmd)
        site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_path('platlib'))"],
                              stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout.strip()
        self.assertTrue(os.path.exists(os.path.join(site, "pyperfmap.pth")))
        self.assertTrue(glob.glob(os.path.join(site, "pyperfmap", "_pyperfmap.cpython-*.so")))
        # Nothing of the build tree: the venv on PATH, PYTHONPATH empty.
        env = {"PATH": bindir + ":/usr/sbin:/usr/bin:/sbin:/bin", "PYTHONPATH": ""}
        kids = self.kids(1000)
        p = run([py, kids], env=dict(env, PYPERFMAP="1"), check=True)
        self.assert_children_mapped(self.child_pids(p.stdout))
        # The venv's pyperf-record lends its pyperfmap to hg's /usr/bin/python3.
        out = os.path.join(self.dir, "rec")
        r = run(["pyperf-record", "-o", out, "--", "hg", "--version", "-q"], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Mercurial", r.stdout)
        self.maps += ["/tmp/" + os.path.basename(m) for m in glob.glob(os.path.join(out, "perf-*.map"))]
        r = run(["pyperf-flamegraph", out, "-o", os.path.join(out, "flame.svg")], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "flame.svg")) as f:
            self.assertIn("(hg)", f.read())
        # Not activated: the venv's commands run by path find each other.
        bare = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "PYTHONPATH": ""}
        r = run([os.path.join(bindir, "pyperf-flamegraph"), out, "-o", os.path.join(out, "bare.svg")], env=bare)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.getsize(os.path.join(out, "bare.svg")) > 0)


if __name__ == "__main__":
    unittest.main()
