"""pyperf-top, the live view, in a real terminal: tmux runs it on a program
with known hot functions, capture-pane reads the screen, send-keys presses
its keys; and the same without a terminal, on a terminal too small, and
attached to a process that exits.  Every run records a real program with
perf, and the folder each leaves is read by pymerge.

Run by /usr/bin/python3 (meson test suite "top") with PYPERF_SCRIPTS,
PYPERFMAP_PATH, TEST_PYTHONS and pymerge on PATH.  Needs tmux.  tmux runs
on a socket of its own (-L), whose server is killed at the end, also on
failure; programs started here are killed when their test ends.
"""
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

from harness import PYTHONS, SCRIPTS, check_recorded_maps, child_env, run

TOP = os.path.join(SCRIPTS, "pyperf-top")
# The specialized eval loop of 3.12 runs a `for ... in range` loop without
# calling out, and small ints are cached: the inner loop's time is the
# Python function's own.
PYTHON = next((p for p in PYTHONS if "3.12" in p), PYTHONS[0])
SOCKET = "pyperf-top-test-%d" % os.getpid()
SOCKET_PATH = os.path.join(os.environ.get("TMUX_TMPDIR", "/tmp"), "tmux-%d" % os.getuid(), SOCKET)

# hottest_loop has most of the self time; helper_sum less, under
# middle_caller; main and <module> have the biggest total.
PROGRAM = """
import sys, time

def hottest_loop(n):
    for _ in range(n):
        for _ in range(250):
            pass

def helper_sum(n):
    return sum(range(n))

def middle_caller():
    hottest_loop(1200)
    helper_sum(20000)

def main(seconds):
    end = time.time() + seconds
    while time.time() < end:
        middle_caller()

main(float(sys.argv[1]))
"""

# napper sleeps most of the time (the wall mode's biggest leaf); writer
# makes most of the system calls.
WAITS = """
import sys, time

def napper():
    time.sleep(0.05)

def writer(f):
    for _ in range(100):
        f.write(b"x")

end = time.time() + float(sys.argv[1])
with open("/dev/null", "wb", buffering=0) as f:
    while time.time() < end:
        napper()
        writer(f)
"""


def tmux(*args, check=True):
    return subprocess.run(["tmux", "-L", SOCKET] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, check=check,
                          timeout=30).stdout


def screen():
    return tmux("capture-pane", "-p", "-t", "top", check=False)


def wait_screen(pred, seconds, what):
    """Polls the pane until pred(text) holds; fails after seconds."""
    end = time.time() + seconds
    text = ""
    while time.time() < end:
        text = screen()
        if pred(text):
            return text
        time.sleep(0.1)
    raise AssertionError("%s not on screen within %.0f s:\n%s" % (what, seconds, text))


