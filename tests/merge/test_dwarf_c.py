#!/usr/bin/env python3
"""DWARF unwinding of a C program built without frame pointers.

Records tests/merge/dwarf/dwprog (known call tree through a shared library,
syscalls, a thread, deep recursion, a callback back into the executable)
with real `perf record --call-graph dwarf`, unwinds it with our unwinder
(argv[1]: the dwdump driver) and checks every sample:
  - the walk reached the root (_start, or clone for the thread);
  - the chain of our own functions is one the program can produce;
  - it names the same functions as perf's own DWARF unwinding, sample by
    sample.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, 'dwarf')
DWDUMP = None

# Root-first chains of the program's own functions (see dwprog.c); a
# sample's chain must be a prefix of one of them (the leaf may be anywhere).
DEEP = ['deep'] * 21
CHAINS = [
    ['_start', 'main', 'phase_lib', 'lib_outer', 'lib_inner'],
    ['_start', 'main', 'phase_sys', 'lib_syscalls'],
    ['_start', 'main', 'phase_deep'] + DEEP + ['deep_leaf'],
    ['_start', 'main', 'phase_cb', 'lib_callback', 'cb_spin'],
    ['_start', 'main', 'phase_plt', 'lib_tiny'],
    ['_start', 'main', 'cpu_now'],
    ['thread_main', 'phase_lib', 'lib_outer', 'lib_inner'],
    ['thread_main', 'cpu_now'],
]
OURS = {'_start', 'main', 'thread_main', 'cpu_now', 'phase_lib', 'phase_sys', 'phase_deep',
        'phase_cb', 'deep', 'deep_leaf', 'cb_spin', 'lib_inner', 'lib_outer',
        'lib_syscalls', 'lib_callback', 'phase_plt', 'lib_tiny', 'plt'}


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, universal_newlines=True, **kw).stdout


class Symbols:
    """File offset -> function name, from nm and the program headers."""

    def __init__(self):
        self.files = {}

    def _load(self, path):
        loads = []
        for line in run(['readelf', '-lW', path]).splitlines():
            f = line.split()
            if f and f[0] == 'LOAD':
                loads.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
        syms = []
        for flag in ([], ['-D']):
            out = subprocess.run(['nm', '-n', '--defined-only'] + flag + [path],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 universal_newlines=True).stdout
            for line in out.splitlines():
                f = line.split()
                if len(f) == 3 and f[1] in 'tTwW':
                    # gcc's clones (deep.constprop.0) are the same function
                    syms.append((int(f[0], 16), f[2].split('@')[0].split('.')[0]))
            if syms:
                break
        # PLT stubs have no symbol: name them 'plt' (perf says name@plt)
        for line in run(['readelf', '-SW', path]).splitlines():
            f = line.replace('[ ', '[').split()
            if len(f) > 5 and f[1] in ('.plt', '.plt.sec'):
                syms.append((int(f[3], 16), 'plt'))
                syms.append((int(f[3], 16) + int(f[5], 16), '[after plt]'))
        syms.sort()
        return loads, syms

    def name(self, path, off):
        if path not in self.files:
            self.files[path] = self._load(path) if os.path.exists(path) else ([], [])
        loads, syms = self.files[path]
        vaddr = next((off - o + v for o, v, size in loads if o <= off < o + size), None)
        best = None
        for a, n in syms:
            if vaddr is None or a > vaddr:
                break
            best = n
        return best or '[%s]' % os.path.basename(path)


def ours(name):
    """The name if it is one of the program's functions, else a placeholder:
    libc's local symbols are named differently by nm and by perf."""
    return name if name in OURS else '-'


def our_unwinding(data):
    """[(tid, time_ns, stop, [names leaf first])] from the dwdump driver."""
    syms, samples = Symbols(), []
    for line in run([DWDUMP, data]).splitlines():
        f = line.split(' ')
        if f[0] == 'S':
            samples.append((int(f[1]), int(f[2]), f[3], []))
        else:
            frames = samples[-1][3]
            off = int(f[2], 16)
            frames.append(syms.name(f[1], off - (1 if frames else 0)))
    return samples


