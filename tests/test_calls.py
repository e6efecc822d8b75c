"""Python calls and returns, end to end (pyperf-record --mode calls).

pyperfmap's static probes (USDT) in every built extension; real programs
recorded through them as uprobes (real perf, as root) and merged by pymerge
into call counts, exclusive and inclusive times, and a Chrome trace whose
structure is checked here and which the real speedscope app (its npm
package, in headless Chromium) loads.  Run by /usr/bin/python3 (meson suite
"calls") with PYPERF_SCRIPTS, PYMERGE, PYPERFMAP_PATH, SPEEDSCOPE_APP and
TEST_PYTHONS set.
"""
import glob
import json
import os
import re
import subprocess
import sys
import unittest
from collections import Counter, defaultdict
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_modes  # noqa: E402  (the speedscope app check)

from harness import (RECORD, PYMERGE, PYPATH, SharedScratch, assert_users_frames_only, check_recorded_maps,
                     folded, python, run)

PYTHON = python("3.12")
PYTHONS = os.environ.get("TEST_PYTHONS", PYTHON).split(":")
TRACEFS = "/sys/kernel/tracing"

FOO, BAR, BAZ = 3, 5, 7
GEN = 9
# foo -> bar -> baz, each a known number of times; foo also writes once.
# gen is called once and resumed GEN times; unstarted never runs its body.
FBB = """
import os
def gen(n):
    for i in range(n):
        yield i
def unstarted():
    yield 1
def baz(i):
    return i * 2
def bar(i):
    t = 0
    for j in range(%d):
        t += baz(j)
    return t
def foo():
    for i in range(%d):
        bar(i)
    os.write(1, b"x")
for _ in range(%d):
    foo()
sum(gen(%d))
unstarted()
unstarted().close()
try:
    unstarted().throw(ValueError)
except ValueError:
    pass
""" % (BAZ, BAR, FOO, GEN)


