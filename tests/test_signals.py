"""Ctrl-C, pressed once and twice in a real terminal, SIGTERM and SIGHUP,
during pyperf-record in every mode and during pyperf-top: each leaves a
whole recording (perf.data, the program's perf map, kallsyms,
recording.txt) that pymerge reads, no uprobe of the run (uprobe_events,
perf probe -l) and no tracefs mount, says so in one line, and exits
128 + the signal's number, also when the recorded program died of it.

tmux runs each command in a pane of its own (on a socket of its own,
killed at the end), inside a private mount namespace where tracefs is
unmounted first, so that pyperf-record mounts it and must unmount it;
send-keys C-c is the terminal's SIGINT to the whole foreground process
group (pyperf-record, perf, the program).  Run by /usr/bin/python3 (meson
test suite "signals") with PYPERF_SCRIPTS, PYPERFMAP_PATH, TEST_PYTHONS and
pymerge on PATH.  Needs root, tmux and unshare.
"""
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from harness import PYMERGE, PYTHONS, RECORD, SCRIPTS, TIMEOUT, child_env

TOP = os.path.join(SCRIPTS, "pyperf-top")
PYTHON = next((p for p in PYTHONS if "3.12" in p), PYTHONS[0] if PYTHONS else "python3")
SOCKET = "pyperf-signals-test-%d" % os.getpid()
# Every mode, with and without --exact: the probes, mounts and folders of
# each are what a stop must leave right.
MODES = (["cpu"], ["wall"], ["offcpu"], ["syscalls"], ["alloc"], ["alloc", "--exact"],
         ["leaks"], ["leaks", "--exact"], ["calls"])
# Panes recording at once: enough to keep the suite short, few enough that
# two cores start each one's perf in seconds.
AT_ONCE = 6

# Calls, allocations, system calls and sleeps for every mode to record;
# "ready" once it runs under perf.  Its KeyboardInterrupt traceback goes
# nowhere (the pane is read for pyperf-record's own lines): it dies of
# the SIGINT, as a Python program does.
PROGRAM = """
import os, sys, time
sys.stderr = open(os.devnull, "w")
kept = []

def work(fd):
    s = 0
    for i in range(3000):
        s += i
    os.write(fd, b"x")
    kept.append(bytearray(2048))
    time.sleep(0.005)

fd = os.open(os.devnull, os.O_WRONLY)
open(sys.argv[1], "w").close()
end = time.time() + 60
while time.time() < end:
    work(fd)
"""

# The pane: tracefs unmounted in a mount namespace of its own, the
# command (its PID in DIR/pid: the probe group is named after it), then
# its exit status and whether tracefs is left mounted, in files.  These
# are written by an inner shell, which outlives the signals; the outer one
# is the session leader, whose end on a hangup sends SIGHUP to the
# foreground group, as a terminal's shell does when the terminal closes.
PANE = r"""
t=/sys/kernel/tracing
while mountpoint -q $t; do umount $t || exit 1; done
cd "$D"
bash -c '
trap : INT HUP
sh -c "echo \$\$ > pid; exec \"\$@\"" sh "$@"
echo $? > exit
mountpoint -q /sys/kernel/tracing && echo mounted > left
' inner "$@"
echo EXIT
sleep 600
"""


def tmux(*args, check=True):
    return subprocess.run(["tmux", "-L", SOCKET] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, check=check,
                          timeout=30).stdout


class Pane:
    """One command in a tmux pane, in a folder of its own (dir)."""

    def __init__(self, name, top, args):
        self.name, self.dir = name, os.path.join(top, name)
        os.makedirs(self.dir)
        self.out = os.path.join(self.dir, "rec")
        with open(os.path.join(self.dir, "prog.py"), "w") as f:
            f.write(PROGRAM)
        env = child_env()
        cmd = ["env", "PYTHONPATH=" + env["PYTHONPATH"], "PATH=" + env["PATH"], "/usr/bin/python3"]
        cmd += args + ["-o", self.out, "--", PYTHON, os.path.join(self.dir, "prog.py"),
                       os.path.join(self.dir, "ready")]
        pane = ["unshare", "--mount", "--propagation", "private", "bash", "-c", PANE, "bash"] + cmd
        tmux("new-session", "-d", "-s", name, "-x", "160", "-y", "45",
             "env D=%s %s" % (shlex.quote(self.dir), shlex.join(pane)))

    def file(self, name):
        try:
            with open(os.path.join(self.dir, name)) as f:
                return f.read().strip()
        except FileNotFoundError:
            return None

    def ready(self):
        return os.path.exists(os.path.join(self.dir, "ready"))

    def press(self, times):
        for i in range(times):
            if i:
                time.sleep(0.3)
            tmux("send-keys", "-t", self.name, "C-c")

    def done(self):
        return self.file("exit") is not None

    def screen(self):
        return tmux("capture-pane", "-p", "-S", "-200", "-t", self.name, check=False)


