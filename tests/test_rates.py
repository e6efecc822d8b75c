"""pyperf-record --mode syscalls at a busy server's rate, end to end.

Each program counts its own system calls per function; pyperf-record (real
perf, raw_syscalls tracepoints, as root) records it and pymerge must count
the same, with no record lost.  Run by /usr/bin/python3 (meson suite
"rates") with PYPERF_SCRIPTS, PYMERGE, PYPERFMAP_PATH and TEST_PYTHONS set.
"""
import os
import re
import shutil
import subprocess
import tempfile
import textwrap
import unittest

from harness import RECORD, PYMERGE, PYTHONS, child_env, program


# About 50,000 write()s a second for 4 s from two functions, one write in
# three from rare(); it prints how many each made.
PACED = program("paced_writes.py")

# About 40,000 system calls a second, 13 Python calls deep: deeper than the
# 8 KiB stack copies reach, so the stacks come whole only through the call
# paths.  A print through three io layers, and a socket send and receive.
DEEP = """
import socket, time
f = open("/dev/null", "w", buffering=1)
a, b = socket.socketpair()
n = {"leaf_print": 0, "leaf_sock": 0}
def leaf_print(i):
    print("line", i, file=f)
    n["leaf_print"] += 1
def leaf_sock(i):
    a.send(b"x"); b.recv(1)
    n["leaf_sock"] += 1
def level(d, i):
    if d == 0:
        (leaf_print if i % 3 else leaf_sock)(i)
    else:
        level(d - 1, i)
start = time.monotonic()
for i in range(60000):
    if i % 30 == 0:
        ahead = start + i / 30000.0 - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)
    level(12, i)
print(n["leaf_print"], n["leaf_sock"])
"""


class Syscalls(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="pyperfmap-rates-")
        self.python = PYTHONS[-1]

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def record(self, source):
        """source recorded as prog.py in syscalls mode: (its perf.data,
        the words it printed)."""
        prog = os.path.join(self.dir, "prog.py")
        with open(prog, "w") as f:
            f.write(textwrap.dedent(source))
        out = os.path.join(self.dir, "rec")
        env = child_env()
        r = subprocess.run([RECORD, "--mode", "syscalls", "-o", out, "--", self.python, prog],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                           env=env, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        return os.path.join(out, "perf.data"), r.stdout.split()

    def merge(self, data, *opts):
        r = subprocess.run([PYMERGE, "-v", "--view", "python"] + list(opts) + [data],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                           timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        lost = re.search(r"samples \([^)]*\), (\d+) lost", r.stderr)
        self.assertIsNotNone(lost, r.stderr)
        self.assertEqual(int(lost.group(1)), 0, "perf lost records:\n" + r.stderr)
        return r.stdout

    @staticmethod
    def weight(folded, frame, leaf):
        """The weight of stacks holding FRAME and ending in the LEAF system call."""
        total = 0
        for line in folded.splitlines():
            stack, _, n = line.rpartition(" ")
            frames = stack.split(";")
            if frame in frames and frames[-1] == "[syscall %s]" % leaf:
                total += int(n)
        return total

    def test_50000_writes_a_second_all_counted(self):
        """No record lost at 50,000 write()s a second, each function's
        writes counted within 1%, and their latency split as their counts."""
        data, printed = self.record(PACED)
        common, rare = (int(x) for x in printed[:2])
        folded = self.merge(data)
        got = {"common": self.weight(folded, "common (prog.py)", "write"),
               "rare": self.weight(folded, "rare (prog.py)", "write")}
        for name, truth in (("common", common), ("rare", rare)):
            self.assertLessEqual(abs(got[name] - truth), truth / 100.0, (name, got[name], truth))
        lat = self.merge(data, "--weight", "latency-ns")
        ratio = self.weight(lat, "common (prog.py)", "write") / max(1, self.weight(lat, "rare (prog.py)", "write"))
        # the same call, twice as often: about twice the time (scheduling aside)
        self.assertTrue(1.3 < ratio < 3.0, ratio)

    def test_stacks_deeper_than_the_copy_complete(self):
        """Stacks 13 Python calls deep at 40,000 system calls a second:
        none lost, and every call counted under its whole chain of
        callers, which only the call paths give."""
        data, printed = self.record(DEEP)
        prints, socks = (int(x) for x in printed)
        folded = self.merge(data)
        chain = ";".join(["<module> (prog.py)"] + ["level (prog.py)"] * 13)
        whole = {"leaf_print": 0, "leaf_sock": 0}
        for line in folded.splitlines():
            stack, _, n = line.rpartition(" ")
            for name in whole:
                if stack.startswith("python3") and (chain + ";%s (prog.py);" % name) in stack:
                    whole[name] += int(n)
        writes = self.weight(folded, "leaf_print (prog.py)", "write")
        sends = self.weight(folded, "leaf_sock (prog.py)", "sendto")
        self.assertLessEqual(abs(writes - prints), prints / 100.0, (writes, prints))
        self.assertLessEqual(abs(sends - socks), socks / 100.0, (sends, socks))
        # each print writes once, each exchange makes a send and a receive
        self.assertGreaterEqual(whole["leaf_print"], 0.99 * prints, whole)
        self.assertGreaterEqual(whole["leaf_sock"], 0.99 * 2 * socks, whole)


if __name__ == "__main__":
    unittest.main()
