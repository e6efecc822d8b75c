"""Recordings that travel, with real perf.

A Python program calls, through ctypes, a small C library built here
(`archived_spin`, with a build id).  It is recorded twice with
pyperf-record, with and without --archive.  Then the library is rebuilt at
the same path with other code (other functions where archived_spin was)
and perf's build-id cache is hidden (pymerge runs with HOME an empty
folder and no PERF_BUILDID_DIR), as on another machine:
  - the --archive folder holds the library under .build-id/xx/rest/elf,
    and merged, its samples still end in archived_spin;
  - the folder without it loses the name ([libarchived.so]), so the check
    above can fail.

Run by /usr/bin/python3 (meson test "archive", suite pymerge) with
PYPERF_SCRIPTS, PYMERGE, PYPERFMAP_PATH and PYTHON (any CPython with the
build's pyperfmap).
"""
import os
import sys
import unittest

from harness import RECORD, PYMERGE, SharedScratch, folded, output, run


HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = os.environ.get("PYTHON") or sys.executable

LIBRARY = r"""
unsigned long archived_spin(unsigned long n)
{
    volatile unsigned long s = 0;
    for (unsigned long i = 0; i < n; i++)
        s += i * i % 7;
    return s;
}
"""
# The rebuilt library: other code and names where archived_spin was.
REBUILT = r"""
unsigned long rebuilt_pad(unsigned long n) { return n * 3 + 1; }
unsigned long rebuilt_other(unsigned long n)
{
    volatile unsigned long s = n;
    for (int i = 0; i < 64; i++)
        s = s * 31 + (unsigned long)i;
    return s;
}
"""
PROGRAM = """
import ctypes, sys, time
lib = ctypes.CDLL(sys.argv[1])
lib.archived_spin.argtypes = [ctypes.c_ulong]
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    lib.archived_spin(2000000)
"""


def build(source, lib):
    src = lib + ".c"
    with open(src, "w") as f:
        f.write(source)
    run(["gcc", "-O1", "-shared", "-fPIC", "-Wl,--build-id", "-o", lib, src], check=True)


class Archive(SharedScratch):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.lib = os.path.join(cls.dir, "libarchived.so")
        prog = os.path.join(cls.dir, "prog.py")
        with open(prog, "w") as f:
            f.write(PROGRAM)
        build(LIBRARY, cls.lib)
        cls.archived = os.path.join(cls.dir, "archived")
        cls.plain = os.path.join(cls.dir, "plain")
        run([RECORD, "--archive", "-o", cls.archived, "--", PYTHON, prog, cls.lib, "2"], check=True)
        run([RECORD, "-o", cls.plain, "--", PYTHON, prog, cls.lib, "2"], check=True)
        cls.bid = output(["readelf", "-n", cls.lib]).split("Build ID: ")[1].split()[0]
        build(REBUILT, cls.lib)
        # Another machine: no perf build-id cache.
        cls.home = os.path.join(cls.dir, "home")
        os.mkdir(cls.home)

    def leaves(self, folder):
        """{leaf frame of the mixed view: samples}, merged elsewhere."""
        base = {k: v for k, v in os.environ.items() if k != "PERF_BUILDID_DIR"}
        r = run([PYMERGE, "--weight", "samples", os.path.join(folder, "perf.data")],
                env={"HOME": self.home}, base=base, check=True)
        out = {}
        for stack, n in folded(r.stdout):
            leaf = stack.split(";")[-1]
            out[leaf] = out.get(leaf, 0) + n
        return out

    def test_archive_holds_the_library(self):
        copy = os.path.join(self.archived, ".build-id", self.bid[:2], self.bid[2:], "elf")
        self.assertTrue(os.path.isfile(copy), copy)
        self.assertFalse(os.path.exists(os.path.join(self.plain, ".build-id")))

    def test_archived_names_survive(self):
        leaves = self.leaves(self.archived)
        total = sum(leaves.values())
        self.assertGreater(leaves.get("archived_spin", 0), 0.5 * total, leaves)
        self.assertFalse([f for f in leaves if f.startswith("rebuilt_")], leaves)

    def test_without_archive_names_are_lost(self):
        leaves = self.leaves(self.plain)
        total = sum(leaves.values())
        self.assertEqual(leaves.get("archived_spin", 0), 0, leaves)
        self.assertGreater(leaves.get("[libarchived.so]", 0), 0.5 * total, leaves)


if __name__ == "__main__":
    unittest.main()
