"""A program in PID and mount namespaces of its own, as in a container:
it names its perf map by its PID there (perf-1.map for
the namespace's init), in its own /tmp (a private tmpfs here).  Its Python
functions must be named when it is recorded from the host by
pyperf-record -p HOSTPID (started with pyperfmap, or attached to), when
pyperf-record runs it through unshare, and when perf record -a recorded it
and pymerge reads the map through /proc/PID/root while it still runs.

Run by /usr/bin/python3 (meson test suite "containers") as root, with
PYPERF_SCRIPTS, PYPERFMAP_PATH (the build's importable package folder),
TEST_PYTHONS and pymerge on PATH.  Needs unshare (util-linux) and gdb.

Each program is PID 1 of its namespace, which ignores SIGTERM: it is ended
with SIGKILL (its whole process group, and unshare --kill-child), and it
ends itself after DEADLINE seconds should all of that fail.
"""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import textwrap
import unittest

from harness import RECORD, PYPATH, TIMEOUT, child_env, folded as parse_folded, spin

PYTHON = [p for p in os.environ["TEST_PYTHONS"].split(":") if p and "-fp" not in p][-1]
DEADLINE = 120  # seconds a contained program runs at most
MIN_SHARE = 0.9

# Prints "ready" once it runs, then works in two named functions until it
# has had argv[1] seconds of CPU (so that its start, a fixed amount of CPU,
# is a small share however loaded the machine is), or DEADLINE has passed.
APP = spin("leaf_work") + """
import sys, time

def mid_work(n):
    return sum(leaf_work(50) for _ in range(n))

print("ready", flush=True)
end = time.monotonic() + DEADLINE
while time.process_time() < float(sys.argv[1]) and time.monotonic() < end:
    mid_work(100)
    leaf_work(5000)
"""
KNOWN = ("leaf_work (app.py)", "mid_work (app.py)")

# The namespace's init: the build's pyperfmap is bound at /mnt, and hidden
# at its own path (as the host's files are in a container: pyperf-record -p
# must lend its own), before a tmpfs hides the host's /tmp.  The mount
# namespace is private: the host's mounts are untouched.
BOX = ["unshare", "--fork", "--kill-child", "--mount", "--mount-proc", "sh", "-c",
       'mount --bind "$1" /mnt && mount -t tmpfs tmpfs "$1" && mount -t tmpfs tmpfs /tmp && shift && exec "$@"',
       "sh", PYPATH]


def shares(folded, pid=None):
    """(weight of the samples of the app's processes, the share holding one of
    its known functions) in pymerge --pid --view python output; the app's
    processes are pid, or every python process."""
    total = known = 0
    for stack, weight in parse_folded(folded):
        root = stack.split(";")[0]
        comm, _, p = root.rpartition("-")
        if (pid and p != str(pid)) or (not pid and not comm.startswith("python")):
            continue
        total += weight
        known += weight if any(k in stack for k in KNOWN) else 0
    return total, known / total if total else 0


