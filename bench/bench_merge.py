#!/usr/bin/env python3
"""Benchmark pprof output and pymerge merge.

    bench/bench_merge.py --pymerge BUILD/merge/pymerge [--keep DIR] [--runs 5] [--inputs 100]

On the frame-pointer recording of bench_pymerge.py (xz, gzip and sort,
cpu-clock -F 4999 -g; made in --keep DIR unless it is there), times (best of
--runs) pymerge's folded output against its pprof output.  Then it writes
--inputs folded profiles, as many hosts would send: the recording's stacks,
each file with its own random subset (about 80%) and random weights, and
times `pymerge merge` of all of them into one folded file and into one
pprof file, with peak RSS, checking the merged folded output against the
sum computed here.  Prints Markdown for the README.
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_pymerge import best, record  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--pymerge', default=shutil.which('pymerge'))
    ap.add_argument('--keep', help='directory to keep perf.data in (shared with bench_pymerge)')
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--inputs', type=int, default=100)
    a = ap.parse_args()
    if not a.pymerge:
        sys.exit('bench_merge: no pymerge (use --pymerge)')
    tmp = a.keep or tempfile.mkdtemp(prefix='bench-merge-')
    data = record(tmp, 80, 25)
    size = os.path.getsize(data) / 2**20

    folded = subprocess.run([a.pymerge, data], stdout=subprocess.PIPE, check=True,
                            universal_newlines=True).stdout
    stacks = [line.rsplit(' ', 1)[0] for line in folded.splitlines()]
    pb = os.path.join(tmp, 'out.pb.gz')
    t_folded = best('%s %s > /dev/null' % (a.pymerge, data), a.runs)
    t_pprof = best('%s --format pprof -o %s %s' % (a.pymerge, pb, data), a.runs)

    rnd = random.Random(1)
    want = Counter()
    paths = []
    for i in range(a.inputs):
        path = os.path.join(tmp, 'host%03d.folded' % i)
        with open(path, 'w') as f:
            for s in stacks:
                if rnd.random() < 0.8:
                    w = rnd.randint(1, 10**7)
                    want[s] += w
                    f.write('%s %d\n' % (s, w))
        paths.append(path)
    listing = os.path.join(tmp, 'inputs.txt')
    with open(listing, 'w') as f:
        f.write(' '.join(paths))
    out = os.path.join(tmp, 'all.folded')
    t_merge = best('%s merge -o %s $(cat %s)' % (a.pymerge, out, listing), a.runs)
    t_merge_pb = best('%s merge -o %s $(cat %s)' % (a.pymerge, pb, listing), a.runs)
    with open(out) as f:
        got = Counter({l.rsplit(' ', 1)[0]: int(l.rsplit(' ', 1)[1]) for l in f.read().splitlines()})
    in_mb = sum(os.path.getsize(p) for p in paths) / 2**20

    print('perf.data: %.1f MB, %d distinct stacks; best of %d runs; %d CPUs' %
          (size, len(stacks), a.runs, os.cpu_count()))
    print()
    print('| command | wall time | vs folded | peak RSS |')
    print('|---|---:|---:|---:|')
    print('| pymerge (folded) | %.3f s | 1.0x | %.0f MiB |' % (t_folded[0], t_folded[1]))
    print('| pymerge --format pprof | %.3f s | %.2fx | %.0f MiB |' %
          (t_pprof[0], t_pprof[0] / t_folded[0], t_pprof[1]))
    print()
    print('merge of %d folded files (%.1f MB, ~%d stacks each), sum checked: %s' %
          (a.inputs, in_mb, int(len(stacks) * 0.8), 'yes' if got == want else 'NO'))
    print()
    print('| command | wall time | peak RSS |')
    print('|---|---:|---:|')
    print('| pymerge merge -o all.folded (%d inputs) | %.3f s | %.0f MiB |' %
          (a.inputs, t_merge[0], t_merge[1]))
    print('| pymerge merge -o all.pb.gz (%d inputs) | %.3f s | %.0f MiB |' %
          (a.inputs, t_merge_pb[0], t_merge_pb[1]))
    if not a.keep:
        shutil.rmtree(tmp)
    return 0 if got == want else 1


if __name__ == '__main__':
    sys.exit(main())
