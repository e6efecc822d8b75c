"""A known nested call chain of pure Python, for the frame-pointer tests:
<module> -> main -> Outer.run -> level1 -> level2 -> level3 -> leaf, with
the CPU time in leaf and the interpreter code it runs.  The functions
stand in the order of the chain, each caller above the function it calls.

    python nest.py SECONDS
"""
import sys
import time


def main(seconds):
    end = time.monotonic() + seconds
    outer = Outer()
    while time.monotonic() < end:
        outer.run(20000)


class Outer:
    def run(self, n):
        return level1(n)


def level1(n):
    return level2(n)


def level2(n):
    return level3(n)


def level3(n):
    return leaf(n)


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


if __name__ == '__main__':
    main(float(sys.argv[1]))
