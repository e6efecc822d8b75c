"""Frame-pointer recordings, with real perf.

On a CPython built with frame pointers (tests/build-fp-python builds one;
CI does so before `meson setup`), `perf record -g` walks through pyperfmap's
trampolines: every Python frame of a known call chain is there, in order,
and each function's share agrees with a DWARF recording of the same
workload.  On a CPython built without them (pyenv's), a -g recording stops
inside the interpreter, and pymerge says so in one line.

Run by /usr/bin/python3 (meson test suite "framepointers") with
PYPERF_SCRIPTS, PYMERGE, PYPERFMAP_PATH, FP_PYTHON (empty when no
frame-pointer CPython was found at configure time) and NOFP_PYTHON.
"""
import os
import subprocess
import unittest

import harness
from harness import RECORD, PYMERGE, Scratch, SharedScratch, run

HERE = os.path.dirname(os.path.abspath(__file__))
FP_PYTHON = os.environ.get("FP_PYTHON", "")
NOFP_PYTHON = os.environ.get("NOFP_PYTHON", "")
NEST = os.path.join(HERE, "merge", "py", "nest.py")
CHAIN = ["<module>", "main", "Outer.run", "level1", "level2", "level3", "leaf"]
WARNING = "built without frame pointers: record with --call-graph dwarf, or use pyperf-record"
SECONDS = "3"


def record(out, python, *opts):
    """pyperf-record [opts] of nest.py; returns the recording's perf.data."""
    r = run([RECORD, "-o", out] + list(opts) + ["--", python, NEST, SECONDS])
    if r.returncode != 0:
        raise AssertionError("pyperf-record failed: %s" % r.stderr)
    return os.path.join(out, "perf.data")


def pymerge(*args):
    r = run([PYMERGE] + list(args))
    if r.returncode != 0:
        raise AssertionError("pymerge %s failed: %s" % (args, r.stderr))
    return r


def folded(data, *opts):
    """{frames (root first, process name dropped): samples} of the python view."""
    text = pymerge("--view", "python", "--weight", "samples", *opts, data).stdout
    return dict(harness.folded_sums(text, key=lambda stack: tuple(stack.split(";")[1:])))


def shares(stacks):
    """Each frame's inclusive share of the samples, in points."""
    return {f: 100.0 * s for f, s in harness.shares(stacks.items()).items()}


def heaviest(stacks, frame):
    """The three stacks holding frame with the most samples, heaviest first."""
    return sorted(((n, ";".join(s)) for s, n in stacks.items() if frame in s), reverse=True)[:3]


def code_file(python):
    """The file holding python's interpreter loop: libpython when it is
    linked against it, else the executable."""
    probe = ("import os, sysconfig as s; print(os.path.join(s.get_config_var('LIBDIR'),"
             " s.get_config_var('INSTSONAME')) if s.get_config_var('Py_ENABLE_SHARED')"
             " else os.path.realpath(__import__('sys').executable))")
    return subprocess.run([python, "-c", probe], stdout=subprocess.PIPE, check=True,
                          universal_newlines=True).stdout.strip()


@unittest.skipUnless(FP_PYTHON, "no frame-pointer CPython: tests/build-fp-python builds one"
                     " (CI runs it), then meson setup finds it")
