"""Fidelity workload: three phases whose CPU split the program measures itself.

    python phases.py SECONDS OUT.json

Runs rounds of three interleaved phases, each reached through several
nested Python calls, and writes {"phase_arith": cpu_seconds, ...,
"total": cpu_seconds of the whole process, "pid": its pid, "windows":
{"phase_arith": [[start, end], ...], ...}} to OUT.json, CPU time being
time.process_time() and a window's ends CLOCK_MONOTONIC seconds (perf
record -k 1's clock), so that a sample's phase can be known without
unwinding:
  phase_arith   pure Python arithmetic
  phase_clib    C library work under a Python frame (hashlib on big buffers)
  phase_kernel  kernel work under a Python frame (small writes to /dev/null)
Works on CPython 3.8 and later.
"""
import hashlib
import json
import os
import sys
import time

ROUNDS = 12
BUF = b"x" * (1 << 20)


def phase_arith(n):
    x = 0
    for i in range(n):
        x = (x * 31 + i) % 1000003
    return x


def phase_clib(n):
    h = hashlib.sha256()
    for _ in range(n):
        h.update(BUF)
    return h.digest()


def phase_kernel(fd, n):
    for _ in range(n):
        os.write(fd, b"x")
    return n


def level3(phase, fd):
    if phase == "phase_arith":
        return phase_arith(20000)
    if phase == "phase_clib":
        return phase_clib(4)
    return phase_kernel(fd, 2000)


def level2(phase, fd):
    return level3(phase, fd)


def level1(phase, fd):
    return level2(phase, fd)


def run_phase(phase, fd, seconds, spent):
    """Run one phase for about `seconds` of CPU time, adding what it used."""
    start, began = time.process_time(), time.clock_gettime(time.CLOCK_MONOTONIC)
    while time.process_time() - start < seconds:
        level1(phase, fd)
    spent[phase] += time.process_time() - start
    spent["windows"][phase].append([began, time.clock_gettime(time.CLOCK_MONOTONIC)])


def main(seconds, out):
    phases = ["phase_arith", "phase_clib", "phase_kernel"]
    # Unequal shares, so that a frame attributed to the wrong phase shows.
    weights = {"phase_arith": 0.5, "phase_clib": 0.3, "phase_kernel": 0.2}
    spent = dict.fromkeys(phases, 0.0)
    spent["windows"] = {phase: [] for phase in phases}
    fd = os.open(os.devnull, os.O_WRONLY)
    for _ in range(ROUNDS):
        for phase in phases:
            run_phase(phase, fd, seconds * weights[phase] / ROUNDS, spent)
    os.close(fd)
    spent["total"] = time.process_time()
    spent["pid"] = os.getpid()
    with open(out, "w") as f:
        json.dump(spent, f)


if __name__ == "__main__":
    main(float(sys.argv[1]), sys.argv[2])
