"""Python functions called from the interpreter's own C code (sorted's key,
map, a class's __init__ through type_call, a property, __getattr__), so
that interpreter internals lie between two Python frames.

    python through_c.py SECONDS
"""
import sys
import time


def key(x):
    return -x


def double(x):
    return x * 2


class Point:
    def __init__(self, x):
        self.x = x

    @property
    def twice(self):
        return self.x * 2

    def __getattr__(self, name):
        return len(name)


def work():
    sorted(range(2000), key=key)
    sum(map(double, range(2000)))
    points = [Point(i) for i in range(2000)]
    return sum(p.twice for p in points[:1000]) + sum(p.missing for p in points[:1000])


def main(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        work()


if __name__ == '__main__':
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