def first_row(text):
    """The function of the first table row on screen (after the header
    line that ends with FUNCTION)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.rstrip().endswith("FUNCTION") and i + 1 < len(lines):
            parts = lines[i + 1].split(None, 4)
            return parts[4].strip() if len(parts) == 5 else ""
    return ""


def pymerge_python(folder):
    return run(["pymerge", "--view", "python", os.path.join(folder, "perf.data")])


@unittest.skipUnless(shutil.which("tmux"), "needs tmux")
class TestTop(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="pyperf-top-test-")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)
        self.prog = os.path.join(self.dir, "hot.py")
        with open(self.prog, "w") as f:
            f.write(PROGRAM)
        # (cleanups run last first: the server is killed, then its socket goes)
        self.addCleanup(lambda: os.path.exists(SOCKET_PATH) and os.unlink(SOCKET_PATH))
        self.addCleanup(tmux, "kill-server", check=False)

    def start(self, args, cols=160, rows=45):
        """pyperf-top ARGS in a tmux pane of cols x rows; the pane stays,
        with EXIT=status, when it ends."""
        e = child_env()
        cmd = "env PYTHONPATH=%s PATH=%s /usr/bin/python3 %s %s; echo EXIT=$?; sleep 600" % (
            shlex.quote(e["PYTHONPATH"]), shlex.quote(e["PATH"]), shlex.quote(TOP),
            " ".join(shlex.quote(a) for a in args))
        tmux("new-session", "-d", "-s", "top", "-x", str(cols), "-y", str(rows), "sh", "-c", cmd)

    def key(self, k):
        tmux("send-keys", "-t", "top", k)

    def test_live_view_keys_and_recording(self):
        """The hottest function is first within 3 s of the first table; the
        keys change the view, the sort, the thread, pause it and show
        stacks; q leaves a recording that pymerge reads."""
        out = os.path.join(self.dir, "rec")
        self.start(["-o", out, "--", PYTHON, self.prog, "60"])
        # The table appears once the interpreter has started under perf.
        text = wait_screen(lambda t: "FUNCTION" in t, 60, "the table")
        shown = time.time()
        text = wait_screen(lambda t: first_row(t) == "hottest_loop (hot.py)", 3,
                           "hottest_loop at the top")
        self.assertLess(time.time() - shown, 3.0)
        self.assertIn("view python", text)
        self.assertIn("q quit", text)       # the footer names the keys
        self.key("t")
        text = wait_screen(lambda t: "sort total" in t and first_row(t) in (
            "<module> (hot.py)", "main (hot.py)"), 5, "sorted by total: <module> or main first")
        self.key("v")
        wait_screen(lambda t: "view mixed" in t and "middle_caller (hot.py)" in t, 5, "the mixed view")
        self.key("v")
        text = wait_screen(lambda t: "view native" in t and "_PyEval_EvalFrameDefault" in t
                           and "py::hottest_loop:" in t, 5, "the native view with native names")
        self.assertNotIn("hottest_loop (hot.py)", text)
        self.key("v")
        self.key("s")
        wait_screen(lambda t: "view python" in t and first_row(t) == "hottest_loop (hot.py)", 5,
                    "back to the python view, sorted by self")
        self.key("f")
        wait_screen(lambda t: "thread all" not in t and "thread python" in t, 5, "one thread")
        self.key("f")
        wait_screen(lambda t: "thread all" in t, 5, "all threads again")
        self.key("p")
        text = wait_screen(lambda t: "PAUSED" in t, 5, "paused")
        time.sleep(1.5)
        self.assertEqual(screen(), text, "a paused view changed")
        self.key("p")
        wait_screen(lambda t: "PAUSED" not in t, 5, "running again")
        self.key("Enter")
        text = wait_screen(lambda t: "hottest stacks through hottest_loop (hot.py)" in t, 5,
                           "the hottest stacks of hottest_loop")
        self.assertIn("main (hot.py) ; middle_caller (hot.py) ; hottest_loop (hot.py)", text)
        self.key("Escape")
        wait_screen(lambda t: "FUNCTION" in t, 5, "the table again")
        self.key("q")
        text = wait_screen(lambda t: "EXIT=" in t, 90, "pyperf-top's end")
        self.assertIn("EXIT=0", text)
        self.assertIn("pyperf-top: wrote", text)
        for name in ("perf.data", "recording.txt", "kallsyms"):
            self.assertTrue(os.path.exists(os.path.join(out, name)), name)
        with open(os.path.join(out, "recording.txt")) as f:
            meta = f.read()
        self.assertRegex(meta, r"maps: perf-\d+\.map")
        self.assertIn("live view cpu: pymerge", meta)
        check_recorded_maps(self, out)      # the program was stopped with q
        merged = pymerge_python(out)
        self.assertEqual(merged.returncode, 0, merged.stderr)
        self.assertIn("main (hot.py);middle_caller (hot.py);hottest_loop (hot.py)", merged.stdout)

    def test_too_small(self):
        """A terminal too small: one line, a non-zero status, nothing recorded."""
        out = os.path.join(self.dir, "small")
        self.start(["-o", out, "--", PYTHON, self.prog, "1"], cols=40, rows=8)
        text = wait_screen(lambda t: "EXIT=" in t, 30, "pyperf-top's end")
        # one line (wrapped at 40 columns), then the shell's EXIT=
        self.assertRegex(text.replace("\n", ""), r"^pyperf-top: the terminal is 40x8; the live"
                         r" view needs at least 60x10 \(or pipe the output for plain tables\) *EXIT=2")
        self.assertFalse(os.path.exists(os.path.join(out, "perf.data")))

    def test_not_a_tty(self):
        """stdout a pipe: a plain table every interval, hottest first."""
        out = os.path.join(self.dir, "plain")
        p = run(["/usr/bin/python3", TOP, "-o", out, "--", PYTHON, self.prog, "4"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("\033", p.stdout)      # no escape codes
        tables = [t for t in p.stdout.split("\n\n") if "FUNCTION" in t]
        self.assertGreaterEqual(len(tables), 3, p.stdout)
        # the last one is the program's exit: a short interval
        self.assertEqual(first_row(tables[-2]), "hottest_loop (hot.py)", tables[-2])
        self.assertEqual(pymerge_python(out).returncode, 0)

    def test_live_format(self):
        """pymerge --format live on a folder pyperf-top left: snapshots that
        end with x, each stack in three views (native | mixed | python)
        whose python part is the python view's stack."""
        out = os.path.join(self.dir, "fmt")
        run(["/usr/bin/python3", TOP, "-o", out, "--", PYTHON, self.prog, "3"], check=True)
        p = run(["pymerge", "--format", "live", "--interval", "0.5", os.path.join(out, "perf.data")])
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0], "h cpu-ns")
        self.assertTrue(lines[-1].startswith("x "), lines[-1])
        self.assertGreaterEqual(sum(line.startswith("i ") for line in lines), 3)
        names = {}
        for line in lines:
            if line.startswith("f "):
                _, fid, kind, name = line.split(" ", 3)
                names[fid] = (kind, name)
        views = []
        for line in lines:
            if line.startswith("s "):
                parts = line.split(" ", 2)[2].split("|")
                self.assertEqual(len(parts), 3, line)
                views.append([[names[f][1] for f in part.split()] for part in parts])
        hot = [v for v in views if v[2][-2:] == ["middle_caller (hot.py)", "hottest_loop (hot.py)"]]
        self.assertTrue(hot, views[:5])
        native, mixed, python = hot[0]
        self.assertIn("py::hottest_loop:" + self.prog, native)
        self.assertIn("_PyEval_EvalFrameDefault", native)
        self.assertNotIn("_PyEval_EvalFrameDefault", mixed)
        self.assertEqual([f for f in mixed if f.endswith("(hot.py)")], python[-4:])

    def test_wall_and_syscalls(self):
        """The wall mode shows a sleep as an off-CPU leaf under its
        function, the syscalls mode the system calls made."""
        prog = os.path.join(self.dir, "waits.py")
        with open(prog, "w") as f:
            f.write(WAITS)
        for mode, leaf, caller in (("wall", "[off-cpu: sleep]", "napper (waits.py)"),
                                   ("syscalls", "[syscall write]", "writer (waits.py)")):
            for sort, first in (("self", leaf), ("total", "<module> (waits.py)")):
                out = os.path.join(self.dir, mode)
                p = run(["/usr/bin/python3", TOP, "-o", out, "--mode", mode, "--sort", sort,
                         "--", PYTHON, prog, "4"])
                self.assertEqual(p.returncode, 0, p.stderr)
                tables = [t for t in p.stdout.split("\n\n") if "FUNCTION" in t]
                self.assertGreaterEqual(len(tables), 3, p.stdout)
                last = tables[-2]   # the last full interval (the very last one is the exit)
                self.assertEqual(first_row(last), first, last)
                self.assertIn(caller if sort == "total" else leaf, last)

    def test_pid_that_exits(self):
        """-p of a process that exits while watched: the view ends by
        itself, says so, and leaves a folder pymerge reads."""
        target = subprocess.Popen([PYTHON, self.prog, "4"], env=child_env())
        self.addCleanup(target.kill)
        time.sleep(0.5)
        out = os.path.join(self.dir, "attached")
        p = run(["/usr/bin/python3", TOP, "-o", out, "-p", str(target.pid)])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("pyperf-top: PID %d exited; the view ended" % target.pid, p.stderr)
        merged = pymerge_python(out)
        self.assertEqual(merged.returncode, 0, merged.stderr)
        self.assertIn("hottest_loop (hot.py)", merged.stdout)

    def test_modes_without_a_live_view(self):
        """offcpu, alloc, leaks, calls: refused in one line."""
        for mode in ("offcpu", "alloc", "leaks", "calls"):
            p = run(["/usr/bin/python3", TOP, "--mode", mode, "--", PYTHON, self.prog, "1"])
            self.assertEqual(p.returncode, 2)
            self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
            self.assertIn("--mode %s has no live view" % mode, p.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1] + ["-v"] + sys.argv[1:])
