"""A cache that never evicts, filled by a function that also churns:
each turn, fill keeps one bytes object of 600 to 999 bytes (past pymalloc,
so one malloc each) and churn makes four of about 700 that it drops.  A
busy program for --exact: every one of those is an allocator call.

    python cache.py [ENTRIES]

Prints what the cache holds (its values' sizes as sys.getsizeof counts
them) at each quarter of ENTRIES (default 200,000)."""
import sys
import time

CACHE = {}


def fill(i):
    CACHE[i] = b"x" * (600 + i % 400)


def churn(i):
    t = 0
    for k in range(4):
        t += len(b"y" * (700 + k))
    return t


def main(n):
    t0 = time.time()
    for i in range(n):
        fill(i)
        churn(i)
        if i % (n // 4) == n // 4 - 1:
            print("cache %d bytes at %.1fs" % (sum(sys.getsizeof(v) for v in CACHE.values()),
                                              time.time() - t0), flush=True)


main(int(sys.argv[1]) if len(sys.argv) > 1 else 200000)
