"""The names pyperf-record and pyperf-top (Python) share with pymerge and
pyperfmap's malloc interposer (C) are defined once, in
perf-scripts/pyperfrecord/contract.txt, and each side reads them from
there: C through the contract.h meson makes of it (CONTRACT_H), Python
through pyperfrecord.contract.  No disk, no root, no perf: sources only."""
import ast
import glob
import os
import re
import sys
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "perf-scripts"))
from pyperfrecord import contract  # noqa: E402

NAMES = contract.read()
# The sides: the commands and their package; pymerge and the interposer.
PY_FILES = ([os.path.join(ROOT, "perf-scripts", s) for s in ("pyperf-record", "pyperf-top")]
            + glob.glob(os.path.join(ROOT, "perf-scripts", "pyperfrecord", "*.py")))
C_FILES = (glob.glob(os.path.join(ROOT, "merge", "**", "*.[ch]"), recursive=True)
           + [os.path.join(ROOT, "libpyperfmap", "preload.c")])
# Values distinctive enough that a string literal equal to one, anywhere on
# either side, can only be that name spelled again.
DISTINCT = [k for k in NAMES if k.startswith(("EVENT_", "ENV_")) or k == "FIELD_TRAMP"]
# Field names that are also ordinary words ("bytes" is a unit too): checked
# where fields are named, the probe definitions and the mode handlers (but
# their tables of value types).
FIELD_PY = [os.path.join(ROOT, "perf-scripts", "pyperfrecord", "probes.py")]
FIELD_C = glob.glob(os.path.join(ROOT, "merge", "modes", "mode_*.c"))
FIELDS = [k for k in NAMES if k.startswith("FIELD_")]


def read(path):
    with open(path) as f:
        return f.read()


def c_code(path):
    """The C source without its comments (which may name anything)."""
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", read(path), flags=re.S)


def c_strings(path, types=True):
    """The string literals of a C source; without a mode's value types
    (its .types table) when not types."""
    code = c_code(path) if types else re.sub(r"\.types\s*=\s*\{.*?\}\}", " ", c_code(path), flags=re.S)
    return [(m.group(1), path) for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"', code)]


def py_strings(path):
    """The string constants of a Python source, but its docstrings, and its
    keyword arguments' names (env.update(NAME=...) spells NAME)."""
    tree = ast.parse(read(path))
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docs.add(id(first.value))
    return ([(n.value, path) for n in ast.walk(tree)
             if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]
            + [(n.arg, path) for n in ast.walk(tree) if isinstance(n, ast.keyword) and n.arg])


def py_keys(path):
    """The KEYs a Python source reads as contract.KEY."""
    return {n.attr for n in ast.walk(ast.parse(read(path)))
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "contract"}


def c_keys(path):
    return set(re.findall(r"\bCONTRACT_(\w+)", c_code(path)))


class Contract(unittest.TestCase):
    def test_the_header_is_the_file(self):
        """contract.h, as meson made it, holds exactly the file's names with
        their values: meson and pyperfrecord.contract read it alike."""
        header = os.environ.get("CONTRACT_H")
        if not header:
            self.skipTest("CONTRACT_H not set (meson sets it)")
        defined = dict(re.findall(r'^#define CONTRACT_(\w+) "([^"\\]*)"$', read(header), re.M))
        self.assertEqual(defined, NAMES)

    def test_every_key_either_side_names_is_defined(self):
        """A key that one side names and the file does not define (a
        misspelling, or a name added on one side only) fails here with the
        file that names it."""
        unknown = sorted((k, os.path.relpath(p, ROOT)) for p in PY_FILES for k in py_keys(p)
                         if k not in NAMES and k != "read")
        unknown += sorted((k, os.path.relpath(p, ROOT)) for p in C_FILES for k in c_keys(p)
                          if k not in NAMES)
        self.assertEqual(unknown, [])

    def test_every_name_is_read_by_both_sides(self):
        """Each name of the contract is one that both a C file and a Python
        file read: one that only one side knows is not shared."""
        py = set().union(*map(py_keys, PY_FILES))
        c = set().union(*map(c_keys, C_FILES))
        self.assertEqual(sorted(set(NAMES) - py), [], "not read by the Python side")
        self.assertEqual(sorted(set(NAMES) - c), [], "not read by the C side")

    def test_no_side_spells_a_name_itself(self):
        """No string literal on either side is a contract value (an event,
        an environment variable, a field where fields are named) or a probe
        group: those come from the contract, or a rename on one side would
        leave the other spelling the old name."""
        found = []
        literals = [s for p in C_FILES for s in c_strings(p)] + [s for p in PY_FILES for s in py_strings(p)]
        values = {NAMES[k] for k in DISTINCT}
        found += [(v, p) for v, p in literals if v in values or v.startswith(NAMES["PROBE_GROUP_PREFIX"])]
        fields = {NAMES[k] for k in FIELDS}
        field_literals = [s for p in FIELD_C for s in c_strings(p, types=False)] + [s for p in FIELD_PY for s in py_strings(p)]
        found += [(v, p) for v, p in field_literals if v in fields]
        # a uprobe's fetch spec names its fields too: "ptr=%di:u64"
        found += [(v, p) for v, p in field_literals for f in fields if re.search(r"(^|\s)%s=" % f, v)]
        self.assertEqual(sorted((v, os.path.relpath(p, ROOT)) for v, p in found), [])


if __name__ == "__main__":
    unittest.main()