class Containers(unittest.TestCase):
    def setUp(self):
        # Not under /tmp: the contained program has a /tmp of its own.
        self.dir = tempfile.mkdtemp(prefix="pyperf-containers-", dir="/var/tmp")
        os.chmod(self.dir, 0o755)
        self.app = os.path.join(self.dir, "app.py")
        with open(self.app, "w") as f:
            f.write(textwrap.dedent(APP).lstrip().replace("DEADLINE", str(DEADLINE)))
        self.groups = []
        self.host_map = os.path.exists("/tmp/perf-1.map")

    def tearDown(self):
        for g in self.groups:
            try:
                os.killpg(g.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            g.wait(timeout=TIMEOUT)
            if g.stdout:
                g.stdout.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        # what the unshare case without a private /tmp left in the host's
        if not self.host_map and os.path.exists("/tmp/perf-1.map"):
            os.unlink("/tmp/perf-1.map")
            if os.path.exists("/tmp/perf-1.lines"):
                os.unlink("/tmp/perf-1.lines")

    def spawn(self, argv, **kw):
        """Starts argv in a process group of its own, killed by tearDown."""
        p = subprocess.Popen(argv, start_new_session=True, cwd="/", universal_newlines=True, **kw)
        self.groups.append(p)
        return p

    def box(self, pyperfmap, pid_ns=True):
        """Starts the app as PID 1 of its namespaces; returns its host PID.
        Without pid_ns, in a mount namespace only, as systemd's PrivateTmp
        runs a service."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYPERFMAP")}
        cmd = ["env", "PYTHONPATH=/mnt", PYTHON, "-m", "pyperfmap"] if pyperfmap else [PYTHON]
        box = BOX[:1] + ["--pid"] + BOX[1:] if pid_ns else BOX
        p = self.spawn(box + cmd + [self.app, str(DEADLINE)], stdout=subprocess.PIPE, env=env)
        self.assertEqual(p.stdout.readline(), "ready\n")
        with open("/proc/%d/task/%d/children" % (p.pid, p.pid)) as f:
            pid = int(f.read().split()[0])
        with open("/proc/%d/status" % pid) as f:
            self.assertRegex(f.read(), r"\nNSpid:\s+%d%s\n" % (pid, r"\s+1" if pid_ns else ""))
        return pid

    def run_to_end(self, argv, **kw):
        """Runs argv to its end (killed by tearDown should it hang)."""
        p = self.spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=child_env(), **kw)
        out, err = p.communicate(timeout=TIMEOUT)
        return p.returncode, out, err

    def merged(self, data):
        status, out, err = self.run_to_end(["pymerge", "--pid", "--view", "python", data])
        self.assertEqual(status, 0, err)
        return out

    def assert_named(self, folded, pid=None):
        total, share = shares(folded, pid)
        print("%s: %d ns of samples, %.1f%% in %s" % (self.id().split(".")[-1], total, 100 * share,
                                                    " or ".join(KNOWN)))
        self.assertGreater(total, 0, folded[:2000])
        self.assertGreaterEqual(share, MIN_SHARE, folded[:2000])

    def record_pid(self, pyperfmap, pid_ns=True):
        pid = self.box(pyperfmap, pid_ns)
        out = os.path.join(self.dir, "rec")
        status, _, err = self.run_to_end([RECORD, "-o", out, "-p", str(pid), "--duration", "3"])
        self.assertEqual(status, 0, err)
        with open(os.path.join(out, "perf-%d.map" % pid)) as f:
            self.assertIn("py::leaf_work:", f.read())
        self.assertTrue(os.path.getsize(os.path.join(out, "perf-%d.lines" % pid)), "its line file")
        # Merged after the namespace is gone: the map is the folder's copy.
        os.kill(pid, signal.SIGKILL)
        self.assert_named(self.merged(os.path.join(out, "perf.data")), pid)
        return err

    def test_record_pid_started_with_pyperfmap(self):
        self.record_pid(pyperfmap=True)

    def test_record_pid_private_tmp_only(self):
        self.record_pid(pyperfmap=True, pid_ns=False)

    def test_record_pid_attached(self):
        err = self.record_pid(pyperfmap=False)
        self.assertIn("enabled pyperfmap in PID", err)
        self.assertIn("turned pyperfmap off in PID", err)

    def record_unshare(self, cmd):
        out = os.path.join(self.dir, "rec")
        status, _, err = self.run_to_end([RECORD, "-o", out, "--", "unshare", "--fork", "--pid", "--mount-proc"]
                                   + cmd + [self.app, "3"])
        self.assertEqual(status, 0, err)
        with open(os.path.join(out, "recording.txt")) as f:
            maps = re.search(r"^maps: (.*)$", f.read(), re.M).group(1).split()
        self.assertNotIn("perf-1.map", maps)  # named by the host's PID
        folded = self.merged(os.path.join(out, "perf.data"))
        self.assert_named(folded)
        pids = {line.split(";")[0].rpartition("-")[2] for line in folded.splitlines()
                if any(k in line for k in KNOWN)}
        self.assertEqual(len(pids), 1, pids)
        pid = pids.pop()
        self.assertIn("perf-%s.map" % pid, maps)
        self.assertTrue(os.path.getsize(os.path.join(out, "perf-%s.lines" % pid)), "its line file")

    def test_unshare_python_m_pyperfmap(self):
        """pyperf-record -- unshare --fork --pid --mount-proc python -m
        pyperfmap app.py: pyperfmap enabled by its -m entry point inside
        the namespaces."""
        self.record_unshare([PYTHON, "-m", "pyperfmap"])

    def test_unshare_python_script(self):
        """pyperfmap enabled by pyperf-record's start hook inside."""
        self.record_unshare([PYTHON])

    def test_unshare_errors(self):
        for cmd, words in ((["--fork", "--pid"], "unshare runs no command here"),
                           (["-fp", "--mount-proc=/proc", "--", "sh", "-c", "true"],
                            "sh is not a Python program"),
                           (["-R", self.dir, "python3", "-c", "pass"], "command not found: python3")):
            with self.subTest(cmd=cmd):
                status, _, err = self.run_to_end([RECORD, "-o", os.path.join(self.dir, "bad"), "--",
                                                  "unshare"] + cmd)
                self.assertEqual(status, 2, err)
                self.assertEqual(len(err.splitlines()), 1, err)
                self.assertIn(words, err)

    def perf_record_a(self, pid_ns):
        pid = self.box(pyperfmap=True, pid_ns=pid_ns)
        data = os.path.join(self.dir, "perf.data")
        status, _, err = self.run_to_end(["perf", "record", "-a", "-F", "499", "--call-graph", "dwarf",
                                          "-o", data, "--", "sleep", "3"])
        self.assertEqual(status, 0, err)
        # A map left in the host's /tmp by an earlier process of that PID
        # comes after the process's own /tmp (one may be there already).
        decoy = "/tmp/perf-%d.map" % pid
        ours = not os.path.exists(decoy)
        if ours:
            with open(decoy, "w") as f:
                f.write("1000 100 py::decoy_work:decoy.py\n")
        try:
            self.assert_named(self.merged(data), pid)
        finally:
            if ours:
                os.unlink(decoy)

    def test_perf_record_a_then_pymerge_while_it_runs(self):
        self.perf_record_a(pid_ns=True)

    def test_perf_record_a_private_tmp_only(self):
        self.perf_record_a(pid_ns=False)


if __name__ == "__main__":
    unittest.main()
