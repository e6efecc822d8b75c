#!/usr/bin/env python3
"""The README's spans example: the per-endpoint table and the --slowest
flame graph (docs/spans-slowest.svg and .png) of a real run.

Records tests/programs/spans_wsgi.py (wsgiref on loopback behind
pyperfmap.wsgi_middleware, 30 /light, 20 /users/N and 10 /heavy requests
of 3, 6 and 12 ms of CPU) with pyperf-record in the wall mode, so that
the table has each endpoint's CPU and off-CPU time; prints pymerge
--format spans and the same rows as the README's markdown table; draws
the slowest tenth of each endpoint's requests (--slowest 90) in the python
view, and has headless Chromium take its picture.

usage: PATH=build/merge:$PATH PYTHONPATH=build/libpyperfmap \\
       python3 docs/spans_example.py [PYTHON]      (as root: spans are uprobes)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(TOP, "docs")


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, universal_newlines=True, **kw).stdout


def markdown(table):
    """pymerge --format spans's rows as the README's table."""
    out = ["| span | requests | p50 | p90 | max | CPU | off-CPU |", "|---|---|---|---|---|---|---|"]
    for line in table.splitlines()[1:]:
        f = line.split(None, 9)
        out.append("| `%s` | %s | %.1f ms | %.1f ms | %.1f ms | %.0f ms | %.0f ms |"
                   % (f[9], f[0], float(f[3]), float(f[4]), float(f[6]), float(f[7]), float(f[8])))
    return "\n".join(out)


def main():
    python = sys.argv[1] if len(sys.argv) > 1 else "python3.12"
    work = tempfile.mkdtemp(prefix="spans-example-")
    try:
        script = os.path.join(work, "spans_wsgi.py")
        shutil.copy(os.path.join(TOP, "tests", "programs", "spans_wsgi.py"), script)
        rec = os.path.join(work, "rec")
        run([os.path.join(TOP, "perf-scripts", "pyperf-record"), "--mode", "wall", "-o", rec, "--",
             python, script, os.path.join(work, "timing.json")], cwd=work)
        data = os.path.join(rec, "perf.data")
        table = run(["pymerge", "--format", "spans", data])
        print(table)
        print(markdown(table))
        svg = os.path.join(DOCS, "spans-slowest.svg")
        run(["pymerge", "--slowest", "90", "--view", "python", "--format", "svg", "-o", svg,
             "--title", "The slowest tenth of each endpoint's requests (--slowest 90, wall time)",
             data])
        with open(svg) as f:
            height = int(float(re.search(r'<svg[^>]* height="([\d.]+)"', f.read()).group(1)))
        run(["chromium", "--headless=new", "--no-sandbox", "--hide-scrollbars",
             "--window-size=1200,%d" % height, "--screenshot=" + os.path.join(DOCS, "spans-slowest.png"),
             "file://" + svg], stderr=subprocess.DEVNULL)
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
