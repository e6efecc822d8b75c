#!/usr/bin/env python3
"""Fidelity of DWARF unwinding through Python trampolines, on one CPython.

    test_dwarf_python.py PYTHON [unittest args]

Environment: PYMERGE (default: pymerge on PATH); PYTHONPATH must make
pyperfmap importable by PYTHON; PYMERGE_CHILD_PRELOAD (set by meson in a
sanitized build) is preloaded into the recorded interpreters.

Records tests/merge/dwarf/phases.py, which measures its own CPU split with
time.process_time(), under `PYTHON -m pyperfmap` with
`perf record -F 999 --call-graph dwarf,32768`, and checks with pymerge:
  - each phase's share of the samples is within 3 points of its measured
    share (python and mixed views);
  - at least 99% of the workload's samples show the complete Python stack
    <module> -> main -> run_phase -> level1 -> level2 -> level3 -> phase,
    with no [truncated];
  - C library frames (hashlib's SHA-256) and kernel frames (write) sit under
    the Python frame that called them, and only there: phase_kernel's share
    of kernel stacks is within 3 points of the share of kernel-mode samples
    that `perf script` finds in the phase's time windows;
  - the options work on a DWARF recording.
On 3.12 and later, a recording of `PYTHON -X perf` (CPython's own
trampolines, no pyperfmap) must unwind to <module> as completely, and on
3.13 and later so must `-X perf_jit` after `perf inject --jit`.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import harness  # noqa: E402
from harness import child_env  # noqa: E402

WORKLOAD = os.path.join(HERE, 'dwarf', 'phases.py')
PYMERGE = os.environ.get('PYMERGE', 'pymerge')
PYTHON = None
PHASES = ('phase_arith', 'phase_clib', 'phase_kernel')
CHAIN = ['<module>', 'main', 'run_phase', 'level1', 'level2', 'level3']
SECONDS = '2'


def record(tmp, name, python_args, perf_args=()):
    """Record phases.py, on CLOCK_MONOTONIC (-k 1) like its phase windows;
    its perf map (if it writes one) goes next to perf.data, as pymerge
    looks there first.  Returns (perf.data path, measured split)."""
    data = os.path.join(tmp, name + '.data')
    out = os.path.join(tmp, name + '.json')
    subprocess.run(['perf', 'record', '-q', '-k', '1', '-e', 'cpu-clock', '-F', '999',
                    '--call-graph', 'dwarf,32768', '-o', data] + list(perf_args) +
                   ['--', PYTHON] + python_args + [WORKLOAD, SECONDS, out],
                   check=True, stderr=subprocess.DEVNULL, env=child_env())
    with open(out) as f:
        measured = json.load(f)
    perf_map = '/tmp/perf-%d.map' % measured['pid']
    if os.path.exists(perf_map):
        shutil.copy(perf_map, tmp)
    return data, measured


def record_perf_jit(tmp):
    """record() of `-X perf_jit`, then `perf inject --jit` (which needs the
    monotonic clock of -k 1): the recording pymerge reads."""
    raw, measured = record(tmp, 'raw', ['-X', 'perf_jit'])
    data = os.path.join(tmp, 'jit.data')
    subprocess.run(['perf', 'inject', '--jit', '-i', raw, '-o', data], check=True,
                   stderr=subprocess.DEVNULL)
    return data, measured


def remove_jit_files(pid):
    """CPython's jit dump of pid and the jitted-*.so files perf inject
    wrote beside it, in /tmp, where perf.data names them."""
    for path in glob.glob('/tmp/jitted-%d-*.so' % pid) + ['/tmp/jit-%d.dump' % pid]:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def kernel_share_in(data, pid, windows):
    """Share of pid's samples inside windows whose own ip (perf script's,
    no unwinding) is in the kernel."""
    out = subprocess.run(['perf', 'script', '-i', data, '-F', 'pid,time,ip,dso', '-G'],
                         check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         universal_newlines=True).stdout
    n = kernel = 0
    for line in out.splitlines():
        fields = line.split()
        if len(fields) != 4 or fields[0] != str(pid):
            continue
        t = float(fields[1].rstrip(':'))
        if any(start <= t <= end for start, end in windows):
            n += 1
            kernel += fields[3] == '([kernel.kallsyms])'
    return kernel / n


def python_at_least(version):
    out = subprocess.run([PYTHON, '-c', 'import sys; print(sys.version_info >= %r)' % (version,)],
                         check=True, stdout=subprocess.PIPE, universal_newlines=True)
    return out.stdout.strip() == 'True'


def pymerge(*args):
    p = subprocess.run([PYMERGE] + list(args), check=True, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    return p.stdout, p.stderr


def folded(text):
    """[(frames root first, count)]."""
    return [(stack.split(';'), count) for stack, count in harness.folded(text)]


def plain(frame):
    """A frame without its --annotate suffix."""
    return frame[:-4] if frame.endswith(('_[j]', '_[k]')) else frame


def py_name(frame):
    """'level1' for 'level1 (phases.py)'; None for frames of other files."""
    name, _, where = plain(frame).partition(' (')
    return name if where == 'phases.py)' else None


def phase_of(frames):
    names = set(map(py_name, frames))
    return next((p for p in PHASES if p in names), None)


def complete(frames):
    """The workload's Python frames form the chain from <module> down."""
    if '[truncated]' in frames:
        return False
    mine = [n for n in map(py_name, frames) if n]
    phase = phase_of(frames)
    want = CHAIN + [phase] if phase else CHAIN[:len(mine)]
    return mine == want


