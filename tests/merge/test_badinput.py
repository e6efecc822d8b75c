#!/usr/bin/env python3
"""pymerge on bad input: truncated and corrupted copies of real recordings.

Environment: PYMERGE (default: pymerge on PATH).

Bad input must give one line "pymerge: FILE: offset N: what is wrong" and
exit status 2; a missing tail must give a warning and the stacks read so
far.  Never a crash (a signal, or a sanitizer's exit status), a hang or
unbounded memory: every run is bounded in time and address space.
"""
import json
import os
import random
import resource
import shutil
import signal
import struct
import subprocess
import time
import unittest

from pmtest import PYMERGE, TIMEOUT, build_fp_program, parse_folded, pymerge, record, run, tempdir

TMP = None
FP = Z = PIPE = None
PERF_RECORD_SAMPLE, COMPRESSED = 9, 81
# Address space bound for the fuzz runs: the input is a few hundred KB, so
# anything near this is an unbounded allocation.  (Sanitizers reserve
# terabytes of shadow memory, so the limit only applies without them.)
SANITIZED = 'sanitize' in os.environ.get('PYMERGE_SANITIZE', '') or \
    b'__asan_init' in open(PYMERGE, 'rb').read()
AS_LIMIT = 1 << 30


def setUpModule():
    global TMP, FP, Z, PIPE
    TMP = tempdir('pymerge-bad-')
    prog = build_fp_program(TMP)
    FP = record(os.path.join(TMP, 'fp.data'), [prog, '1'], '-e', 'cpu-clock', '-F', '2999', '-g')
    # A small ring buffer makes perf flush (and compress) in many chunks.
    Z = record(os.path.join(TMP, 'z.data'), [prog, '1'], '-z', '-m', '8', '-e', 'cpu-clock',
               '-F', '2999', '-g')
    PIPE = os.path.join(TMP, 'pipe.data')
    with open(PIPE, 'wb') as f:
        subprocess.run(['perf', 'record', '-q', '-o', '-', '-e', 'cpu-clock', '-F', '2999', '-g',
                        '--', prog, '1'], stdout=f, stderr=subprocess.DEVNULL, check=True)


def tearDownModule():
    shutil.rmtree(TMP, ignore_errors=True)


def limit_memory():
    if not SANITIZED:
        resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def bounded(path, *args):
    """pymerge on path with bounded time and memory; never raises on status."""
    return pymerge(*args, path, check=False, preexec_fn=limit_memory)


def variant(name, data):
    path = os.path.join(TMP, name)
    with open(path, 'wb') as f:
        f.write(data)
    return path


def read(path):
    with open(path, 'rb') as f:
        return f.read()


def header(data):
    """(data offset, data size) of a file-mode perf.data."""
    return struct.unpack_from('<QQ', data, 40)


def records(data):
    """(offset, type, size) of each record in the data section."""
    off, size = header(data)
    end = off + size
    out = []
    while off + 8 <= end:
        rtype, _, rsize = struct.unpack_from('<IHH', data, off)
        out.append((off, rtype, rsize))
        off += rsize
    return out