class FramePointerPython(SharedScratch):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.fp = record(os.path.join(cls.dir, "fp"), FP_PYTHON)
        cls.dwarf = record(os.path.join(cls.dir, "dwarf"), FP_PYTHON, "--dwarf")
        cls.fp_stacks = folded(cls.fp)
        cls.dwarf_stacks = folded(cls.dwarf)
        cls.fp_python = folded(cls.fp, "--no-native-leaf")
        cls.dwarf_python = folded(cls.dwarf, "--no-native-leaf")

    def test_pyperf_record_chose_frame_pointers(self):
        with open(os.path.join(os.path.dirname(self.fp), "recording.txt")) as f:
            self.assertIn("callgraph: -g\n", f.read())

    def test_waits_recorded_with_dwarf(self):
        # libc, where waits are sampled, has no frame pointers on Debian
        out = os.path.join(self.dir, "wall")
        record(out, FP_PYTHON, "--mode", "wall")
        with open(os.path.join(out, "recording.txt")) as f:
            self.assertIn("callgraph: --call-graph dwarf,", f.read())

    def test_stacks_complete_through_the_trampolines(self):
        chain = tuple("%s (nest.py)" % f for f in CHAIN)
        total = sum(self.fp_stacks.values())
        rooted = sum(n for s, n in self.fp_stacks.items() if s[:1] == chain[:1])
        self.assertGreaterEqual(rooted, 0.95 * total,
                                "%d of %d samples reach <module>" % (rooted, total))
        # leaf runs only under the whole chain, in order, nothing between
        in_leaf = {s: n for s, n in self.fp_stacks.items() if chain[-1] in s}
        self.assertTrue(in_leaf)
        whole = sum(n for s, n in in_leaf.items() if s[:len(chain)] == chain)
        self.assertEqual(whole, sum(in_leaf.values()),
                         [s for s in in_leaf if s[:len(chain)] != chain][:5])

    def test_shares_agree_with_dwarf(self):
        """-g and DWARF stacks of the same program give each Python function
        the same share within 2 points: where the shares differ, one
        unwinder put samples under the wrong function.  The two recordings
        are two runs, so a native leaf's share is the run's own (how long
        malloc or an int addition took there, which other programs on the
        same cores move by several points): native leaves are only asked
        to be found under Python frames, within 10 points."""
        def check(fp_stacks, dwarf_stacks, within, frames):
            fp, dwarf = shares(fp_stacks), shares(dwarf_stacks)
            for f in sorted(frames):
                a, b = fp.get(f, 0.0), dwarf.get(f, 0.0)
                if max(a, b) >= 2.0:
                    # with the stacks that hold f: a misnamed frame and a
                    # misplaced one look different there
                    self.assertLess(abs(a - b), within, "%s: %.1f%% with -g, %.1f%% with DWARF;"
                                    " -g: %s; DWARF: %s" % (f, a, b, heaviest(fp_stacks, f),
                                                            heaviest(dwarf_stacks, f)))

        fp, dwarf = shares(self.fp_python), shares(self.dwarf_python)
        python = set(fp) | set(dwarf)
        check(self.fp_python, self.dwarf_python, 2.0, python)
        self.assertGreater(fp["leaf (nest.py)"], 95.0)
        fp, dwarf = shares(self.fp_stacks), shares(self.dwarf_stacks)
        native = (set(fp) | set(dwarf)) - python
        self.assertTrue(any(fp.get(f, 0) >= 2.0 for f in native), fp)
        check(self.fp_stacks, self.dwarf_stacks, 10.0, native)
        self.assertGreater(fp["leaf (nest.py)"], 80.0)

    def test_no_frame_pointer_warning(self):
        self.assertNotIn(WARNING, pymerge("-o", os.devnull, self.fp).stderr)


@unittest.skipUnless(NOFP_PYTHON, "no pyenv CPython 3.11")
class NoFramePointerPython(Scratch):
    def test_one_line_names_the_interpreter(self):
        data = record(os.path.join(self.dir, "rec"), NOFP_PYTHON, "--fp")
        lines = [l for l in pymerge("-o", os.devnull, data).stderr.splitlines() if WARNING in l]
        self.assertEqual(len(lines), 1, lines)
        self.assertIn(" stop inside %s, " % code_file(NOFP_PYTHON), lines[0])
        # a DWARF recording of the same interpreter is fine
        data = record(os.path.join(self.dir, "dwarf"), NOFP_PYTHON, "--dwarf")
        self.assertNotIn(WARNING, pymerge("-o", os.devnull, data).stderr)


if __name__ == "__main__":
    unittest.main()
