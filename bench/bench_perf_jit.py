#!/usr/bin/env python3
"""pymerge against CPython's own way to complete Python stacks on DWARF data.

    bench/bench_perf_jit.py --pymerge BUILD/merge/pymerge --pythonpath BUILD/libpyperfmap

CPython 3.12+ completes DWARF stacks through its trampolines only with
-X perf_jit: a jitdump that `perf inject --jit` turns into ELF files with
unwind tables, which `perf script` then unwinds through, and a fold.  This
records tests/merge/dwarf/phases.py on the same interpreter twice, with
`perf record -F FREQ --call-graph dwarf,STACK`: under -X perf_jit (with
-k 1, which perf inject needs), and under pyperfmap; then times, best of
--runs, CPython's path (perf inject --jit + perf script + the fold, the
port of stackcollapse-perf.pl the tests use) against pymerge on its own
recording, and prints a Markdown table: wall time, samples, time per
sample, and the ratio of times per sample (the two recordings hold about
the same number of samples, not exactly).
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_pymerge import best  # noqa: E402  (timing and peak RSS, shared)
from bench_dwarf import count_samples  # noqa: E402

WORKLOAD = os.path.join(HERE, '..', 'tests', 'merge', 'dwarf', 'phases.py')
FOLD = os.path.join(HERE, '..', 'tests', 'merge', 'stackcollapse.py')


def q(s):
    return "'%s'" % s.replace("'", "'\\''")


def record(args, tmp, name, python_args, perf_args, env):
    """One recording of the workload; (perf.data path, the workload's pid)."""
    data = os.path.join(tmp, name + '.data')
    result = os.path.join(tmp, name + '.json')
    subprocess.run(['perf', 'record', '-q', '-e', 'cpu-clock', '-F', str(args.freq)] + perf_args
                   + ['--call-graph', 'dwarf,%d' % args.stack, '-o', data, '--', args.python]
                   + python_args + [WORKLOAD, str(args.seconds), result],
                   check=True, env=env, stderr=subprocess.DEVNULL)
    with open(result) as f:
        return data, json.load(f)['pid']


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--pymerge', required=True)
    ap.add_argument('--pythonpath', required=True, help='where pyperfmap is importable from')
    ap.add_argument('--python', default='/root/.pyenv/versions/3.13.0/bin/python3.13')
    ap.add_argument('--freq', type=int, default=999)
    ap.add_argument('--stack', type=int, default=24576, help="pyperf-record's default copy")
    ap.add_argument('--seconds', type=float, default=4.0)
    ap.add_argument('--runs', type=int, default=3)
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix='bench_perf_jit.')
    jit_pid = None
    try:
        env = dict(os.environ, PYTHONPATH=args.pythonpath)
        raw, jit_pid = record(args, tmp, 'jit-raw', ['-X', 'perf_jit'], ['-k', '1'], os.environ)
        data, pid = record(args, tmp, 'pyperfmap', ['-m', 'pyperfmap'], [], env)
        shutil.copy('/tmp/perf-%d.map' % pid, tmp)  # beside perf.data, where pymerge looks first
        injected = os.path.join(tmp, 'jit.data')
        cpython = ('perf inject --jit -i %s -o %s 2>/dev/null && perf script -i %s 2>/dev/null | %s %s > /dev/null'
                   % (q(raw), q(injected), q(injected), q(sys.executable), q(FOLD)))
        ours = '%s %s > /dev/null' % (q(args.pymerge), q(data))
        rows = []
        for label, cmd, rec in (('-X perf_jit + perf inject + perf script \\| stackcollapse', cpython, raw),
                                ('pyperfmap + pymerge', ours, data)):
            wall, rss = best(cmd, args.runs)
            rows.append((label, wall, count_samples(rec), rss))
        per = [w / n for _, w, n, _ in rows]
        print('%s, %g s of phases.py, -F %d, DWARF copies of %d bytes, best of %d\n'
              % (args.python, args.seconds, args.freq, args.stack, args.runs))
        print('| path | wall (s) | samples | us per sample | vs pymerge | peak RSS (MiB) |')
        print('|---|---:|---:|---:|---:|---:|')
        for (label, wall, n, rss), p in zip(rows, per):
            print('| %s | %.3f | %d | %.1f | %.1fx | %.0f |' % (label, wall, n, p * 1e6, p / per[1], rss))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if jit_pid:
            for f in glob.glob('/tmp/jit-%d.dump' % jit_pid) + glob.glob('/tmp/perf-%d.map' % jit_pid):
                os.unlink(f)


if __name__ == '__main__':
    main()
