#!/usr/bin/env python3
"""DWARF unwinding of a C program built without frame pointers.

Records tests/merge/dwarf/dwprog (known call tree through a shared library,
syscalls, a thread, deep recursion, a callback back into the executable,
PLT stubs) with real `perf record --call-graph dwarf`, folds it with
pymerge ($PYMERGE, default: pymerge on PATH) and checks:
  - every sample was unwound to its root (_start, or clone3 for the thread);
  - every stack of the program's own functions is one it can produce;
  - the folded stacks equal those of perf's own DWARF unwinding
    (`perf script --no-inline`, folded by stackcollapse.py), to 1%;
  - the kernel part of the callchain sits on top of the user part;
  - signal handlers unwind through the kernel's signal frame (sigprog.c).
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import stackcollapse  # noqa: E402
from harness import PYMERGE, folded_sums, output  # noqa: E402
from pmtest import pymerge  # noqa: E402

SRC = os.path.join(HERE, 'dwarf')

# Root-first chains of the program's own functions (see dwprog.c); a
# stack's chain must be a prefix of one of them (the leaf may be anywhere).
DEEP = ['deep'] * 21
CHAINS = [
    ['_start', 'main', 'phase_lib', 'lib_outer', 'lib_inner'],
    ['_start', 'main', 'phase_sys', 'lib_syscalls'],
    ['_start', 'main', 'phase_deep'] + DEEP + ['deep_leaf'],
    ['_start', 'main', 'phase_cb', 'lib_callback', 'cb_spin'],
    ['_start', 'main', 'phase_plt', 'lib_tiny'],
    ['_start', 'main', 'cpu_now'],
    ['clone3', 'thread_main', 'phase_lib', 'lib_outer', 'lib_inner'],
    ['clone3', 'thread_main', 'cpu_now'],
]
OURS = {n for c in CHAINS for n in c}


def parse_folded(text):
    return dict(folded_sums(text))


def ours(frame):
    """The program's function a frame is, 'plt' for a PLT stub, else None."""
    if frame.endswith('@plt'):
        return 'plt'
    name = frame.split('.')[0]     # gcc's clones: deep.constprop.0
    return name if name in OURS else None


def build_dwprog(tmp):
    """Build dwprog and its library into tmp without frame pointers."""
    flags = ['-O2', '-fomit-frame-pointer', '-g', '-I', SRC]
    output(['gcc'] + flags + ['-fPIC', '-shared', '-o', os.path.join(tmp, 'libdwwork.so'),
                           os.path.join(SRC, 'libdwwork.c')])
    prog = os.path.join(tmp, 'dwprog')
    output(['gcc'] + flags + ['-o', prog, os.path.join(SRC, 'dwprog.c'), '-L', tmp,
                           '-ldwwork', '-Wl,-rpath,$ORIGIN', '-pthread'])
    return prog


def record_dwarf(data, cmd, stack=32768):
    output(['perf', 'record', '-q', '-e', 'cpu-clock', '-F', '999', '--call-graph',
         'dwarf,%d' % stack, '-o', data] + cmd, stderr=subprocess.DEVNULL)


