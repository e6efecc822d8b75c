#!/usr/bin/env python3
"""How complete DWARF stacks of deep real programs are, by stack copy size,
without and with call paths.

    bench/bench_stitch.py [--build DIR] [PYTHON]

Records a Django request loop through the test client
(tests/merge/dwarf/django_site.py, 3 s) and `import numpy` ten times, each
twice: with pyperfmap's plain hook and with call paths (PYPERFMAP_PATHS=1).
Each recording has one cpu-clock event per copy size (16, 24 and 64 KiB,
999 Hz), so every size sees the same run.  Prints, per program, hook and
size: the share of the samples holding Python frames that are complete,
unstitched and stitched, and the largest difference of any Python
function's share against the 64 KiB event (python view), and pymerge's
-v stitching counts.  Needs root, perf, and Debian's python3-django and
python3-numpy for PYTHON (default /usr/bin/python3).
"""
import argparse
import os
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "merge"))
import test_stitch as ts  # noqa: E402  (its record/pymerge/share helpers)

SIZES = (16384, 24576)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("python", nargs="?", default="/usr/bin/python3")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    ts.PYMERGE = os.path.join(build, "merge", "pymerge")
    os.environ["PYTHONPATH"] = os.path.join(build, "libpyperfmap")
    loop = 'for i in 1 2 3 4 5 6 7 8 9 10; do "$0" -m pyperfmap -c "import numpy" || exit 1; done'
    programs = {"Django": [a.python, "-m", "pyperfmap", ts.DJANGO, "3"],
                "import numpy": ["sh", "-c", loop, a.python]}
    tmp = tempfile.mkdtemp(prefix="bench_stitch.")
    try:
        print("| program | hook | copy | complete, unstitched | stitched | worst gap, stitched | "
              "stitching (-v) |")
        print("|---|---|---:|---:|---:|---:|---|")
        for name, cmd in programs.items():
            for paths in (False, True):
                data = ts.record(tmp, "run", SIZES + (ts.FULL,), cmd, paths)
                full, _ = ts.pymerge(data, ts.FULL, *ts.PY)
                for size in SIZES:
                    raw, _ = ts.pymerge(data, size, "--no-stitch", *ts.PY)
                    got, summary = ts.pymerge(data, size, *ts.PY)
                    gap, frame, _, _ = ts.worst_gap(got, full)
                    counts = re.search(r"stitching: (.*)", summary).group(1)
                    print("| %s | %s | %d KiB | %.1f%% | %.1f%% | %.1f pt | %s |"
                          % (name, "paths" if paths else "plain", size // 1024,
                             100 * ts.complete_share(raw), 100 * ts.complete_share(got),
                             100 * gap, counts))
                print("| %s | %s | 64 KiB | %.1f%% (unstitched) | | | |"
                      % (name, "paths" if paths else "plain",
                         100 * ts.complete_share(ts.pymerge(data, ts.FULL, "--no-stitch", *ts.PY)[0])))
                os.unlink(data)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
