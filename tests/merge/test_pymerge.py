#!/usr/bin/env python3
"""pymerge on frame-pointer recordings made now, with real perf.

Environment: PYMERGE (default: pymerge on PATH).

The test program (tests/merge/fp/pmprog.c, built here with frame pointers)
has a known call tree, makes system calls, calls into a shared library,
starts a renamed thread and forks a renamed child.  It is recorded once in
each of the ways pymerge reads (file mode, two events, -z, pipe mode), and
every --view native result is compared with `perf script` folded the way
stackcollapse-perf.pl folds it (stackcollapse.py): same lines, same values.
"""
import os
import re
import shutil
import subprocess
import unittest

from pmtest import (build_fp_program, check_native, folded_diff, golden, parse_folded,
                    perf_script, perl_drops_parenthesised, pymerge, record, tempdir)

TMP = None
PROG = None
DATA = {}


def setUpModule():
    global TMP, PROG
    TMP = tempdir('pymerge-fp-')
    PROG = build_fp_program(TMP)
    run = [PROG, '2']
    DATA['fp'] = record(os.path.join(TMP, 'fp.data'), run, '-e', 'cpu-clock', '-F', '2999', '-g')
    DATA['two'] = record(os.path.join(TMP, 'two.data'), run, '-e', 'cpu-clock,task-clock',
                         '-F', '1999', '-g')
    DATA['z'] = record(os.path.join(TMP, 'z.data'), run, '-z', '-e', 'cpu-clock', '-F', '2999',
                       '-g')
    # Whole system: perf synthesizes the state of every running process.
    # The workload writes its PID, which the test's comparison keeps to.
    DATA['system'] = record(os.path.join(TMP, 'system.data'),
                            ['sh', '-c', 'echo $$ > "$0.pid" && exec "$@"',
                             os.path.join(TMP, 'system'), PROG, '1'],
                            '-a', '-e', 'cpu-clock', '-F', '999', '-g')
    with open(os.path.join(TMP, 'pipe.data'), 'wb') as f:
        subprocess.run(['perf', 'record', '-q', '-o', '-', '-e', 'cpu-clock', '-F', '2999', '-g',
                        '--'] + run, stdout=f, stderr=subprocess.DEVNULL, check=True, timeout=600)
    DATA['pipe'] = os.path.join(TMP, 'pipe.data')


def tearDownModule():
    shutil.rmtree(TMP, ignore_errors=True)


def total(folded):
    return sum(folded.values())