class DwarfC(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='test_dwarf_c.')
        cls.addClassCleanup(shutil.rmtree, cls.tmp)  # also if setUpClass fails
        cls.prog = build_dwprog(cls.tmp)
        cls.data = os.path.join(cls.tmp, 'perf.data')
        record_dwarf(cls.data, [cls.prog, '2'])
        # (without the [lost] stack: perf script has none to compare)
        p = pymerge('-v', '--view', 'native', cls.data)
        cls.folded, cls.summary = parse_folded(p.stdout), p.stderr

    def test_built_without_frame_pointers(self):
        dis = output(['objdump', '-d', '--no-show-raw-insn', self.prog])
        body = dis.split('<phase_lib>:')[1].split('\n\n')[0]
        self.assertNotIn('push   %rbp', body)

    def test_every_sample_reaches_the_root(self):
        self.assertGreater(sum(self.folded.values()), 1000 * 1001001)
        # The one exception: glibc's clone3 ends its CFI before the syscall
        # ("in the child the unwind info will be wrong"), so a sample taken
        # while the parent is in that syscall cannot be unwound past it.
        truncated = [s for s in self.folded if '[truncated]' in s]
        self.assertEqual([s for s in truncated if not s.startswith('dwprog;[truncated];clone3;')],
                         [])
        errors = int(re.search(r'(\d+) unwinding errors', self.summary).group(1))
        self.assertEqual(errors, sum(self.folded[s] for s in truncated) // 1001001, self.summary)
        self.assertLessEqual(errors, 2, self.summary)

    def test_chains_follow_the_call_tree(self):
        bad, roots = [], set()
        for stack in self.folded:
            mine = [n for n in map(ours, stack.split(';')[1:]) if n]
            if mine[-1:] == ['plt']:    # a leaf on its way to any callee
                mine.pop()
            if not any(c[:len(mine)] == mine for c in CHAINS):
                bad.append(stack)
            roots.add(stack.split(';')[1])
        self.assertEqual(bad, [])
        self.assertIn('_start', roots)
        self.assertIn('clone3', roots, 'no sample from the thread')

    def test_same_stacks_as_perf(self):
        perf = output(['perf', 'script', '--no-inline', '-i', self.data], stderr=subprocess.DEVNULL)
        theirs = parse_folded(stackcollapse.collapse(perf.splitlines(True)))
        # The one naming difference: ld.so's _start calls _dl_start as its
        # last instruction, so the return address is _dl_start_user's
        # first.  pymerge's native view names it there, perf (pc - 1 for
        # frames it unwound from DWARF) _start.  On a loaded machine the
        # loader's start-up holds over 1% of this short program's samples.
        ours = collections.Counter()
        for s, c in self.folded.items():
            ours[s.replace(';_dl_start_user;_dl_start;', ';_start;_dl_start;')] += c
        total = sum(theirs.values())
        differ = sum(abs(ours.get(s, 0) - theirs.get(s, 0)) for s in set(ours) | set(theirs))
        # Equal in practice; a sample that one unwinder finishes and the
        # other not (perf gives up without saying so) may tip a line.
        self.assertLess(differ / total, 0.01,
                        sorted(set(theirs) ^ set(ours))[:4])

    def test_signal_frames(self):
        """Through the kernel's signal frame (glibc's __restore_rt, whose CFI
        is DWARF expressions) back to the interrupted code and _start."""
        prog = os.path.join(self.tmp, 'sigprog')
        output(['gcc', '-O2', '-fomit-frame-pointer', '-g', '-o', prog, os.path.join(SRC, 'sigprog.c')])
        data = os.path.join(self.tmp, 'sig.data')
        record_dwarf(data, [prog, '1'])
        folded = parse_folded(output([PYMERGE, '--view', 'native', '--weight', 'samples', data]))
        in_handler = {s: c for s, c in folded.items() if ';handler_spin' in s}
        self.assertGreater(sum(in_handler.values()), 50)
        for s in in_handler:
            self.assertIn('sigprog;_start;', s)
            # the signal may interrupt interrupted_loop or what it calls
            self.assertRegex(s, r';main;interrupted_loop;([^;]+;)*__restore_rt;on_signal;handler_spin')
        # Only a sample inside the sigreturn syscall itself may stop early.
        for s in folded:
            if '[truncated]' in s:
                self.assertTrue(s.startswith('sigprog;[truncated];__restore_rt;'), s)

    def test_compressed_and_pipe_mode(self):
        """-z and `perf record -o - | pymerge -` carry the same stacks."""
        data = os.path.join(self.tmp, 'z.data')
        output(['perf', 'record', '-q', '-z', '-e', 'cpu-clock', '-F', '999', '--call-graph',
             'dwarf,32768', '-o', data, self.prog, '0.5'], stderr=subprocess.DEVNULL)
        rec = subprocess.Popen(['perf', 'record', '-q', '-e', 'cpu-clock', '-F', '999',
                                '--call-graph', 'dwarf,32768', '-o', '-', self.prog, '0.5'],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        piped = subprocess.run([PYMERGE, '-v', '-'], stdin=rec.stdout, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, universal_newlines=True, check=True)
        rec.wait()
        summaries = [subprocess.run([PYMERGE, '-v', data], stdout=subprocess.DEVNULL, check=True,
                                    stderr=subprocess.PIPE, universal_newlines=True).stderr,
                     piped.stderr]
        for summary in summaries:
            self.assertRegex(summary, r'DWARF unwinding: (100.0|99.\d)% of user stacks complete')
        self.assertIn('dwprog;_start;', piped.stdout)

    def test_library_rebuilt_since(self):
        """A library rebuilt after the recording: pymerge takes its CFI,
        like its symbols, from perf's copy of the recorded build."""
        tmp = tempfile.mkdtemp(prefix='test_dwarf_rebuilt.', dir=self.tmp)
        prog = build_dwprog(tmp)
        data = os.path.join(tmp, 'perf.data')
        record_dwarf(data, [prog, '0.5'])
        before = parse_folded(output([PYMERGE, '--view', 'native', data]))
        # Other code at other addresses, same names: wrong CFI would show.
        output(['gcc', '-O0', '-g', '-fPIC', '-shared', '-I', SRC, '-o',
             os.path.join(tmp, 'libdwwork.so'), os.path.join(SRC, 'libdwwork.c')])
        after = subprocess.run([PYMERGE, '-v', '--view', 'native', data], check=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True)
        self.assertEqual(parse_folded(after.stdout), before)
        self.assertNotIn('rebuilt', after.stderr)

    def test_kernel_part_on_top(self):
        annotated = parse_folded(output([PYMERGE, '--annotate', self.data]))
        syscalls = [s for s in annotated if ';lib_syscalls;' in s and s.endswith('_[k]')]
        self.assertTrue(syscalls)
        for s in syscalls:
            frames = s.split(';')
            first_k = next(i for i, f in enumerate(frames) if f.endswith('_[k]'))
            self.assertTrue(all(f.endswith('_[k]') for f in frames[first_k:]), s)
            self.assertLess(frames.index('lib_syscalls'), first_k)


if __name__ == '__main__':
    unittest.main()
