"""Workloads timed by bench_trampolines.py, run in a child interpreter.

    python trampoline_workloads.py MODE WORKLOAD REPEAT

MODE: off | noop (a do-nothing PEP 523 hook: the floor of any hook) |
pyperfmap | xperf (CPython's own -X perf; the parent passes -X perf).
Prints the CPU seconds of each repetition, one per line.
"""
import hashlib
import json
import re
import sys
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def moved(self, dx):
        return Point(self.x + dx, self.y)

    def norm1(self):
        return abs(self.x) + abs(self.y)


def countdown(n):
    while n:
        yield n
        n -= 1


def calls():
    """Call-heavy: recursion, method calls, generators."""
    fib(25)
    p = Point(0, 0)
    total = 0
    for i in range(200000):
        p = p.moved(1)
        total += p.norm1()
    total += sum(x for x in countdown(200000))
    return total


DOC = {"users": [{"id": i, "name": "user%d" % i, "tags": ["a", "b", "c"][: i % 4],
                  "score": i * 1.5, "active": i % 2 == 0} for i in range(400)]}
TEXT = " ".join("word%d foo-bar 12.5 baz@example.com" % i for i in range(3000))
EMAIL = re.compile(r"[\w.]+@[\w.]+")
BLOB = bytes(range(256)) * 4096


def mix():
    """A realistic mix: json, re, hashlib."""
    for _ in range(20):
        json.loads(json.dumps(DOC))
    n = 0
    for _ in range(3):
        n += len(EMAIL.findall(TEXT)) + len(re.findall(r"\d+\.\d+", TEXT))
    for _ in range(24):
        hashlib.sha256(BLOB).hexdigest()
    return n


def main():
    mode, workload, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if mode == "noop":
        from pyperfmap import _pyperfmap
        _pyperfmap._set_noop_hook(True)
    elif mode == "pyperfmap":
        import pyperfmap
        assert pyperfmap.enable()
    elif mode == "xperf":
        assert sys.is_stack_trampoline_active()
    fn = {"calls": calls, "mix": mix}[workload]
    fn()  # warm-up: trampolines, caches, specialisation
    for _ in range(repeat):
        t = time.process_time()
        fn()
        print(time.process_time() - t)


if __name__ == "__main__":
    main()
