"""A realistic mix, json, re and hashlib (the "mix" workload of
bench_trampolines.py), SCALE times 15."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from _timing import scale, timed  # noqa: E402
from trampoline_workloads import mix  # noqa: E402


def main():
    for _ in range(int(15 * scale())):
        mix()


timed(main)
