"""A leak with a normal exit, beside churn: module-level lists that keep
growing, by 64 KiB bytearrays and by 200-byte ones (pymalloc's), and a
function making millions of small objects a second (dicts, tuples,
strings, lists, ints) that it frees again; after the rounds the program
ends, and the interpreter frees the lists.

    python leaky.py [ROUNDS BIG SMALL]

Each round, leak_big keeps BIG bytearrays of 64 KiB, leak_small SMALL of
200 bytes, and churn makes 100,000 objects; without arguments, 20 rounds of
50 and 20,000, as tests/test_memory.py records it (bench/bench_memory.py
gives its own).  It prints the CPU seconds of its rounds (its own measure,
which counts the kernel's time in uprobe traps), what it keeps as
sys.getsizeof counts it (each item, and the lists' item arrays, which the
appends allocate) with the number of big blocks, and churn's objects a
second:

    took SECONDS leak_big BYTES BLOCKS leak_small BYTES rate OBJECTS
"""
import sys
import time

BIG = []
SMALL = []
CHURN = 20000      # churn's turns a round, of 5 objects each


def leak_big(n):
    for _ in range(n):
        BIG.append(bytearray(65536))


def leak_small(n):
    for _ in range(n):
        SMALL.append(bytearray(200 - sys.getsizeof(bytearray())))


def churn(n):
    t = 0
    for i in range(n):
        d = {"a": i, "b": (i, i + 1), "c": str(i), "e": [i] * 3}
        t += len(d)
    return t


def main(rounds, big, small):
    """The wall seconds churn took."""
    took = 0.0
    for _ in range(rounds):
        leak_big(big)
        leak_small(small)
        t = time.perf_counter()
        churn(CHURN)
        took += time.perf_counter() - t
    return took


def kept(items):
    return sum(sys.getsizeof(x) for x in items) + sys.getsizeof(items) - sys.getsizeof([])


rounds, big, small = (int(a) for a in sys.argv[1:4]) if len(sys.argv) > 1 else (20, 50, 20000)
start = time.process_time()
churning = main(rounds, big, small)
took = time.process_time() - start
print("took", took, "leak_big", kept(BIG), len(BIG), "leak_small", kept(SMALL),
      "rate", int(rounds * CHURN * 5 / churning))
