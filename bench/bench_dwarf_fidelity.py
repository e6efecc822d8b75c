#!/usr/bin/env python3
"""The fidelity table of the README's DWARF section, one row per CPython.

    PYMERGE=BUILD/merge/pymerge PYTHONPATH=BUILD/libpyperfmap \\
        bench/bench_dwarf_fidelity.py [PYTHON...]

Records tests/merge/dwarf/phases.py exactly as tests/merge/test_dwarf_python.py
does (2 s, -F 999, --call-graph dwarf,32768, under python -m pyperfmap; and
under -X perf on 3.12+) and prints, per interpreter: each phase's measured
CPU share (time.process_time) against its share of the samples in pymerge's
python view, and the share of the workload's samples whose Python stack is
complete from <module> down, also for -X perf (3.12+) and for -X perf_jit
after perf inject --jit (3.13+).  Default interpreters: libpyperfmap/find-pythons.
"""
import os
import subprocess
import sys
import shutil
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'tests', 'merge'))
import test_dwarf_python as t  # noqa: E402


def python_view(data):
    return t.folded(t.pymerge('--weight', 'samples', '--view', 'python', data)[0])


def shares(stacks):
    total = sum(c for _, c in stacks)
    return {p: sum(c for f, c in stacks if t.phase_of(f) == p) / total for p in t.PHASES}


def complete_share(stacks):
    work = [(f, c) for f, c in stacks if t.in_workload(f)]
    return sum(c for f, c in work if t.complete(f)) / sum(c for _, c in work)


def main():
    pythons = sys.argv[1:] or subprocess.run(
        [os.path.join(HERE, '..', 'libpyperfmap', 'find-pythons')], check=True,
        stdout=subprocess.PIPE, universal_newlines=True).stdout.split()
    print('| CPython | samples | arith: measured / sampled | C library | kernel | '
          'worst gap | complete stacks | -X perf: complete | -X perf_jit: complete |')
    print('|---|---:|---|---|---|---:|---:|---:|---:|')
    for python in pythons:
        t.PYTHON = python
        version = subprocess.run([python, '-c', 'import sys; print("%d.%d" % sys.version_info[:2])'],
                                 check=True, stdout=subprocess.PIPE,
                                 universal_newlines=True).stdout.strip()
        tmp = tempfile.mkdtemp(prefix='bench_dwarf_fidelity.')
        try:
            data, measured = t.record(tmp, 'pyperfmap', ['-m', 'pyperfmap'])
            stacks = python_view(data)
            got = shares(stacks)
            want = {p: measured[p] / measured['total'] for p in t.PHASES}
            cells = ['%.1f%% / %.1f%%' % (100 * want[p], 100 * got[p]) for p in t.PHASES]
            gap = max(abs(got[p] - want[p]) for p in t.PHASES)
            xperf = perfjit = '-'
            if tuple(map(int, version.split('.'))) >= (3, 12):
                xdata, _ = t.record(tmp, 'xperf', ['-X', 'perf'])
                xperf = '%.2f%%' % (100 * complete_share(python_view(xdata)))
            if tuple(map(int, version.split('.'))) >= (3, 13):
                jdata, _ = t.record_perf_jit(tmp)
                perfjit = '%.2f%%' % (100 * complete_share(python_view(jdata)))
            label = version + (' (%s)' % python if python.startswith('/usr/') else '')
            print('| %s | %d | %s | %.1f pt | %.2f%% | %s | %s |'
                  % (label, sum(c for _, c in stacks), ' | '.join(cells), 100 * gap,
                     100 * complete_share(stacks), xperf, perfjit))
        finally:
            shutil.rmtree(tmp)


if __name__ == '__main__':
    main()
