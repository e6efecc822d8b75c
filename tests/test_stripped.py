"""A stripped interpreter, with real perf.

Debian's /usr/bin/python3.11 has no .symtab: its internal functions are
unnamed, "[python3.11]" frames.  A pyperf-record recording of
merge/py/through_c.py (Python functions called from the interpreter's C
code: sorted's key, map, __init__, a property, __getattr__) on it:
  - the native view has such frames between two Python frames (so the
    mixed view's rule below has something to do);
  - the mixed view has none between two Python frames, and every Python
    function of the program under work();
  - where /usr/lib/debug has the interpreter's debug file (Debian's
    python3.11-dbg, installed by CI), names come from it (builtin_sorted,
    static, is only in the debug file's .symtab); the other checks then run
    with it hidden (a tmpfs over /usr/lib/debug in a mount namespace of
    pymerge's own), so they test the stripped case either way.

Run by /usr/bin/python3 (meson test "stripped", suite pymerge) with
PYPERF_SCRIPTS, PYMERGE, PYPERFMAP_PATH and SYSTEM_PYTHON (empty when no
system CPython was found at configure time).
"""
import os
import re
import shutil
import tempfile
import unittest

from harness import RECORD, PYMERGE, folded_sums, output, run


HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = os.environ.get("SYSTEM_PYTHON", "")
WORKLOAD = os.path.join(HERE, "merge", "py", "through_c.py")
FUNCTIONS = ["key", "double", "Point.__init__", "Point.twice", "Point.__getattr__"]
HIDE = ["unshare", "-m", "sh", "-c", 'mount -t tmpfs none /usr/lib/debug && exec "$@"', "sh"]


def elf_facts(path):
    """(has a .symtab, build id in hex) of an ELF file, from readelf."""
    sections = output(["readelf", "-S", "-W", path])
    notes = output(["readelf", "-n", path])
    bid = re.search(r"Build ID: ([0-9a-f]+)", notes)
    return " .symtab " in sections, bid.group(1) if bid else ""


class Stripped(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not PYTHON:
            raise unittest.SkipTest("no system CPython found at configure time")
        cls.exe = os.path.realpath(PYTHON)
        has_symtab, bid = elf_facts(cls.exe)
        if has_symtab:
            raise unittest.SkipTest("%s is not stripped" % cls.exe)
        cls.unnamed = "[%s]" % os.path.basename(cls.exe)
        debug = "/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])
        cls.debug = os.path.exists(debug)
        cls.hide = cls.debug and run(HIDE + ["true"]).returncode == 0
        cls.tmp = tempfile.mkdtemp(prefix="pyperfmap-stripped-")
        out = os.path.join(cls.tmp, "rec")
        run([RECORD, "-o", out, "--", PYTHON, WORKLOAD, "4"], check=True)
        cls.data = os.path.join(out, "perf.data")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def stripped_merge(self, view):
        """{frames, root first: samples} of view, without the debug file."""
        if self.debug and not self.hide:
            self.fail("the debug file is installed and cannot be hidden (unshare -m failed)")
        cmd = [PYMERGE, "--view", view, "--weight", "samples", self.data]
        return folded(output((HIDE if self.debug else []) + cmd))

    def between(self, stacks, is_python):
        """Samples with an unnamed interpreter frame between two Python frames."""
        n = 0
        for frames, count in stacks.items():
            py = [i for i, f in enumerate(frames) if is_python(f)]
            if py and any(f == self.unnamed and py[0] < i < py[-1] for i, f in enumerate(frames)):
                n += count
        return n

    def test_native_view_has_them(self):
        stacks = self.stripped_merge("native")
        n = self.between(stacks, lambda f: f.startswith("py::"))
        self.assertGreater(n, 0.2 * sum(stacks.values()),
                           "too few %s frames between Python frames to test the mixed view"
                           % self.unnamed)

    def test_mixed_view_drops_them(self):
        stacks = self.stripped_merge("mixed")
        self.assertEqual(self.between(stacks, lambda f: f.endswith(".py)")), 0)
        for fn in FUNCTIONS:
            name = "%s (through_c.py)" % fn
            under = sum(n for frames, n in stacks.items()
                        if name in frames and "work (through_c.py)" in frames)
            self.assertGreater(under, 0, "%s never under work() in the mixed view" % fn)

    def test_debug_file_names(self):
        if not self.debug:
            self.skipTest("no debug file for %s in /usr/lib/debug (Debian: python3.11-dbg)"
                          % self.exe)
        stacks = folded(output([PYMERGE, "--view", "native", "--weight", "samples", self.data]))
        total = sum(stacks.values())
        named = sum(n for frames, n in stacks.items()      # builtin_sorted.lto_priv.0
                    if any(f.split(".")[0] == "builtin_sorted" for f in frames))
        unnamed = sum(n for frames, n in stacks.items() if self.unnamed in frames)
        self.assertGreater(named, 0.02 * total, "builtin_sorted not named from the debug file")
        self.assertLess(unnamed, 0.01 * total)


def folded(text):
    """{frames without the root: weight} of folded text."""
    return dict(folded_sums(text, key=lambda stack: tuple(stack.split(";")[1:])))


if __name__ == "__main__":
    unittest.main()
