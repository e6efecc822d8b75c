#!/usr/bin/env python3
"""What pyperfmap's static probes (USDT) cost while no one traces them.

Times bench_trampolines.py's workloads with pyperfmap enabled, from two
builds of the extension: one with the probes (-Dusdt=enabled) and one
without (-Dusdt=disabled), interleaved in rounds in the same run (in
turns, each round reversing the order), and prints the ratio with/without
per CPython.  Each figure is the best repetition over all rounds (on a
shared VM noise only ever adds time).  The build without probes is also
timed a second time, as if it were a third build: the ratio of its two
figures is the noise floor of the run (an A/A test).

usage: bench/bench_usdt.py --with BUILD --without BUILD [--rounds N] [PYTHON...]
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_trampolines import measure  # noqa: E402


def has_probes(build):
    so = [f for f in os.listdir(os.path.join(build, "libpyperfmap", "pyperfmap")) if f.endswith(".so")]
    notes = subprocess.run(["readelf", "-n"] + [os.path.join(build, "libpyperfmap", "pyperfmap", f) for f in so],
                           stdout=subprocess.PIPE, universal_newlines=True).stdout
    return "function__entry" in notes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--with", dest="probes", required=True, help="build folder with the probes")
    ap.add_argument("--without", dest="plain", required=True, help="build folder without them")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workload", default="calls", choices=("calls", "mix"))
    ap.add_argument("pythons", nargs="*", default=["/root/.pyenv/versions/3.10.13/bin/python3.10",
                                                   "/root/.pyenv/versions/3.12.1/bin/python3.12"])
    a = ap.parse_args()
    if not has_probes(a.probes) or has_probes(a.plain):
        sys.exit("bench_usdt: --with must have the probes and --without must not (readelf -n)")
    envs = {k: dict(os.environ, PYTHONHASHSEED="0",
                    PYTHONPATH=os.path.join(os.path.abspath(b), "libpyperfmap"))
            for k, b in (("with", a.probes), ("without", a.plain))}
    envs["without, again"] = envs["without"]
    print("| CPython | workload | without probes (s) | with probes (s) | with / without | A/A: without again / without |")
    print("|---|---|---|---|---|---|")
    for py in a.pythons:
        ver = subprocess.run([py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
        times = {k: [] for k in envs}
        for r in range(a.rounds):
            for k in list(envs)[::1 if r % 2 else -1]:
                times[k].append(measure(py, "pyperfmap", a.workload, envs[k], a.repeat))
        w, wo, again = (min(times[k]) for k in ("with", "without", "without, again"))
        print("| %s | %s | %.4f | %.4f | %.4f | %.4f |" % (ver, a.workload, wo, w, w / wo, again / wo))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