class GoldenTest(unittest.TestCase):
    """--view native equals perf script | stackcollapse-perf.pl."""

    def check(self, data, *args, **golden_args):
        check_native(self, data, *args, **golden_args)
        self.assertGreater(len(golden(data, **golden_args).splitlines()), 10)

    def test_file_mode(self):
        self.check(DATA['fp'])

    def test_pid(self):
        self.check(DATA['fp'], '--pid', pid=True)

    def test_tid(self):
        self.check(DATA['fp'], '--tid', tid=True)

    def test_two_events_first_is_default(self):
        self.check(DATA['two'])

    def test_two_events_chosen(self):
        self.check(DATA['two'], '--event', 'task-clock', event_filter='task-clock')

    def test_system_wide(self):
        """A recording of every process of the machine, compared exactly
        for the processes this test started: the workload and the child
        it forks, known by PID (the workload's own, and the recording's
        fork events from it).  Every other process is someone else's (other
        suites' programs, whose perf maps and mappings change while perf
        script and pymerge read them), so it is not compared."""
        with open(os.path.join(TMP, 'system.pid')) as f:
            ours = {int(f.read())}
        events = subprocess.run(['perf', 'script', '-i', DATA['system'], '--show-task-events'],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True,
                                timeout=600, errors='surrogateescape').stdout
        for child, parent in re.findall(r'PERF_RECORD_FORK\((\d+):\d+\):\((\d+):\d+\)', events):
            if int(parent) in ours:
                ours.add(int(child))
        self.assertGreater(len(ours), 1, 'the workload forks a child')

        def mine(stack):    # "comm-PID"; "comm-?" when the PID is unknown
            pid = stack.split(';', 1)[0].rsplit('-', 1)[-1]
            return pid.isdigit() and int(pid) in ours
        want = {k: v for k, v in parse_folded(golden(DATA['system'], pid=True)).items() if mine(k)}
        got = {k: v for k, v in parse_folded(perl_drops_parenthesised(
            pymerge('--view', 'native', '--pid', DATA['system']).stdout)).items() if mine(k)}
        self.assertGreater(len(want), 5, want)
        self.assertEqual(got, want, folded_diff(
            ''.join('%s %d\n' % kv for kv in sorted(want.items())),
            ''.join('%s %d\n' % kv for kv in sorted(got.items()))))

    def record_badchain(self, *args):
        """tests/merge/fp/badchain.c, built and recorded with -g."""
        prog = os.path.join(TMP, 'badchain')
        if not os.path.exists(prog):
            subprocess.run([os.environ.get('CC_TEST', 'cc'), '-O2', '-o', prog,
                            os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fp',
                                         'badchain.c')], check=True)
        return record(os.path.join(TMP, 'badchain%s.data' % '-'.join(args)),
                      [prog, '100000000'] + list(args), '-e', 'cpu-clock', '-F', '2999', '-g')

    def test_corrupt_chain_dropped_whole(self):
        """A chain with -1 after its leaf, or PERF_CONTEXT_GUEST (a context
        the kernel never puts in a chain): perf shows no frame at all,
        kernel ones included, and neither may pymerge (it kept the frames
        before the bad entry, and CPython 3.13's golden test failed on such
        a sample about one run in five)."""
        for args in ((), ('guest',)):
            data = self.record_badchain(*args)
            want = parse_folded(golden(data))
            # perf's output has the frameless stack, so the case is exercised
            self.assertGreater(want.get('badchain', 0), 0.5 * total(want), (args, want))
            self.assertEqual(parse_folded(pymerge('--view', 'native', data).stdout), want, args)

    def test_context_word_in_user_stack(self):
        """A chain with PERF_CONTEXT_KERNEL after its leaf, then a user
        address: perf names that address [unknown], and so must pymerge, not
        [kernel.kallsyms]."""
        data = self.record_badchain('context')
        want = parse_folded(golden(data))
        self.assertGreater(want.get('badchain;[unknown];spin_context', 0), 0.5 * total(want),
                           want)
        self.assertEqual(parse_folded(pymerge('--view', 'native', data).stdout), want)

    def test_compressed(self):
        self.check(DATA['z'])

    def test_pipe_mode_file(self):
        with open(DATA['pipe'], 'rb') as f:
            want = golden(DATA['pipe'])
            got = pymerge('--view', 'native', '-', stdin=f).stdout
        self.assertEqual(got, want)

    def test_pipe_mode_live(self):
        """perf record -o - | pymerge - : a real pipe, not a file."""
        perf = subprocess.Popen(['perf', 'record', '-q', '-o', '-', '-e', 'cpu-clock', '-F',
                                 '2999', '-g', '--', PROG, '1'], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
        p = pymerge('--view', 'native', '-', stdin=perf.stdout)
        perf.stdout.close()
        self.assertEqual(perf.wait(timeout=120), 0)
        got = parse_folded(p.stdout)
        self.assertTrue(any('main;phase_cpu;spin' in k for k in got), p.stdout[:2000])


class CallTreeTest(unittest.TestCase):
    """The known call tree of pmprog comes out (mixed view, the default)."""

    @classmethod
    def setUpClass(cls):
        cls.out = pymerge(DATA['fp']).stdout
        cls.folded = parse_folded(cls.out)

    def weight(self, needle):
        return sum(v for k, v in self.folded.items() if needle in k)

    def test_user_frames(self):
        for path in ('pmprog;__libc_start_call_main;main;phase_cpu;spin',
                     'main;phase_lib;lib_work;lib_inner',
                     'pm_worker;start_thread;thread_body;spin',
                     'pm_child;__libc_start_call_main;main;child_body;spin'):
            self.assertGreater(self.weight(path), 0, path)

    def test_shared_library_dominates_its_phase(self):
        """phase_lib's time is the shared library's loop: lib_work only
        calls lib_inner, which loops, so at least 95% of lib_work's weight
        is in lib_inner: a shape check that catches weights attached to the
        wrong frames.  Within one phase, so that what else runs on the
        machine, which changes the phases' CPU times against each other,
        cannot move it."""
        lib = self.weight('phase_lib;lib_work')
        self.assertGreater(lib, 0)
        self.assertGreaterEqual(self.weight('phase_lib;lib_work;lib_inner'), 0.95 * lib)

    def test_kernel_frames_under_syscalls(self):
        sys_stacks = [k for k in self.folded if ';phase_sys;' in k]
        self.assertTrue(any('do_syscall_64' in k for k in sys_stacks))
        kernel_first = [k.split(';').index('do_syscall_64') for k in sys_stacks
                        if 'do_syscall_64' in k]
        user_at = [k.split(';').index('phase_sys') for k in sys_stacks if 'do_syscall_64' in k]
        self.assertTrue(all(a > b for a, b in zip(kernel_first, user_at)))

    def test_sorted_and_deterministic(self):
        lines = self.out.splitlines()
        keys = [l.rpartition(' ')[0].encode() for l in lines]
        self.assertEqual(keys, sorted(keys))
        self.assertEqual(pymerge(DATA['fp']).stdout, self.out)

    def test_views_keep_the_total(self):
        want = total(self.folded)
        for args in (['--view', 'native'], ['--view', 'python'], ['--no-kernel'],
                     ['--view', 'python', '--no-native-leaf']):
            self.assertEqual(total(parse_folded(pymerge(*args, DATA['fp']).stdout)), want, args)


class OptionsTest(unittest.TestCase):

    def test_weight_samples_counts_samples(self):
        text = perf_script(DATA['fp'])
        n = sum(1 for l in text.splitlines() if l and not l[0].isspace() and 'cpu-clock' in l)
        got = total(parse_folded(pymerge('--weight', 'samples', DATA['fp']).stdout))
        self.assertEqual(got, n)

    def test_no_kernel(self):
        native = parse_folded(pymerge('--view', 'native', DATA['fp']).stdout)
        nok = parse_folded(pymerge('--view', 'native', '--no-kernel', DATA['fp']).stdout)
        self.assertTrue(any('do_syscall_64' in k for k in native))
        self.assertFalse(any('do_syscall_64' in k or 'entry_SYSCALL' in k for k in nok))
        self.assertEqual(total(native), total(nok))

    def test_annotate(self):
        out = parse_folded(pymerge('--annotate', DATA['fp']).stdout)
        frames = {f for k in out for f in k.split(';')}
        self.assertIn('do_syscall_64_[k]', frames)
        self.assertIn('spin', frames)
        self.assertNotIn('do_syscall_64', frames)

    def test_output_file(self):
        path = os.path.join(TMP, 'out.folded')
        p = pymerge('-o', path, DATA['fp'])
        self.assertEqual(p.stdout, '')
        with open(path) as f:
            self.assertEqual(f.read(), pymerge(DATA['fp']).stdout)

    def test_verbose_summary(self):
        err = pymerge('-v', DATA['fp']).stderr
        self.assertRegex(err, r'pymerge: \d+ samples \(cpu-clock\), 0 lost, [\d.]+% of frames '
                              r'unknown, \d+ processes')

    def test_unknown_event(self):
        p = pymerge('--event', 'cycles', DATA['fp'], check=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn('no event named cycles', p.stderr)

    def test_help_documents_every_option(self):
        text = pymerge('--help').stdout
        for opt in ('-o', '--view', '--no-native-leaf', '--pid', '--tid', '--no-kernel',
                    '--annotate', '--event', '--weight', '--kallsyms', '--map-dir', '-v'):
            self.assertIn(opt, text)
        self.assertGreaterEqual(text.count('pymerge '), 12, 'an example per option')

    def test_bad_usage(self):
        self.assertEqual(pymerge('--view', 'sideways', DATA['fp'], check=False).returncode, 1)

    def test_kallsyms_copy(self):
        copy = os.path.join(TMP, 'kallsyms')
        shutil.copy('/proc/kallsyms', copy)
        self.assertEqual(pymerge('--kallsyms', copy, DATA['fp']).stdout,
                         pymerge(DATA['fp']).stdout)

    def test_kallsyms_of_another_boot(self):
        """KASLR puts the kernel elsewhere at each boot: a kallsyms saved
        then is shifted by the recording's own _text address."""
        shifted = os.path.join(TMP, 'kallsyms.shifted')
        with open('/proc/kallsyms') as src, open(shifted, 'w') as dst:
            for line in src:
                addr, rest = line.split(' ', 1)
                dst.write('%016x %s' % ((int(addr, 16) + 0x3400000) % (1 << 64), rest))
        self.assertEqual(pymerge('--kallsyms', shifted, DATA['fp']).stdout,
                         pymerge(DATA['fp']).stdout)

    def test_kallsyms_hidden(self):
        """What kptr_restrict shows an unprivileged user: zero addresses."""
        hidden = os.path.join(TMP, 'kallsyms.hidden')
        with open('/proc/kallsyms') as src, open(hidden, 'w') as dst:
            for line in src:
                dst.write('0000000000000000' + line[line.index(' '):])
        p = pymerge('--kallsyms', hidden, DATA['fp'])
        self.assertIn('kptr_restrict', p.stderr)
        out = parse_folded(p.stdout)
        self.assertTrue(any(k.endswith(';[kernel]') for k in out))
        self.assertFalse(any('do_syscall_64' in k for k in out))
        self.assertFalse(any('[kernel];[kernel]' in k for k in out))


class BuildIdTest(unittest.TestCase):
    """A library rebuilt after the recording: perf's build-id cache holds
    the recorded one, or else its frames are reported, not misnamed."""

    def rebuild(self, cache):
        d = tempdir('pymerge-rebuilt-')
        self.addCleanup(shutil.rmtree, d, True)
        prog = build_fp_program(d, tag='%s-%d-%s' % (d, os.getpid(), cache))
        data = record(os.path.join(d, 'r.data'), [prog, '1'], '-e', 'cpu-clock', '-F', '2999',
                      '-g', *([] if cache else ['--no-buildid-cache']))
        before = parse_folded(pymerge(data).stdout)
        self.assertTrue(any('lib_work;lib_inner' in k for k in before))
        src = os.path.join(d, 'other.c')            # same path, other code
        with open(src, 'w') as f:
            f.write('int other(int x) { return x * 3; }\n'
                    'unsigned long lib_work(unsigned long n) { return n; }\n')
        subprocess.run(['cc', '-shared', '-fPIC', '-o', os.path.join(d, 'libpmwork.so'), src],
                       check=True)
        return data, before

    def test_rebuilt_library_is_reported_not_misnamed(self):
        data, _ = self.rebuild(cache=False)
        p = pymerge(data)
        self.assertIn('libpmwork.so: rebuilt since the recording', p.stderr)
        after = parse_folded(p.stdout)
        self.assertFalse(any('lib_inner' in k for k in after))
        self.assertTrue(any('phase_lib;[libpmwork.so]' in k for k in after))

    def test_rebuilt_library_found_in_perf_buildid_cache(self):
        data, before = self.rebuild(cache=True)
        p = pymerge(data)
        self.assertEqual(p.stderr, '')
        self.assertEqual(parse_folded(p.stdout), before)


if __name__ == '__main__':
    unittest.main()
