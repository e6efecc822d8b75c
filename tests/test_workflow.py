"""perf-scripts end to end: pyperf-record and pyperf-flamegraph with real perf.

Run by /usr/bin/python3 (meson test suite "workflow"), with PYPERF_SCRIPTS,
PYMERGE and PYPERFMAP_PATH (the build's importable package folder) set.
"""
import os
import resource
import shutil
import subprocess
import sys
import textwrap
import time
import unittest

from harness import SCRIPTS, RECORD, PYMERGE, PYPATH, Scratch, assert_users_frames_only, child_env, python, run, spin
from harness import folded as harness_folded

PYTHON = os.environ.get("TEST_PYTHON") or python("3.12")

# Three nested Python calls, the innermost spinning.
NESTED = spin("leaf") + """
def middle(n): return leaf(n)
def outer(n): return middle(n)
"""


# Runs its arguments as a Python program in a child whose PID has no perf
# map of another user's in /tmp, forking again while it has one.
FREE_PID = """
import os, sys
while True:
    pid = os.fork()
    if pid == 0:
        try:
            if os.stat("/tmp/perf-%d.map" % os.getpid()).st_uid != os.getuid():
                os._exit(99)
        except FileNotFoundError:
            pass
        os.execv(sys.executable, [sys.executable] + sys.argv[1:])
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    if code != 99:
        sys.exit(code)
"""


# Spins until perf ends the recording with SIGTERM; then writes, to
# argv[1]: that moment (time.monotonic), its own CPU seconds, and those of
# perf (its parent) and pyperf-record (perf's parent, with the children it
# has waited for) so far.
STOPPED = """
import os, signal, sys, time
def cpu(pid, children):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(map(int, fields[11:15 if children else 13])) / os.sysconf("SC_CLK_TCK"), int(fields[1])
def stopped(*_):
    perf, record = cpu(os.getppid(), False)
    tools = perf + cpu(record, True)[0]
    with open(sys.argv[1], "w") as f:
        f.write("%f %f %f" % (time.monotonic(), time.process_time(), tools))
    os._exit(0)
signal.signal(signal.SIGTERM, stopped)
def spin_until_stopped():
    while True:
        sum(i * i for i in range(1000))
spin_until_stopped()
"""