def in_workload(frames):
    """A sample taken while main() ran (or one whose root is lost)."""
    return '[truncated]' in frames or any(py_name(f) not in (None, '<module>') for f in frames)


class Fidelity(unittest.TestCase):
    def check_shares(self, stacks, measured, view):
        total = sum(c for _, c in stacks)
        for phase in PHASES:
            got = sum(c for f, c in stacks if phase_of(f) == phase) / total
            want = measured[phase] / measured['total']
            self.assertLess(abs(got - want), 0.03,
                            '%s view: %s has %.1f%% of the samples, measured %.1f%%'
                            % (view, phase, 100 * got, 100 * want))

    def check_complete(self, stacks, what):
        work = [(f, c) for f, c in stacks if in_workload(f)]
        total = sum(c for _, c in work)
        good = sum(c for f, c in work if complete(f))
        bad = sorted(((c, ';'.join(f)) for f, c in work if not complete(f)), reverse=True)
        self.assertGreater(total, 1000)
        self.assertGreaterEqual(good / total, 0.99,
                                '%s: %.2f%% complete; worst: %s' % (what, 100.0 * good / total,
                                                                     bad[:2]))


class PyperfmapRecording(Fidelity):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='test_dwarf_python.')
        cls.addClassCleanup(shutil.rmtree, cls.tmp)  # also if setUpClass fails
        cls.data, cls.measured = record(cls.tmp, 'pyperfmap', ['-m', 'pyperfmap'])
        out, cls.summary = pymerge('-v', '--weight', 'samples', '--view', 'python', cls.data)
        cls.python = folded(out)
        cls.mixed = folded(pymerge('--weight', 'samples', '--annotate', cls.data)[0])

    def test_phase_shares_python_view(self):
        self.check_shares(self.python, self.measured, 'python')

    def test_phase_shares_mixed_view(self):
        self.check_shares(self.mixed, self.measured, 'mixed')

    def test_complete_python_stacks(self):
        self.check_complete(self.python, 'python view')
        self.check_complete(self.mixed, 'mixed view')

    def test_summary(self):
        self.assertIn('DWARF unwinding: ', self.summary)

    def native_under(self, phase, test):
        """Share of phase's samples (mixed view) with a leafward frame
        passing test."""
        n = hit = 0
        for frames, c in self.mixed:
            if phase_of(frames) != phase:
                continue
            below = frames[[py_name(f) for f in frames].index(phase) + 1:]
            n += c
            hit += c if any(test(f) for f in below) else 0
        return hit / n

    def test_c_library_under_its_python_frame(self):
        sha = lambda f: 'sha256' in f.lower() or 'evp_digest' in f.lower()
        self.assertGreater(self.native_under('phase_clib', sha), 0.9)
        self.assertEqual(self.native_under('phase_arith', sha), 0)
        self.assertEqual(self.native_under('phase_kernel', sha), 0)

    def test_kernel_under_its_python_frame(self):
        """phase_kernel's samples with kernel frames under it are the
        samples perf took in the kernel while it ran, within 3 points (the
        windows also hold run_phase's own calls, and a sample's phase is
        known from its time there, from its stack here); and the write(2)
        path is among them, and under no other phase."""
        kernel = lambda f: f.endswith('_[k]')
        # the write(2) path itself, not any kernel function named *write*
        # (down_write, from an mmap under the sanitizers' allocator)
        write = lambda f: f in ('ksys_write_[k]', 'vfs_write_[k]')
        truth = kernel_share_in(self.data, self.measured['pid'],
                                self.measured['windows']['phase_kernel'])
        self.assertAlmostEqual(self.native_under('phase_kernel', kernel), truth, delta=0.03)
        self.assertGreater(self.native_under('phase_kernel', write), 0)
        # Seen once in many runs: one sample in ~1000 with write() under
        # phase_arith (not understood yet; see docs/unwinding.md, Fidelity).
        self.assertLess(self.native_under('phase_arith', write), 0.005)
        self.assertLess(self.native_under('phase_clib', write), 0.005)

    def test_options(self):
        pid = self.measured['pid']
        # (records lost while recording are no process's: their stack is
        # [lost];[lost N records])
        by_pid = folded(pymerge('--pid', '--view', 'python', self.data)[0])
        self.assertTrue(all(f[0].endswith('-%d' % pid) for f, _ in by_pid if f[0] != '[lost]'))
        by_tid = folded(pymerge('--tid', self.data)[0])
        self.assertTrue(all(f[0].endswith('-%d/%d' % (pid, pid)) for f, _ in by_tid if f[0] != '[lost]'))
        no_kernel = pymerge('--no-kernel', '--annotate', self.data)[0]
        self.assertNotIn('_[k]', no_kernel)
        self.assertIn('_[j]', no_kernel)
        out = os.path.join(self.tmp, 'out.folded')
        stdout = pymerge('--view', 'native', self.data)[0]
        pymerge('--view', 'native', '-o', out, self.data)
        with open(out) as f:
            self.assertEqual(f.read(), stdout)
        self.assertIn('_PyEval_EvalFrameDefault', stdout)
        self.assertNotIn('_PyEval_EvalFrameDefault', pymerge('--view', 'python', '--no-native-leaf',
                                                             self.data)[0])


