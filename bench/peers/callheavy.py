"""Call-heavy code: recursion, method calls, generators (the "calls"
workload of bench_trampolines.py), SCALE times 6."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from _timing import scale, timed  # noqa: E402
from trampoline_workloads import calls  # noqa: E402


def main():
    for _ in range(int(6 * scale())):
        calls()


timed(main)