def probes_listed():
    return subprocess.run(["perf", "probe", "-l"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True).stdout


def table(text):
    """{function: (count, self, total, resumes)} of --format table."""
    lines = text.splitlines()
    resumes = lines[0].split()[1] == "resumes"
    rows = {}
    for line in lines[1:]:
        m = re.match(r"\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)  (.*)$" if resumes else
                     r"\s*(\d+)\s+()(\d+)\s+(\d+)  (.*)$", line)
        rows[m.group(5)] = tuple(int(m.group(i) or 0) for i in (1, 3, 4, 2))
    return rows


class Calls(SharedScratch):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.script = os.path.join(cls.dir, "fbb.py")
        with open(cls.script, "w") as f:
            f.write(FBB)
        cls.recordings = {}

    def record(self, python=PYTHON):
        """fbb.py recorded with its system calls: the folder (once per
        python), whose python and mixed views hold none of pyperfmap's own
        frames."""
        if python not in self.recordings:
            out = os.path.join(self.dir, "rec-" + os.path.basename(python))
            r = run([RECORD, "--mode", "calls", "--with-syscalls", "-o", out, "--", python, self.script])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, "x" * FOO)
            with open(os.path.join(out, "recording.txt")) as f:
                group = re.search(r"^probes: (\S+)$", f.read(), re.M).group(1)
            self.assertNotIn(group + ":", probes_listed())
            with open(os.path.join(TRACEFS, "uprobe_events")) as f:
                self.assertNotIn(group + "/", f.read())
            assert_users_frames_only(out + "/perf.data")
            self.recordings[python] = out
        return self.recordings[python] + "/perf.data"

    def merge(self, *args):
        r = run([PYMERGE] + list(args))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("lost", r.stderr)
        return r.stdout

    def test_probes_in_every_extension(self):
        """Each built extension carries CPython's function markers with
        exactly CPython's three arguments, and beside each pyperfmap's
        call probe (the trampoline, and at an entry whether it is a call
        or a resumption), on the same semaphore."""
        built = glob.glob(os.path.join(PYPATH, "pyperfmap", "_pyperfmap*.so"))
        self.assertTrue(built, PYPATH)
        note = r"Provider: %s\s+Name: %s\s+Location: \S+, Base: \S+, Semaphore: (\S+)\s+Arguments: %s\n"
        for so in built:
            notes = subprocess.run(["readelf", "-n", so], stdout=subprocess.PIPE,
                                   universal_newlines=True, check=True).stdout
            for kind in ("entry", "return"):
                std = re.search(note % ("python", "function__" + kind, r"8@\S+ 8@\S+ -4@\S+"), notes)
                args = r"8@\S+ -4@\S+" if kind == "entry" else r"8@\S+"
                ours = re.search(note % ("pyperfmap", "call__" + kind, args), notes)
                self.assertTrue(std and ours, "%s: python:function__%s or pyperfmap:call__%s missing"
                                " (build with systemtap-sdt-dev)" % (so, kind, kind))
                self.assertNotEqual(int(std.group(1), 16), 0)
                self.assertEqual(std.group(1), ours.group(1))

    def test_exact_counts_and_times_that_add_up(self):
        """On every CPython: foo, bar and baz are called exactly as often as
        they ran; foo's inclusive time is its own exclusive time plus that
        of everything under it (bar, baz and its write), and also the sum of
        its calls' durations (entry to return, a separate measure)."""
        for python in PYTHONS:
            with self.subTest(python=python):
                data = self.record(python)
                rows = table(self.merge("--format", "table", "--top", "100000", data))
                counts = {f: rows[f + " (fbb.py)"][0] for f in ("foo", "bar", "baz")}
                self.assertEqual(counts, {"foo": FOO, "bar": FOO * BAR, "baz": FOO * BAR * BAZ})
                under_foo = Counter()
                for stack, w in folded(self.merge(data)):
                    frames = stack.split(";")
                    if "foo (fbb.py)" in frames:
                        under_foo[frames[-1]] += w
                self.assertLessEqual({"foo (fbb.py)", "bar (fbb.py)", "baz (fbb.py)", "[syscall write]"},
                                     set(under_foo))
                self.assertTrue(all(f.endswith("(fbb.py)") or f.startswith("[syscall ") for f in under_foo),
                                under_foo)
                self.assertGreater(under_foo["[syscall write]"], 0)
                total = rows["foo (fbb.py)"][2]
                self.assertEqual(sum(under_foo.values()), total)
                # exclusive (self) of bar and baz as the table has them: only foo calls them
                self.assertEqual(under_foo["bar (fbb.py)"], rows["bar (fbb.py)"][1])
                self.assertEqual(under_foo["baz (fbb.py)"], rows["baz (fbb.py)"][1])
                latency = sum(w for stack, w in folded(self.merge("--weight", "latency-ns", data))
                              if stack.endswith(";foo (fbb.py)"))
                self.assertEqual(latency, total)

    def test_generator_called_once_resumed_n_times(self):
        """On every CPython: a generator called once and resumed GEN times
        is one call and GEN resumptions (each resumption counted as a call,
        json.tool's _iterencode showed 252,004 calls where dump makes one);
        one whose body never ran (never started, closed or thrown into
        first) is no call; ordinary functions have no resumptions."""
        for python in PYTHONS:
            with self.subTest(python=python):
                rows = table(self.merge("--format", "table", "--top", "100000", self.record(python)))
                count, _, total, resumes = rows["gen (fbb.py)"]
                self.assertEqual((count, resumes), (1, GEN))
                self.assertGreater(total, 0)
                self.assertNotIn("unstarted (fbb.py)", rows)
                self.assertEqual([r[3] for f, r in rows.items() if f.startswith(("foo ", "bar ", "baz "))],
                                 [0, 0, 0])

    def trace(self, *args):
        doc = json.loads(self.merge("--format", "trace", *args), parse_float=Decimal)
        return doc

    def check_structure(self, doc):
        """The trace-event format's structure; returns {(pid, tid): [X events]}."""
        self.assertIsInstance(doc["traceEvents"], list)
        tracks, named = defaultdict(list), set()
        for e in doc["traceEvents"]:
            self.assertIn(e["ph"], ("X", "M"), e)
            self.assertIsInstance(e["name"], str)
            self.assertIsInstance(e["pid"], int)
            self.assertIsInstance(e["tid"], int)
            if e["ph"] == "M":
                self.assertIn(e["name"], ("process_name", "thread_name"))
                self.assertIsInstance(e["args"]["name"], str)
                named.add((e["name"], e["pid"], e["tid"]))
                continue
            self.assertIsInstance(e["ts"], Decimal)
            self.assertIsInstance(e["dur"], Decimal)
            self.assertGreaterEqual(e["ts"], 0)
            self.assertGreater(e["dur"], 0)
            tracks[e["pid"], e["tid"]].append(e)
        for pid, tid in tracks:
            self.assertIn(("thread_name", pid, tid), named)
            self.assertIn(("process_name", pid, pid), named)
        return tracks

    def test_trace_slices_nest(self):
        """Every slice lies inside its parent on its thread's track: baz
        inside bar inside foo, foo's write inside foo, as many as ran."""
        doc = self.trace(self.record())
        tracks = self.check_structure(doc)
        self.assertEqual(len(tracks), 1)
        events = sorted(next(iter(tracks.values())), key=lambda e: (e["ts"], -e["dur"]))
        parent_of = Counter()
        open_ = []
        for e in events:
            while open_ and e["ts"] >= open_[-1]["ts"] + open_[-1]["dur"]:
                open_.pop()
            if open_:
                p = open_[-1]
                self.assertLessEqual(e["ts"] + e["dur"], p["ts"] + p["dur"], (e, p))
            parent_of[e["name"], open_[-1]["name"] if open_ else None] += 1
            open_.append(e)
        self.assertEqual(parent_of["foo (fbb.py)", "<module> (fbb.py)"], FOO)
        self.assertEqual(parent_of["bar (fbb.py)", "foo (fbb.py)"], FOO * BAR)
        self.assertEqual(parent_of["baz (fbb.py)", "bar (fbb.py)"], FOO * BAR * BAZ)
        self.assertEqual(parent_of["[syscall write]", "foo (fbb.py)"], FOO)
        foo = [e for e in events if e["name"] == "foo (fbb.py)"]
        # the trace's durations are the table's inclusive time, to the ns
        rows = table(self.merge("--format", "table", self.record()))
        self.assertEqual(sum(e["dur"] for e in foo) * 1000, rows["foo (fbb.py)"][2])

    def test_filters(self):
        """--only keeps the matching functions (their callers' time goes
        nowhere else); --inside keeps what runs inside one function."""
        data = self.record()
        rows = table(self.merge("--only", "^ba[rz] ", "--format", "table", data))
        self.assertEqual({f: r[0] for f, r in rows.items() if not f.startswith("[syscall ")},
                         {"bar (fbb.py)": FOO * BAR, "baz (fbb.py)": FOO * BAR * BAZ})
        # the write is foo's, which is left out: it has no caller to stay under
        self.assertNotIn("[syscall write]", rows)
        for line in self.merge("--only", "^ba[rz] ", data).splitlines():
            self.assertTrue(line.split(";")[1].startswith("bar "), line)
        rows = table(self.merge("--inside", "^foo ", "--format", "table", data))
        self.assertEqual({f: r[0] for f, r in rows.items() if not f.startswith("[syscall ")},
                         {"foo (fbb.py)": FOO, "bar (fbb.py)": FOO * BAR, "baz (fbb.py)": FOO * BAR * BAZ})
        self.assertEqual(rows["[syscall write]"][0], FOO)
        tracks = self.check_structure(self.trace("--inside", "^bar ", data))
        names = Counter(e["name"] for e in next(iter(tracks.values())) if not e["name"].startswith("[syscall "))
        self.assertEqual(names, Counter({"bar (fbb.py)": FOO * BAR, "baz (fbb.py)": FOO * BAR * BAZ}))
        r = run([PYMERGE, "--only", "(", data])
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)

    def test_probes_removed_after_sigint(self):
        """Interrupted, pyperf-record removes the probes and leaves a
        recording whose unfinished calls end with it, and whose perf map,
        of a program ended by a signal, is its entries only."""
        group, out = test_modes.Modes.interrupt_a_recording(self, "calls", "function__return")
        self.assertNotIn(group + ":", probes_listed())
        check_recorded_maps(self, out)
        rows = table(self.merge("--format", "table", os.path.join(out, "perf.data")))
        # still running at the end (when the program had started by then):
        # it lasts until the last context switch, not 0 ns from its entry
        self.assertGreater(rows.get("<module> (sleeper.py)", (1, 1, 1))[2], 0)

    def test_trace_in_the_speedscope_app(self):
        """speedscope imports Chrome traces: the real app shows our calls."""
        r = self.merge("--format", "trace", self.record())
        test_modes.Modes.check_in_the_app(self, r, ["baz (fbb.py)", "bar (fbb.py)"])


if __name__ == "__main__":
    unittest.main()
