"""A CPU-bound program in four phases whose CPU time it measures itself,
for comparing profilers' shares with the truth.

    python held_phases.py SECONDS [READY]

Runs the phases in turn, in rounds of a seeded random length (each phase's
calls times 1-5, about 8-40 ms), so that a sampler at any fixed rate meets
every phase as often as its share.  Prints one JSON line: each phase's CPU
seconds (time.process_time) and "run", the CPU seconds of all rounds:
  phase_arith    integer arithmetic in its own frame
  phase_strings  str formatting and methods: C code under a Python frame
  phase_dicts    building and reading dicts
  phase_hash     hashlib's SHA-256 on 16 KiB buffers (a C library)
With READY, it first writes its pid to the file READY and waits (at most a
minute) until the file is gone: a second profiler attaches meanwhile, and
both measure the same run.
"""
import hashlib
import json
import os
import random
import sys
import time

BUF = b"y" * 16384
WEIGHTS = {"phase_arith": 0.4, "phase_strings": 0.25, "phase_dicts": 0.2, "phase_hash": 0.15}


def phase_arith(n):
    x = 0
    for i in range(n):
        x = (x * 31 + i) % 1000003
    return x


def phase_strings(n):
    total = 0
    for i in range(n):
        total += len(("k%d" % i).upper().replace("K", "q"))
    return total


def phase_dicts(n):
    total = 0
    for i in range(n):
        d = {"a": i, "b": str(i), "c": (i, i)}
        total += d["a"] + len(d["b"])
    return total


def phase_hash(n):
    h = hashlib.sha256()
    for _ in range(n):
        h.update(BUF)
    return h.digest()


# Calls of about 0.5 ms each, that leave no garbage to free on return
# (what a profiler counts in run() is the loop around them, little), and
# how many of each a round makes, times a random 1-5: shares of about 40,
# 25, 20 and 15% of the work, the same under any load.
SIZES = {"phase_arith": 10000, "phase_strings": 2500, "phase_dicts": 3000, "phase_hash": 40}
CALLS = {"phase_arith": 8, "phase_strings": 5, "phase_dicts": 4, "phase_hash": 3}


def run(seconds):
    """Rounds until they have used SECONDS of CPU time; each phase's CPU
    seconds.  The clock is read between phases only: a read is a system
    call, where a loaded machine's scheduler tends to switch away, which
    a sampler by wall time would charge to run()."""
    phases = {name: globals()[name] for name in CALLS}
    spent = dict.fromkeys(CALLS, 0.0)
    rng = random.Random(34)
    now = start = time.process_time()
    end = now + seconds
    while now < end:
        turns = rng.randint(1, 5)
        for name, fn in phases.items():
            for _ in range(turns * CALLS[name]):
                fn(SIZES[name])
            last, now = now, time.process_time()
            spent[name] += now - last
    spent["run"] = now - start
    return spent


def wait_for_attach(ready):
    with open(ready + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(ready + ".tmp", ready)
    deadline = time.monotonic() + 60
    while os.path.exists(ready) and time.monotonic() < deadline:
        time.sleep(0.01)


if __name__ == "__main__":
    if len(sys.argv) > 2:
        wait_for_attach(sys.argv[2])
    print(json.dumps(run(float(sys.argv[1]))))