class BadInputTest(unittest.TestCase):

    def assertBad(self, p, *needles):
        self.assertEqual(p.returncode, 2, p.stderr)
        lines = p.stderr.splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertTrue(lines[0].startswith('pymerge: '), lines[0])
        for n in needles:
            self.assertIn(n, lines[0])
        self.assertEqual(p.stdout, '')

    def test_missing_file(self):
        path = os.path.join(TMP, 'no-such.data')
        self.assertBad(bounded(path), path, 'No such file')

    def test_directory(self):
        self.assertBad(bounded(TMP), 'directory')

    def test_empty_file(self):
        path = variant('empty', b'')
        self.assertBad(bounded(path), path + ': empty, not a perf.data file')

    def test_not_perf_data(self):
        """Bytes that are no input pymerge reads (not perf.data, pprof or
        folded stacks): one line naming the file and the three kinds."""
        for name, data in (('text', b'hello world\n' * 100), ('random', bytes(range(256)) * 4),
                           ('not-gzip', b'\x1f\x8c' + b'\0' * 100)):
            with self.subTest(name=name):
                path = variant(name, data)
                self.assertBad(bounded(path), path + ': unrecognized bytes, not a perf.data file',
                               'a pprof profile', 'folded stacks')

    def test_diff_of_nothing(self):
        """diff whose new profile has no stacks: one line naming it, not a
        bare exit status."""
        empty = variant('empty.folded', b'a 0\n')
        p = run([PYMERGE, 'diff', FP, empty])
        self.assertEqual((p.returncode, p.stderr), (2, 'pymerge: %s: no stacks to draw\n' % empty))

    def test_no_samples_is_one_error_in_every_format(self):
        """A real recording without a sample (a period longer than the run):
        every format, diff either way round and merge exit 2 with the same
        one line, print nothing and create no -o file."""
        empty = record(os.path.join(TMP, 'nosamples.data'), ['true'], '-e', 'cpu-clock',
                       '-c', '1000000000000')
        out = os.path.join(TMP, 'nosamples.out')
        for fmt in ('folded', 'svg', 'speedscope', 'pprof', 'trace', 'table', 'growth'):
            for args in (['--format', fmt], ['--format', fmt, '-o', out]):
                p = bounded(empty, *args)
                self.assertEqual((p.returncode, p.stdout, p.stderr),
                                 (2, '', 'pymerge: %s: no stacks to draw\n' % empty), args)
                self.assertFalse(os.path.exists(out), args)
        for cmd, name in ((['diff', FP, empty], empty), (['diff', empty, FP], empty),
                          (['diff', '--format', 'svg', FP, empty], empty),
                          (['merge', empty, empty, '-o', out], 'merge')):
            p = run([PYMERGE] + cmd)
            self.assertEqual((p.returncode, p.stdout, p.stderr),
                             (2, '', 'pymerge: %s: no stacks to draw\n' % name), cmd)
            self.assertFalse(os.path.exists(out), cmd)

    def test_unreadable(self):
        if os.geteuid() == 0:
            # root reads anything: make it unreadable in another way.
            path = os.path.join(TMP, 'fifo-dir')
            os.makedirs(path, exist_ok=True)
            self.assertBad(bounded(path), 'directory')
        else:
            path = variant('unreadable', read(FP))
            os.chmod(path, 0)
            self.assertBad(bounded(path), 'Permission denied')

    def test_other_endianness(self):
        data = bytearray(read(FP))
        data[0:8] = data[0:8][::-1]
        self.assertBad(bounded(variant('swapped', bytes(data))), 'offset 0', 'endianness')

    def test_truncated_header(self):
        self.assertBad(bounded(variant('hdr', read(FP)[:60])), 'offset 0', 'truncated',
                       'inside the file header')

    def test_impossible_attr_size(self):
        data = bytearray(read(FP))
        struct.pack_into('<Q', data, 16, 1 << 40)
        self.assertBad(bounded(variant('attrsize', bytes(data))), 'offset 16', 'attr size')

    def test_impossible_attr_section(self):
        data = bytearray(read(FP))
        struct.pack_into('<Q', data, 32, 1 << 50)
        self.assertBad(bounded(variant('attrsec', bytes(data))), 'offset 24', 'attr section',
                       'impossible')

    def test_data_past_the_end(self):
        data = bytearray(read(FP))
        struct.pack_into('<Q', data, 40, 1 << 60)
        self.assertBad(bounded(variant('dataoff', bytes(data))), 'offset 40', 'truncated',
                       'data section at offset %d' % (1 << 60))

    def test_header_only_is_truncated(self):
        """A file cut anywhere before its data (the 104-byte header alone,
        inside the header, the attrs or their event ids) says it is
        truncated and where it ends."""
        full = read(FP)
        data_off, _ = header(full)
        self.assertBad(bounded(variant('hdronly', full[:104])), 'offset 24',
                       'truncated: the file ends at 104 bytes', 'attr section')
        for cut in range(16, data_off, 8):
            self.assertBad(bounded(variant('cut%d' % cut, full[:cut])), 'truncated',
                           'the file ends at %d bytes' % cut)

    def test_record_size_zero(self):
        data = bytearray(read(FP))
        recs = records(bytes(data))
        off = recs[len(recs) // 2][0]
        struct.pack_into('<H', data, off + 6, 0)
        self.assertBad(bounded(variant('size0', bytes(data))), 'offset %d' % off, 'record size 0')

    def test_callchain_overflows_record(self):
        data = bytearray(read(FP))
        off = [o for o, t, s in records(bytes(data)) if t == PERF_RECORD_SAMPLE][10]
        # sample_type IP|TID|TIME|CALLCHAIN|PERIOD: nr sits after 4 u64s.
        struct.pack_into('<Q', data, off + 8 + 32, 1 << 20)
        self.assertBad(bounded(variant('chain', bytes(data))), 'offset %d' % off, 'callchain')

    def test_corrupt_compressed_record(self):
        data = bytearray(read(Z))
        off, _, size = [r for r in records(bytes(data)) if r[1] == COMPRESSED][0]
        for i in range(off + 16, off + size):
            data[i] ^= 0x5a
        self.assertBad(bounded(variant('zbad', bytes(data))), 'offset %d' % off, 'compressed')

    def test_folded_last_line_cr(self):
        """A folded file whose last line ends in CR without LF (a crash found
        by fuzz_folded: the parser stepped past the end)."""
        p = bounded(variant('cr.folded', b'a;b 1\r'), '--input', 'folded')
        self.assertEqual((p.returncode, p.stdout), (0, 'a;b 1\n'), p.stderr)

    def test_file_mode_through_a_pipe(self):
        with open(FP, 'rb') as f:
            cat = subprocess.Popen(['cat'], stdin=f, stdout=subprocess.PIPE)
            p = subprocess.run([PYMERGE, '-'], stdin=cat.stdout, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=TIMEOUT, errors='replace')
            cat.stdout.close()
            cat.wait()
        self.assertBad(p, '<stdin>', 'pipe')


class UsageTest(unittest.TestCase):
    """A bad option or value: exit status 1 and one line naming the option
    and what it takes, whatever the command."""

    def check(self, args, *needles):
        p = run([PYMERGE] + args)
        self.assertEqual((p.returncode, p.stdout), (1, ''), (args, p.stderr))
        lines = p.stderr.splitlines()
        self.assertEqual(len(lines), 1, (args, p.stderr))
        self.assertTrue(lines[0].startswith('pymerge: ') and lines[0].endswith('see pymerge --help'),
                        lines[0])
        for n in needles:
            self.assertIn(n, lines[0], args)

    def test_bad_values_name_the_allowed_ones(self):
        self.check(['--view', 'sideways', FP], '--view sideways', 'native, mixed or python')
        self.check(['--mode', 'gpu', FP], '--mode gpu', 'cpu, offcpu, wall, syscalls, calls, '
                   'alloc or leaks')
        self.check(['--input', 'json', FP], '--input json', 'perf, folded or pprof')
        self.check(['--format', 'png', FP], '--format png', 'folded, svg, speedscope, pprof, '
                   'trace, table, growth, live, spans or markdown')
        self.check(['--width', '5', FP], '--width 5', 'from 100 to 100000')
        self.check(['--interval', '0', FP], '--interval 0', 'from 0.01 to 3600')
        self.check(['--only', '(', FP], '--only (', 'extended regular expression')
        self.check(['--at', 'soon', FP], '--at soon', 'end, peak or a number of seconds')

    def test_each_command_its_own_formats(self):
        """diff draws svg or a table; merge keeps no time order, so no
        trace or speedscope."""
        self.check(['diff', '--format', 'folded', FP, FP], '--format folded', 'svg, table or markdown')
        self.check(['merge', '--format', 'trace', FP], '--format trace',
                   'folded, svg, pprof, table')

    def test_options_and_inputs(self):
        self.check(['--no-such-option', FP], '--no-such-option', 'no such option')
        self.check(['--view'], '--view', 'needs a value', 'native, mixed or python')
        self.check(['--pid=3', FP], '--pid=3', 'takes no value')
        self.check(['--label', 'a=b', FP], '--label', 'only for pymerge merge')
        self.check(['merge', '--label', 'host', FP], '--label host', 'KEY=VALUE')
        self.check(['merge', '--label', 'a=b'], '--label a=b', 'no input follows')
        self.check(['merge'], 'merge', 'no input')
        self.check(['diff', FP], 'diff', 'two inputs', '1 given')
        self.check([FP, FP], 'one input at most', '2 given')
        self.check(['--format', 'live', '-o', os.path.join(TMP, 'x'), FP], '--format live',
                   'standard output')


class ViewOfNamesTest(unittest.TestCase):
    def test_view_of_a_folded_or_pprof_input_is_said(self):
        """--view chooses among a recording's frames by what each is; a
        folded or pprof input has names only: its frames stay as they are,
        and one warning names the file, for every input kind that has no
        recording behind it."""
        folded = os.path.join(TMP, 'view.folded')
        with open(folded, 'w') as f:
            f.write('app;main (app.py);PyObject_Call;work (app.py) 5\n')
        pprof = os.path.join(TMP, 'view.pb.gz')
        run([PYMERGE, '--input', 'folded', '--format', 'pprof', '-o', pprof, folded], check=True)
        for path, kind in ((folded, 'folded'), (pprof, 'pprof')):
            plain = run([PYMERGE, '--input', kind, path])
            for view in ('python', 'native'):
                p = run([PYMERGE, '--input', kind, '--view', view, path])
                self.assertEqual((p.returncode, p.stdout), (0, plain.stdout), p.stderr)
                self.assertEqual(p.stderr, 'pymerge: %s: --view %s applies to perf.data recordings; '
                                 'this %s input keeps the frames it has\n' % (path, view, kind))


class LostTest(unittest.TestCase):

    def test_lost_records_are_counted(self):
        """A LOST record (as perf writes when its buffer overflows), put at
        the start of the data section of a real file."""
        data = bytearray(read(FP))
        off, size = header(bytes(data))
        # {header; u64 id; u64 lost} + the sample_id trailer (TID, TIME)
        lost = struct.pack('<IHHQQIIQ', 2, 0, 40, 0, 1234, 0, 0, 1)
        data[off:off] = lost
        struct.pack_into('<Q', data, 48, size + len(lost))
        # The feature table follows the data; its sections are absolute.
        bits = struct.unpack_from('<4Q', data, 72)
        n_feat = sum(bin(b).count('1') for b in bits)
        table = off + size + len(lost)
        for i in range(n_feat):
            f_off, = struct.unpack_from('<Q', data, table + 16 * i)
            struct.pack_into('<Q', data, table + 16 * i, f_off + len(lost))
        path = variant('lost', bytes(data))
        p = bounded(path, '-v')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(', 1234 lost,', p.stderr)
        self.assertEqual(p.stdout, bounded(FP).stdout)
        advice = bounded(path).stderr
        self.assertIn('1234 records were lost while recording', advice)
        # the advice names the buffer option of both recorders
        self.assertIn('pyperf-record -m', advice)
        self.assertIn('perf record -m', advice)


class TruncatedTest(unittest.TestCase):
    """A missing tail yields the stacks before it, with a warning."""

    def check_prefix(self, full, cut, min_share=0.2):
        """cut: the run on a file missing its tail; min_share: the share of
        the samples that must still be there."""
        self.assertEqual(cut.returncode, 0, cut.stderr)
        self.assertRegex(cut.stderr, r'pymerge: .*(incomplete|ends inside)')
        f, c = parse_folded(full.stdout), parse_folded(cut.stdout)
        # The samples before the cut are all there.  (Which stacks they
        # make depends on where the tail's COMM and MMAP records were: a
        # CPU buffer flushed late can hold the process's exec.)
        self.assertTrue(c)
        self.assertLess(sum(c.values()), sum(f.values()))
        self.assertGreaterEqual(sum(c.values()), sum(f.values()) * min_share)

    def test_tail_cut_mid_record(self):
        data = read(FP)
        off, size = header(data)
        self.check_prefix(bounded(FP), bounded(variant('cut', data[:off + size * 2 // 3 + 3])))

    def test_pipe_tail_cut(self):
        data = read(PIPE)
        self.check_prefix(bounded(PIPE), bounded(variant('pipecut', data[:len(data) * 2 // 3 + 5])))

    def test_compressed_tail_cut(self):
        data = read(Z)
        chunks = [o for o, t, s in records(data) if t == COMPRESSED]
        self.assertGreater(len(chunks), 3)
        cut = chunks[len(chunks) * 2 // 3] + 100       # inside a chunk
        self.check_prefix(bounded(Z), bounded(variant('zcut', data[:cut])), min_share=0.1)

    def test_header_never_finalised(self):
        """What perf leaves when killed before it rewrites the header: data
        size 0, no feature sections.  All records are still there."""
        data = bytearray(read(FP))
        off, size = header(bytes(data))
        struct.pack_into('<Q', data, 48, 0)
        p = bounded(variant('nosize', bytes(data[:off + size])))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('incomplete', p.stderr)
        self.assertEqual(p.stdout, bounded(FP).stdout)

    def test_perf_killed(self):
        """A real perf record killed with SIGKILL mid-recording."""
        data = os.path.join(TMP, 'killed.data')
        perf = subprocess.Popen(['perf', 'record', '-q', '-o', data, '-e', 'cpu-clock', '-F',
                                 '2999', '-g', '--', 'sh', '-c',
                                 'while :; do ls -R /usr/lib >/dev/null; done'],
                                stderr=subprocess.DEVNULL, start_new_session=True)
        # Kill only once perf has flushed samples: a fixed sleep raced a slow
        # start on a loaded machine (the file then held no sample at all).
        # perf writes the ring buffers in chunks as they fill, so growth by
        # 256 KiB past the synthesized records means samples on disk.
        deadline = time.monotonic() + 120
        start = grown = None
        while not grown and time.monotonic() < deadline and perf.poll() is None:
            time.sleep(0.05)
            size = os.path.getsize(data) if os.path.exists(data) else 0
            start = start or size
            grown = start and size - start >= 256 << 10
        alive = perf.poll() is None
        os.killpg(perf.pid, signal.SIGKILL)
        perf.wait()
        self.assertTrue(alive, 'perf exited by itself')
        self.assertTrue(grown, 'perf.data did not grow by 256 KiB in 120 s')
        p = bounded(data)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('pymerge: ', p.stderr)
        self.assertTrue(parse_folded(p.stdout))


@unittest.skipIf(SANITIZED, 'sanitizers reserve terabytes of address space')
class MemoryLimitTest(unittest.TestCase):
    """ulimit -v too small for the input: one line "pymerge: out of
    memory" and status 2, never a crash; from the smallest limit the
    program starts under up to one that is enough."""

    def limits(self, args):
        ooms = 0
        for mib in range(4, 257, 4):
            def limit(n=mib << 20):
                resource.setrlimit(resource.RLIMIT_AS, (n, n))
            p = run([PYMERGE] + args, preexec_fn=limit)
            if p.returncode == 127 and 'shared libraries' in p.stderr:
                continue                    # the loader itself did not fit
            if p.returncode == 0:
                self.assertGreater(ooms, 0, 'never out of memory: start lower')
                return
            msg = '%s under %d MiB: status %d, %r' % (args, mib, p.returncode, p.stderr[-300:])
            self.assertEqual((p.returncode, p.stderr), (2, 'pymerge: out of memory\n'), msg)
            ooms += 1
        self.fail('%s: not enough with 256 MiB' % args)

    def test_options(self):
        for args in ([], ['--tid', '--format', 'speedscope'], ['--format', 'svg'],
                     ['--view', 'python']):
            for src in (FP, Z, PIPE):
                self.limits(args + [src])

    def test_diff(self):
        self.limits(['diff', FP, Z])


class FuzzTest(unittest.TestCase):
    """Random corruption anywhere, under every option family: only exit 0
    or 2, a pymerge message on failure, well-formed output on success, and
    no crash, hang or runaway allocation."""

    @staticmethod
    def corrupt(rnd, data):
        off, size = header(data) if data[8:16] != b'\x10' + b'\0' * 7 else (16, len(data) - 16)
        d = bytearray(data)
        for _ in range(rnd.randint(1, 8)):
            where = rnd.randrange(0, len(d)) if rnd.random() < 0.2 else \
                rnd.randrange(off, min(off + size, len(d)))
            width = rnd.choice((1, 2, 4, 8))
            for k in range(width):
                if where + k < len(d):
                    d[where + k] = rnd.randrange(256) if rnd.random() < 0.7 else 0xff
        if rnd.random() < 0.2:
            d = d[:rnd.randrange(len(d))]
        return bytes(d)

    def fuzz(self, srcs, n, seed, *args):
        """n corruptions of srcs (in turn) with pymerge ARGS; in args, None
        stands for the corrupted file (default: last)."""
        rnd = random.Random(seed)
        datas = [read(src) for src in srcs]
        if None not in args:
            args += (None,)
        for i in range(n):
            path = variant('fuzz', self.corrupt(rnd, datas[i % len(datas)]))
            argv = [path if a is None else a for a in args]
            p = run([PYMERGE] + argv, preexec_fn=limit_memory)
            msg = '%s seed %d case %d: status %d, stderr %r' % (
                args, seed, i, p.returncode, p.stderr[-500:])
            self.assertIn(p.returncode, (0, 2), msg)
            if p.returncode == 2:
                self.assertTrue(p.stderr.startswith('pymerge: '), msg)
            elif 'speedscope' in args:
                json.loads(p.stdout)
            elif 'svg' in args:
                self.assertIn('</svg>', p.stdout, msg)
            elif 'diff' not in args:
                parse_folded(p.stdout)

    def test_fuzz_file_mode(self):
        self.fuzz([FP], 120, 1)

    def test_fuzz_compressed(self):
        self.fuzz([Z], 60, 2)

    def test_fuzz_pipe_mode(self):
        self.fuzz([PIPE], 60, 3)

    # Each option family reaches code the defaults do not (--tid formats
    # a COMM into a buffer): fewer cases each, every input.
    def test_fuzz_pid_tid(self):
        self.fuzz([FP, Z, PIPE], 20, 4, '--pid')
        self.fuzz([FP, Z, PIPE], 20, 5, '--tid')

    def test_fuzz_views(self):
        for k, view in enumerate(('native', 'mixed', 'python')):
            self.fuzz([FP, Z, PIPE], 15, 6 + k, '--view', view)

    def test_fuzz_formats(self):
        for k, fmt in enumerate(('folded', 'svg', 'speedscope')):
            self.fuzz([FP, Z, PIPE], 15, 9 + k, '--format', fmt)

    def test_fuzz_diff(self):
        self.fuzz([FP, Z, PIPE], 15, 12, 'diff', FP, None)
        self.fuzz([FP, Z, PIPE], 15, 13, 'diff', None, PIPE)


if __name__ == '__main__':
    unittest.main()
