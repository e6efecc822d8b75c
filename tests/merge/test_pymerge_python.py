#!/usr/bin/env python3
"""pymerge on Python programs recorded now, on one CPython.

    test_pymerge_python.py PYTHON [unittest args]

Environment: PYMERGE (default: pymerge on PATH); PYTHONPATH must make
pyperfmap importable by PYTHON.

The CPythons here are built without frame pointers, so `perf record -g`
loses most Python frames (the chain breaks inside libpython); the
frame-pointer recording checks that pymerge still matches perf exactly on
whatever perf saw.  The Python frames themselves are checked on a
`--call-graph dwarf` recording (pymerge unwinds through the trampolines):
the python view shows the workload's functions, the mixed view shows no
interpreter plumbing between Python frames, and perf maps are found next
to perf.data, then in --map-dir, then in /tmp.
"""
import os
import re
import shutil
import subprocess
import sys
import unittest

from pmtest import HERE, check_native, parse_folded, perf_script, pymerge, record, tempdir
from harness import child_env

PYTHON = None
WORK = os.path.join(HERE, 'py', 'work.py')
TMP = None
DATA = {}
PID = {}
PY_FRAME = re.compile(r'^.+ \(.+\)$')


def py_version():
    out = subprocess.run([PYTHON, '-c', 'import sys; print(sys.version_info[:2])'],
                         stdout=subprocess.PIPE, check=True, universal_newlines=True).stdout
    return eval(out)


def record_python(name, perf_args, python_args):
    """Record work.py; returns the perf.data path.  The process's PID is
    taken from the recording's comm-PID roots."""
    data = os.path.join(TMP, name + '.data')
    record(data, [PYTHON] + python_args + [WORK, '1.5'], '-e', 'cpu-clock', '-F', '999',
           *perf_args, env=child_env())
    roots = {k.split(';')[0] for k in parse_folded(pymerge('--pid', data).stdout)}
    pids = [int(r.rpartition('-')[2]) for r in roots if r.startswith('python')]
    PID[name] = max(pids, key=lambda p: os.path.exists('/tmp/perf-%d.map' % p))
    return data


def setUpModule():
    global TMP
    TMP = tempdir('pymerge-py-')
    DATA['fp'] = record_python('fp', ['-g'], ['-m', 'pyperfmap'])
    DATA['dwarf'] = record_python('dwarf', ['--call-graph', 'dwarf,32768'], ['-m', 'pyperfmap'])
    if py_version() >= (3, 12):
        DATA['xperf'] = record_python('xperf', ['-g'], ['-X', 'perf'])


def tearDownModule():
    shutil.rmtree(TMP, ignore_errors=True)


def kept_work_functions(data):
    """The work.py functions in perf's own chains of data, but for a word
    at a trampoline's first byte above the leaf: no call returns there
    (the broken chain took a stale pointer to the trampoline for a return
    address), and the views but native name a return address by the call
    before it, in the trampoline laid out just before: `<module>
    (work.py)` would come out as `_run_code (runpy.py)`)."""
    kept = set()
    for sample in perf_script(data, 'ip', 'sym', 'symoff').split('\n\n'):
        for k, line in enumerate(sample.strip().splitlines()):
            m = re.search(r' py::([^;:]+):\S*/work\.py\+0x([0-9a-f]+)', line)
            if m and (k == 0 or int(m.group(2), 16)):
                kept.add(m.group(1))
    return kept


class FramePointerTest(unittest.TestCase):

    def test_native_equals_perf_script(self):
        check_native(self, DATA['fp'])

    def test_cpython_perf_trampolines_native(self):
        if 'xperf' not in DATA:
            self.skipTest('-X perf needs CPython 3.12+')
        check_native(self, DATA['xperf'])

    def test_mixed_names_python_frames_readably(self):
        out = pymerge(DATA['fp']).stdout
        self.assertNotIn('py::', out)
        # Whatever the broken chains kept of work.py's functions comes out
        # readably (a chain that kept only <module>, a frozen module or the
        # launcher, which the mixed view drops, has nothing to check).
        for qual in sorted(kept_work_functions(DATA['fp'])):
            self.assertIn('%s (work.py)' % qual, out)