class OwnTrampolines(Fidelity):
    """CPython's own trampolines instead of pyperfmap's: pymerge steps
    through them too.  A subclass records (since: the first version that
    has them); this checks."""
    since, label = None, None

    @classmethod
    def setUpClass(cls):
        if not python_at_least(cls.since):
            raise unittest.SkipTest('no %s before %d.%d' % ((cls.label,) + cls.since))
        cls.tmp = tempfile.mkdtemp(prefix='test_dwarf_own.')
        cls.addClassCleanup(shutil.rmtree, cls.tmp)  # also if setUpClass fails
        cls.data, cls.measured = cls.record()
        cls.python = folded(pymerge('--weight', 'samples', '--view', 'python', cls.data)[0])

    def test_unwinds_to_module(self):
        self.check_complete(self.python, self.label)

    def test_phase_shares(self):
        self.check_shares(self.python, self.measured, 'python')


class CPythonPerf(OwnTrampolines):
    """-X perf: trampolines in anonymous memory, named by the perf map."""
    since, label = (3, 12), '-X perf'

    @classmethod
    def record(cls):
        return record(cls.tmp, 'xperf', ['-X', 'perf'])


class CPythonPerfJit(OwnTrampolines):
    """-X perf_jit after `perf inject --jit`: the jitted-*.so files carry
    CFI for the trampolines, so they unwind as ordinary ELF code."""
    since, label = (3, 13), '-X perf_jit'

    @classmethod
    def record(cls):
        data, measured = record_perf_jit(cls.tmp)
        cls.addClassCleanup(remove_jit_files, measured['pid'])
        return data, measured


del OwnTrampolines      # a base, not a test case of its own


if __name__ == '__main__':
    PYTHON = sys.argv.pop(1)
    unittest.main()
