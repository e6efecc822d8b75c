#!/usr/bin/env python3
"""Benchmark pymerge on a frame-pointer recording.

    bench/bench_pymerge.py --pymerge BUILD/merge/pymerge [--min-mb 25] [--runs 3]

Records xz, gzip and sort working on 80 MB of generated text with
`perf record -e cpu-clock -F 4999 -g` (at least --min-mb megabytes of
perf.data), then, on that same file, times (best of --runs) and measures
peak memory (the largest RSS of the command's processes, from wait4):
  pymerge --view native   perf.data -> folded stacks
  perf script             perf's own decoding and printing alone
  perf script | fold      the usual pipeline; the fold step is
                          tests/merge/stackcollapse.py, the port of
                          stackcollapse-perf.pl that the tests use as their
                          golden (the Perl script is not packaged here)
It checks that pymerge's output equals the pipeline's, then prints a
Markdown table for the README.
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FOLD = os.path.join(HERE, '..', 'tests', 'merge', 'stackcollapse.py')


def measure(cmd):
    """(wall seconds, peak RSS in MiB over the command's processes)."""
    t = time.perf_counter()
    p = subprocess.Popen(['sh', '-c', cmd])
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if status != 0:
        sys.exit('bench_pymerge: failed (%d): %s' % (status, cmd))
    return wall, ru.ru_maxrss / 1024.0


def best(cmd, runs):
    results = [measure(cmd) for _ in range(runs)]
    return min(r[0] for r in results), max(r[1] for r in results)


def make_text(path, mb):
    """Deterministic words, so every run compresses and sorts the same."""
    rnd = random.Random(1)
    words = [''.join(rnd.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(rnd.randint(2, 10)))
             for _ in range(5000)]
    with open(path, 'w') as f:
        n = 0
        while n < mb << 20:
            line = ' '.join(rnd.choice(words) for _ in range(12)) + '\n'
            f.write(line)
            n += len(line)


def record(tmp, text_mb, min_mb):
    """The frame-pointer recording in tmp (made unless there already):
    xz, gzip and sort over text_mb MB of text, at least min_mb MB."""
    os.makedirs(tmp, exist_ok=True)
    text = os.path.join(tmp, 'text.txt')
    data = os.path.join(tmp, 'perf.data')
    if not os.path.exists(text):
        make_text(text, text_mb)
    work = ('xz -T1 -3 -c {t} > /dev/null & gzip -c {t} > /dev/null & sort {t} > /dev/null; '
            'wait').format(t=text)
    if not os.path.exists(data) or os.path.getsize(data) < min_mb * 2**20:
        subprocess.run(['perf', 'record', '-q', '-e', 'cpu-clock', '-F', '4999', '-g', '-o', data,
                        '--', 'sh', '-c', work], check=True, stderr=subprocess.DEVNULL)
    size = os.path.getsize(data) / 2**20
    if size < min_mb:
        sys.exit('bench: only %.1f MB recorded' % size)
    return data


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--pymerge', default=shutil.which('pymerge'))
    ap.add_argument('--min-mb', type=float, default=25)
    ap.add_argument('--text-mb', type=int, default=80)
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--keep', help='directory to keep perf.data in')
    a = ap.parse_args()
    if not a.pymerge:
        sys.exit('bench_pymerge: no pymerge (use --pymerge)')
    tmp = a.keep or tempfile.mkdtemp(prefix='bench-pymerge-')
    data = record(tmp, a.text_mb, a.min_mb)
    size = os.path.getsize(data) / 2**20

    ours = subprocess.run([a.pymerge, '--view', 'native', data], stdout=subprocess.PIPE,
                          check=True).stdout
    theirs = subprocess.run('perf script -i %s 2>/dev/null | python3 %s' % (data, FOLD),
                            shell=True, stdout=subprocess.PIPE, check=True).stdout
    same = ours == theirs
    counts = subprocess.run([a.pymerge, '--view', 'native', '--weight', 'samples', data],
                            stdout=subprocess.PIPE, check=True, universal_newlines=True).stdout
    samples = sum(int(line.rpartition(' ')[2]) for line in counts.splitlines())

    rows = [
        ('pymerge --view native', best('%s --view native %s > /dev/null' % (a.pymerge, data),
                                       a.runs)),
        ('pymerge (mixed view)', best('%s %s > /dev/null' % (a.pymerge, data), a.runs)),
        ('perf script', best('perf script -i %s > /dev/null 2>&1' % data, a.runs)),
        ('perf script \\| fold', best('perf script -i %s 2>/dev/null | python3 %s > /dev/null'
                                      % (data, FOLD), a.runs)),
    ]
    base = rows[0][1][0]
    print('perf.data: %.1f MB, %d samples (xz, gzip, sort over %d MB of text, '
          'cpu-clock -F 4999 -g); best of %d runs; %d CPUs' %
          (size, samples, a.text_mb, a.runs, os.cpu_count()))
    print('pymerge --view native output equals perf script | fold: %s' % ('yes' if same else 'NO'))
    print()
    print('| command | wall time | samples/s | vs pymerge | peak RSS |')
    print('|---|---|---|---|---|')
    for name, (wall, rss) in rows:
        print('| %s | %.2f s | %.0fk | %.1fx | %.0f MiB |' %
              (name, wall, samples / wall / 1000, wall / base, rss))
    if not a.keep:
        shutil.rmtree(tmp)
    return 0 if same else 1


if __name__ == '__main__':
    sys.exit(main())
