"""A leak through the C allocator beside a growing dict: native_leak keeps
10 MiB from ctypes.CDLL("libc.so.6").malloc (dlsym on libc's own handle),
160 blocks of 64 KiB, while grow fills a module-level dict with strings;
the program ends with both still held.

    python native_beside_dict.py [ENTRIES]

grow adds ENTRIES entries (default 100,000: about 20 MB) in 160 rounds.
It prints what each keeps, the dict as sys.getsizeof counts it (its table,
its keys beyond the small ints and its values):

    grow BYTES native_leak BYTES
"""
import ctypes
import sys

BLOCK = 65536
ROUNDS = 160
GROWING = {}
KEPT = []

libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]


def grow(start, n):
    for i in range(start, start + n):
        GROWING[i] = "value %d " % i * 12


def native_leak():
    KEPT.append(libc.malloc(BLOCK))


entries = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
for r in range(ROUNDS):
    grow(r * entries // ROUNDS, (r + 1) * entries // ROUNDS - r * entries // ROUNDS)
    native_leak()
held = sys.getsizeof(GROWING) + sum(sys.getsizeof(v) for v in GROWING.values())
held += sum(sys.getsizeof(k) for k in GROWING if k > 256)
print("grow", held, "native_leak", ROUNDS * BLOCK)
