"""A program that leaks: tests/programs/leaky.py as its own __main__,
SCALE times 40 rounds of 4 big and 400 small blocks kept, and churn.  It
prints leaky.py's own line (the truth: what it keeps), then the timing."""
import os
import runpy
import sys

from _timing import scale, timed

LEAKY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "programs", "leaky.py")
KEPT = {}  # leaky.py's globals, alive to the end as a module's would be


def main():
    sys.argv = [LEAKY, str(int(40 * scale())), "4", "400"]
    KEPT.update(runpy.run_path(LEAKY, run_name="__main__"))


timed(main)