class Record(Scratch):
    def script(self, body, name="app.py"):
        return self.write(name, textwrap.dedent(body))

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
        for m in maps:   # both exited: pyperf-record took their maps out of /tmp
            self.assertFalse(os.path.exists(os.path.join("/tmp", m)), m)
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
        Python frames as it drops pyperfmap_eval, and neither the python
        nor the mixed view holds any other frame of pyperfmap's own."""
        app = self.script(NESTED + "for _ in range(20):\n    outer(200000)\n")
        out = os.path.join(self.dir, "rec")
        r = run([RECORD, "-o", out, "--dwarf=8192", "--", PYTHON, app])
        self.assertEqual(r.returncode, 0, r.stderr)
        folded = run(["pymerge", os.path.join(out, "perf.data")])
        self.assertEqual(folded.returncode, 0, folded.stderr)
        python = hooks = 0
        for stack, weight in harness_folded(folded.stdout):
            if "leaf (app.py)" not in stack:
                continue
            python += weight
            frames = stack.split(";")
            if any(f.startswith("pyperfmap_") for f in frames[frames.index("outer (app.py)"):]):
                hooks += weight
        self.assertGreater(python, 0, folded.stdout[:3000])
        self.assertEqual(hooks, 0, folded.stdout[:3000])
        assert_users_frames_only(os.path.join(out, "perf.data"))

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
        p = subprocess.Popen([PYTHON, "-m", "pyperfmap", app], stdout=subprocess.PIPE,
                             universal_newlines=True, env=child_env())
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

    def test_duration_ends_the_command(self):
        """--duration 2 on a program that would run forever: pyperf-record
        returns soon after it ends the recording, with the program's map.
        What it does after (perf finishing its file, the maps,
        recording.txt) is measured in CPU seconds, which other work on the
        machine does not stretch: nothing there may take a pass over the
        recording (perf reading it again for build ids, perf report finding
        the processes sampled), which grows with its length."""
        app = self.script(STOPPED)
        marks = os.path.join(self.dir, "stopped")
        out = os.path.join(self.dir, "rec")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = run([RECORD, "-o", out, "--duration", "2", "--", PYTHON, app, marks])
        ended = time.monotonic()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(marks) as f:
            stopped, program, tools = map(float, f.read().split())
        spent = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        since = spent - program - tools
        # 0.06-0.07 s here, 0.37-0.52 s before (perf report, kallsyms)
        self.assertLess(since, 0.25, "%.2f CPU seconds, %.2f s of wall time after the recording"
                        % (since, ended - stopped))
        self.assertLess(ended - stopped, 30)
        self.assertIn("spin_until_stopped", run([PYMERGE, out + "/perf.data"]).stdout)

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
            self.assertFalse(os.path.exists(out), args)     # no folder left behind

    def test_failure_removes_only_what_it_made(self):
        """A run that records nothing removes the folders it made for -o
        (parents too) and nothing else: not a folder that was there, nor
        what is in it."""
        app = self.script("print(1)\n")
        nested = os.path.join(self.dir, "a", "b", "rec")
        kept = os.path.join(self.dir, "kept")
        os.makedirs(kept)
        with open(os.path.join(kept, "notes.txt"), "w") as f:
            f.write("mine\n")
        for out in (nested, os.path.join(kept, "rec"), kept):
            for args, env in ((["--", PYTHON, app], {"PYTHONPATH": ""}),     # pyperfmap missing
                              (["-e", "no-such-event", "--", PYTHON, app], None)):   # perf fails
                r = run([RECORD, "-o", out] + args, env=env)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertFalse(os.path.exists(os.path.join(self.dir, "a")), args)
                self.assertEqual(os.listdir(kept), ["notes.txt"], args)

    def as_nobody(self, args, background=False, **kw):
        """args run as nobody (no groups), with a home of its own (perf
        keeps its build-id cache there) and a copy of the build it can
        read wherever the tree is (self.record, self.pymerge, pyperfmap);
        the perf maps its Python processes leave in /tmp are removed
        after the test.  In the background, a Popen with stderr piped."""
        home = os.path.join(self.dir, "home")
        if not os.path.isdir(home):
            os.chmod(self.dir, 0o755)
            os.makedirs(home)
            os.chmod(home, 0o777)
            self.addCleanup(self.remove_maps_of, 65534, time.time())
            shutil.copytree(os.path.join(PYPATH, "pyperfmap"), os.path.join(self.dir, "lib", "pyperfmap"))
            shutil.copytree(SCRIPTS, os.path.join(self.dir, "scripts"))
            self.record = os.path.join(self.dir, "scripts", "pyperf-record")
            self.pymerge = shutil.copy(shutil.which("pymerge"), self.dir)
        args = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + args
        env = {"HOME": home, "PYTHONPATH": os.path.join(self.dir, "lib")}
        if background:
            return subprocess.Popen(args, env=child_env(env), stderr=subprocess.PIPE,
                                    universal_newlines=True)
        return run(args, env=env, **kw)

    @staticmethod
    def remove_maps_of(uid, since):
        for name in os.listdir("/tmp"):
            path = os.path.join("/tmp", name)
            if name.startswith("perf-") and name.endswith((".map", ".lines")):
                st = os.stat(path)
                if st.st_uid == uid and st.st_mtime >= since - 1:
                    os.unlink(path)

    def paranoid(self, level):
        """Sets kernel.perf_event_paranoid to level for this test (root
        bypasses it, so other tests are not affected), restored after."""
        path = "/proc/sys/kernel/perf_event_paranoid"
        with open(path) as f:
            old = f.read().strip()
        if old != str(level):
            with open(path, "w") as f:
                f.write(str(level))
            self.addCleanup(self.write_paranoid, path, old)

    @staticmethod
    def write_paranoid(path, level):
        with open(path, "w") as f:
            f.write(level)

    @unittest.skipUnless(shutil.which("setpriv") and os.geteuid() == 0, "needs root and setpriv")
    def test_ordinary_user_records_user_space(self):
        """At perf_event_paranoid 2 (the usual default) perf records a
        user's own program in user space: so does pyperf-record, saying
        once that kernel frames need more, and pymerge (as that user)
        names the Python frames.  The build is world-readable; Debian's
        python3 is the interpreter (pyenv's live under /root)."""
        self.paranoid(2)
        self.as_nobody(["true"])
        app = self.script(NESTED + "outer(5000000)\n")
        out = os.path.join(self.dir, "rec")
        os.makedirs(out)
        os.chmod(out, 0o777)
        # PIDs are reused, and root's processes leave maps in /tmp that
        # nobody may not replace (pyperfmap then warns:
        # test_other_users_map_at_the_pid); PIDs come in order, so the next
        # few are as likely to be taken.  The launcher runs the program at
        # the first PID it forks whose map, if any, is nobody's.
        launcher = self.script(FREE_PID, name="free_pid.py")
        r = self.as_nobody([sys.executable, self.record, "-o", out, "--", "/usr/bin/python3", launcher,
                            app])
        self.assertEqual(r.returncode, 0, r.stderr)
        maps = [f for f in os.listdir(out) if f.startswith("perf-")]
        self.assertEqual(r.stderr.count("kernel.perf_event_paranoid=1"), 1, r.stderr)
        self.assertIn("--all-user", r.stderr)
        self.assertTrue(maps, (os.listdir(out), r.stderr))
        folded = self.as_nobody([self.pymerge, os.path.join(out, "perf.data")])
        self.assertEqual(folded.returncode, 0, folded.stderr)
        python = sum(w for s, w in harness_folded(folded.stdout)
                     if ";outer (app.py);middle (app.py);leaf (app.py)" in s)
        total = sum(w for _, w in harness_folded(folded.stdout))
        self.assertGreater(python, total / 2, folded.stdout[:3000])

    def plant_map(self, pid, mode=0o600, mtime=None):
        """A perf map at pid's name, as an earlier process of that PID
        would have left it; removed after the test."""
        path = "/tmp/perf-%d.map" % pid
        with open(path, "w") as f:
            f.write("1000 10 stale_function_of_an_earlier_process\n")
        os.chmod(path, mode)
        if mtime is not None:
            os.utime(path, (mtime, mtime))
        self.maps.append(path)

    def test_stale_map_left_out(self):
        """PIDs are reused: a map older than the recording, left by an
        earlier process with the PID of a process the program started, is
        not copied into the folder (its names would be wrong).  Only the
        maps of the Python processes the start hook listed are copied
        (copy_map warns when one of those is older than the recording)."""
        out = os.path.join(self.dir, "rec")
        pidfile, go = os.path.join(self.dir, "pid"), os.path.join(self.dir, "go")
        # the shell's PID is the busy loop's: it waits for the planted map, then execs
        prog = ("echo $$ > %s; while [ ! -e %s ]; do sleep 0.01; done; "
                "exec perl -e '$t = time + 1; 1 while time < $t'" % (pidfile, go))
        rec = subprocess.Popen([sys.executable, RECORD, "-o", out, "--", PYTHON, self.launcher(prog)],
                               env=child_env(), stderr=subprocess.PIPE,
                               universal_newlines=True)
        pid = self.wait_pid(pidfile, rec)
        self.plant_map(pid, mode=0o644, mtime=time.time() - 3600)
        open(go, "w").close()
        err = rec.communicate(timeout=120)[1]
        self.assertEqual(rec.returncode, 0, err)
        self.assertNotIn("perf-%d.map" % pid, os.listdir(out), err)

    def launcher(self, shell):
        """A Python program (what pyperf-record records) that runs the
        shell command in a child and exits with its status."""
        return self.script("import subprocess, sys\nsys.exit(subprocess.call(['sh', '-c', %r]))\n" % shell,
                           name="launcher.py")

    def wait_pid(self, pidfile, proc):
        start = time.monotonic()
        while not self.read(pidfile).endswith("\n"):
            self.assertIsNone(proc.poll(), "the recording ended early")
            self.assertLess(time.monotonic() - start, 60)
            time.sleep(0.01)
        return int(self.read(pidfile))

    @staticmethod
    def read(path):
        try:
            with open(path) as f:
                return f.read()
        except FileNotFoundError:
            return ""

    @unittest.skipUnless(shutil.which("setpriv") and os.geteuid() == 0, "needs root and setpriv")
    def test_other_users_map_at_the_pid(self):
        """An ordinary user's Python process whose PID has a map of root's
        in /tmp cannot write its own: pyperfmap warns once and the program
        runs on; pyperf-record leaves that map out with a warning, records,
        and exits 0."""
        self.paranoid(2)
        self.as_nobody(["true"])
        app = self.script(NESTED + "outer(2000000)\n")
        out = os.path.join(self.dir, "home", "rec")
        pidfile, go = os.path.join(self.dir, "home", "pid"), os.path.join(self.dir, "home", "go")
        prog = "echo $$ > %s; while [ ! -e %s ]; do sleep 0.01; done; exec /usr/bin/python3 %s" % (
            pidfile, go, app)
        launcher = self.launcher(prog)
        rec = self.as_nobody([sys.executable, self.record, "-o", out, "--", "/usr/bin/python3", launcher],
                             background=True)
        pid = self.wait_pid(pidfile, rec)
        self.plant_map(pid)
        open(go, "w").close()
        err = rec.communicate(timeout=120)[1]
        self.assertEqual(rec.returncode, 0, err)
        self.assertIn("belongs to another user", err)
        self.assertIn("Permission denied (an earlier process of another user?)", err)
        self.assertNotIn("perf-%d.map" % pid, os.listdir(out), err)

    @unittest.skipUnless(shutil.which("setpriv") and os.geteuid() == 0, "needs root and setpriv")
    def test_refused_only_where_perf_cannot_record(self):
        """pyperf-record refuses an ordinary user exactly where perf does:
        an event perf cannot open for them (a tracepoint: tracefs is
        root's), in perf's words, and at paranoid 3 whatever perf itself
        does on this kernel; the tracing modes (probes, tracefs) need root.
        One line each, with the fix."""
        app = self.script("print(1)\n")
        self.as_nobody(["true"])
        out = os.path.join(self.dir, "home", "rec")
        self.paranoid(2)
        r = self.as_nobody([sys.executable, self.record, "-o", out, "--mode", "offcpu", "--",
                            "/usr/bin/python3", app])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stderr.strip().splitlines(), [
            "pyperf-record: --mode offcpu records kernel tracepoints, which only root may set up;"
            " run pyperf-record as root (sudo), or use --mode cpu"])

        def perf_records(event):
            return self.as_nobody(["perf", "record", "-q", "--all-user", "-e", event, "-o",
                                   os.path.join(self.dir, "home", "p.data"), "--", "true"]
                                  ).returncode == 0
        # tracefs is root's (mode 700) on this machine kind: perf cannot
        self.assertFalse(perf_records("sched:sched_switch"), "tracefs is readable by nobody here")
        r = self.as_nobody([sys.executable, self.record, "-o", out, "-e", "sched:sched_switch", "--",
                            "/usr/bin/python3", app])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("perf cannot record -e sched:sched_switch", r.stderr)
        self.assertIn("No permissions to read /sys/kernel/tracing", r.stderr)
        self.assertIn("fix: run pyperf-record as root", r.stderr)
        self.paranoid(3)
        r = self.as_nobody([sys.executable, self.record, "-o", out, "--", "/usr/bin/python3", app])
        if perf_records("cpu-clock"):       # a kernel without Debian's level 3
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("recording user space only (perf_event_paranoid is 3)", r.stderr)
        else:
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("sudo sysctl kernel.perf_event_paranoid=2", r.stderr)

if __name__ == "__main__":
    unittest.main()