def perf_unwinding(data):
    """{(tid, time_us): [names leaf first]} from perf script, user frames only
    (without the extra lines perf adds for inlined functions)."""
    out = run(['perf', 'script', '--no-inline', '-i', data, '-F', 'tid,time,ip,sym,dso'],
              stderr=subprocess.DEVNULL)
    samples, cur = {}, None
    for line in out.splitlines():
        m = re.match(r'\s*(\d+)\s+(\d+)\.(\d+):\s*$', line)
        if m:
            cur = samples.setdefault((int(m.group(1)), int(m.group(2)) * 10**6 + int(m.group(3))), [])
            continue
        m = re.match(r'\s*([0-9a-f]+) (.*) \((.*)\)$', line)
        if m and cur is not None and 'kernel' not in m.group(3):
            name = m.group(2).split('.')[0]
            cur.append(ours('plt' if name.endswith('@plt') else name.split('@')[0]))
    return samples


class DwarfC(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='test_dwarf_c.')
        flags = ['-O2', '-fomit-frame-pointer', '-g', '-I', SRC]
        run(['gcc'] + flags + ['-fPIC', '-shared', '-o', os.path.join(cls.tmp, 'libdwwork.so'),
                               os.path.join(SRC, 'libdwwork.c')])
        cls.prog = os.path.join(cls.tmp, 'dwprog')
        run(['gcc'] + flags + ['-o', cls.prog, os.path.join(SRC, 'dwprog.c'), '-L', cls.tmp,
                               '-ldwwork', '-Wl,-rpath,$ORIGIN', '-pthread'])
        cls.data = os.path.join(cls.tmp, 'perf.data')
        run(['perf', 'record', '-q', '-e', 'cpu-clock', '-F', '999', '--call-graph', 'dwarf,32768',
             '-o', cls.data, cls.prog, '2'], stderr=subprocess.DEVNULL)
        cls.ours = our_unwinding(cls.data)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_built_without_frame_pointers(self):
        dis = run(['objdump', '-d', '--no-show-raw-insn', self.prog])
        body = dis.split('<phase_lib>:')[1].split('\n\n')[0]
        self.assertNotIn('push   %rbp', body)

    def test_every_sample_reaches_the_root(self):
        self.assertGreater(len(self.ours), 1000)
        stops = {}
        for s in self.ours:
            stops[s[2]] = stops.get(s[2], 0) + 1
        self.assertEqual(stops, {'complete': len(self.ours)},
                         [s for s in self.ours if s[2] != 'complete'][:3])

    def test_chains_follow_the_call_tree(self):
        bad = []
        for tid, t, stop, frames in self.ours:
            mine = [n for n in reversed(frames) if n in OURS]
            if mine[-1:] == ['plt']:    # a leaf on its way to any callee
                mine.pop()
            if not any(c[:len(mine)] == mine for c in CHAINS):
                bad.append((tid, t, frames))
        self.assertEqual(bad, [])
        roots = {frames[-1] for *_, frames in self.ours}
        self.assertIn('_start', roots)
        self.assertTrue(roots - {'_start'}, 'no sample from the thread (clone root)')

    def test_same_frames_as_perf(self):
        theirs = perf_unwinding(self.data)
        same = diff = 0
        diffs = []
        for tid, t, stop, frames in self.ours:
            ref = theirs.get((tid, t // 1000))
            if ref is None:
                continue
            if ref == [ours(n) for n in frames]:
                same += 1
            else:
                diff += 1
                diffs.append((ref, frames))
        self.assertGreater(same, 1000)
        self.assertLessEqual(diff, same // 100, diffs[:5])


if __name__ == '__main__':
    DWDUMP = os.path.abspath(sys.argv.pop(1))
    unittest.main()
