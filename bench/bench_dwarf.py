#!/usr/bin/env python3
"""Benchmark pymerge on a --call-graph dwarf recording.

    bench/bench_dwarf.py --pymerge BUILD/merge/pymerge --pythonpath BUILD/libpyperfmap

Records tests/merge/dwarf/phases.py under a pyperfmap-enabled CPython 3.11
with `perf record -F FREQ --call-graph dwarf,STACK` until the file holds at
least --min-mb megabytes, then times on that same file, best of --runs:
  pymerge             (its own DWARF unwinding, mixed view)
  perf script         (perf's DWARF unwinding and printing)
  perf script | fold  (the usual pipeline; the fold step is
                       tests/merge/stackcollapse.py, the port of
                       stackcollapse-perf.pl that the tests use)
and prints a Markdown table: wall time, samples/s, ratio, peak RSS.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_pymerge import best  # noqa: E402  (timing and peak RSS, shared)

WORKLOAD = os.path.join(HERE, '..', 'tests', 'merge', 'dwarf', 'phases.py')
FOLD = os.path.join(HERE, '..', 'tests', 'merge', 'stackcollapse.py')


def record(args, tmp):
    data = os.path.join(tmp, 'perf.data')
    env = dict(os.environ, PYTHONPATH=args.pythonpath)
    seconds = args.seconds
    while True:
        subprocess.run(['perf', 'record', '-q', '-e', 'cpu-clock', '-F', str(args.freq),
                        '--call-graph', 'dwarf,%d' % args.stack, '-o', data,
                        args.python, '-m', 'pyperfmap', WORKLOAD, str(seconds),
                        os.path.join(tmp, 'phases.json')],
                       check=True, env=env, stderr=subprocess.DEVNULL)
        size = os.path.getsize(data)
        if size >= args.min_mb * 1e6:
            # the perf map next to perf.data, where pymerge looks first
            with open(os.path.join(tmp, 'phases.json')) as f:
                shutil.copy('/tmp/perf-%d.map' % json.load(f)['pid'], tmp)
            return data, size, seconds
        seconds *= 2


def count_samples(data):
    out = subprocess.run(['perf', 'report', '--stats', '-i', data], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, universal_newlines=True).stdout
    m = re.search(r'SAMPLE events:\s+(\d+)', out)
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--pymerge', required=True)
    ap.add_argument('--pythonpath', required=True, help='where pyperfmap is importable from')
    ap.add_argument('--python', default='/root/.pyenv/versions/3.11.7/bin/python3.11')
    ap.add_argument('--freq', type=int, default=999)
    ap.add_argument('--stack', type=int, default=32768)
    ap.add_argument('--seconds', type=float, default=2.0, help='first try; doubled until --min-mb')
    ap.add_argument('--min-mb', type=float, default=50)
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--keep', help='directory to keep the recording in')
    args = ap.parse_args()

    tmp = args.keep or tempfile.mkdtemp(prefix='bench_dwarf.')
    os.makedirs(tmp, exist_ok=True)
    try:
        data, size, seconds = record(args, tmp)
        samples = count_samples(data)
        subprocess.run(['cat', data], stdout=subprocess.DEVNULL, check=True)  # page cache
        q = lambda s: "'%s'" % s.replace("'", "'\\''")
        rows = [
            ('pymerge', best('%s %s > /dev/null' % (q(args.pymerge), q(data)), args.runs)),
            ('perf script', best('perf script -i %s > /dev/null 2>&1' % q(data), args.runs)),
            ('perf script \\| fold', best('perf script -i %s 2>/dev/null | python3 %s > /dev/null'
                                          % (q(data), q(FOLD)), args.runs)),
        ]
        print('Recording: %s, %.0f s of phases.py at -F %d, --call-graph dwarf,%d: %.1f MB, %d samples\n'
              % (os.path.basename(args.python), seconds, args.freq, args.stack, size / 1e6, samples))
        print('| command | wall (s) | samples/s | vs pymerge | peak RSS (MiB) |')
        print('|---|---:|---:|---:|---:|')
        base = rows[0][1][0]
        for name, (wall, rss) in rows:
            print('| %s | %.3f | %.0f | %.1fx | %.0f |' % (name, wall, samples / wall, wall / base, rss))
    finally:
        if not args.keep:
            shutil.rmtree(tmp)


if __name__ == '__main__':
    main()