def probes_listed():
    return subprocess.run(["perf", "probe", "-l"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=TIMEOUT).stdout


def wait(pred, what, seconds=TIMEOUT):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError("%s: not within %d s" % (what, seconds))


@unittest.skipUnless(shutil.which("tmux") and shutil.which("unshare") and os.geteuid() == 0,
                     "needs root, tmux and unshare")
class TestSignals(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="pyperf-signals-test-")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)
        self.addCleanup(tmux, "kill-server", check=False)

    def interrupt(self, panes):
        """Presses Ctrl-C in each (name, presses, Pane) once it records, and
        waits for all of them to end."""
        todo = list(panes)
        end = time.monotonic() + TIMEOUT
        while todo and time.monotonic() < end:
            for p in [p for p in todo if p[2].ready() or p[2].done()]:
                time.sleep(0.5)      # a little recorded first
                p[2].press(p[1])
                todo.remove(p)
            time.sleep(0.05)
        self.assertEqual(todo, [], "never ready")
        for _, _, pane in panes:
            wait(pane.done, pane.name)

    def assert_stopped(self, pane, prog, sig, listed, named=True):
        """pane's command stopped by sig: its status, its one line, a whole
        folder that pymerge reads (naming the program's functions when
        named), no probe of its group, tracefs unmounted."""
        screen = pane.screen()
        self.assertEqual(pane.file("exit"), str(128 + sig), screen)
        self.assertIsNone(pane.file("left"), "tracefs left mounted")
        self.assertNotIn("Traceback", screen)
        # (the terminal echoes ^C before it)
        said = [line for line in screen.splitlines() if prog + ": stopped" in line]
        self.assertEqual(len(said), 1, screen)
        self.assertIn("stopped by %s; wrote" % signal.Signals(sig).name, said[0])
        self.assert_whole(pane.out, pane.file("pid"), listed, named)

    def assert_whole(self, out, pid, listed, named=True):
        """out is a whole recording that pymerge reads, and the group of
        pyperf-record's pid is in neither uprobe_events nor listed (perf
        probe -l's output, read after the command ended)."""
        names = os.listdir(out)
        for name in ("perf.data", "recording.txt", "kallsyms"):
            self.assertIn(name, names)
        self.assertTrue(any(n.startswith("perf-") and n.endswith(".map") for n in names), names)
        group = "pyperf_%s:" % pid
        with open("/sys/kernel/tracing/uprobe_events") as f:
            self.assertNotIn(group.replace(":", "/"), f.read())
        self.assertNotIn(group, listed)
        r = subprocess.run([PYMERGE, "--view", "python", os.path.join(out, "perf.data")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                           timeout=TIMEOUT)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout, r.stderr)
        if named:
            self.assertIn("(prog.py)", r.stdout)

    def test_ctrl_c_once_and_twice_in_every_mode(self):
        """Ctrl-C once, and twice 0.3 s apart (the second lands while perf
        ends or the folder is completed), in each mode with and without
        --exact: 130, one line, a whole folder, no probe, no mount."""
        runs = [(("-".join(m) + "-x%d" % n).replace("--", ""), n, m) for m in MODES for n in (1, 2)]
        for i in range(0, len(runs), AT_ONCE):
            batch = [(name, n, Pane(name, self.dir, [RECORD, "--mode"] + m)) for name, n, m in runs[i:i + AT_ONCE]]
            self.interrupt(batch)
            listed = probes_listed()
            for name, _, pane in batch:
                with self.subTest(run=name):
                    # a sampled native allocation's stack stops at the
                    # interposer, and 0.5 s allocate few Python bytes
                    self.assert_stopped(pane, "pyperf-record", signal.SIGINT, listed,
                                        named=not name.startswith(("alloc-x", "leaks-x")))

    def test_top_ctrl_c_twice(self):
        """pyperf-top, two quick Ctrl-Cs: 130, one line, a whole folder."""
        pane = Pane("top", self.dir, [TOP, "--mode", "wall"])
        self.interrupt([("top", 2, pane)])
        self.assert_stopped(pane, "pyperf-top", signal.SIGINT, probes_listed())
        self.assertIn("output.txt", os.listdir(pane.out))

    def test_terminal_hangup(self):
        """The terminal closes (tmux kill-session: SIGHUP to the foreground
        group): perf, which handles no SIGHUP, keeps running until the
        program has died of it and the file is whole; 129."""
        pane = Pane("hangup", self.dir, [RECORD, "--mode", "leaks", "--exact"])
        wait(lambda: pane.ready() or pane.done(), "ready")
        time.sleep(0.5)
        tmux("kill-session", "-t", "hangup")
        wait(pane.done, "pyperf-record's end")
        self.assertEqual(pane.file("exit"), str(128 + signal.SIGHUP))
        self.assertIsNone(pane.file("left"), "tracefs left mounted")
        self.assert_whole(pane.out, pane.file("pid"), probes_listed())

    def test_sigterm_and_sighup(self):
        """SIGTERM and SIGHUP sent to pyperf-record alone (perf and the
        program do not get it): 143 and 129, and the same whole folder."""
        for sig, mode in ((signal.SIGTERM, ["leaks", "--exact"]), (signal.SIGHUP, ["calls"])):
            with self.subTest(signal=sig.name):
                d = os.path.join(self.dir, sig.name)
                os.makedirs(d)
                with open(os.path.join(d, "prog.py"), "w") as f:
                    f.write(PROGRAM)
                rec = subprocess.Popen([RECORD, "--mode"] + mode + ["-o", d + "/rec", "--", PYTHON,
                                        d + "/prog.py", d + "/ready"], env=child_env(),
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                       universal_newlines=True, start_new_session=True)
                try:
                    wait(lambda: os.path.exists(d + "/ready") or rec.poll() is not None, "ready")
                    time.sleep(0.5)
                    rec.send_signal(sig)
                    err = rec.communicate(timeout=TIMEOUT)[1]
                finally:
                    if rec.poll() is None:
                        os.killpg(rec.pid, signal.SIGKILL)
                        rec.wait()
                self.assertEqual(rec.returncode, 128 + sig, err)
                self.assertNotIn("Traceback", err)
                self.assertIn("pyperf-record: stopped by %s; wrote" % sig.name, err)
                self.assert_whole(d + "/rec", rec.pid, probes_listed())


if __name__ == "__main__":
    unittest.main()
