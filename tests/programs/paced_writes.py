"""A busy server's system calls: RATE write()s a second to /dev/null for
SECONDS, from two functions that count their own, one write in three from
rare and the rest from common, in batches of 30 paced to the clock: a
program that keeps up takes SECONDS, one slowed down by its profiler
takes longer.

    python paced_writes.py [RATE SECONDS]

Without arguments, 50,000 a second for 4 s, as tests/test_rates.py
records it (bench/bench_syscalls.py gives its own).  It prints the writes
of each function, then its wall and CPU seconds:

    COMMON RARE WALL CPU
"""
import os
import sys
import time

RATE, SECONDS = (float(a) for a in sys.argv[1:3]) if len(sys.argv) > 1 else (50000.0, 4.0)
fd = os.open("/dev/null", os.O_WRONLY)
counts = {"common": 0, "rare": 0}


def common():
    os.write(fd, b"x")
    counts["common"] += 1


def rare():
    os.write(fd, b"y")
    counts["rare"] += 1


start = time.monotonic()
for n in range(0, int(RATE * SECONDS), 30):
    due = start + n / RATE
    now = time.monotonic()
    if now < due:
        time.sleep(due - now)
    for i in range(30):
        (rare if i % 3 == 0 else common)()
print(counts["common"], counts["rare"], time.monotonic() - start, time.process_time(), flush=True)
