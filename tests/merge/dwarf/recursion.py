"""Stitching workload: a recursion DEPTH calls deep, descended and climbed
again and again, working at every level on the way down and up, so that
samples fall at every depth.

    python recursion.py SECONDS DEPTH

SECONDS are of the process's CPU time, not the wall clock's: a
recording holds as many samples however busy the machine is.

Its Python stack is always <module> -> run -> level_a -> level_b ->
level_a ... (alternating), with work() as the leaf.  Prints its pid.
Works on CPython 3.8 and later.
"""
import os
import sys
import time


def work():
    x = 0
    for i in range(3000):
        x = (x * 31 + i) % 1000003
    return x


def level_a(depth):
    work()
    if depth:
        level_b(depth - 1)
    work()


def level_b(depth):
    work()
    if depth:
        level_a(depth - 1)
    work()


def run(seconds, depth):
    end = time.process_time() + seconds
    while time.process_time() < end:
        level_a(depth)


if __name__ == "__main__":
    sys.setrecursionlimit(10000)
    print(os.getpid(), flush=True)
    run(float(sys.argv[1]), int(sys.argv[2]))