class PythonViewTest(unittest.TestCase):
    """Python frames from a DWARF recording of a frame-pointer-free CPython."""

    @classmethod
    def setUpClass(cls):
        cls.python = parse_folded(pymerge('--view', 'python', DATA['dwarf']).stdout)
        cls.mixed = parse_folded(pymerge(DATA['dwarf']).stdout)

    def weight(self, folded, needle):
        return sum(v for k, v in folded.items() if needle in k)

    def test_python_frames_present(self):
        for chain in ('<module> (work.py);main (work.py);arith (work.py);arith_leaf (work.py)',
                      'main (work.py);Hasher.digest_many (work.py)',
                      'main (work.py);writes (work.py)'):
            self.assertGreater(self.weight(self.python, chain), 0, chain)

    def test_native_leaf_under_python(self):
        hashing = [k for k in self.python if k.split(';')[-2:-1] == ['Hasher.digest_many (work.py)']]
        self.assertTrue(hashing)
        self.assertTrue(any(not PY_FRAME.match(k.split(';')[-1]) for k in hashing))

    def test_no_native_leaf(self):
        out = parse_folded(pymerge('--view', 'python', '--no-native-leaf', DATA['dwarf']).stdout)
        for k in out:
            for f in k.split(';')[1:]:
                if f != '[truncated]':      # DWARF: an incomplete stack's root
                    self.assertRegex(f, PY_FRAME, k)
        self.assertEqual(sum(out.values()), sum(self.python.values()))

    def test_mixed_drops_plumbing_next_to_python_frames(self):
        """No eval loop or call helper touches a Python frame: f -> g, not
        f -> _PyEval_EvalFrameDefault -> _PyFunction_Vectorcall -> g.  (C
        code calling C code through helpers keeps them.)"""
        plumbing = re.compile(r'^(_PyEval_EvalFrameDefault|_PyFunction_Vectorcall|'
                              r'_?PyObject_Vectorcall|_?PyObject_Call|pyperfmap_eval|'
                              r'py_trampoline_evaluator|cfunction_call|method_vectorcall)')
        checked = 0
        for k in self.mixed:
            frames = k.split(';')
            for i, f in enumerate(frames):
                if PY_FRAME.match(f):
                    checked += 1
                    for n in frames[i - 1:i] + frames[i + 1:i + 2]:
                        self.assertFalse(plumbing.match(n), '%s next to %s in %s' % (n, f, k))
        self.assertGreater(checked, 100)

    def test_mixed_keeps_c_library_and_kernel_frames(self):
        hashing = [k for k in self.mixed if 'Hasher.digest_many (work.py);' in k]
        self.assertTrue(any('libcrypto' in k or 'sha256' in k.lower() for k in hashing))
        writes = [k for k in self.mixed if 'writes (work.py);' in k]
        self.assertTrue(any('do_syscall_64' in k for k in writes))

    def test_annotate(self):
        out = pymerge('--view', 'python', '--annotate', DATA['dwarf']).stdout
        self.assertIn('main (work.py)_[j]', out)


class PerfMapSearchTest(unittest.TestCase):
    """perf-PID.map next to perf.data wins over --map-dir, which wins over /tmp."""

    def renamed_map(self, src, new_name):
        with open(src) as f:
            return ''.join(re.sub(r'py::main:', 'py::%s:' % new_name, line) for line in f)

    def test_search_order(self):
        pid = PID['dwarf']
        name = 'perf-%d.map' % pid
        tmp_map = '/tmp/' + name
        d = tempdir('pymerge-maps-')
        self.addCleanup(shutil.rmtree, d, True)
        data = os.path.join(d, 'perf.data')
        shutil.copy(DATA['dwarf'], data)
        mapdir = os.path.join(d, 'maps')
        os.mkdir(mapdir)
        with open(os.path.join(mapdir, name), 'w') as f:
            f.write(self.renamed_map(tmp_map, 'from_map_dir'))
        # Only /tmp has it: the original names.
        self.assertIn('main (work.py)', pymerge('--view', 'python', data).stdout)
        # --map-dir is looked at before /tmp.
        out = pymerge('--view', 'python', '--map-dir', mapdir, data).stdout
        self.assertIn('from_map_dir (work.py)', out)
        self.assertNotIn('main (work.py)', out)
        # Next to perf.data comes first of all.
        with open(os.path.join(d, name), 'w') as f:
            f.write(self.renamed_map(tmp_map, 'from_recording_dir'))
        out = pymerge('--view', 'python', '--map-dir', mapdir, data).stdout
        self.assertIn('from_recording_dir (work.py)', out)


if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    PYTHON = sys.argv.pop(1)
    unittest.main()
